"""bench/e2e/fused_onnx.py - GPT-2 and BERT as ONNX Runtime's transformer optimizer leaves them.

usage: fused_onnx.py CHECK.json WEIGHTS.safetensors OUT.onnx [--int8]

Users who want ONNX Runtime's best CPU time run its offline optimizer
(onnxruntime.transformers.optimizer, model types gpt2 and bert) on their
export. It rewrites the graph into ONNX Runtime's fused contrib operators,
which its session-time optimizer does not form by itself from an export
(standard_model.py's graphs keep separate MatMuls per head projection and
the attention's matmul/softmax/matmul). That Python package is not in
Debian, so this writes the graph it produces directly, from the same
weights (python3-onnx), for the operators in ONNX Runtime's
docs/ContribOperators.md:

  GPT-2: EmbedLayerNormalization (token and position embeddings, their sum
         and the first layer's norm), then per layer Attention (fused q/k/v weights [d, 3d], unidirectional),
         MatMul (output projection), SkipLayerNormalization (residual add,
         projection bias and the next norm in one), MatMul + FastGelu (bias
         fused), MatMul, SkipLayerNormalization; the tied head a MatMul.
  BERT:  EmbedLayerNormalization (tokens, segments, positions, norm, and the
         mask's sequence lengths), then per layer Attention (mask index),
         MatMul, SkipLayerNormalization, MatMul + BiasGelu, MatMul,
         SkipLayerNormalization; the classifier on the first token.

--int8 writes what onnxruntime.quantization.quantize_dynamic makes of that
graph: Attention -> QAttention and MatMul -> DynamicQuantizeLinear +
MatMulInteger chains (quantize_onnx.py), weights int8 per output column.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_onnx  # noqa: E402
import torch_model  # noqa: E402

MS = "com.microsoft"


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op, inputs, outputs=1, domain="", **attrs):
        self.count += 1
        names = [f"{op}_{self.count}_{i}" for i in range(outputs)] if isinstance(outputs, int) \
            else outputs
        self.nodes.append(helper.make_node(op, inputs, names, name=f"{op}_{self.count}",
                                           domain=domain, **attrs))
        return names[0] if len(names) == 1 else names


def f32(array):
    return np.asarray(array, np.float32)


def qkv(w, prefix):
    """tmc's q/k/v linears ([out, in]) as Attention's merged weights [in, 3 out] and bias."""
    weight = np.concatenate([w[f"{prefix}.{x}.weight"] for x in "qkv"], 0).T
    bias = np.concatenate([w[f"{prefix}.{x}.bias"] for x in "qkv"], 0)
    return f32(weight), f32(bias)


def attention(g, x, w, prefix, heads, int8, mask=None, unidirectional=0):
    weight, bias = qkv(w, prefix)
    mask_input = [mask] if mask else []
    if not int8:
        return g.node("Attention", [x, g.const(prefix + ".qkv_w", weight),
                                    g.const(prefix + ".qkv_b", bias)] + mask_input,
                      domain=MS, num_heads=heads, unidirectional=unidirectional)
    q, scale = quantize_onnx.quantize_weight(weight)
    xq, xs, xz = g.node("DynamicQuantizeLinear", [x], 3)
    return g.node("QAttention", [xq, g.const(prefix + ".qkv_wq", q), g.const(prefix + ".qkv_b", bias),
                                 xs, g.const(prefix + ".qkv_ws", scale), mask or "", xz,
                                 g.const(prefix + ".qkv_wz", np.zeros(scale.shape, np.int8))],
                  domain=MS, num_heads=heads, unidirectional=unidirectional)


def skip_norm(g, x, skip, w, norm, bias, eps, want_sum):
    outputs = [f"skipln_{g.count + 1}_out", "", "", f"skipln_{g.count + 1}_sum"] if want_sum \
        else [f"skipln_{g.count + 1}_out"]
    out = g.node("SkipLayerNormalization", [x, skip, g.const(norm + ".g", f32(w[norm + ".weight"])),
                                            g.const(norm + ".b", f32(w[norm + ".bias"])),
                                            g.const(bias + ".skip_bias", f32(w[bias]))],
                 outputs, domain=MS, epsilon=eps)
    return (out[0], out[3]) if want_sum else out


def matmul(g, x, w, name):
    return g.node("MatMul", [x, g.const(name + ".wt", f32(w[name + ".weight"]).T)])


def gpt2(g, tm, w, int8):
    stack = tm.stacks["decoder"]
    # The token and position embeddings, their sum and the first norm in one
    # (embedding_sum, output 2, is the residual stream).
    ids = g.node("Cast", ["input_ids"], to=TensorProto.INT32)
    x, _, h = g.node("EmbedLayerNormalization", [
        ids, "", g.const("wte", f32(w["embed.tokens"])), g.const("wpe", f32(w["embed.positions"])),
        "", g.const("ln1_0.g", f32(w["decoder.layers.0.norm1.weight"])),
        g.const("ln1_0.b", f32(w["decoder.layers.0.norm1.bias"]))], 3, domain=MS,
        epsilon=stack.eps)
    for i in range(stack.layers):
        p = f"decoder.layers.{i}"
        a = attention(g, x, w, p + ".self_attn", stack.heads, int8, unidirectional=1)
        x, h = skip_norm(g, matmul(g, a, w, p + ".self_attn.o"), h, w, p + ".norm2",
                         p + ".self_attn.o.bias", stack.eps, True)
        up = g.node("FastGelu", [matmul(g, x, w, p + ".ffn.up"),
                                 g.const(p + ".up.b", f32(w[p + ".ffn.up.bias"]))], domain=MS)
        down = matmul(g, up, w, p + ".ffn.down")
        last = i + 1 == stack.layers
        norm = "decoder.final_norm" if last else f"decoder.layers.{i + 1}.norm1"
        eps = stack.final_norm[1] if last else stack.eps
        if last:
            x = skip_norm(g, down, h, w, norm, p + ".ffn.down.bias", eps, False)
        else:
            x, h = skip_norm(g, down, h, w, norm, p + ".ffn.down.bias", eps, True)
    return g.node("MatMul", [x, g.const("lm_head.wt", f32(w["embed.tokens"]).T)], ["logits"])


def bert(g, tm, w, int8):
    stack = tm.stacks["encoder"]
    ids = g.node("Cast", ["input_ids"], to=TensorProto.INT32)
    mask = g.node("Cast", ["attention_mask"], to=TensorProto.INT32)
    segments = g.node("ConstantOfShape", [g.node("Shape", [ids])],
                      value=helper.make_tensor("zero", TensorProto.INT32, [1], [0]))
    h, mask_index = g.node("EmbedLayerNormalization", [
        ids, segments, g.const("word", f32(w["embed.tokens"])),
        g.const("position", f32(w["embed.positions"])), g.const("segment", f32(w["embed.segments"])),
        g.const("emb.g", f32(w["embed.norm.weight"])), g.const("emb.b", f32(w["embed.norm.bias"])),
        mask], 2, domain=MS, epsilon=tm.embed_norm[1])
    for i in range(stack.layers):
        p = f"encoder.layers.{i}"
        a = attention(g, h, w, p + ".self_attn", stack.heads, int8, mask=mask_index)
        h1 = skip_norm(g, matmul(g, a, w, p + ".self_attn.o"), h, w, p + ".norm1",
                       p + ".self_attn.o.bias", stack.eps, False)
        up = g.node("BiasGelu", [matmul(g, h1, w, p + ".ffn.up"),
                                 g.const(p + ".up.b", f32(w[p + ".ffn.up.bias"]))], domain=MS)
        h = skip_norm(g, matmul(g, up, w, p + ".ffn.down"), h1, w, p + ".norm2",
                      p + ".ffn.down.bias", stack.eps, False)
    first = g.node("Gather", [h, g.const("first", np.array(0, np.int64))], axis=1)
    return g.node("Add", [matmul(g, first, w, "classifier"),
                          g.const("classifier.b", f32(w["classifier.bias"]))], ["logits"])


def build(check_json, weights, int8):
    tm = torch_model.build(check_json, weights)
    w = {name: tm.w(name).numpy() for name in tm.names}
    g = Graph()
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])
    if "decoder" in tm.stacks and not tm.encoder_decoder:
        gpt2(g, tm, w, int8)
        inputs = [ids]
        out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", tm.vocab])
    elif "encoder" in tm.stacks and not tm.encoder_decoder:
        bert(g, tm, w, int8)
        inputs = [ids, helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                                     ["batch", "sequence"])]
        out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)
    else:
        raise NotImplementedError("a fused form exists for GPT-2- and BERT-style models only")
    graph = helper.make_graph(g.nodes, "fused", inputs, [out], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)])
    if int8:
        quantize_onnx.quantize(model)  # the remaining MatMuls
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("check")
    parser.add_argument("weights")
    parser.add_argument("out")
    parser.add_argument("--int8", action="store_true")
    args = parser.parse_args()
    model = build(args.check, args.weights, args.int8)
    tmp = args.out + ".tmp"
    onnx.save(model, tmp)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
