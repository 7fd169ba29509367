# hf_configs.py - The test kinds and their config.json, as Hugging Face writes it.
#
# Each kind is one Hugging Face model class at a tiny size. Its config.json
# holds what transformers 4.46's PretrainedConfig.to_json_file writes for
# that class: the config's to_diff_dict(), which keeps every field the model
# class adds (always, default or not) and the fields of PretrainedConfig
# itself only where they differ from its defaults or the class's
# (bos/eos/pad token ids, tie_word_embeddings, id2label, torch_dtype,
# architectures), plus model_type and transformers_version; json.dumps with
# indent=2 and sort_keys=True, and a final newline.
#
# The sizes are chosen so that a mapping mistake shows: odd vocabularies,
# an intermediate size that is no multiple of the hidden size, grouped-query
# heads, and norm epsilons far from the defaults (the default eps in their
# place moves the outputs by 8e-4 to 9e-2 of their largest value, 8 to 900
# times run_hf.py's tolerance).

import json

TRANSFORMERS_VERSION = "4.46.0"

def _gpt2(vocab, embd, heads, inner, eps, positions):
    """GPT2Config (configuration_gpt2.py): every field of its __init__."""
    return {
        "activation_function": "gelu_new",
        "attn_pdrop": 0.1,
        "bos_token_id": vocab - 1,  # GPT-2's <|endoftext|> is its last id
        "embd_pdrop": 0.1,
        "eos_token_id": vocab - 1,
        "initializer_range": 0.02,
        "layer_norm_epsilon": eps,
        "n_embd": embd,
        "n_head": heads,
        "n_inner": inner,  # null means 4 * n_embd
        "n_layer": 2,
        "n_positions": positions,
        "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "use_cache": True,
        "vocab_size": vocab,
    }


def _bert(vocab, hidden, heads, inter, eps, positions):
    """BertConfig (configuration_bert.py). pad_token_id 0 is BertConfig's
    default, written because PretrainedConfig's is null."""
    return {
        "attention_probs_dropout_prob": 0.1,
        "classifier_dropout": None,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "intermediate_size": inter,
        "layer_norm_eps": eps,
        "max_position_embeddings": positions,
        "num_attention_heads": heads,
        "num_hidden_layers": 2,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "type_vocab_size": 2,
        "use_cache": True,
        "vocab_size": vocab,
    }


def _labels(count):
    """id2label / label2id as PretrainedConfig writes them for num_labels =
    count (written only when count differs from the default 2)."""
    return {"id2label": {str(i): f"LABEL_{i}" for i in range(count)},
            "label2id": {f"LABEL_{i}": i for i in range(count)}}


def _llama(vocab, hidden, heads, kv_heads, inter, eps, theta, positions, tied=False,
           attention_bias=False, mlp_bias=False):
    """LlamaConfig (configuration_llama.py, 4.45+: head_dim is written,
    hidden_size // num_attention_heads when not given)."""
    return {
        "attention_bias": attention_bias,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": hidden // heads,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "intermediate_size": inter,
        "max_position_embeddings": positions,
        "mlp_bias": mlp_bias,
        "num_attention_heads": heads,
        "num_hidden_layers": 2,
        "num_key_value_heads": kv_heads,
        "pretraining_tp": 1,
        "rms_norm_eps": eps,
        "rope_scaling": None,
        "rope_theta": theta,
        # LlamaConfig's default is false, PretrainedConfig's true: written
        # either way, since it differs from one of them.
        "tie_word_embeddings": tied,
        "use_cache": True,
        "vocab_size": vocab,
    }


def _mistral(vocab, hidden, heads, kv_heads, inter, eps, theta, positions, window):
    """MistralConfig (configuration_mistral.py in 4.46): LlamaConfig's fields
    without the biases, pretraining_tp and rope_scaling, with sliding_window
    (null in Mistral 7B v0.2 and later: no window); head_dim written."""
    config = _llama(vocab, hidden, heads, kv_heads, inter, eps, theta, positions)
    for field in ("attention_bias", "mlp_bias", "pretraining_tp", "rope_scaling"):
        del config[field]
    config["sliding_window"] = window
    return dict(sorted(config.items()))


def _qwen2(vocab, hidden, heads, kv_heads, inter, eps, theta, positions, window=None,
           window_layers=2):
    """Qwen2Config (configuration_qwen2.py in 4.46: no head_dim, no
    attention_bias key; q/k/v always carry biases). Without `window`, like
    the published Qwen2.5 configs: sliding_window equals
    max_position_embeddings and use_sliding_window is false, so no window
    applies. With it, the layers from max_window_layers = window_layers on
    attend through a window of that size."""
    return {
        "attention_dropout": 0.0,
        "bos_token_id": vocab - 1,  # Qwen's <|endoftext|> is a late id, set by its configs
        "eos_token_id": vocab - 1,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "intermediate_size": inter,
        "max_position_embeddings": positions,
        "max_window_layers": window_layers,
        "num_attention_heads": heads,
        "num_hidden_layers": 2,
        "num_key_value_heads": kv_heads,
        "rms_norm_eps": eps,
        "rope_scaling": None,
        "rope_theta": theta,
        "sliding_window": window or positions,
        "tie_word_embeddings": True,
        "use_cache": True,
        "use_sliding_window": window is not None,
        "vocab_size": vocab,
    }


# kind -> (architecture, model_type, family module name, the class's fields).
# The family module (hf_gpt2, hf_bert, hf_llama) builds the model.
KINDS = {
    "gpt2": ("GPT2LMHeadModel", "gpt2", "gpt2",
             _gpt2(vocab=101, embd=48, heads=4, inner=88, eps=1e-3, positions=64)),
    "bert": ("BertModel", "bert", "bert",
             _bert(vocab=103, hidden=48, heads=4, inter=88, eps=2e-3, positions=64)),
    "bert-cls": ("BertForSequenceClassification", "bert", "bert",
                 dict(_bert(vocab=107, hidden=32, heads=4, inter=88, eps=1e-3, positions=64),
                      **_labels(3))),
    "llama": ("LlamaForCausalLM", "llama", "llama",
              _llama(vocab=131, hidden=64, heads=4, kv_heads=2, inter=88, eps=1e-3,
                     theta=1000.0, positions=64)),
    "llama-tied": ("LlamaForCausalLM", "llama", "llama",
                   _llama(vocab=113, hidden=48, heads=4, kv_heads=2, inter=88, eps=4e-3,
                          theta=2000.0, positions=64, tied=True, attention_bias=True,
                          mlp_bias=True)),
    "mistral": ("MistralForCausalLM", "mistral", "llama",
                _mistral(vocab=127, hidden=64, heads=4, kv_heads=2, inter=88, eps=2e-3,
                         theta=5000.0, positions=64, window=8)),
    "qwen2": ("Qwen2ForCausalLM", "qwen2", "llama",
              _qwen2(vocab=151, hidden=48, heads=4, kv_heads=2, inter=88, eps=1e-3,
                     theta=20000.0, positions=64)),
    # use_sliding_window: layer 0 attends to everything, layer 1 through a
    # window of 6.
    "qwen2-window": ("Qwen2ForCausalLM", "qwen2", "llama",
                     _qwen2(vocab=149, hidden=48, heads=4, kv_heads=2, inter=88, eps=1e-3,
                            theta=20000.0, positions=64, window=6, window_layers=1)),
}

# The checkpoint's dtype names (config.json's torch_dtype).
DTYPES = ("float32", "float16", "bfloat16")


def config_for(kind, dtype="float32"):
    """The config.json dict of `kind` stored in `dtype`."""
    architecture, model_type, _, fields = KINDS[kind]
    config = dict(fields)
    config.update({"architectures": [architecture], "model_type": model_type,
                   "torch_dtype": dtype, "transformers_version": TRANSFORMERS_VERSION})
    return config


def legacy_config_for(kind, dtype="float32"):
    """The config.json of an older published checkpoint of `kind`'s family,
    with `kind`'s sizes: openai-community/gpt2's (written in 2019: n_ctx,
    task_specific_params, and none of n_inner, scale_attn_weights,
    reorder_and_upcast_attn, scale_attn_by_inverse_layer_idx, use_cache,
    torch_dtype or transformers_version, whose defaults apply; n_inner's is
    4 * n_embd) or bert-base-uncased's (BertForMaskedLM, written by 4.6, with
    gradient_checkpointing and no classifier_dropout or torch_dtype)."""
    config = config_for(kind, dtype)
    family = family_of(config)
    if family == "gpt2":
        for key in ("n_inner", "scale_attn_weights", "reorder_and_upcast_attn",
                    "scale_attn_by_inverse_layer_idx", "use_cache", "torch_dtype",
                    "transformers_version"):
            del config[key]
        config["n_ctx"] = config["n_positions"]
        config["task_specific_params"] = {"text-generation": {"do_sample": True,
                                                              "max_length": 50}}
    elif family == "bert":
        for key in ("classifier_dropout", "torch_dtype"):
            del config[key]
        config.update(architectures=["BertForMaskedLM"], gradient_checkpointing=False,
                      transformers_version="4.6.0.dev0")
    else:
        raise ValueError(f"no older published layout for {kind}")
    return config


def config_text(config):
    """The file's text, as to_json_string writes it."""
    return json.dumps(config, indent=2, sort_keys=True) + "\n"


def family_of(config):
    """The family module name ("gpt2", "bert", "llama") of a loaded
    config.json, from its model_type."""
    families = {"gpt2": "gpt2", "bert": "bert", "llama": "llama", "mistral": "llama",
                "qwen2": "llama"}
    model_type = config.get("model_type")
    if model_type not in families:
        raise ValueError(f"model_type {model_type!r} is none of {sorted(families)}")
    return families[model_type]
