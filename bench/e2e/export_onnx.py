"""bench/e2e/export_onnx.py - ONNX graphs of a tmc model for ONNX Runtime (torch.onnx, opset 14).

usage: export_onnx.py CHECK.json WEIGHTS.safetensors OUTDIR --tokens T [--source S] [--past P]

Writes OUTDIR/prefill.onnx: the prompt run tmc's executable makes (inputs
`tokens` [T] int64, and `source` [S] for an encoder-decoder; output `out`), and
for a decoder-only LM OUTDIR/decode.onnx: one decoding step after P cached
tokens (inputs `tokens` [1], `past_k`, `past_v` [layers, P, kv width]; output
`out` [1, vocab]). Shapes are static: these are the benchmark's shapes.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_model  # noqa: E402


def export(module, inputs, names, path):
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(module, inputs, tmp, input_names=names, output_names=["out"],
                          opset_version=14, do_constant_folding=True)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("check")
    parser.add_argument("weights")
    parser.add_argument("outdir")
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--source", type=int, default=0)
    parser.add_argument("--past", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    model = torch_model.build(args.check, args.weights)
    tokens = torch.zeros(args.tokens, dtype=torch.int64)
    if model.encoder_decoder:
        source = torch.zeros(args.source, dtype=torch.int64)
        export(model, (tokens, source), ["tokens", "source"], os.path.join(args.outdir, "prefill.onnx"))
    else:
        export(model, (tokens,), ["tokens"], os.path.join(args.outdir, "prefill.onnx"))
    if args.past > 0 and not model.encoder_decoder and model.output == "lm_head":
        stack = model.stacks["decoder"]
        width = stack.kv_heads * stack.head_dim
        past = torch.zeros(stack.layers, args.past, width)
        export(torch_model.DecodeStep(model), (torch.zeros(1, dtype=torch.int64), past, past.clone()),
               ["tokens", "past_k", "past_v"], os.path.join(args.outdir, "decode.onnx"))


if __name__ == "__main__":
    main()
