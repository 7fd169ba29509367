#!/usr/bin/python3
# expected_configs.py - The resolved config of every parity spec, written by
# hand from the spec text and docs/spec-language.md (issue #27).
#
# torch_model.py builds its PyTorch model from the `config` object of
# `tmc check --json`, so it trusts tmc's own reading of the spec: a wrong
# default (eps, head_dim, kv_heads, d_ff, mask), a lost `layers A..B { }`
# override or a wrong ffn/activation name would give torch and the executable
# the same wrong model, and parity would pass. Here every value is resolved by
# a person, from the spec's text (specs.py, examples/*.tm) and the defaults of
# docs/spec-language.md, never from tmc's output; run_parity.py fails a spec
# whose `tmc check` config differs from this in any field, and
# `--check-configs` does so for every spec without compiling.
#
# The comparison covers the whole config of docs/architecture.md ("tmc check
# --json also prints config"), not only the fields torch_model.py and
# run_parity.py read today, and a field tmc prints that is not written here is
# itself a difference: a field the torch model starts to read must first be
# given an independent expected value. Beside the config, `--check-configs`
# and `--check` also hold the check's `kv_cache` word and `kv_cache_bytes` to
# those worked out from the expected config (expected_kv_cache).
#
# Defaults used below, from docs/spec-language.md:
#   model:  position sinusoidal, embed_scale false, embed_norm none,
#           segments 0, share_embeddings true, output hidden, dtype f32,
#           precision f32, kv_cache f32; lm_head: tied true, bias false;
#           classifier: pool first, pooler false.
#   stack:  kv_heads = heads, head_dim = d_model / heads, d_ff = 4 * d_model,
#           ffn relu, norm post(layernorm(eps = 1e-5)), final_norm none for a
#           post-norm stack, bias true, attention full, mask none in an
#           encoder and causal in a decoder, cross_attention true in the
#           decoder of an encoder-decoder model and false everywhere else,
#           precision = the model's precision, kv_cache = the model's
#           kv_cache in a decoder; an encoder layer's kv_cache is always f32
#           (the encoder keeps no cache: the key is an error in an encoder
#           block, and the model-level key is the decoder's default).
#   overrides: a layer takes a key from its override, else the stack block,
#           else the default; defaults that depend on other keys (head_dim,
#           kv_heads) are worked out per layer.
# Where docs/spec-language.md is silent: whether mask terms keep their written
# order (compared as a multiset here, since `+` is a union; `mask = none` is
# [] as docs/architecture.md says); `share_embeddings` of a model without both
# stacks (no effect; compared with its default, true); the `cross_attention`
# of an encoder (false: "else false"). No spec relies on a default eps, rope
# theta, random seed or classifier pool: each is written where used.
#
#   expected_configs.py --check-configs TMC DIR   every spec of specs.py, then a
#                                                 self-test: each single-field
#                                                 change of each config must be
#                                                 reported
#   expected_configs.py --check TMC NAME PATH     the spec file PATH against
#                                                 NAME's expected config

import argparse
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import specs  # noqa: E402


# ----------------------------------------------------------------------------
# Building blocks, in the shape docs/architecture.md gives the config.

def layernorm(eps):
    return {"kind": "layernorm", "eps": eps}


def rmsnorm(eps):
    return {"kind": "rmsnorm", "eps": eps}


def post(norm):
    return dict(norm, placement="post")


def pre(norm):
    return dict(norm, placement="pre")


FULL = {"kind": "full"}


def linformer(k):
    return {"kind": "linformer", "k": k}


NONE_MASK = []  # `mask = none`: no term
CAUSAL = {"kind": "causal"}
PADDING = {"kind": "padding"}


def sliding_window(size):
    return {"kind": "sliding_window", "size": size}


def dilated_window(size, dilation):
    return {"kind": "dilated_window", "size": size, "dilation": dilation}


def global_(*tokens):
    return {"kind": "global", "tokens": list(tokens)}


def random_(per_row, seed):
    return {"kind": "random", "per_row": per_row, "seed": seed}


HIDDEN = {"kind": "hidden"}


def lm_head(tied, bias):
    return {"kind": "lm_head", "tied": tied, "bias": bias}


def classifier(classes, pool, pooler=False):
    return {"kind": "classifier", "classes": classes, "pool": pool, "pooler": pooler}


def position(kind, theta=None):
    return {"kind": kind} if theta is None else {"kind": kind, "theta": theta}


def layer(*, heads, kv_heads, head_dim, d_ff, ffn, bias, norm, attention, mask, precision,
          kv_cache):
    """One layer, every key given (no defaults here: each is resolved by hand)."""
    return {"heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "d_ff": d_ff,
            "ffn": ffn, "bias": bias, "norm": norm, "attention": attention, "mask": mask,
            "precision": precision, "kv_cache": kv_cache}


def stack(*, layers, final_norm, cross_attention, every, overrides=()):
    """A stack whose layers are `every` with each (A, B, keys) of `overrides`
    applied to layers A..B inclusive (keys resolved by hand, as in `every`)."""
    layer_specs = []
    for i in range(layers):
        spec = dict(every)
        for first, last, keys in overrides:
            if first <= i <= last:
                spec.update(keys)
        layer_specs.append(spec)
    return {"layers": layers, "final_norm": final_norm, "cross_attention": cross_attention,
            "layer_specs": layer_specs}


def model(*, name, vocab, d_model, max_seq, position, embed_scale, embed_norm, segments,
          share_embeddings, output, dtype, precision, kv_cache, encoder, decoder):
    return {"name": name, "vocab": vocab, "d_model": d_model, "max_seq": max_seq,
            "position": position, "embed_scale": embed_scale, "embed_norm": embed_norm,
            "segments": segments, "share_embeddings": share_embeddings, "output": output,
            "dtype": dtype, "precision": precision, "kv_cache": kv_cache, "encoder": encoder,
            "decoder": decoder}


# ----------------------------------------------------------------------------
# The expected configs. Comments name the defaults applied ("default") and
# the arithmetic of derived ones; everything else is written in the spec.

EXPECTED = {
    # ---- examples/*.tm, as they are ---------------------------------------
    "example:encoder-tiny": model(
        name="encoder_tiny", vocab=100, d_model=64, max_seq=64, position=position("learned"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,  # defaults
        output=HIDDEN, dtype="f32", precision="f32", kv_cache="f32",  # defaults
        encoder=stack(layers=2, final_norm=None, cross_attention=False,  # post: none; encoder
                      every=layer(heads=4, kv_heads=4, head_dim=16,  # = heads; 64 / 4
                                  d_ff=128, ffn="relu", bias=True,  # bias default
                                  norm=post(layernorm(1e-5)), attention=FULL,
                                  mask=NONE_MASK, precision="f32",  # encoder default
                                  kv_cache="f32")),
        decoder=None),
    "example:bert-mini-encoder": model(
        name="bert_mini_encoder", vocab=1000, d_model=128, max_seq=128,
        position=position("sinusoidal"), embed_scale=True, embed_norm=None, segments=0,
        share_embeddings=True, output=HIDDEN, dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(layers=4, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=32,  # 128 / 4
                                  d_ff=512, ffn="relu", bias=True,
                                  norm=post(layernorm(1e-5)), attention=FULL, mask=NONE_MASK,
                                  precision="f32", kv_cache="f32")),
        decoder=None),
    "example:gpt-mini": model(
        name="gpt_mini", vocab=50257, d_model=128, max_seq=256, position=position("learned"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,
        output=lm_head(tied=False, bias=False),  # bias default false
        dtype="f32", precision="f32", kv_cache="f32", encoder=None,
        decoder=stack(layers=2, final_norm=layernorm(1e-5), cross_attention=False,  # no encoder
                      every=layer(heads=4, kv_heads=4, head_dim=32, d_ff=512, ffn="gelu_tanh",
                                  bias=True, norm=pre(layernorm(1e-5)), attention=FULL,
                                  mask=[CAUSAL], precision="f32", kv_cache="f32"))),

    # ---- encoders ---------------------------------------------------------
    "enc-post-ln-relu": model(
        name="enc_post_ln_relu", vocab=97, d_model=45, max_seq=37,
        position=position("sinusoidal"), embed_scale=True, embed_norm=None, segments=0,
        share_embeddings=True, output=HIDDEN, dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=5, kv_heads=5, head_dim=9,  # 45 / 5
                                  d_ff=96, ffn="relu", bias=True, norm=post(layernorm(1e-5)),
                                  attention=FULL, mask=NONE_MASK, precision="f32", kv_cache="f32")),
        decoder=None),
    "bert-base-scaled": model(
        name="bert_base_scaled", vocab=97, d_model=64, max_seq=40, position=position("learned"),
        embed_scale=False, embed_norm=layernorm(1e-12), segments=2, share_embeddings=True,
        output=classifier(classes=3, pool="first", pooler=True), dtype="f32", precision="f32",
        kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=128, ffn="gelu",
                                  bias=True, norm=post(layernorm(1e-12)), attention=FULL,
                                  mask=[PADDING], precision="f32", kv_cache="f32")),
        decoder=None),
    "enc-pre-ln-silu-mean": model(
        name="enc_pre_ln_silu_mean", vocab=97, d_model=64, max_seq=48, position=position("none"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,
        output=classifier(classes=4, pool="mean"), dtype="f16", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=layernorm(1e-5), cross_attention=False,
                      every=layer(heads=2, kv_heads=2, head_dim=32,  # 64 / 2
                                  d_ff=256,  # 4 * 64
                                  ffn="silu", bias=False, norm=pre(layernorm(1e-5)),
                                  attention=FULL, mask=[PADDING], precision="f32", kv_cache="f32")),
        decoder=None),
    "enc-rms-window-global-mlm": model(
        name="enc_rms_window_global_mlm", vocab=97, d_model=64, max_seq=48,
        position=position("learned"), embed_scale=False, embed_norm=rmsnorm(1e-6), segments=0,
        share_embeddings=True, output=lm_head(tied=True, bias=True), dtype="f32", precision="f32",
        kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=2, head_dim=16, d_ff=256, ffn="gelu_tanh",
                                  bias=True, norm=post(rmsnorm(1e-6)), attention=FULL,
                                  mask=[PADDING, sliding_window(8), global_(0, 5)],
                                  precision="f32", kv_cache="f32")),
        decoder=None),
    "enc-alibi-dilated-random": model(
        name="enc_alibi_dilated_random", vocab=97, d_model=64, max_seq=48,
        position=position("alibi"), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=HIDDEN, dtype="bf16", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=layernorm(1e-5), cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=80, ffn="geglu",
                                  bias=True, norm=pre(rmsnorm(1e-6)), attention=FULL,
                                  mask=[PADDING, dilated_window(12, 3), random_(3, 7)],
                                  precision="f32", kv_cache="f32")),
        decoder=None),
    "enc-rope-mqa-linformer": model(
        name="enc_rope_mqa_linformer", vocab=97, d_model=64, max_seq=48,
        position=position("rope", theta=500), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=False, bias=False), dtype="f32", precision="f32",
        kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=1, head_dim=16, d_ff=256, ffn="swiglu",
                                  bias=True, norm=post(layernorm(1e-5)), attention=linformer(16),
                                  mask=[PADDING], precision="f32", kv_cache="f32")),
        decoder=None),
    "enc-headdim-overrides": model(
        name="enc_headdim_overrides", vocab=97, d_model=64, max_seq=48,
        position=position("sinusoidal"), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=HIDDEN, dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(
            layers=3, final_norm=None, cross_attention=False,
            every=layer(heads=4, kv_heads=4, head_dim=12,  # head_dim given, not 64 / 4
                        d_ff=256, ffn="relu", bias=True, norm=post(layernorm(1e-5)),
                        attention=FULL, mask=[CAUSAL], precision="f32", kv_cache="f32"),
            overrides=[
                # heads = 2 keeps the stack's head_dim = 12 (set in the block).
                (1, 1, dict(heads=2, kv_heads=1, ffn="geglu", bias=False,
                            mask=[sliding_window(5), global_(3)])),
                (2, 2, dict(attention=linformer(8), d_ff=40, mask=NONE_MASK,
                            norm=post(rmsnorm(1e-5)))),
            ]),
        decoder=None),
    "enc-random-global": model(
        name="enc_random_global", vocab=97, d_model=36, max_seq=32, position=position("learned"),
        embed_scale=False, embed_norm=None, segments=3, share_embeddings=True,
        output=classifier(classes=2, pool="mean"), dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=None,  # `final_norm = none` written
                      cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=9,  # 36 / 4
                                  d_ff=144,  # 4 * 36
                                  ffn="gelu", bias=True, norm=pre(layernorm(1e-5)),
                                  attention=FULL, mask=[random_(4, 3), global_(1)],
                                  precision="f32", kv_cache="f32")),
        decoder=None),
    "longformer-scaled": model(
        name="longformer_scaled", vocab=97, d_model=64, max_seq=40, position=position("learned"),
        embed_scale=False, embed_norm=layernorm(1e-12), segments=2, share_embeddings=True,
        output=classifier(classes=2, pool="first"), dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(
            layers=2, final_norm=None, cross_attention=False,
            every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=128, ffn="gelu", bias=True,
                        norm=post(layernorm(1e-12)), attention=FULL, mask=[PADDING],
                        precision="f32", kv_cache="f32"),
            overrides=[(0, 0, dict(mask=[PADDING, sliding_window(8), global_(0)]))]),
        decoder=None),
    "bigbird-scaled": model(
        name="bigbird_scaled", vocab=97, d_model=64, max_seq=48, position=position("learned"),
        embed_scale=False, embed_norm=layernorm(1e-12), segments=0, share_embeddings=True,
        output=HIDDEN, dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=128, ffn="gelu_tanh",
                                  bias=True, norm=post(layernorm(1e-12)), attention=FULL,
                                  mask=[PADDING, sliding_window(6), global_(0, 1),
                                        random_(3, 0)], precision="f32", kv_cache="f32")),
        decoder=None),
    "long-windows-4k": model(
        name="long_windows_4k", vocab=97, d_model=32, max_seq=4096, position=position("learned"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,
        output=HIDDEN, dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(
            layers=3, final_norm=layernorm(1e-5), cross_attention=False,
            every=layer(heads=2, kv_heads=2, head_dim=16, d_ff=48, ffn="gelu", bias=True,
                        norm=pre(layernorm(1e-5)), attention=FULL,
                        mask=[PADDING, sliding_window(256), global_(0, 1, 2)],
                        precision="f32", kv_cache="f32"),
            overrides=[(1, 1, dict(mask=[PADDING, sliding_window(192), global_(0),
                                         random_(3, 5)])),
                       (2, 2, dict(mask=[PADDING, dilated_window(128, 2), global_(0, 2050)]))]),
        decoder=None),

    # ---- decoders ---------------------------------------------------------
    "gpt2-small-scaled": model(
        name="gpt2_small_scaled", vocab=97, d_model=64, max_seq=48, position=position("learned"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,
        output=lm_head(tied=True, bias=False), dtype="f32", precision="f32",
        kv_cache="f32", encoder=None,
        decoder=stack(layers=2, final_norm=layernorm(1e-5), cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=128, ffn="gelu_tanh",
                                  bias=True, norm=pre(layernorm(1e-5)), attention=FULL,
                                  mask=[CAUSAL], precision="f32", kv_cache="f32"))),
    "llama-scaled": model(
        name="llama_scaled", vocab=97, d_model=64, max_seq=48,
        position=position("rope", theta=10000), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=False, bias=False), dtype="f32", precision="f32",
        kv_cache="f32",
        encoder=None,
        decoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=False,
                      every=layer(heads=4, kv_heads=2, head_dim=16, d_ff=88, ffn="swiglu",
                                  bias=False, norm=pre(rmsnorm(1e-6)), attention=FULL,
                                  mask=[CAUSAL],
                                  precision="f32",  # no mask written: decoder default
                                  kv_cache="f32"))),
    "long-dec-window-4k": model(
        name="long_dec_window_4k", vocab=97, d_model=32, max_seq=4096,
        position=position("rope", theta=10000), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=False, bias=False), dtype="f32",
        precision="f32", kv_cache="f32", encoder=None,
        decoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=False,
                      every=layer(heads=2, kv_heads=2, head_dim=16, d_ff=40, ffn="swiglu",
                                  bias=True, norm=pre(rmsnorm(1e-6)), attention=FULL,
                                  mask=[CAUSAL, sliding_window(256)], precision="f32",
                                  kv_cache="f32"))),
    "dec-alibi-window": model(
        name="dec_alibi_window", vocab=97, d_model=64, max_seq=48, position=position("alibi"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,
        output=lm_head(tied=False, bias=True), dtype="f32", precision="f32",
        kv_cache="f32", encoder=None,
        decoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256, ffn="silu",
                                  bias=True, norm=post(layernorm(1e-5)), attention=FULL,
                                  mask=[sliding_window(6)], precision="f32", kv_cache="f32"))),
    "dec-mqa-f16": model(
        name="dec_mqa_f16", vocab=97, d_model=64, max_seq=48, position=position("sinusoidal"),
        embed_scale=True, embed_norm=None, segments=0, share_embeddings=True,
        output=lm_head(tied=True, bias=False), dtype="f16", precision="f32",
        kv_cache="f32", encoder=None,
        decoder=stack(layers=2, final_norm=None,  # `final_norm = none` written
                      cross_attention=False,
                      every=layer(heads=4, kv_heads=1, head_dim=16, d_ff=256, ffn="geglu",
                                  bias=True, norm=pre(layernorm(1e-5)), attention=FULL,
                                  mask=[CAUSAL], precision="f32", kv_cache="f32"))),
    "dec-rope-dilated-bf16": model(
        name="dec_rope_dilated_bf16", vocab=97, d_model=64, max_seq=48,
        position=position("rope", theta=10000), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=True, bias=False), dtype="bf16", precision="f32",
        kv_cache="f32",
        encoder=None,
        decoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=2, kv_heads=2, head_dim=24,  # given, not 64 / 2
                                  d_ff=256, ffn="relu", bias=True, norm=post(rmsnorm(1e-6)),
                                  attention=FULL, mask=[CAUSAL, dilated_window(9, 2)],
                                  precision="f32", kv_cache="f32"))),
    "dec-global-random": model(
        name="dec_global_random", vocab=97, d_model=48, max_seq=48, position=position("learned"),
        embed_scale=False, embed_norm=layernorm(1e-5), segments=0, share_embeddings=True,
        output=lm_head(tied=True, bias=False), dtype="f32", precision="f32",
        kv_cache="f32", encoder=None,
        decoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=12,  # 48 / 4
                                  d_ff=100, ffn="gelu", bias=True, norm=pre(rmsnorm(1e-6)),
                                  attention=FULL,
                                  mask=[CAUSAL, global_(0, 2), random_(2, 11)], precision="f32",
                                  kv_cache="f32"))),
    "dec-noncausal": model(
        name="dec_noncausal", vocab=97, d_model=30, max_seq=45, position=position("none"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,
        output=lm_head(tied=True, bias=False), dtype="f32", precision="f32",
        kv_cache="f32", encoder=None,
        decoder=stack(
            layers=2, final_norm=None, cross_attention=False,
            every=layer(heads=3, kv_heads=3, head_dim=10,  # 30 / 3
                        d_ff=120,  # 4 * 30
                        ffn="relu", bias=True, norm=post(layernorm(1e-5)), attention=FULL,
                        mask=NONE_MASK,
                        precision="f32",  # `mask = none` written (not the decoder default)
                        kv_cache="f32"),
            overrides=[(1, 1, dict(mask=[PADDING, global_(1), sliding_window(4)]))])),
    "dec-linformer-cls": model(
        name="dec_linformer_cls", vocab=97, d_model=64, max_seq=48,
        position=position("sinusoidal"), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=classifier(classes=3, pool="mean"), dtype="f32",
        precision="f32", kv_cache="f32",
        encoder=None,
        decoder=stack(layers=2, final_norm=layernorm(1e-5), cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256, ffn="gelu",
                                  bias=True, norm=pre(layernorm(1e-5)), attention=linformer(12),
                                  mask=NONE_MASK, precision="f32", kv_cache="f32"))),
    "dec-linformer-rope-lm": model(
        name="dec_linformer_rope_lm", vocab=97, d_model=64, max_seq=48,
        position=position("rope", theta=10000), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=True, bias=False), dtype="f32", precision="f32",
        kv_cache="f32",
        encoder=None,
        decoder=stack(layers=2, final_norm=layernorm(1e-5), cross_attention=False,
                      every=layer(heads=4, kv_heads=2, head_dim=16, d_ff=256, ffn="silu",
                                  bias=True, norm=pre(layernorm(1e-5)), attention=linformer(20),
                                  mask=[PADDING], precision="f32", kv_cache="f32"))),
    "dec-overrides-hidden": model(
        name="dec_overrides_hidden", vocab=97, d_model=64, max_seq=48, position=position("alibi"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True, output=HIDDEN,
        dtype="f32", precision="f32", kv_cache="f32", encoder=None,
        decoder=stack(
            layers=2, final_norm=rmsnorm(1e-6), cross_attention=False,
            every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256, ffn="gelu_tanh", bias=True,
                        norm=pre(rmsnorm(1e-6)), attention=FULL, mask=[CAUSAL], precision="f32",
                        kv_cache="f32"),
            # heads stays 4 in layer 0, so head_dim stays 64 / 4.
            overrides=[(0, 0, dict(norm=post(layernorm(1e-5)), ffn="swiglu", kv_heads=2,
                                   d_ff=48, bias=False,
                                   mask=[PADDING, sliding_window(3)]))])),

    # ---- encoder-decoders -------------------------------------------------
    "transformer-base-scaled": model(
        name="transformer_base_scaled", vocab=97, d_model=64, max_seq=48,
        position=position("sinusoidal"), embed_scale=True, embed_norm=None, segments=0,
        share_embeddings=True,  # default
        output=lm_head(tied=True, bias=False), dtype="f32", precision="f32", kv_cache="f32",
        # No norm written: post(layernorm(eps = 1e-5)) by default, so no final_norm.
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=128, ffn="relu",
                                  bias=True, norm=post(layernorm(1e-5)), attention=FULL,
                                  mask=[PADDING], precision="f32", kv_cache="f32")),
        decoder=stack(layers=2, final_norm=None,
                      cross_attention=True,  # default in an encoder-decoder's decoder
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=128, ffn="relu",
                                  bias=True, norm=post(layernorm(1e-5)), attention=FULL,
                                  mask=[CAUSAL], precision="f32", kv_cache="f32"))),
    "encdec-rope-unshared": model(
        name="encdec_rope_unshared", vocab=97, d_model=64, max_seq=48,
        position=position("rope", theta=10000), embed_scale=False, embed_norm=layernorm(1e-5),
        segments=2, share_embeddings=False, output=lm_head(tied=True, bias=False), dtype="f32",
        precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=False,
                      every=layer(heads=4, kv_heads=2, head_dim=16, d_ff=256, ffn="swiglu",
                                  bias=True, norm=pre(rmsnorm(1e-6)), attention=FULL,
                                  mask=[PADDING], precision="f32", kv_cache="f32")),
        decoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=True,
                      every=layer(heads=4, kv_heads=1, head_dim=16, d_ff=256, ffn="geglu",
                                  bias=False, norm=pre(rmsnorm(1e-6)), attention=FULL,
                                  mask=[CAUSAL], precision="f32",  # decoder default
                                  kv_cache="f32"))),
    "encdec-alibi-nocross": model(
        name="encdec_alibi_nocross", vocab=97, d_model=64, max_seq=48, position=position("alibi"),
        embed_scale=False, embed_norm=None, segments=0, share_embeddings=True,
        output=lm_head(tied=False, bias=False), dtype="f32", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256, ffn="gelu",
                                  bias=True, norm=post(layernorm(1e-5)), attention=FULL,
                                  mask=[PADDING], precision="f32", kv_cache="f32")),
        decoder=stack(layers=2, final_norm=layernorm(1e-5),
                      cross_attention=False,  # written
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256, ffn="silu",
                                  bias=True, norm=pre(layernorm(1e-5)), attention=FULL,
                                  mask=[CAUSAL, sliding_window(5)], precision="f32",
                                  kv_cache="f32"))),
    "encdec-alibi-cls": model(
        name="encdec_alibi_cls", vocab=97, d_model=64, max_seq=48, position=position("alibi"),
        embed_scale=False, embed_norm=rmsnorm(1e-6), segments=0, share_embeddings=True,
        output=classifier(classes=5, pool="mean"), dtype="f16", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=2, head_dim=16, d_ff=256, ffn="gelu",
                                  bias=True, norm=post(rmsnorm(1e-6)), attention=FULL,
                                  mask=[PADDING, sliding_window(7)], precision="f32",
                                  kv_cache="f32")),
        decoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=True,
                      every=layer(heads=2, kv_heads=2, head_dim=32,  # 64 / 2
                                  d_ff=256, ffn="swiglu", bias=True, norm=pre(layernorm(1e-5)),
                                  attention=FULL, mask=[CAUSAL, dilated_window(8, 2)],
                                  precision="f32", kv_cache="f32"))),
    "encdec-learned-bf16": model(
        name="encdec_learned_bf16", vocab=97, d_model=64, max_seq=48,
        position=position("learned"), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=False, output=HIDDEN, dtype="bf16", precision="f32", kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256, ffn="gelu_tanh",
                                  bias=True, norm=post(layernorm(1e-5)), attention=linformer(10),
                                  mask=[PADDING], precision="f32", kv_cache="f32")),
        decoder=stack(layers=2, final_norm=None, cross_attention=True,
                      every=layer(heads=2, kv_heads=2, head_dim=24,  # given, not 64 / 2
                                  d_ff=256, ffn="relu", bias=True, norm=post(layernorm(1e-5)),
                                  attention=FULL,
                                  mask=[CAUSAL, random_(2, 5), global_(0)], precision="f32",
                                  kv_cache="f32"))),

    # ---- reduced precision --------------------------------------------------
    "dec-precision-int8": model(
        name="dec_precision_int8", vocab=97, d_model=64, max_seq=48,
        position=position("learned"), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=True, bias=False), dtype="f32",
        precision="int8", kv_cache="f32", encoder=None,
        decoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=False,
                      every=layer(heads=4, kv_heads=2, head_dim=16, d_ff=256, ffn="swiglu",
                                  bias=True, norm=pre(rmsnorm(1e-6)), attention=FULL,
                                  mask=[CAUSAL],
                                  precision="int8", kv_cache="f32"),  # the model's
                      overrides=[(1, 1, dict(precision="q4", d_ff=88))])),
    "enc-precision-int8-cls": model(
        name="enc_precision_int8_cls", vocab=97, d_model=64, max_seq=48,
        position=position("sinusoidal"), embed_scale=False, embed_norm=None, segments=2,
        share_embeddings=True, output=classifier(classes=3, pool="mean"), dtype="f32",
        precision="int8", kv_cache="f32",
        encoder=stack(layers=2, final_norm=None, cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256, ffn="gelu",
                                  bias=True, norm=post(layernorm(1e-5)), attention=linformer(12),
                                  mask=[PADDING], precision="int8",  # the model's
                                  kv_cache="f32")),  # the encoder keeps no cache
        decoder=None),
    "dec-precision-bf16": model(
        name="dec_precision_bf16", vocab=97, d_model=64, max_seq=48,
        position=position("learned"), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=False, bias=True), dtype="f32",
        precision="bf16", kv_cache="bf16", encoder=None,
        decoder=stack(layers=2, final_norm=layernorm(1e-5), cross_attention=False,
                      every=layer(heads=4, kv_heads=1, head_dim=16, d_ff=256, ffn="geglu",
                                  bias=True, norm=pre(layernorm(1e-5)), attention=FULL,
                                  mask=[CAUSAL],  # decoder default
                                  precision="bf16",  # the model's
                                  kv_cache="bf16"))),  # the model's: a decoder's default
    "encdec-precision-mixed": model(
        name="encdec_precision_mixed", vocab=97, d_model=64, max_seq=48,
        position=position("rope", theta=10000), embed_scale=False, embed_norm=None, segments=0,
        share_embeddings=True, output=lm_head(tied=False, bias=False), dtype="f32",
        precision="q4",  # and so the head's
        kv_cache="f32",  # default (the decoder block sets its own)
        encoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=False,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=136, ffn="silu",
                                  bias=True, norm=pre(rmsnorm(1e-6)), attention=FULL,
                                  mask=[PADDING], precision="q4",  # the model's
                                  kv_cache="f32")),  # the encoder keeps no cache
        decoder=stack(layers=2, final_norm=rmsnorm(1e-6), cross_attention=True,
                      every=layer(heads=4, kv_heads=4, head_dim=16, d_ff=256,
                                  ffn="gelu_tanh", bias=True, norm=pre(rmsnorm(1e-6)),
                                  attention=FULL, mask=[CAUSAL],
                                  precision="bf16",  # the stack's, over the model's
                                  kv_cache="bf16"),  # the stack's, over the model's f32
                      overrides=[(1, 1, dict(precision="f32", kv_cache="f16"))])),
}


# ----------------------------------------------------------------------------
# The comparison

def _same_scalar(expected, actual):
    # JSON true and 1 are equal to Python; a flag and a count are not.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, int) and isinstance(actual, int):
            return expected == actual
        # eps and theta: tolerate a float printed with fewer digits than a
        # double holds, never a different value (1e-5 vs 1e-6 differ by 10x).
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=0.0)
    return type(expected) is type(actual) and expected == actual


def _diff(expected, actual, path, out):
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            where = f"{path}.{key}" if path else key
            if key not in actual:
                out.append(f"{where}: expected {json.dumps(expected[key])}, tmc check has no such "
                           "field")
            else:
                _diff(expected[key], actual[key], where, out)
        for key in actual:
            if key not in expected:
                where = f"{path}.{key}" if path else key
                out.append(f"{where}: tmc check gives {json.dumps(actual[key])}, not in the "
                           "expected config (add an expected value to expected_configs.py)")
    elif isinstance(expected, list) and isinstance(actual, list):
        if path.endswith(".mask"):
            # Mask terms combine as a union (`+`): their order carries no
            # meaning, so none is required; each term must match exactly.
            key = lambda term: json.dumps(term, sort_keys=True)
            if sorted(map(key, expected)) != sorted(map(key, actual)):
                out.append(f"{path}: expected {json.dumps(expected)}, tmc check gives "
                           f"{json.dumps(actual)}")
            return
        if len(expected) != len(actual):
            out.append(f"{path}: expected {len(expected)} entries {json.dumps(expected)}, "
                       f"tmc check gives {len(actual)}: {json.dumps(actual)}")
            return
        for i, (e, a) in enumerate(zip(expected, actual)):
            _diff(e, a, f"{path}[{i}]", out)
    elif isinstance(expected, (dict, list)) or isinstance(actual, (dict, list)):
        out.append(f"{path}: expected {json.dumps(expected)}, tmc check gives {json.dumps(actual)}")
    elif not _same_scalar(expected, actual):
        out.append(f"{path}: expected {json.dumps(expected)}, tmc check gives {json.dumps(actual)}")


def diff_config(name, config):
    """The differences between spec NAME's hand-written config and `config`
    (tmc check --json's), one line each naming the spec and the field path;
    [] when they agree."""
    if name not in EXPECTED:
        return [f"{name}: no expected config in tests/parity/expected_configs.py (write one "
                "from the spec text and docs/spec-language.md)"]
    out = []
    _diff(EXPECTED[name], config, "", out)
    return [f"{name}: config.{line}" for line in out]


def config_of(check):
    """The resolved config of a `tmc check --json` answer (docs/architecture.md),
    `precision` included: the model's (which the head takes) and each layer's."""
    return check["config"]


def tmc_check(tmc, path):
    result = subprocess.run([tmc, "check", "--json", path], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"tmc check {path} failed ({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout)


def tmc_config(tmc, path):
    return config_of(tmc_check(tmc, path))


def expected_kv_cache(config):
    """The `kv_cache` word and `kv_cache_bytes` that `tmc check --json` must
    print beside the config (docs/spec-language.md, "kv_cache_bytes"), worked
    out from an expected config: per decoder layer, keys and values of
    max_seq positions, 2 x max_seq x kv_heads x head_dim elements of 4 bytes
    (f32) or 2 (f16, bf16), twice with cross-attention (its cache of the
    encoder output); 0 without a decoder. The word is the decoder layers'
    kv_cache, or `mixed` where they differ. Where the text is silent: an
    encoder-only model, which keeps no cache, says f32 (what its layers
    say)."""
    decoder = config["decoder"]
    if decoder is None:
        return "f32", 0
    caches = {layer["kv_cache"] for layer in decoder["layer_specs"]}
    total = 0
    for layer in decoder["layer_specs"]:
        element = 4 if layer["kv_cache"] == "f32" else 2
        per_cache = 2 * config["max_seq"] * layer["kv_heads"] * layer["head_dim"] * element
        total += per_cache * (2 if decoder["cross_attention"] else 1)
    return (caches.pop() if len(caches) == 1 else "mixed"), total


def diff_kv_cache(name, check):
    """The differences between the `kv_cache` and `kv_cache_bytes` of a
    `tmc check --json` answer and those of NAME's expected config."""
    if name not in EXPECTED:
        return []
    word, size = expected_kv_cache(EXPECTED[name])
    out = []
    if check.get("kv_cache") != word:
        out.append(f"{name}: kv_cache: expected {json.dumps(word)}, tmc check gives "
                   f"{json.dumps(check.get('kv_cache'))}")
    if check.get("kv_cache_bytes") != size:
        out.append(f"{name}: kv_cache_bytes: expected {size}, tmc check gives "
                   f"{json.dumps(check.get('kv_cache_bytes'))}")
    return out


def _leaves(node, path=""):
    """(path, value) of every scalar, null and empty list in a config, with
    paths spelled as _diff spells them."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list) and node:
        for i, value in enumerate(node):
            yield from _leaves(value, f"{path}[{i}]")
    else:
        yield path, node


def _changed(value):
    """A value of the same kind that differs from `value`."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 10  # eps 1e-5 -> 1e-4
    if isinstance(value, str):
        return value + "_x"
    if value is None:
        return {"kind": "layernorm", "eps": 1e-5}
    return [{"kind": "causal"}]  # an empty mask list


def _set(config, path, value):
    """A copy of config with the leaf at `path` replaced."""
    copy = json.loads(json.dumps(config))
    steps = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    node = copy
    for step in steps[:-1]:
        node = node[int(step[1:-1])] if step.startswith("[") else node[step]
    last = steps[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value
    return copy


def self_test(name, config):
    """The checker against itself: `config` agrees with NAME's expected one;
    each single-field change of it must be reported at that field (at the
    mask, for a mask term's field), an extra field must be reported, and a
    reordered mask must not. Returns the failures and the number of changes."""
    failures, count = [], 0
    for path, value in _leaves(config):
        count += 1
        where = "config." + re.sub(r"(\.mask)\[\d+\].*", r"\1", path)
        wrong = diff_config(name, _set(config, path, _changed(value)))
        if not any(line.startswith(f"{name}: {where}:") for line in wrong):
            failures.append(f"{name}: changing {path} from {json.dumps(value)} is not reported "
                            f"at {where} (the checker reported {wrong})")
    if not diff_config(name, dict(config, extra_field=1)):
        failures.append(f"{name}: a field tmc would add is not reported")
    for stack in ("encoder", "decoder"):
        for i, layer in enumerate((config[stack] or {}).get("layer_specs", [])):
            if len(layer["mask"]) > 1:
                flipped = _set(config, f"{stack}.layer_specs[{i}].mask", layer["mask"][::-1])
                if diff_config(name, flipped):
                    failures.append(f"{name}: {stack} layer {i}'s mask terms in another order "
                                    "are reported, but `+` is a union")
    return failures, count


def check_configs(tmc, directory):
    """Every spec of specs.py against its expected config, and the checker
    against changed copies of each; 0 when all is well."""
    failures = []
    names = specs.names()
    for name in sorted(set(EXPECTED) - set(names)):
        failures.append(f"{name}: an expected config for a spec specs.py no longer has")
    changes = 0
    for name in names:
        check = tmc_check(tmc, specs.write(name, directory))
        config = config_of(check)
        wrong = diff_config(name, config) + diff_kv_cache(name, check)
        print(f"{name}: {'differs' if wrong else 'ok'}")
        failures += wrong
        if not wrong:
            # Only a config that agrees tells a reported change from noise.
            broken, count = self_test(name, config)
            for field, value in (("kv_cache", f"{check['kv_cache']}_x"),
                                 ("kv_cache_bytes", check["kv_cache_bytes"] + 1)):
                count += 1
                if not diff_kv_cache(name, dict(check, **{field: value})):
                    broken.append(f"{name}: changing {field} is not reported")
            failures += broken
            changes += count
    print(f"self-test: {changes} single-field changes of the configs above, each must be "
          "reported")
    for line in failures:
        print(f"FAIL: {line}")
    if not failures:
        print(f"tmc check's config agrees with the hand-written one for all {len(names)} specs")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description="tmc check's configs against hand-written ones")
    parser.add_argument("--check-configs", nargs=2, metavar=("TMC", "DIR"))
    parser.add_argument("--check", nargs=3, metavar=("TMC", "NAME", "PATH"),
                        help="the spec file PATH against NAME's expected config")
    args = parser.parse_args()
    if args.check_configs:
        return check_configs(*args.check_configs)
    if args.check:
        tmc, name, path = args.check
        check = tmc_check(tmc, path)
        wrong = diff_config(name, config_of(check)) + diff_kv_cache(name, check)
        for line in wrong:
            print(f"FAIL: {line}")
        print(f"{name}: {'differs' if wrong else 'ok'}")
        return 1 if wrong else 0
    parser.print_help()
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"error: {e}")
        sys.exit(1)
