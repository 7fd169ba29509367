"""bench/e2e/long_context_peers.py - the models, dense masks and PyTorch peer of long_context.py.

    long_context_peers.py --check CHECK.json --weights W --tokens-file F --mask FILE.u8
                          --threads N (--serve | --output OUT.f32)

SPECS are the benchmark's three models (d_model 256, 4 heads, d_ff 1024, 4 layers, max_seq
16384, vocab 512): a causal decoder with a 256-token sliding window, a Longformer-style and a
BigBird-style encoder. The dense mask of a model at T tokens is written by dense_mask() with
tests/parity/torch_model.py's mask_matrix (the contract's mask rules, written apart from tmc),
one byte per (query, key), 1 = allowed. DenseModel is the spec in PyTorch, f32, attending with
that mask as an additive [T, T] input (0 or -inf): the same module is exported to ONNX with the
mask as a graph input (export_onnx) and, run as above, is the PyTorch peer: inference mode,
torch.set_num_threads(N), the model loaded and the mask built once, then per line "run K" on
stdin K timed runs (the process's first measurement starts with an untimed warm-up run) and one
JSON line {prefill_ms: [..], peak_rss_bytes}. Torch 2's F.scaled_dot_product_attention takes such
a mask; this Debian torch (1.13) has none, so attention is what its nn.MultiheadAttention runs
with a float mask: baddbmm(mask, q / sqrt(d), k^T) (the mask added inside the GEMM), softmax, bmm.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from torch_model import load_safetensors  # noqa: E402  (bench/e2e's)
from torch_runner import peak_rss_bytes  # noqa: E402
sys.path.append(os.path.join(REPO, "tests", "parity"))  # safetensors_io
import importlib.util  # noqa: E402

# tests/parity/torch_model.py has the same module name as bench/e2e's: load it by path.
_spec = importlib.util.spec_from_file_location(
    "parity_torch_model", os.path.join(REPO, "tests", "parity", "torch_model.py"))
parity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(parity)

_COMMON = """  vocab = 512
  d_model = 256
  max_seq = 16384
"""
_LAYERS = "layers = 4\n    heads = 4\n    d_ff = 1024"
SPECS = {
    "decoder": f"""# long_context.py (a): a causal decoder with a 256-token sliding window
model lc_decoder {{
{_COMMON}  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {{
    {_LAYERS}
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
    mask = causal + sliding_window(size = 256)
  }}
}}
""",
    "longformer": f"""# long_context.py (b): a Longformer-style encoder, window 256 plus 4 global tokens
model lc_longformer {{
{_COMMON}  position = learned
  embed_norm = layernorm(eps = 1e-5)
  output = hidden
  encoder {{
    {_LAYERS}
    ffn = gelu
    norm = post(layernorm(eps = 1e-5))
    mask = padding + sliding_window(size = 256) + global(tokens = [0, 1, 2, 3])
  }}
}}
""",
    "bigbird": f"""# long_context.py (c): a BigBird-style encoder, window 192 (3 blocks of 64), global, random
model lc_bigbird {{
{_COMMON}  position = rope(theta = 10000)
  output = hidden
  encoder {{
    {_LAYERS}
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = padding + sliding_window(size = 192) + global(tokens = [0, 1]) + random(per_row = 3, seed = 7)
  }}
}}
""",
}


def stack_of(config):
    """(stack config, is decoder) of a one-stack model's resolved config."""
    if config["encoder"] is not None and config["decoder"] is not None:
        raise NotImplementedError("encoder-decoder models are not benchmarked here")
    return (config["decoder"], True) if config["decoder"] is not None else (config["encoder"], False)


def dense_mask(config, tokens, path, chunk=512):
    """Writes the [tokens, tokens] mask of the model's (one) mask as bytes (1 = allowed), rows
    in chunks so that mask_matrix's [rows, keys] temporaries stay small."""
    stack, decoder = stack_of(config)
    masks = {json.dumps(layer["mask"], sort_keys=True) for layer in stack["layer_specs"]}
    if len(masks) != 1:
        raise NotImplementedError("layers with different masks")
    terms = stack["layer_specs"][0]["mask"]
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for start in range(0, tokens, chunk):
            rows = range(start, min(tokens, start + chunk))
            allowed = parity.mask_matrix(terms, decoder, config["max_seq"], rows, tokens, tokens)
            f.write(allowed.numpy().astype(np.uint8).tobytes())
    os.replace(tmp, path)


def read_mask(path, tokens):
    """The additive f32 mask [T, T] (0 where allowed, -inf elsewhere) of a dense_mask file."""
    allowed = torch.from_numpy(np.fromfile(path, np.uint8).reshape(tokens, tokens))
    mask = torch.zeros(tokens, tokens)
    mask.masked_fill_(allowed == 0, float("-inf"))
    return mask


def reference_output(config, weights_path, tokens):
    """tests/parity's float64 model of the contract (its own masks) on `tokens`."""
    import safetensors_io
    tensors, _ = safetensors_io.load(weights_path)
    out, _ = parity.Model(config, tensors).forward(list(map(int, tokens)))
    return out.numpy()


class DenseModel(torch.nn.Module):
    """One stack of a resolved config in f32 (norms, positions learned / sinusoidal / rope,
    gated and plain ffns, GQA, every head), attention under a dense additive mask input."""

    def __init__(self, config, weights):
        super().__init__()
        self.c = config
        self.stack, self.decoder = stack_of(config)
        self.name = "decoder" if self.decoder else "encoder"
        position = config["position"]["kind"]
        if position not in ("learned", "sinusoidal", "rope", "none"):
            raise NotImplementedError(f"position {position}")
        for layer in self.stack["layer_specs"]:
            if layer["attention"]["kind"] != "full" or layer["precision"] != "f32":
                raise NotImplementedError("only full f32 attention layers")
        self.keys = {}
        for name, array in weights.items():
            self.keys[name] = name.replace(".", "__")
            self.register_buffer(self.keys[name], torch.from_numpy(np.ascontiguousarray(array)))
        max_seq, d = config["max_seq"], config["d_model"]
        if position == "sinusoidal":
            self.register_buffer("sinusoidal", parity.sinusoidal(range(max_seq), d).float())
        if position == "rope":
            hd = self.stack["layer_specs"][0]["head_dim"]
            inv = config["position"]["theta"] ** (-2.0 * torch.arange(hd // 2, dtype=torch.float64) / hd)
            angle = torch.arange(max_seq, dtype=torch.float64)[:, None] * inv[None, :]
            self.register_buffer("cos", torch.cat([angle.cos(), angle.cos()], -1).float())
            self.register_buffer("sin", torch.cat([angle.sin(), angle.sin()], -1).float())
        self.export_mode = False  # torch.onnx: matmul + add (baddbmm exports with extra Muls)

    def w(self, name):
        key = self.keys.get(name)
        return None if key is None else getattr(self, key)

    def linear(self, x, name):
        return F.linear(x, self.w(name + ".weight"), self.w(name + ".bias"))

    def norm(self, x, spec, name):
        if spec["kind"] == "layernorm":
            return F.layer_norm(x, (self.c["d_model"],), self.w(name + ".weight"), self.w(name + ".bias"),
                                spec["eps"])
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + spec["eps"]) * self.w(name + ".weight")

    def rope(self, x):  # x [heads, T, head_dim], rotate-half
        t, half = x.shape[1], x.shape[2] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
        return x * self.cos[:t] + rotated * self.sin[:t]

    def attention(self, layer, x, mask, prefix):
        h, kvh, hd = layer["heads"], layer["kv_heads"], layer["head_dim"]
        q = self.linear(x, prefix + ".q").view(-1, h, hd).transpose(0, 1)
        k = self.linear(x, prefix + ".k").view(-1, kvh, hd).transpose(0, 1)
        v = self.linear(x, prefix + ".v").view(-1, kvh, hd).transpose(0, 1)
        if self.c["position"]["kind"] == "rope":
            q, k = self.rope(q), self.rope(k)
        if kvh != h:
            k, v = k.repeat_interleave(h // kvh, 0), v.repeat_interleave(h // kvh, 0)
        q = q * (1.0 / math.sqrt(hd))
        if self.export_mode:
            scores = torch.matmul(q, k.transpose(1, 2)) + mask
        else:
            scores = torch.baddbmm(mask, q, k.transpose(1, 2))
        probs = torch.softmax(scores, -1)
        del scores
        out = torch.matmul(probs, v).transpose(0, 1).reshape(-1, h * hd)
        return self.linear(out, prefix + ".o")

    def ffn(self, layer, x, prefix):
        act = parity.activation(layer["ffn"])
        up = self.linear(x, prefix + ".up")
        if layer["ffn"] in ("swiglu", "geglu"):
            return self.linear(act(self.linear(x, prefix + ".gate")) * up, prefix + ".down")
        return self.linear(act(up), prefix + ".down")

    def forward(self, tokens, mask):
        c = self.c
        x = F.embedding(tokens, self.w("embed.tokens"))
        if c["embed_scale"]:
            x = x * math.sqrt(c["d_model"])
        t = tokens.shape[0]
        if c["position"]["kind"] == "learned":
            x = x + self.w("embed.positions")[:t]
        elif c["position"]["kind"] == "sinusoidal":
            x = x + self.sinusoidal[:t]
        if c["segments"] > 0:
            x = x + self.w("embed.segments")[0]
        if c["embed_norm"] is not None:
            x = self.norm(x, c["embed_norm"], "embed.norm")
        for i, layer in enumerate(self.stack["layer_specs"]):
            p, norm = f"{self.name}.layers.{i}", layer["norm"]
            if norm["placement"] == "post":
                x = self.norm(x + self.attention(layer, x, mask, p + ".self_attn"), norm, p + ".norm1")
                x = self.norm(x + self.ffn(layer, x, p + ".ffn"), norm, p + ".norm2")
            else:
                x = x + self.attention(layer, self.norm(x, norm, p + ".norm1"), mask, p + ".self_attn")
                x = x + self.ffn(layer, self.norm(x, norm, p + ".norm2"), p + ".ffn")
        if self.stack["final_norm"] is not None:
            x = self.norm(x, self.stack["final_norm"], self.name + ".final_norm")
        out = c["output"]
        if out["kind"] == "lm_head":
            table = self.w("embed.tokens") if out["tied"] else self.w("output.weight")
            return F.linear(x, table, self.w("output.bias"))
        if out["kind"] == "classifier":
            pooled = x[:1] if out["pool"] == "first" else x.mean(0, keepdim=True)
            if out["pooler"]:
                pooled = torch.tanh(self.linear(pooled, "classifier.pooler"))
            return self.linear(pooled, "classifier")
        return x


def build(check_path, weights_path):
    with open(check_path) as f:
        config = json.load(f)["config"]
    model = DenseModel(config, load_safetensors(weights_path))
    model.eval()
    return model


def export_onnx(check_path, weights_path, path, tokens=64):
    """The model as ONNX (opset 14): inputs `tokens` int64 [T] and `mask` f32 [T, T], output
    `out` [T, width] (or [1, classes]), T dynamic."""
    model = build(check_path, weights_path)
    model.export_mode = True
    example = (torch.zeros(tokens, dtype=torch.int64), torch.zeros(tokens, tokens))
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, example, tmp, input_names=["tokens", "mask"], output_names=["out"],
                          dynamic_axes={"tokens": {0: "T"}, "mask": {0: "T", 1: "T"}, "out": {0: "T"}},
                          opset_version=14, do_constant_folding=True)
    os.replace(tmp, path)


def attention_bytes(config, tokens, engine):
    """A peer's peak at `tokens`, for the memory guard: T x T f32 squares, the mask and per
    head what the dense attention holds at once. Measured at T = 8k and 16k (4 heads): PyTorch
    9.5-10.5 squares (the mask, scores and their softmax), ONNX Runtime 18.5-19 (the mask, as
    node's array and as fed, and the arena's scores, masked scores and softmax)."""
    heads = max(layer["heads"] for layer in stack_of(config)[0]["layer_specs"])
    square = tokens * tokens * 4
    return square * (1.5 + heads * (2.25 if engine == "torch" else 4.4))


def main():
    parser = argparse.ArgumentParser(description="the PyTorch peer of long_context.py")
    parser.add_argument("--check", required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--tokens-file", required=True)
    parser.add_argument("--mask", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--output", help="write the output (raw f32) and exit")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = build(args.check, args.weights)
    tokens = torch.from_numpy(np.fromfile(args.tokens_file, np.int64))
    mask = read_mask(args.mask, len(tokens))
    if args.output:
        with torch.inference_mode():
            model(tokens, mask).numpy().astype("<f4").tofile(args.output)
        return
    warm = [False]

    def measure(runs):
        times = []
        with torch.inference_mode():
            for run in range(runs + (0 if warm[0] else 1)):
                start = time.perf_counter()
                model(tokens, mask)
                elapsed = (time.perf_counter() - start) * 1e3
                if warm[0]:
                    times.append(elapsed)
                warm[0] = True
        print(json.dumps({"prefill_ms": times, "peak_rss_bytes": peak_rss_bytes(),
                          "threads": torch.get_num_threads()}), flush=True)

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if line.startswith("run "):
            measure(int(line.split()[1]))


if __name__ == "__main__":
    main()
