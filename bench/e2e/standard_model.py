"""bench/e2e/standard_model.py - GPT-2 and BERT as users' exporters write them, for ONNX Runtime.

torch_model.py runs a spec as tmc computes it: rows of [T, d_model], separate
q/k/v linears. Users hand ONNX Runtime something else: Hugging Face's modules
exported with torch.onnx, a batch dimension ([batch, sequence] token ids,
dynamic axes), GPT-2's fused `c_attn` (Conv1D: x @ W[in, out] + b, one GEMM
for q, k and v), BERT's separate q/k/v and its additive attention mask. The
modules here follow Hugging Face's modeling_gpt2.py (GPT2LMHeadModel: Conv1D,
the causal `bias` buffer and torch.where, NewGELUActivation written out) and
modeling_bert.py (BertModel's embeddings, extended attention mask, self-output
and output LayerNorms; the spec's classifier on the first token), over the
same weights as tmc, so ONNX Runtime's graph fusions see the patterns its
transformer optimizer was written for.

    export(check_json, weights, path, form) writes one of:
      standard     these modules, opset 14 (LayerNorm as its decomposition,
                   which ONNX Runtime fuses back)
      standard17   the same at opset 17 (LayerNormalization as one op)
"""
import json
import math
import os

import torch
import torch.nn.functional as F

import torch_model

OPSET = {"standard": 14, "standard17": 17}


def _param(array):
    return torch.nn.Parameter(torch.as_tensor(array).float().contiguous(), requires_grad=False)


class Gpt2Standard(torch.nn.Module):
    """GPT2LMHeadModel's computation (pre-norm, fused c_attn, gelu_new, tied head)."""

    def __init__(self, tm):
        super().__init__()
        stack = tm.stacks["decoder"]
        if (stack.placement, stack.norm_kind, stack.ffn) != ("pre", "layernorm", "gelu_tanh") or \
                stack.kv_heads != stack.heads or not tm.tied or tm.spec["position"] != "learned":
            raise NotImplementedError("the GPT-2 form needs pre-layernorm, gelu_tanh, MHA, learned "
                                      "positions and a tied head")
        self.heads, self.head_dim, self.eps = stack.heads, stack.head_dim, stack.eps
        self.d = tm.d  # a Python int: the shapes ONNX sees stay static where HF's are
        self.final_eps = stack.final_norm[1]
        self.wte, self.wpe = _param(tm.w("embed.tokens")), _param(tm.w("embed.positions"))
        self.layers = stack.layers
        for i in range(stack.layers):
            p = f"decoder.layers.{i}"
            a = p + ".self_attn"
            # Conv1D stores [in, out]; tmc's linears are [out, in].
            self.register_parameter(f"c_attn_w{i}", _param(torch.cat(
                [tm.w(f"{a}.{x}.weight") for x in "qkv"], 0).t()))
            self.register_parameter(f"c_attn_b{i}", _param(torch.cat(
                [tm.w(f"{a}.{x}.bias") for x in "qkv"], 0)))
            for name, src in (("attn_proj", a + ".o"), ("c_fc", p + ".ffn.up"),
                              ("mlp_proj", p + ".ffn.down")):
                self.register_parameter(f"{name}_w{i}", _param(tm.w(src + ".weight").t()))
                self.register_parameter(f"{name}_b{i}", _param(tm.w(src + ".bias")))
            for name, src in (("ln_1", ".norm1"), ("ln_2", ".norm2")):
                self.register_parameter(f"{name}_w{i}", _param(tm.w(p + src + ".weight")))
                self.register_parameter(f"{name}_b{i}", _param(tm.w(p + src + ".bias")))
        self.ln_f_w = _param(tm.w("decoder.final_norm.weight"))
        self.ln_f_b = _param(tm.w("decoder.final_norm.bias"))
        max_seq = tm.spec["max_seq"]
        self.register_buffer("bias", torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool))
                             .view(1, 1, max_seq, max_seq), persistent=False)

    def p(self, name, i):
        return getattr(self, f"{name}{i}")

    @staticmethod
    def conv1d(x, weight, bias):
        size_out = x.size()[:-1] + (weight.size(-1),)
        return torch.addmm(bias, x.view(-1, x.size(-1)), weight).view(size_out)

    def split_heads(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def attention(self, x, i):
        d = self.d
        q, k, v = self.conv1d(x, self.p("c_attn_w", i), self.p("c_attn_b", i)).split(d, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5)
        query_length, key_length = q.size(-2), k.size(-2)
        causal = self.bias[:, :, key_length - query_length:key_length, :key_length]
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        out = torch.matmul(torch.softmax(w, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        out = out.view(out.size()[:-2] + (d,))
        return self.conv1d(out, self.p("attn_proj_w", i), self.p("attn_proj_b", i))

    @staticmethod
    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (x + 0.044715 * torch.pow(x, 3.0))))

    def forward(self, input_ids):
        seq = input_ids.size(-1)
        position_ids = torch.arange(0, seq, dtype=torch.long).unsqueeze(0)
        h = F.embedding(input_ids, self.wte) + F.embedding(position_ids, self.wpe)
        d = self.d
        for i in range(self.layers):
            a = F.layer_norm(h, (d,), self.p("ln_1_w", i), self.p("ln_1_b", i), self.eps)
            h = h + self.attention(a, i)
            m = F.layer_norm(h, (d,), self.p("ln_2_w", i), self.p("ln_2_b", i), self.eps)
            m = self.gelu_new(self.conv1d(m, self.p("c_fc_w", i), self.p("c_fc_b", i)))
            h = h + self.conv1d(m, self.p("mlp_proj_w", i), self.p("mlp_proj_b", i))
        h = F.layer_norm(h, (d,), self.ln_f_w, self.ln_f_b, self.final_eps)
        return F.linear(h, self.wte)  # lm_head, tied to wte


class BertStandard(torch.nn.Module):
    """BertModel's computation (post-norm, erf gelu, extended attention mask),
    then the spec's classifier on the first token."""

    def __init__(self, tm):
        super().__init__()
        stack = tm.stacks["encoder"]
        if (stack.placement, stack.norm_kind, stack.ffn) != ("post", "layernorm", "gelu") or \
                tm.output != "classifier" or tm.pool != "first" or not tm.embed_norm or \
                tm.spec["position"] != "learned" or tm.spec["segments"] == 0:
            raise NotImplementedError("the BERT form needs post-layernorm, gelu, an embedding norm, "
                                      "learned positions, segments and a first-token classifier")
        self.tm, self.heads, self.head_dim, self.eps = tm, stack.heads, stack.head_dim, stack.eps
        self.d = tm.d
        self.layers = stack.layers

    def w(self, name):
        return self.tm.w(name)

    def linear(self, x, name):
        return F.linear(x, self.w(name + ".weight"), self.w(name + ".bias"))

    def norm(self, x, name, eps):
        return F.layer_norm(x, (self.d,), self.w(name + ".weight"), self.w(name + ".bias"), eps)

    def scores_view(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        position_ids = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        token_type_ids = torch.zeros_like(input_ids)
        h = F.embedding(input_ids, self.w("embed.tokens")) + \
            F.embedding(token_type_ids, self.w("embed.segments")) + \
            F.embedding(position_ids, self.w("embed.positions"))
        h = self.norm(h, "embed.norm", self.tm.embed_norm[1])
        extended = (1.0 - attention_mask[:, None, None, :].to(h.dtype)) * -10000.0
        for i in range(self.layers):
            p = f"encoder.layers.{i}"
            a = p + ".self_attn"
            q, k, v = (self.scores_view(self.linear(h, f"{a}.{x}")) for x in "qkv")
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + extended
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
            ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,))
            h = self.norm(self.linear(ctx, a + ".o") + h, p + ".norm1", self.eps)
            up = F.gelu(self.linear(h, p + ".ffn.up"))
            h = self.norm(self.linear(up, p + ".ffn.down") + h, p + ".norm2", self.eps)
        return self.linear(h[:, 0], "classifier")


def build(check_json, weights):
    """The standard module of a spec, and its example inputs and input names."""
    tm = torch_model.build(check_json, weights)
    if "decoder" in tm.stacks and not tm.encoder_decoder and tm.output == "lm_head":
        return tm, Gpt2Standard(tm).eval(), ["input_ids"]
    if "encoder" in tm.stacks and not tm.encoder_decoder:
        return tm, BertStandard(tm).eval(), ["input_ids", "attention_mask"]
    raise NotImplementedError("a standard form exists for GPT-2- and BERT-style models only")


def inputs(names, tokens):
    ids = torch.as_tensor(tokens, dtype=torch.long).unsqueeze(0)
    return (ids,) if names == ["input_ids"] else (ids, torch.ones_like(ids))


def export(check_json, weights, path, form, tokens):
    """Writes the form's graph to path; returns the largest difference between
    the standard module and torch_model (same weights) on `tokens`, relative
    to the largest value: the two must compute the same function."""
    tm, module, names = build(check_json, weights)
    example = inputs(names, tokens)
    with torch.no_grad():
        want = tm(torch.as_tensor(tokens, dtype=torch.long))
        got = module(*example)[0]
        error = float((got - want).abs().max() / want.abs().max())
        axes = {name: {0: "batch", 1: "sequence"} for name in names}
        axes["logits"] = {0: "batch", 1: "sequence"} if names == ["input_ids"] else {0: "batch"}
        tmp = path + ".tmp"
        torch.onnx.export(module, example, tmp, input_names=names, output_names=["logits"],
                          dynamic_axes=axes, opset_version=OPSET[form], do_constant_folding=True)
    os.replace(tmp, path)
    return error


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("check")
    parser.add_argument("weights")
    parser.add_argument("out")
    parser.add_argument("--form", choices=sorted(OPSET), default="standard")
    parser.add_argument("--tokens", required=True, help="comma-separated ids checked against torch_model")
    args = parser.parse_args()
    err = export(args.check, args.weights, args.out, args.form,
                 [int(t) for t in args.tokens.split(",")])
    print(json.dumps({"standard_vs_rows_relative_error": err}))
