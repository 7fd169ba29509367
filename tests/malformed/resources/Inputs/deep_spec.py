#!/usr/bin/env python3
"""Prints a valid spec with LAYERS encoder and LAYERS decoder layers.

    deep_spec.py LAYERS

Small layers (d_model 64), so that what grows is the number of ops, weights
and fused projections: every other encoder layer has an override of its own
(`layers i..i { d_ff = ... }`), encoder layers use a gated FFN (gate and up
fused), and each decoder layer cross-attends to the encoder's output (the k
and v of every layer read one input).
"""
import sys


def main(argv):
    layers = int(argv[1])
    print("model deep {")
    print("  vocab = 1000\n  d_model = 64\n  max_seq = 32\n  position = sinusoidal")
    print("  output = lm_head(tied = true)")
    print("  encoder {")
    print("    layers = %d; heads = 4; d_ff = 128; ffn = swiglu; mask = padding" % layers)
    for i in range(0, layers, 2):
        print("    layers %d..%d { d_ff = %d }" % (i, i, 128 + (i % 3) * 64))
    print("  }")
    print("  decoder { layers = %d; heads = 4; d_ff = 128; ffn = relu; mask = causal }" % layers)
    print("}")


if __name__ == "__main__":
    main(sys.argv)
