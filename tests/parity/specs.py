#!/usr/bin/python3
# specs.py - The specs the parity suite compares with PyTorch.
#
# A covering design over the language's keys: every value of every key (per
# stack kind where the meaning differs, as for mask windows) appears in at
# least one small spec, not the full cartesian product, so the suite compiles
# about two dozen models. Examples small enough to run in seconds are used as
# they are; the big ones (GPT-2 small, BERT base, the original Transformer,
# Llama-style, Longformer- and BigBird-style) by scaled-down copies with the
# same keys. coverage() checks the covering claim against the resolved
# configs `tmc check --json` prints, so a spec edited out of the design fails
# a test instead of silently shrinking it. `precision` (bf16, int8 and q4
# linears) is covered by four specs of its own, which run_parity.py compares
# with torch's rounding of the same values (README.md, "Reduced precision");
# two of them also round the decoder's key/value caches (`kv_cache = f16 |
# bf16`, self- and cross-attention's).
#
#   specs.py --list                 names, one per line (CMake reads this)
#   specs.py --write NAME DIR       write the spec NAME into DIR, print its path
#   specs.py --coverage TMC         check coverage with the configs from TMC

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))

# Examples used as they are (small enough to compile and run in seconds).
EXAMPLES = ["encoder-tiny", "bert-mini-encoder", "gpt-mini"]


def model(name, keys, encoder=None, decoder=None, comment=""):
    lines = [f"# {comment}"] if comment else []
    lines.append(f"model {name} {{")
    lines += [f"  {k} = {v}" for k, v in keys]
    for kind, stack in (("encoder", encoder), ("decoder", decoder)):
        if stack is None:
            continue
        lines.append(f"  {kind} {{")
        for k, v in stack:
            if k.startswith("layers "):
                lines.append(f"    {k} {{ " + "; ".join(f"{a} = {b}" for a, b in v) + " }")
            else:
                lines.append(f"    {k} = {v}")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def small(max_seq=48, vocab=97, d_model=64):
    return [("vocab", vocab), ("d_model", d_model), ("max_seq", max_seq)]


LN = "layernorm(eps = 1e-5)"
RMS = "rmsnorm(eps = 1e-6)"

GENERATED = {
    # ---- encoders ----------------------------------------------------------
    "enc-post-ln-relu": model(
        "enc_post_ln_relu",
        small(max_seq=37, d_model=45) + [("position", "sinusoidal"), ("embed_scale", "true"), ("output", "hidden")],
        encoder=[("layers", 2), ("heads", 5), ("d_ff", 96), ("ffn", "relu"),
                 ("norm", f"post({LN})"), ("mask", "none")]),
    "bert-base-scaled": model(
        "bert_base_scaled",
        small(max_seq=40) + [("position", "learned"), ("segments", 2),
                             ("embed_norm", "layernorm(eps = 1e-12)"),
                             ("output", "classifier(classes = 3, pool = first, pooler = true)")],
        encoder=[("layers", 2), ("heads", 4), ("d_ff", 128), ("ffn", "gelu"),
                 ("norm", "post(layernorm(eps = 1e-12))"), ("mask", "padding")],
        comment="examples/bert-base.tm scaled down: same keys, smaller sizes"),
    "enc-pre-ln-silu-mean": model(
        "enc_pre_ln_silu_mean",
        small() + [("position", "none"), ("output", "classifier(classes = 4, pool = mean)"),
                   ("dtype", "f16")],
        encoder=[("layers", 2), ("heads", 2), ("ffn", "silu"), ("norm", f"pre({LN})"),
                 ("final_norm", LN), ("bias", "false"), ("mask", "padding")]),
    "enc-rms-window-global-mlm": model(
        "enc_rms_window_global_mlm",
        small() + [("position", "learned"), ("embed_norm", RMS),
                   ("output", "lm_head(tied = true, bias = true)")],
        encoder=[("layers", 2), ("heads", 4), ("kv_heads", 2), ("ffn", "gelu_tanh"),
                 ("norm", f"post({RMS})"),
                 ("mask", "padding + sliding_window(size = 8) + global(tokens = [0, 5])")]),
    "enc-alibi-dilated-random": model(
        "enc_alibi_dilated_random",
        small() + [("position", "alibi"), ("output", "hidden"), ("dtype", "bf16")],
        encoder=[("layers", 2), ("heads", 4), ("ffn", "geglu"), ("d_ff", 80),
                 ("norm", f"pre({RMS})"), ("final_norm", LN),
                 ("mask", "padding + dilated_window(size = 12, dilation = 3) + "
                          "random(per_row = 3, seed = 7)")]),
    "enc-rope-mqa-linformer": model(
        "enc_rope_mqa_linformer",
        small() + [("position", "rope(theta = 500)"), ("output", "lm_head(tied = false)")],
        encoder=[("layers", 2), ("heads", 4), ("kv_heads", 1), ("ffn", "swiglu"),
                 ("norm", f"post({LN})"), ("attention", "linformer(k = 16)"),
                 ("mask", "padding")]),
    "enc-headdim-overrides": model(
        "enc_headdim_overrides",
        small() + [("position", "sinusoidal"), ("output", "hidden")],
        encoder=[("layers", 3), ("heads", 4), ("head_dim", 12), ("ffn", "relu"),
                 ("norm", f"post({LN})"), ("mask", "causal"),
                 ("layers 1..1", [("heads", 2), ("kv_heads", 1), ("ffn", "geglu"),
                                  ("bias", "false"),
                                  ("mask", "sliding_window(size = 5) + global(tokens = [3])")]),
                 ("layers 2..2", [("attention", "linformer(k = 8)"), ("d_ff", 40), ("mask", "none"),
                                  ("norm", "post(rmsnorm(eps = 1e-5))")])]),
    "enc-random-global": model(
        "enc_random_global",
        small(max_seq=32, d_model=36) + [("position", "learned"), ("segments", 3),
                             ("output", "classifier(classes = 2, pool = mean)")],
        encoder=[("layers", 2), ("heads", 4), ("ffn", "gelu"), ("norm", f"pre({LN})"),
                 ("final_norm", "none"),
                 ("mask", "random(per_row = 4, seed = 3) + global(tokens = [1])")]),
    "longformer-scaled": model(
        "longformer_scaled",
        small(max_seq=40) + [("position", "learned"), ("segments", 2),
                             ("embed_norm", "layernorm(eps = 1e-12)"),
                             ("output", "classifier(classes = 2, pool = first)")],
        encoder=[("layers", 2), ("heads", 4), ("d_ff", 128), ("ffn", "gelu"),
                 ("norm", "post(layernorm(eps = 1e-12))"), ("mask", "padding"),
                 ("layers 0..0", [("mask", "padding + sliding_window(size = 8) + "
                                           "global(tokens = [0])")])],
        comment="examples/longformer-local-global.tm scaled down"),
    "bigbird-scaled": model(
        "bigbird_scaled",
        small(max_seq=48) + [("position", "learned"), ("embed_norm", "layernorm(eps = 1e-12)"),
                             ("output", "hidden")],
        encoder=[("layers", 2), ("heads", 4), ("d_ff", 128), ("ffn", "gelu_tanh"),
                 ("norm", "post(layernorm(eps = 1e-12))"),
                 ("mask", "padding + sliding_window(size = 6) + global(tokens = [0, 1]) + "
                          "random(per_row = 3, seed = 0)")],
        comment="examples/bigbird-random.tm scaled down"),
    # 4096 tokens (64 key blocks) under each windowed mask kind, one layer
    # each: Longformer's window + globals, BigBird's window + globals +
    # random keys, a dilated window.
    "long-windows-4k": model(
        "long_windows_4k",
        small(max_seq=4096, d_model=32) + [("position", "learned"), ("output", "hidden")],
        encoder=[("layers", 3), ("heads", 2), ("d_ff", 48), ("ffn", "gelu"),
                 ("norm", f"pre({LN})"), ("final_norm", LN),
                 ("mask", "padding + sliding_window(size = 256) + global(tokens = [0, 1, 2])"),
                 ("layers 1..1", [("mask", "padding + sliding_window(size = 192) + "
                                           "global(tokens = [0]) + random(per_row = 3, seed = 5)")]),
                 ("layers 2..2", [("mask", "padding + dilated_window(size = 128, dilation = 2) + "
                                           "global(tokens = [0, 2050])")])],
        comment="long contexts: Longformer-, BigBird- and dilated-window layers at 4k tokens"),
    # ---- decoders ----------------------------------------------------------
    "gpt2-small-scaled": model(
        "gpt2_small_scaled",
        small() + [("position", "learned"), ("output", "lm_head(tied = true)")],
        decoder=[("layers", 2), ("heads", 4), ("d_ff", 128), ("ffn", "gelu_tanh"),
                 ("norm", f"pre({LN})"), ("final_norm", LN), ("mask", "causal")],
        comment="examples/gpt2-small.tm scaled down"),
    "llama-scaled": model(
        "llama_scaled",
        small() + [("position", "rope(theta = 10000)"), ("output", "lm_head(tied = false)")],
        decoder=[("layers", 2), ("heads", 4), ("kv_heads", 2), ("d_ff", 88),
                 ("ffn", "swiglu"), ("bias", "false"), ("norm", f"pre({RMS})"),
                 ("final_norm", RMS)],
        comment="examples/llama-style.tm scaled down"),
    "long-dec-window-4k": model(
        "long_dec_window_4k",
        small(max_seq=4096, d_model=32) + [("position", "rope"), ("output", "lm_head(tied = false)")],
        decoder=[("layers", 2), ("heads", 2), ("d_ff", 40), ("ffn", "swiglu"),
                 ("norm", f"pre({RMS})"), ("final_norm", RMS),
                 ("mask", "causal + sliding_window(size = 256)")],
        comment="long contexts: a Mistral-style 256-token window at 4k tokens"),
    "dec-alibi-window": model(
        "dec_alibi_window",
        small() + [("position", "alibi"), ("output", "lm_head(tied = false, bias = true)")],
        decoder=[("layers", 2), ("heads", 4), ("ffn", "silu"), ("norm", f"post({LN})"),
                 ("mask", "sliding_window(size = 6)")]),
    "dec-mqa-f16": model(
        "dec_mqa_f16",
        small() + [("position", "sinusoidal"), ("embed_scale", "true"),
                   ("output", "lm_head(tied = true)"), ("dtype", "f16")],
        decoder=[("layers", 2), ("heads", 4), ("kv_heads", 1), ("ffn", "geglu"),
                 ("norm", f"pre({LN})"), ("final_norm", "none"), ("mask", "causal")]),
    "dec-rope-dilated-bf16": model(
        "dec_rope_dilated_bf16",
        small() + [("position", "rope(theta = 10000)"), ("output", "lm_head(tied = true)"),
                   ("dtype", "bf16")],
        decoder=[("layers", 2), ("heads", 2), ("head_dim", 24), ("ffn", "relu"),
                 ("norm", f"post({RMS})"),
                 ("mask", "causal + dilated_window(size = 9, dilation = 2)")]),
    "dec-global-random": model(
        "dec_global_random",
        small(d_model=48) + [("position", "learned"), ("embed_norm", LN),
                   ("output", "lm_head(tied = true)")],
        decoder=[("layers", 2), ("heads", 4), ("d_ff", 100), ("ffn", "gelu"),
                 ("norm", f"pre({RMS})"), ("final_norm", RMS),
                 ("mask", "causal + global(tokens = [0, 2]) + random(per_row = 2, seed = 11)")]),
    "dec-noncausal": model(
        "dec_noncausal",
        small(max_seq=45, d_model=30) + [("position", "none"), ("output", "lm_head(tied = true)")],
        decoder=[("layers", 2), ("heads", 3), ("ffn", "relu"), ("norm", f"post({LN})"),
                 ("mask", "none"),
                 ("layers 1..1", [("mask", "padding + global(tokens = [1]) + "
                                           "sliding_window(size = 4)")])]),
    "dec-linformer-cls": model(
        "dec_linformer_cls",
        small() + [("position", "sinusoidal"), ("output", "classifier(classes = 3, pool = mean)")],
        decoder=[("layers", 2), ("heads", 4), ("ffn", "gelu"), ("norm", f"pre({LN})"),
                 ("final_norm", LN), ("attention", "linformer(k = 12)"), ("mask", "none")]),
    "dec-linformer-rope-lm": model(
        "dec_linformer_rope_lm",
        small() + [("position", "rope(theta = 10000)"), ("output", "lm_head(tied = true)")],
        decoder=[("layers", 2), ("heads", 4), ("kv_heads", 2), ("ffn", "silu"),
                 ("norm", f"pre({LN})"), ("final_norm", LN),
                 ("attention", "linformer(k = 20)"), ("mask", "padding")]),
    "dec-overrides-hidden": model(
        "dec_overrides_hidden",
        small() + [("position", "alibi"), ("output", "hidden")],
        decoder=[("layers", 2), ("heads", 4), ("ffn", "gelu_tanh"), ("norm", f"pre({RMS})"),
                 ("final_norm", RMS), ("mask", "causal"),
                 ("layers 0..0", [("norm", f"post({LN})"), ("ffn", "swiglu"), ("kv_heads", 2),
                                  ("d_ff", 48), ("bias", "false"),
                                  ("mask", "padding + sliding_window(size = 3)")])]),
    # ---- encoder-decoders --------------------------------------------------
    "transformer-base-scaled": model(
        "transformer_base_scaled",
        small() + [("position", "sinusoidal"), ("embed_scale", "true"),
                   ("output", "lm_head(tied = true)")],
        encoder=[("layers", 2), ("heads", 4), ("d_ff", 128), ("ffn", "relu"),
                 ("mask", "padding")],
        decoder=[("layers", 2), ("heads", 4), ("d_ff", 128), ("ffn", "relu"),
                 ("mask", "causal")],
        comment="examples/transformer-base.tm scaled down"),
    "encdec-rope-unshared": model(
        "encdec_rope_unshared",
        small() + [("position", "rope(theta = 10000)"), ("share_embeddings", "false"),
                   ("segments", 2), ("embed_norm", LN), ("output", "lm_head(tied = true)")],
        encoder=[("layers", 2), ("heads", 4), ("kv_heads", 2), ("ffn", "swiglu"),
                 ("norm", f"pre({RMS})"), ("final_norm", RMS), ("mask", "padding")],
        decoder=[("layers", 2), ("heads", 4), ("kv_heads", 1), ("ffn", "geglu"),
                 ("norm", f"pre({RMS})"), ("final_norm", RMS), ("bias", "false")]),
    "encdec-alibi-nocross": model(
        "encdec_alibi_nocross",
        small() + [("position", "alibi"), ("output", "lm_head(tied = false)")],
        encoder=[("layers", 2), ("heads", 4), ("ffn", "gelu"), ("norm", f"post({LN})"),
                 ("mask", "padding")],
        decoder=[("layers", 2), ("heads", 4), ("ffn", "silu"), ("norm", f"pre({LN})"),
                 ("final_norm", LN), ("cross_attention", "false"),
                 ("mask", "causal + sliding_window(size = 5)")]),
    "encdec-alibi-cls": model(
        "encdec_alibi_cls",
        small() + [("position", "alibi"), ("embed_norm", RMS), ("dtype", "f16"),
                   ("output", "classifier(classes = 5, pool = mean)")],
        encoder=[("layers", 2), ("heads", 4), ("kv_heads", 2), ("ffn", "gelu"),
                 ("norm", f"post({RMS})"), ("mask", "padding + sliding_window(size = 7)")],
        decoder=[("layers", 2), ("heads", 2), ("ffn", "swiglu"), ("norm", f"pre({LN})"),
                 ("final_norm", RMS), ("mask", "causal + dilated_window(size = 8, dilation = 2)")]),
    "encdec-learned-bf16": model(
        "encdec_learned_bf16",
        small() + [("position", "learned"), ("share_embeddings", "false"), ("dtype", "bf16"),
                   ("output", "hidden")],
        encoder=[("layers", 2), ("heads", 4), ("ffn", "gelu_tanh"), ("norm", f"post({LN})"),
                 ("attention", "linformer(k = 10)"), ("mask", "padding")],
        decoder=[("layers", 2), ("heads", 2), ("head_dim", 24), ("ffn", "relu"),
                 ("norm", f"post({LN})"),
                 ("mask", "causal + random(per_row = 2, seed = 5) + global(tokens = [0])")]),
    # ---- reduced precision (`precision`, torch_model.quantized_linear) ------
    "dec-precision-int8": model(
        "dec_precision_int8",
        small() + [("position", "learned"), ("output", "lm_head(tied = true)"),
                   ("precision", "int8")],
        decoder=[("layers", 2), ("heads", 4), ("kv_heads", 2), ("ffn", "swiglu"),
                 ("norm", f"pre({RMS})"), ("final_norm", RMS), ("mask", "causal"),
                 ("layers 1..1", [("precision", "q4"), ("d_ff", 88)])],
        comment="int8 linears in layer 0 and an int8 tied head (whose packed table the "
                "embedding reads, dequantized), q4 linears in layer 1 (d_ff 88: its down projection's K = 88 ends in "
                "a part block of 24); decodes"),
    "enc-precision-int8-cls": model(
        "enc_precision_int8_cls",
        small() + [("position", "sinusoidal"), ("segments", 2),
                   ("output", "classifier(classes = 3, pool = mean)"), ("precision", "int8")],
        encoder=[("layers", 2), ("heads", 4), ("ffn", "gelu"), ("norm", f"post({LN})"),
                 ("attention", "linformer(k = 12)"), ("mask", "padding")],
        comment="int8 linears and classifier; linformer's sequence projections stay f32"),
    "dec-precision-bf16": model(
        "dec_precision_bf16",
        small() + [("position", "learned"), ("output", "lm_head(tied = false, bias = true)"),
                   ("precision", "bf16"), ("kv_cache", "bf16")],
        decoder=[("layers", 2), ("heads", 4), ("kv_heads", 1), ("ffn", "geglu"),
                 ("norm", f"pre({LN})"), ("final_norm", LN)],
        comment="bf16 linears and head, bf16 key/value caches (the model-level kv_cache); "
                "decodes"),
    # bf16 caches in the bf16 layer and f16 in the f32 one, not the other way:
    # f16-rounded values (11 bits) read by a bf16 linear (the o projection of
    # a context from one key) are often exactly at a bf16 tie, and those
    # crowd explain()'s candidates (README.md, "Reduced precision").
    "encdec-precision-mixed": model(
        "encdec_precision_mixed",
        small() + [("position", "rope(theta = 10000)"), ("output", "lm_head(tied = false)"),
                   ("precision", "q4")],
        encoder=[("layers", 2), ("heads", 4), ("d_ff", 136), ("ffn", "silu"),
                 ("norm", f"pre({RMS})"), ("final_norm", RMS), ("mask", "padding")],
        decoder=[("layers", 2), ("heads", 4), ("ffn", "gelu_tanh"), ("norm", f"pre({RMS})"),
                 ("final_norm", RMS), ("mask", "causal"), ("precision", "bf16"),
                 ("kv_cache", "bf16"),
                 ("layers 1..1", [("precision", "f32"), ("kv_cache", "f16")])],
        comment="the model's q4 for the encoder (d_ff 136: its down projection's K = 136 ends "
                "in a part block of 8) and the head, bf16 for decoder layer 0 (its "
                "cross-attention too), f32 for decoder layer 1; the decoder's key/value "
                "caches (self- and cross-attention's) bf16 in layer 0, f16 in layer 1; "
                "decodes"),
}


def names():
    return [f"example:{e}" for e in EXAMPLES] + sorted(GENERATED)


def write(name, directory):
    """The path of spec NAME, written into `directory` if generated."""
    if name.startswith("example:"):
        return os.path.join(SOURCE, "examples", name.split(":", 1)[1] + ".tm")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name + ".tm")
    with open(path, "w") as f:
        f.write(GENERATED[name])
    return path


# ----------------------------------------------------------------------------
# Coverage: every value of every key in at least one spec.

REQUIRED = {
    "architecture": {"encoder", "decoder", "encoder-decoder"},
    "position": {"none", "sinusoidal", "learned", "rope", "alibi"},
    "embed_scale": {True, False},
    "embed_norm": {"none", "layernorm", "rmsnorm"},
    "segments": {"0", ">0"},
    "share_embeddings (encoder-decoder)": {True, False},
    "output": {"hidden", "lm_head(tied)", "lm_head(untied)", "lm_head(bias)",
               "classifier(first)", "classifier(mean)", "classifier(pooler)"},
    "dtype": {"f32", "f16", "bf16"},
    "norm placement": {"pre", "post", "mixed across layers"},
    "norm kind": {"layernorm", "rmsnorm"},
    "final_norm": {"none", "layernorm", "rmsnorm"},
    "ffn": {"relu", "gelu", "gelu_tanh", "silu", "swiglu", "geglu"},
    "attention heads": {"kv_heads = heads", "grouped-query", "multi-query",
                        "head_dim != d_model/heads"},
    "bias": {True, False},
    "attention": {"full", "linformer"},
    "cross_attention (encoder-decoder)": {True, False},
    "per-layer overrides": {"encoder", "decoder"},
    "encoder mask": {"none", "causal", "padding", "sliding_window", "dilated_window", "global", "random"},
    "decoder mask": {"none", "causal", "padding", "sliding_window", "dilated_window", "global",
                     "random"},
    "precision (layers)": {"f32", "bf16", "int8", "q4"},
    "precision (head)": {"f32", "bf16", "int8", "q4"},
    "precision overrides": {"a layer's differs from the model's", "layers of a stack differ",
                            "cross-attention in another precision than the encoder's"},
    "kv_cache (decoder layers)": {"f32", "f16", "bf16"},
    "kv_cache overrides": {"the model-level key", "a layer's differs from the model's",
                           "layers of a stack differ", "cross-attention caches"},
}


def covered(config):
    """The (key, value) pairs one resolved config exercises."""
    enc, dec = config["encoder"], config["decoder"]
    seen = set()
    add = lambda key, value: seen.add((key, value))
    add("architecture", "encoder-decoder" if enc and dec else "encoder" if enc else "decoder")
    add("position", config["position"]["kind"])
    add("embed_scale", config["embed_scale"])
    add("embed_norm", config["embed_norm"]["kind"] if config["embed_norm"] else "none")
    add("segments", ">0" if config["segments"] > 0 else "0")
    if enc and dec:
        add("share_embeddings (encoder-decoder)", config["share_embeddings"])
        add("cross_attention (encoder-decoder)", dec["cross_attention"])
    out = config["output"]
    if out["kind"] == "lm_head":
        add("output", "lm_head(tied)" if out["tied"] else "lm_head(untied)")
        if out["bias"]:
            add("output", "lm_head(bias)")
    elif out["kind"] == "classifier":
        add("output", f"classifier({out['pool']})")
        if out["pooler"]:
            add("output", "classifier(pooler)")
    else:
        add("output", "hidden")
    add("dtype", config["dtype"])
    if out["kind"] != "hidden":
        add("precision (head)", config["precision"])
    d = config["d_model"]
    for kind, stack in (("encoder", enc), ("decoder", dec)):
        if not stack:
            continue
        layers = stack["layer_specs"]
        add("final_norm", stack["final_norm"]["kind"] if stack["final_norm"] else "none")
        if any(layer != layers[0] for layer in layers):
            add("per-layer overrides", kind)
        if len({layer["precision"] for layer in layers}) > 1:
            add("precision overrides", "layers of a stack differ")
        if any(layer["precision"] != config["precision"] for layer in layers):
            add("precision overrides", "a layer's differs from the model's")
        if kind == "decoder" and enc and stack["cross_attention"] and any(
                layer["precision"] not in {e["precision"] for e in enc["layer_specs"]}
                for layer in layers):
            add("precision overrides", "cross-attention in another precision than the encoder's")
        if kind == "decoder":
            # The encoder keeps no cache (its layers say f32).
            caches = {layer["kv_cache"] for layer in layers}
            for cache in caches:
                add("kv_cache (decoder layers)", cache)
            if config["kv_cache"] != "f32" and config["kv_cache"] in caches:
                add("kv_cache overrides", "the model-level key")
            if caches - {config["kv_cache"]}:
                add("kv_cache overrides", "a layer's differs from the model's")
            if len(caches) > 1:
                add("kv_cache overrides", "layers of a stack differ")
            if enc and stack["cross_attention"] and caches - {"f32"}:
                add("kv_cache overrides", "cross-attention caches")
        placements = {layer["norm"]["placement"] for layer in layers}
        if len(placements) > 1:
            add("norm placement", "mixed across layers")
        for layer in layers:
            add("norm placement", layer["norm"]["placement"])
            add("norm kind", layer["norm"]["kind"])
            add("ffn", layer["ffn"])
            add("precision (layers)", layer["precision"])
            add("bias", layer["bias"])
            add("attention", layer["attention"]["kind"])
            heads, kv = layer["heads"], layer["kv_heads"]
            add("attention heads", "kv_heads = heads" if kv == heads else
                "multi-query" if kv == 1 else "grouped-query")
            if heads * layer["head_dim"] != d:
                add("attention heads", "head_dim != d_model/heads")
            if not layer["mask"]:
                add(f"{kind} mask", "none")
            for term in layer["mask"]:
                add(f"{kind} mask", term["kind"])
    return seen


def coverage(tmc, directory):
    seen = set()
    for name in names():
        path = write(name, directory)
        result = subprocess.run([tmc, "check", "--json", path], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{name}: tmc check failed:\n{result.stderr}")
            return 1
        from expected_configs import config_of  # it imports this module
        seen |= covered(config_of(json.loads(result.stdout)))
    missing = [(k, v) for k, values in REQUIRED.items() for v in sorted(values, key=str)
               if (k, v) not in seen]
    for key, values in REQUIRED.items():
        print(f"{key}: {', '.join(str(v) for v in sorted(values, key=str))}")
    if missing:
        for key, value in missing:
            print(f"not covered: {key} = {value}")
        return 1
    print(f"every value of every key is covered by {len(names())} specs")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--write", nargs=2, metavar=("NAME", "DIR"))
    parser.add_argument("--coverage", nargs=2, metavar=("TMC", "DIR"))
    args = parser.parse_args()
    if args.list:
        print("\n".join(names()))
        return 0
    if args.write:
        print(write(*args.write))
        return 0
    if args.coverage:
        return coverage(*args.coverage)
    parser.print_help()
    return 1


if __name__ == "__main__":
    sys.exit(main())
