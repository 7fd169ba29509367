# hf_llama.py - LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM as
# Hugging Face's modeling code computes them.
#
# Written from transformers' src/transformers/models/llama/modeling_llama.py
# (LlamaRMSNorm, LlamaRotaryEmbedding, rotate_half, apply_rotary_pos_emb,
# repeat_kv, LlamaAttention, LlamaMLP, LlamaDecoderLayer, LlamaModel,
# LlamaForCausalLM), models/mistral/modeling_mistral.py (the same layers
# without biases, and a sliding window) and models/qwen2/modeling_qwen2.py
# (biases on q, k and v only). The three share module attribute names, so
# state_dict() keys are the checkpoint's: model.embed_tokens.weight,
# model.layers.0.self_attn.q_proj.weight, ..., lm_head.weight. Eval mode,
# no cache (every call recomputes the whole sequence), float64.

import torch
from torch import nn


def _linear(n_in, n_out, bias):
    return nn.Linear(n_in, n_out, bias=bias, dtype=torch.float64)


def head_dim_of(config):
    """config.head_dim (Llama and Mistral write it), else hidden // heads."""
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def biases_of(config):
    """(q/k/v bias, o bias, mlp bias) of the model_type's attention and MLP."""
    model_type = config["model_type"]
    if model_type == "llama":
        # LlamaAttention: every projection, o_proj too, takes attention_bias.
        return config["attention_bias"], config["attention_bias"], config["mlp_bias"]
    if model_type == "qwen2":
        # Qwen2Attention: q_proj, k_proj, v_proj bias=True; o_proj bias=False.
        return True, False, False
    return False, False, False  # mistral


def sliding_window_of(config, layer):
    """The sliding window of `layer`'s attention, or None.

    Mistral: config.sliding_window for every layer (null: none).
    Qwen2: none unless use_sliding_window; then the layers from
    max_window_layers on (Qwen2Config.layer_types: "sliding_attention" when
    sliding_window is set and i >= max_window_layers; 4.46's flash path
    tested the same). Llama: none."""
    model_type = config["model_type"]
    if model_type == "mistral":
        return config.get("sliding_window")
    if model_type == "qwen2" and config.get("use_sliding_window") and \
            layer >= config["max_window_layers"]:
        return config.get("sliding_window")
    return None


def allowed_keys(length, window):
    """[T, T] bool: whether query i attends to key j.

    Causal, j <= i, and with a sliding window W also i - j < W: the query
    sees W keys, itself and the W - 1 before it. That is what
    modeling_mistral.py (4.46) builds in
    MistralModel._prepare_4d_causal_attention_mask_with_cache_position: it
    masks `torch.arange(target_length) <= cache_position.reshape(-1, 1) -
    config.sliding_window`, i.e. keys j <= i - W; and what
    masking_utils.sliding_window_overlay says in later versions,
    `kv_idx > q_idx - sliding_window`. (Older code differed by one:
    modeling_attn_mask_utils._make_causal_mask with
    `diagonal = past_key_values_length - sliding_window - 1` let i - j == W
    through, and flash-attention's window_size=(W, W) did too.)"""
    i = torch.arange(length).unsqueeze(1)
    j = torch.arange(length).unsqueeze(0)
    allowed = j <= i
    if window is not None:
        allowed &= (i - j) < window
    return allowed


class LlamaRMSNorm(nn.Module):
    """weight * x / sqrt(mean(x^2) + eps); no bias, no mean subtraction."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden, dtype=torch.float64))
        self.variance_epsilon = eps

    def forward(self, hidden):
        variance = hidden.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden * torch.rsqrt(variance + self.variance_epsilon))


def rotate_half(x):
    """Rotate-half rope: dimension i pairs with i + head_dim / 2."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_cos_sin(config, length):
    """LlamaRotaryEmbedding with rope_type "default": inv_freq[k] =
    rope_theta ** (-2k / head_dim), angle = position * inv_freq, the angles
    repeated for both halves ([T, head_dim] each). HF computes them in
    float32; this reference in float64."""
    if config.get("rope_scaling") is not None:
        raise ValueError("this reference implements rope_scaling null only")
    dim = head_dim_of(config)
    inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    angles = torch.arange(length, dtype=torch.float64).unsqueeze(1) * inv_freq.unsqueeze(0)
    emb = torch.cat((angles, angles), dim=-1)
    return emb.cos(), emb.sin()


def repeat_kv(x, n_rep):
    """[1, kv_heads, T, d] -> [1, kv_heads * n_rep, T, d]: query head h reads
    kv head h // n_rep."""
    batch, kv_heads, length, dim = x.shape
    return x[:, :, None].expand(batch, kv_heads, n_rep, length, dim).reshape(
        batch, kv_heads * n_rep, length, dim)


class LlamaAttention(nn.Module):
    def __init__(self, config, layer):
        super().__init__()
        hidden = config["hidden_size"]
        self.num_heads = config["num_attention_heads"]
        self.num_key_value_heads = config["num_key_value_heads"]
        self.head_dim = head_dim_of(config)
        self.sliding_window = sliding_window_of(config, layer)
        qkv_bias, o_bias, _ = biases_of(config)
        self.q_proj = _linear(hidden, self.num_heads * self.head_dim, qkv_bias)
        self.k_proj = _linear(hidden, self.num_key_value_heads * self.head_dim, qkv_bias)
        self.v_proj = _linear(hidden, self.num_key_value_heads * self.head_dim, qkv_bias)
        self.o_proj = _linear(self.num_heads * self.head_dim, hidden, o_bias)

    def forward(self, hidden, cos, sin):  # hidden [1, T, H]; cos, sin [T, head_dim]
        batch, length, _ = hidden.shape

        def heads(x, count):
            return x.view(batch, length, count, self.head_dim).transpose(1, 2)

        query = heads(self.q_proj(hidden), self.num_heads)
        key = heads(self.k_proj(hidden), self.num_key_value_heads)
        value = heads(self.v_proj(hidden), self.num_key_value_heads)
        query = query * cos + rotate_half(query) * sin
        key = key * cos + rotate_half(key) * sin
        groups = self.num_heads // self.num_key_value_heads
        key, value = repeat_kv(key, groups), repeat_kv(value, groups)
        scores = query @ key.transpose(2, 3) / self.head_dim ** 0.5
        allowed = allowed_keys(length, self.sliding_window)
        scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
        probs = nn.functional.softmax(scores, dim=-1)
        out = (probs @ value).transpose(1, 2).reshape(batch, length, -1)
        return self.o_proj(out)


class LlamaMLP(nn.Module):
    """SwiGLU: down_proj(silu(gate_proj(x)) * up_proj(x))."""

    def __init__(self, config):
        super().__init__()
        hidden, inter = config["hidden_size"], config["intermediate_size"]
        bias = biases_of(config)[2]
        self.gate_proj = _linear(hidden, inter, bias)
        self.up_proj = _linear(hidden, inter, bias)
        self.down_proj = _linear(inter, hidden, bias)
        if config["hidden_act"] != "silu":
            raise ValueError("this reference implements hidden_act silu only")

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    """Pre-norm: x + attn(input_layernorm(x)), then
    x + mlp(post_attention_layernorm(x))."""

    def __init__(self, config, layer):
        super().__init__()
        hidden, eps = config["hidden_size"], config["rms_norm_eps"]
        self.self_attn = LlamaAttention(config, layer)
        self.mlp = LlamaMLP(config)
        self.input_layernorm = LlamaRMSNorm(hidden, eps)
        self.post_attention_layernorm = LlamaRMSNorm(hidden, eps)

    def forward(self, hidden, cos, sin):
        hidden = hidden + self.self_attn(self.input_layernorm(hidden), cos, sin)
        return hidden + self.mlp(self.post_attention_layernorm(hidden))


class LlamaModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config["vocab_size"], config["hidden_size"],
                                         padding_idx=config.get("pad_token_id"),
                                         dtype=torch.float64)
        self.layers = nn.ModuleList(LlamaDecoderLayer(config, i)
                                    for i in range(config["num_hidden_layers"]))
        self.norm = LlamaRMSNorm(config["hidden_size"], config["rms_norm_eps"])

    def forward(self, input_ids):  # [1, T]
        cos, sin = rope_cos_sin(self.config, input_ids.shape[1])
        hidden = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden = layer(hidden, cos, sin)
        return self.norm(hidden)


class LlamaForCausalLM(nn.Module):
    """Also MistralForCausalLM and Qwen2ForCausalLM. lm_head has no bias;
    with tie_word_embeddings it is the token table, and save_pretrained
    leaves lm_head.weight out of the checkpoint."""

    base_prefix = "model."

    def __init__(self, config):
        super().__init__()
        self.model = LlamaModel(config)
        self.lm_head = _linear(config["hidden_size"], config["vocab_size"], False)
        self.tied_keys = ()
        # Absent from config.json, it is the class's default: false for
        # LlamaConfig, MistralConfig and Qwen2Config alike.
        if config.get("tie_word_embeddings", False):
            self.lm_head.weight = self.model.embed_tokens.weight
            self.tied_keys = ("lm_head.weight",)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.lm_head(self.model(input_ids))  # [1, T, vocab]


def legacy_buffers(config):
    """The rotary table each attention layer of checkpoints saved before
    transformers 4.31 carries (early Llama conversions):
    layers.N.self_attn.rotary_emb.inv_freq, [head_dim / 2]."""
    dim = head_dim_of(config)
    inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    return {f"layers.{i}.self_attn.rotary_emb.inv_freq": inv_freq
            for i in range(config["num_hidden_layers"])}


CLASSES = {"LlamaForCausalLM": LlamaForCausalLM, "MistralForCausalLM": LlamaForCausalLM,
           "Qwen2ForCausalLM": LlamaForCausalLM}
