# hf_gpt2.py - GPT2LMHeadModel as Hugging Face's modeling_gpt2.py computes it.
#
# Written from transformers' src/transformers/models/gpt2/modeling_gpt2.py
# (GPT2Attention._attn, GPT2MLP, GPT2Block, GPT2Model, GPT2LMHeadModel) and
# pytorch_utils.Conv1D, with the same module attribute names, so that
# state_dict() keys are the checkpoint's: transformer.wte.weight,
# transformer.h.0.attn.c_attn.weight, ... Eval mode only (no dropout), in
# float64.

import math

import torch
from torch import nn


class Conv1D(nn.Module):
    """pytorch_utils.Conv1D(nf, nx): a linear layer whose weight is stored
    [in, out] (nx, nf), the transpose of nn.Linear's; y = x @ W + b."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.zeros(nx, nf, dtype=torch.float64))
        self.bias = nn.Parameter(torch.zeros(nf, dtype=torch.float64))

    def forward(self, x):
        return x @ self.weight + self.bias


def gelu_new(x):
    """ACT2FN["gelu_new"] (activations.NewGELUActivation): the tanh form."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        positions = config["n_positions"]
        # The causal mask; a persistent buffer before transformers 4.31, so
        # older checkpoints carry it as h.N.attn.bias (hf_checkpoint adds it).
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool))
                             .view(1, 1, positions, positions), persistent=False)
        self.embed_dim = config["n_embd"]
        self.num_heads = config["n_head"]
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        # One fused projection: columns [0, E) are q, [E, 2E) k, [2E, 3E) v.
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        # Fields a config may leave out take GPT2Config's defaults.
        self.scale_attn_weights = config.get("scale_attn_weights", True)
        if config.get("scale_attn_by_inverse_layer_idx", False):
            raise ValueError("this reference implements scale_attn_by_inverse_layer_idx false only")

    def _split_heads(self, x):  # [1, T, E] -> [1, heads, T, head_dim]
        return x.view(x.shape[:-1] + (self.num_heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, hidden):  # [1, T, E]
        query, key, value = self.c_attn(hidden).split(self.split_size, dim=2)
        query, key, value = (self._split_heads(t) for t in (query, key, value))
        weights = query @ key.transpose(-1, -2)  # [1, heads, T, T]
        if self.scale_attn_weights:
            weights = weights / (value.size(-1) ** 0.5)
        length = query.size(-2)
        causal = self.bias[:, :, :length, :length]
        weights = torch.where(causal, weights, torch.finfo(weights.dtype).min)
        weights = nn.functional.softmax(weights, dim=-1)
        out = (weights @ value).permute(0, 2, 1, 3).reshape(hidden.shape)
        return self.c_proj(out)


class GPT2MLP(nn.Module):
    def __init__(self, inner, config):
        super().__init__()
        self.c_fc = Conv1D(inner, config["n_embd"])
        self.c_proj = Conv1D(config["n_embd"], inner)
        if config.get("activation_function", "gelu_new") != "gelu_new":
            raise ValueError("this reference implements activation_function gelu_new only")

    def forward(self, hidden):
        return self.c_proj(gelu_new(self.c_fc(hidden)))


class GPT2Block(nn.Module):
    """Pre-norm: x + attn(ln_1(x)), then x + mlp(ln_2(x))."""

    def __init__(self, config):
        super().__init__()
        embd, eps = config["n_embd"], config["layer_norm_epsilon"]
        inner = config.get("n_inner") or 4 * embd  # null or absent: 4 * n_embd
        self.ln_1 = nn.LayerNorm(embd, eps=eps, dtype=torch.float64)
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(embd, eps=eps, dtype=torch.float64)
        self.mlp = GPT2MLP(inner, config)

    def forward(self, hidden):
        hidden = hidden + self.attn(self.ln_1(hidden))
        return hidden + self.mlp(self.ln_2(hidden))


class GPT2Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        embd = config["n_embd"]
        self.wte = nn.Embedding(config["vocab_size"], embd, dtype=torch.float64)
        self.wpe = nn.Embedding(config["n_positions"], embd, dtype=torch.float64)
        self.h = nn.ModuleList(GPT2Block(config) for _ in range(config["n_layer"]))
        self.ln_f = nn.LayerNorm(embd, eps=config["layer_norm_epsilon"], dtype=torch.float64)

    def forward(self, input_ids):  # [1, T]
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        hidden = self.wte(input_ids) + self.wpe(positions)
        for block in self.h:
            hidden = block(hidden)
        return self.ln_f(hidden)


class GPT2LMHeadModel(nn.Module):
    """The LM head is always tied to wte (GPT-2 configs leave
    tie_word_embeddings at PretrainedConfig's default, true), so
    save_pretrained leaves lm_head.weight out of the checkpoint."""

    base_prefix = "transformer."
    tied_keys = ("lm_head.weight",)

    def __init__(self, config):
        super().__init__()
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config["n_embd"], config["vocab_size"], bias=False,
                                 dtype=torch.float64)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.lm_head(self.transformer(input_ids))  # [1, T, vocab]


def legacy_buffers(config):
    """Buffers that checkpoints saved before transformers 4.31 carry, under
    the base model's names: each layer's causal mask `h.N.attn.bias`, a
    float [1, 1, n_positions, n_positions] lower triangle of ones, F32 as
    openai-community/gpt2's model.safetensors holds it, and
    `h.N.attn.masked_bias`, the 0-d scalar -1e4 the old code filled masked
    scores with (in files saved by transformers 2.x to 4.30, e.g.
    microsoft/DialoGPT-small's)."""
    positions = config["n_positions"]
    mask = torch.tril(torch.ones(positions, positions, dtype=torch.float64)).view(
        1, 1, positions, positions)
    buffers = {}
    for i in range(config["n_layer"]):
        buffers[f"h.{i}.attn.bias"] = mask
        buffers[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4, dtype=torch.float64)
    return buffers


CLASSES = {"GPT2LMHeadModel": GPT2LMHeadModel}
