"""bench/e2e/torch_model.py - tmc specs as PyTorch modules, for the peers.

A model is built from `tmc check --json` (the resolved spec) and loaded from
the safetensors file `tmc init-weights` wrote, so that PyTorch, and the ONNX
graphs exported from it, run the same shapes with the same weights as tmc.
The arithmetic follows docs/spec-language.md ("Conventions that pin the
arithmetic"); batch 1, rows are tokens ([T, d_model] throughout).

Covers what the benchmark needs (learned/sinusoidal/no positions, layernorm
and rmsnorm, pre/post norm, the ffn kinds, full attention with causal/padding/
no masks over full-length inputs, GQA, LM and classifier heads, encoder-
decoders); anything else is refused with a clear error.
"""
import json
import math
import struct

import numpy as np
import torch
import torch.nn.functional as F

_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None}


def load_safetensors(path):
    """name -> float32 numpy array (f16/bf16 widened, as tmc does at load)."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        base = 8 + size
    data = np.memmap(path, dtype=np.uint8, mode="r")
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        if info["dtype"] == "BF16":
            bits = raw.view(np.uint16).astype(np.uint32) << 16
            array = bits.view(np.float32)
        else:
            array = raw.view(_DTYPES[info["dtype"]]).astype(np.float32)
        out[name] = array.reshape(info["shape"])
    return out


def _call_args(text):
    """'pre(layernorm(eps = 1e-5))' -> ('pre', 'layernorm', 1e-5)."""
    placement, rest = text.split("(", 1)
    kind, rest = rest.split("(", 1)
    eps = float(rest.split("=")[1].split(")")[0])
    return placement.strip(), kind.strip(), eps


def _norm_call(text):
    """'layernorm(eps = 1e-5)' -> ('layernorm', 1e-5); 'none' -> None."""
    if text == "none":
        return None
    kind, rest = text.split("(", 1)
    return kind.strip(), float(rest.split("=")[1].split(")")[0])


class Stack:
    def __init__(self, name, cfg, decoder):
        if cfg.get("attention", "full") != "full":
            raise NotImplementedError(f"{name}: attention {cfg['attention']} is not supported here")
        groups = cfg.get("layer_groups", [])
        if len(groups) > 1:
            raise NotImplementedError(f"{name}: per-layer overrides are not supported here")
        mask = cfg["mask"]
        if mask not in ("none", "causal", "padding"):
            raise NotImplementedError(f"{name}: mask {mask} is not supported here")
        self.name = name
        self.decoder = decoder
        self.layers = cfg["layers"]
        self.heads, self.kv_heads, self.head_dim = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        self.ffn = cfg["ffn"]
        self.bias = cfg["bias"]
        self.placement, self.norm_kind, self.eps = _call_args(cfg["norm"])
        self.final_norm = _norm_call(cfg["final_norm"])
        self.cross = cfg["cross_attention"]
        self.causal = decoder  # a decoder's self-attention is causal (the spec's default)
        if decoder and mask not in ("causal",):
            raise NotImplementedError(f"{name}: a decoder mask other than causal")


class TmModel(torch.nn.Module):
    """The model of one resolved spec, weights as (frozen) parameters."""

    def __init__(self, spec, weights):
        super().__init__()
        if spec["position"] not in ("learned", "sinusoidal", "none"):
            raise NotImplementedError(f"position {spec['position']} is not supported here")
        self.spec = spec
        self.d = spec["d_model"]
        self.vocab = spec["vocab"]
        self.stacks = {}
        for key in ("encoder", "decoder"):
            if key in spec:
                self.stacks[key] = Stack(key, spec[key], decoder=(key == "decoder"))
        self.encoder_decoder = len(self.stacks) == 2
        out = spec["output"]
        self.output = out.split("(")[0]
        self.tied = "tied = true" in out
        self.pool = "mean" if "pool = mean" in out else "first"
        self.embed_norm = _norm_call(spec["embed_norm"])
        # Unshared embeddings give the decoder, and so a tied head, its own table.
        shared = spec.get("share_embeddings", True) or not self.encoder_decoder
        self.target_table = "embed.tokens" if shared else "decoder.embed.tokens"
        self.names = {}
        for name, array in weights.items():
            key = name.replace(".", "__")
            self.names[name] = key
            self.register_parameter(key, torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(array)),
                                                            requires_grad=False))
        if spec["position"] == "sinusoidal":
            position = torch.arange(spec["max_seq"], dtype=torch.float64)[:, None]
            dim = torch.arange(self.d, dtype=torch.float64)[None, :]
            angle = position / torch.pow(10000.0, (dim - dim % 2) / self.d)
            table = torch.where(dim % 2 == 0, torch.sin(angle), torch.cos(angle))
            self.register_buffer("sinusoidal", table.float())

    def w(self, name):
        key = self.names.get(name)
        return None if key is None else getattr(self, key)

    # -- building blocks -------------------------------------------------
    def linear(self, x, name):
        return F.linear(x, self.w(name + ".weight"), self.w(name + ".bias"))

    def norm(self, x, kind, eps, name):
        if kind == "layernorm":
            return F.layer_norm(x, (x.shape[-1],), self.w(name + ".weight"), self.w(name + ".bias"), eps)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * self.w(name + ".weight")

    def embed(self, tokens, offset=0, table="embed.tokens"):
        x = F.embedding(tokens, self.w(table))
        if self.spec["embed_scale"]:
            x = x * math.sqrt(self.d)
        t = tokens.shape[0]
        if self.spec["position"] == "learned":
            x = x + self.w("embed.positions")[offset:offset + t]
        elif self.spec["position"] == "sinusoidal":
            x = x + self.sinusoidal[offset:offset + t]
        if self.spec["segments"] > 0:  # every token's segment is 0 (source and target alike)
            x = x + self.w("embed.segments")[0]
        if self.embed_norm:
            x = self.norm(x, self.embed_norm[0], self.embed_norm[1], "embed.norm")
        return x

    def attention(self, stack, name, x, memory, causal, past=None):
        """Returns the attention output and the keys and values it read [keys, kv_heads*head_dim]
        (the cached rows followed by this run's)."""
        h, kvh, hd = stack.heads, stack.kv_heads, stack.head_dim
        q = self.linear(x, name + ".q")
        k = self.linear(memory, name + ".k")
        v = self.linear(memory, name + ".v")
        if past is not None:
            k = torch.cat([past[0], k], 0)
            v = torch.cat([past[1], v], 0)
        new_kv = (k, v)
        t, s = q.shape[0], k.shape[0]
        q = q.view(t, h, hd).transpose(0, 1)
        k = k.view(s, kvh, hd).transpose(0, 1)
        v = v.view(s, kvh, hd).transpose(0, 1)
        if kvh != h:
            k = k.repeat_interleave(h // kvh, 0)
            v = v.repeat_interleave(h // kvh, 0)
        scores = torch.matmul(q, k.transpose(1, 2)) * (1.0 / math.sqrt(hd))
        if causal and t > 1:
            # Query i (absolute position s - t + i) sees keys j <= s - t + i.
            allowed = torch.ones(t, s, dtype=torch.bool).tril(s - t)
            scores = scores.masked_fill(~allowed, float("-inf"))
        out = torch.matmul(torch.softmax(scores, -1), v).transpose(0, 1).reshape(t, h * hd)
        return self.linear(out, name + ".o"), new_kv

    def ffn(self, stack, x, name):
        act = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu, "swiglu": F.silu, "geglu": F.gelu,
               "gelu_tanh": lambda y: F.gelu(y, approximate="tanh")}[stack.ffn]
        up = self.linear(x, name + ".up")
        hidden = act(self.linear(x, name + ".gate")) * up if stack.ffn in ("swiglu", "geglu") else act(up)
        return self.linear(hidden, name + ".down")

    def run_stack(self, stack, x, memory=None, past=None):
        """past: per layer (k, v) of cached rows or None; returns x and the grown (k, v) per layer."""
        present = []
        kind, eps = stack.norm_kind, stack.eps
        for i in range(stack.layers):
            p = f"{stack.name}.layers.{i}"
            n_ffn = p + (".norm3" if stack.cross else ".norm2")
            layer_past = past[i] if past is not None else None
            if stack.placement == "post":
                a, kv = self.attention(stack, p + ".self_attn", x, x, stack.causal, layer_past)
                x = self.norm(x + a, kind, eps, p + ".norm1")
                if stack.cross:
                    c, _ = self.attention(stack, p + ".cross_attn", x, memory, False)
                    x = self.norm(x + c, kind, eps, p + ".norm2")
                x = self.norm(x + self.ffn(stack, x, p + ".ffn"), kind, eps, n_ffn)
            else:
                y = self.norm(x, kind, eps, p + ".norm1")
                a, kv = self.attention(stack, p + ".self_attn", y, y, stack.causal, layer_past)
                x = x + a
                if stack.cross:
                    c, _ = self.attention(stack, p + ".cross_attn", self.norm(x, kind, eps, p + ".norm2"),
                                          memory, False)
                    x = x + c
                x = x + self.ffn(stack, self.norm(x, kind, eps, n_ffn), p + ".ffn")
            present.append(kv)
        if stack.final_norm:
            x = self.norm(x, stack.final_norm[0], stack.final_norm[1], stack.name + ".final_norm")
        return x, present

    def head(self, h):
        if self.output == "lm_head":
            w = self.w(self.target_table) if self.tied else self.w("output.weight")
            return F.linear(h, w, self.w("output.bias"))
        if self.output == "classifier":
            pooled = h[0:1] if self.pool == "first" else h.mean(0, keepdim=True)
            return self.linear(pooled, "classifier")
        return h

    # -- entry points ----------------------------------------------------
    def forward(self, tokens, source=None):
        """The prompt run tmc's executable makes: output rows for `tokens`."""
        if self.encoder_decoder:
            memory, _ = self.run_stack(self.stacks["encoder"], self.embed(source))
            target = self.embed(tokens, table=self.target_table)
            h, _ = self.run_stack(self.stacks["decoder"], target, memory)
        else:
            stack = next(iter(self.stacks.values()))
            h, _ = self.run_stack(stack, self.embed(tokens))
        return self.head(h)

    def prefill(self, tokens):
        """Decoder-only: logits of the prompt and the caches [layers] of (k, v)."""
        h, present = self.run_stack(self.stacks["decoder"], self.embed(tokens))
        return self.head(h), present

    def step(self, tokens, past):
        """Decoder-only: one run after len(past k) cached rows; returns logits and the grown caches."""
        offset = past[0][0].shape[0]
        h, grown = self.run_stack(self.stacks["decoder"], self.embed(tokens, offset), past=past)
        return self.head(h), grown


class DecodeStep(torch.nn.Module):
    """One decoding step with the caches as stacked tensors, for ONNX export:
    (tokens [1], past_k [layers, P, kv], past_v) -> logits [1, vocab]."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens, past_k, past_v):
        past = [(past_k[i], past_v[i]) for i in range(past_k.shape[0])]
        stack = self.model.stacks["decoder"]
        h, _ = self.model.run_stack(stack, self.model.embed(tokens, past_k.shape[1]), past=past)
        return self.model.head(h)


def build(check_json_path, weights_path):
    with open(check_json_path) as f:
        spec = json.load(f)
    model = TmModel(spec, load_safetensors(weights_path))
    model.eval()
    return model
