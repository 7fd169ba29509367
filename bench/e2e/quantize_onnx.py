"""bench/e2e/quantize_onnx.py - ONNX Runtime's dynamic int8 form of a graph (python3-onnx).

usage: quantize_onnx.py IN.onnx OUT.onnx

What onnxruntime.quantization.quantize_dynamic writes (its Python package is
not on Debian; this is the same rewrite): every MatMul and Gemm whose weight
is an initializer becomes

    DynamicQuantizeLinear(A) -> A_q (uint8), A_scale, A_zero_point   (per call, per tensor)
    MatMulInteger(A_q, W_q, A_zero_point, W_zero_point) -> int32
    Cast(float) * (A_scale * W_scale) [+ bias]

with W int8, symmetric (zero point 0). Scales are per output column
(quantize_dynamic's per_channel=True: more accurate than per tensor, no
slower), as tmc's int8 is per channel. ONNX Runtime's graph optimizer fuses
each chain into DynamicQuantizeMatMul / MatMulIntegerToFloat (its VNNI
kernels). Gemm nodes are rewritten too: Hugging Face's GPT-2 Conv1D exports
as Gemm, which quantize_dynamic would leave in f32, and a peer at its best
quantizes every linear.
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantize_weight(w):
    """[K, N] f32 -> int8 [K, N], scale [N] (symmetric, per column)."""
    scale = np.abs(w).max(axis=0) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def quantize(model):
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    nodes, added, count = [], [], 0
    for node in graph.node:
        weight_name = node.input[1] if len(node.input) > 1 else None
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        plain_gemm = node.op_type == "Gemm" and attrs.get("alpha", 1.0) == 1.0 and \
            attrs.get("beta", 1.0) == 1.0 and not attrs.get("transA", 0)
        if node.op_type not in ("MatMul",) and not plain_gemm or weight_name not in inits:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(inits[weight_name]).astype(np.float32)
        if w.ndim != 2:
            nodes.append(node)
            continue
        if node.op_type == "Gemm" and attrs.get("transB", 0):
            w = w.T
        q, scale = quantize_weight(np.ascontiguousarray(w))
        p = f"{node.name or node.output[0]}_q{count}"
        count += 1
        added += [numpy_helper.from_array(q, p + "_W_q"),
                  numpy_helper.from_array(scale, p + "_W_scale"),
                  numpy_helper.from_array(np.zeros(scale.shape, np.int8), p + "_W_zero_point")]
        a = node.input[0]
        out = node.output[0]
        has_bias = node.op_type == "Gemm" and len(node.input) > 2 and node.input[2]
        scaled = p + "_scaled" if has_bias else out
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [a], [p + "_A_q", p + "_A_scale", p + "_A_zp"],
                             name=p + "_dql"),
            helper.make_node("MatMulInteger", [p + "_A_q", p + "_W_q", p + "_A_zp", p + "_W_zero_point"],
                             [p + "_int32"], name=p + "_mmi"),
            helper.make_node("Cast", [p + "_int32"], [p + "_float"], to=TensorProto.FLOAT,
                             name=p + "_cast"),
            helper.make_node("Mul", [p + "_A_scale", p + "_W_scale"], [p + "_scale"], name=p + "_scale_mul"),
            helper.make_node("Mul", [p + "_float", p + "_scale"], [scaled], name=p + "_mul"),
        ]
        if has_bias:
            nodes.append(helper.make_node("Add", [scaled, node.input[2]], [out], name=p + "_bias"))
    used = {name for node in nodes for name in node.input}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(keep + added)
    return count


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    model = onnx.load(sys.argv[1])
    count = quantize(model)
    if count == 0:
        sys.exit(f"error: {sys.argv[1]}: no MatMul or Gemm with an initializer weight to quantize")
    onnx.save(model, sys.argv[2])
    print(f"{sys.argv[2]}: {count} linears quantized to int8")


if __name__ == "__main__":
    main()
