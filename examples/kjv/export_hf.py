#!/usr/bin/python3
# export_hf.py - Writes the KJV decoder as a Hugging Face Llama model folder.
#
#   examples/kjv/export_hf.py OUT_DIR
#
# OUT_DIR gets what LlamaForCausalLM.save_pretrained and
# PreTrainedTokenizerFast.save_pretrained write (transformers 4.46 with
# tokenizers 0.20), so that a real trained model, not only random weights,
# goes through `tmc import OUT_DIR` and the executable's `--weights OUT_DIR`
# and `--tokenizer OUT_DIR`, and so that transformers itself loads it:
#   config.json             LlamaConfig's to_diff_dict: every LlamaConfig field,
#                           sizes, rms_norm_eps and rope_theta from kjv.tm;
#                           tie_word_embeddings true (the head is the token
#                           table); bos/eos_token_id null, since the KJV
#                           tokenizer has no special tokens (verses end in "\n").
#   generation_config.json  GenerationConfig.from_model_config's diff.
#   model.safetensors       the weights of kjv.safetensors under Hugging Face's
#                           names, f32, bytes unchanged; no lm_head.weight (tied).
#                           tmc's rope pairs dimension i with i + head_dim/2
#                           (rotate-half), as modeling_llama does, so q and k
#                           need no permutation (Meta's original checkpoints,
#                           interleaved, do).
#   tokenizer.json          the byte-level BPE of tokenizer/ (encoder.json,
#                           vocab.bpe) as GPT2Converter builds it and
#                           tokenizers serializes it (merges as pairs).
#   tokenizer_config.json, special_tokens_map.json  with no special tokens.
# Only the standard library (any python3).

import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSFORMERS_VERSION = "4.46.0"


def read_spec(path):
    """The sizes of kjv.tm, checked to be what this exporter maps."""
    text = re.sub(r"#[^\n]*", "", open(path, encoding="utf-8").read())
    spec = dict(re.findall(r"(\w+)\s*=\s*([^\n]+?)\s*\n", text))
    eps = set(re.findall(r"rmsnorm\(eps\s*=\s*([^)\s]+)\)", text))
    theta = re.search(r"rope\(theta\s*=\s*([^)\s]+)\)", text)
    expected = {"ffn": "swiglu", "bias": "false", "output": "lm_head(tied = true)",
                "mask": "causal"}
    for key, value in expected.items():
        if spec.get(key) != value:
            raise SystemExit(f"{path}: {key} is {spec.get(key)!r}, this exporter maps {value!r}")
    if len(eps) != 1 or not theta or "kv_heads" in spec or "head_dim" in spec or \
            not spec.get("norm", "").startswith("pre(rmsnorm("):
        raise SystemExit(f"{path}: expected pre-norm rmsnorm, one eps, rope(theta), "
                         "no kv_heads or head_dim")
    sizes = {key: int(spec[key]) for key in ("vocab", "d_model", "max_seq", "layers", "heads",
                                             "d_ff")}
    return dict(sizes, eps=float(eps.pop()), theta=float(theta.group(1)))


def llama_config(s):
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": None,
        "head_dim": s["d_model"] // s["heads"],
        "hidden_act": "silu",
        "hidden_size": s["d_model"],
        "initializer_range": 0.02,
        "intermediate_size": s["d_ff"],
        "max_position_embeddings": s["max_seq"],
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": s["heads"],
        "num_hidden_layers": s["layers"],
        "num_key_value_heads": s["heads"],
        "pretraining_tp": 1,
        "rms_norm_eps": s["eps"],
        "rope_scaling": None,
        "rope_theta": s["theta"],
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "transformers_version": TRANSFORMERS_VERSION,
        "use_cache": True,
        "vocab_size": s["vocab"],
    }


def hf_name(name):
    """tmc's canonical name -> Hugging Face's."""
    fixed = {"embed.tokens": "model.embed_tokens.weight",
             "decoder.final_norm.weight": "model.norm.weight"}
    if name in fixed:
        return fixed[name]
    m = re.fullmatch(r"decoder\.layers\.(\d+)\.(.+)", name)
    parts = {"self_attn.q.weight": "self_attn.q_proj.weight",
             "self_attn.k.weight": "self_attn.k_proj.weight",
             "self_attn.v.weight": "self_attn.v_proj.weight",
             "self_attn.o.weight": "self_attn.o_proj.weight",
             "norm1.weight": "input_layernorm.weight",
             "norm2.weight": "post_attention_layernorm.weight",
             "ffn.gate.weight": "mlp.gate_proj.weight",
             "ffn.up.weight": "mlp.up_proj.weight",
             "ffn.down.weight": "mlp.down_proj.weight"}
    if not m or m.group(2) not in parts:
        raise SystemExit(f"kjv.safetensors: no Hugging Face name for {name}")
    return f"model.layers.{m.group(1)}.{parts[m.group(2)]}"


def read_f32(path):
    """{name: (shape, raw little-endian f32 bytes)} of a safetensors file."""
    data = open(path, "rb").read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {info['dtype']}, expected F32")
        begin, end = info["data_offsets"]
        out[name] = (info["shape"], data[8 + length + begin:8 + length + end])
    return out


def write_f32(path, tensors):
    """As the safetensors library writes them (save_pretrained): compact
    header, __metadata__ {"format": "pt"} first, tensors by name (one dtype),
    header padded with spaces to 8 bytes."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name in sorted(tensors):
        shape, raw = tensors[name]
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in sorted(tensors):
            f.write(tensors[name][1])


def tokenizer_json(directory, vocab_size):
    """GPT2Converter's tokenizer for encoder.json + vocab.bpe, serialized as
    tokenizers 0.20's Tokenizer.save writes it (pretty, no final newline)."""
    encoder = json.load(open(os.path.join(directory, "encoder.json"), encoding="utf-8"))
    lines = open(os.path.join(directory, "vocab.bpe"), encoding="utf-8").read().split("\n")
    merges = [line.split(" ") for line in lines[1:] if line]
    if sorted(encoder.values()) != list(range(vocab_size)):
        raise SystemExit(f"{directory}: encoder.json ids are not 0..{vocab_size - 1}")
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": dict(byte_level, add_prefix_space=True, trim_offsets=False),
        "decoder": dict(byte_level, add_prefix_space=True),
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False,
                  "vocab": dict(sorted(encoder.items(), key=lambda item: item[1])),
                  "merges": merges},
    }


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: export_hf.py OUT_DIR")
    out = sys.argv[1]
    spec = read_spec(os.path.join(HERE, "kjv.tm"))
    os.makedirs(out, exist_ok=True)

    def write(name, obj, newline="\n", **dump):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(json.dumps(obj, indent=2, **dump) + newline)

    write("config.json", llama_config(spec), sort_keys=True)
    write("generation_config.json", {"_from_model_config": True,
                                     "transformers_version": TRANSFORMERS_VERSION},
          sort_keys=True)

    tensors = {hf_name(name): value
               for name, value in read_f32(os.path.join(HERE, "kjv.safetensors")).items()}
    rows = len(tensors["model.embed_tokens.weight"][1]) // 4 // spec["d_model"]
    if rows != spec["vocab"]:
        raise SystemExit(f"kjv.safetensors: {rows} token rows, kjv.tm says {spec['vocab']}")
    write_f32(os.path.join(out, "model.safetensors"), tensors)

    write("tokenizer.json", tokenizer_json(os.path.join(HERE, "tokenizer"), spec["vocab"]),
          newline="", ensure_ascii=False)
    write("tokenizer_config.json", {"added_tokens_decoder": {},
                                    "clean_up_tokenization_spaces": False,
                                    "model_max_length": spec["max_seq"],
                                    "tokenizer_class": "PreTrainedTokenizerFast"},
          sort_keys=True, ensure_ascii=False)
    write("special_tokens_map.json", {}, sort_keys=True, ensure_ascii=False)
    print(f"wrote {out}: config.json, generation_config.json, model.safetensors "
          f"({len(tensors)} tensors), tokenizer.json, tokenizer_config.json, "
          "special_tokens_map.json")


if __name__ == "__main__":
    main()
