# hf_bert.py - BertModel and BertForSequenceClassification as Hugging Face's
# modeling_bert.py computes them.
#
# Written from transformers' src/transformers/models/bert/modeling_bert.py
# (BertEmbeddings, BertSelfAttention, BertSelfOutput, BertIntermediate,
# BertOutput, BertLayer, BertPooler, BertModel.get_extended_attention_mask,
# BertForSequenceClassification), with the same module attribute names, so
# that state_dict() keys are the checkpoint's: embeddings.word_embeddings.weight,
# encoder.layer.0.attention.self.query.weight, ... Eval mode only (no
# dropout), absolute positions only, in float64.

import torch
from torch import nn


def _linear(n_in, n_out):
    return nn.Linear(n_in, n_out, dtype=torch.float64)


def _layer_norm(config):
    return nn.LayerNorm(config["hidden_size"], eps=config["layer_norm_eps"], dtype=torch.float64)


class BertEmbeddings(nn.Module):
    """LayerNorm(word + token_type + position embeddings)."""

    def __init__(self, config):
        super().__init__()
        hidden = config["hidden_size"]
        self.word_embeddings = nn.Embedding(config["vocab_size"], hidden,
                                            padding_idx=config["pad_token_id"],
                                            dtype=torch.float64)
        self.position_embeddings = nn.Embedding(config["max_position_embeddings"], hidden,
                                                dtype=torch.float64)
        self.token_type_embeddings = nn.Embedding(config["type_vocab_size"], hidden,
                                                  dtype=torch.float64)
        self.LayerNorm = _layer_norm(config)
        if config["position_embedding_type"] != "absolute":
            raise ValueError("this reference implements position_embedding_type absolute only")

    def forward(self, input_ids, token_type_ids):  # [1, T] each
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        hidden = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
                  + self.position_embeddings(positions))
        return self.LayerNorm(hidden)


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden = config["hidden_size"]
        self.num_attention_heads = config["num_attention_heads"]
        self.attention_head_size = hidden // self.num_attention_heads
        self.query = _linear(hidden, hidden)
        self.key = _linear(hidden, hidden)
        self.value = _linear(hidden, hidden)

    def _heads(self, x):  # [1, T, H] -> [1, heads, T, head_size]
        return x.view(x.shape[:-1] + (self.num_attention_heads, self.attention_head_size)
                      ).permute(0, 2, 1, 3)

    def forward(self, hidden, extended_mask):
        query, key, value = (self._heads(f(hidden)) for f in (self.query, self.key, self.value))
        scores = query @ key.transpose(-1, -2) / self.attention_head_size ** 0.5 + extended_mask
        probs = nn.functional.softmax(scores, dim=-1)
        return (probs @ value).permute(0, 2, 1, 3).reshape(hidden.shape)


class BertSelfOutput(nn.Module):
    """Post-norm: LayerNorm(dense(attention) + input)."""

    def __init__(self, config):
        super().__init__()
        self.dense = _linear(config["hidden_size"], config["hidden_size"])
        self.LayerNorm = _layer_norm(config)

    def forward(self, hidden, input_tensor):
        return self.LayerNorm(self.dense(hidden) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(self, hidden, extended_mask):
        return self.output(self.self(hidden, extended_mask), hidden)


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = _linear(config["hidden_size"], config["intermediate_size"])
        if config["hidden_act"] != "gelu":
            raise ValueError("this reference implements hidden_act gelu only")

    def forward(self, hidden):
        # ACT2FN["gelu"] is GELUActivation: the exact (erf) form.
        return nn.functional.gelu(self.dense(hidden))


class BertOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = _linear(config["intermediate_size"], config["hidden_size"])
        self.LayerNorm = _layer_norm(config)

    def forward(self, hidden, input_tensor):
        return self.LayerNorm(self.dense(hidden) + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden, extended_mask):
        attended = self.attention(hidden, extended_mask)
        return self.output(self.intermediate(attended), attended)


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config["num_hidden_layers"]))

    def forward(self, hidden, extended_mask):
        for layer in self.layer:
            hidden = layer(hidden, extended_mask)
        return hidden


class BertPooler(nn.Module):
    """tanh(dense(hidden state of the first token))."""

    def __init__(self, config):
        super().__init__()
        self.dense = _linear(config["hidden_size"], config["hidden_size"])

    def forward(self, hidden):
        return torch.tanh(self.dense(hidden[:, 0]))


class BertModel(nn.Module):
    """Output: the last hidden state [1, T, hidden]. The pooler is part of
    BertModel (add_pooling_layer=True), so its weights are in the checkpoint
    even though last_hidden_state does not use them."""

    base_prefix = ""
    tied_keys = ()

    def __init__(self, config):
        super().__init__()
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config)

    def encode(self, input_ids, token_type_ids=None, attention_mask=None):
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        # get_extended_attention_mask: [1, 1, 1, T], 0 where a key may be
        # attended, the dtype's minimum where it is padding; added to the scores
        # of every query, padded queries included.
        extended = (1.0 - attention_mask[:, None, None, :].to(torch.float64)) * \
            torch.finfo(torch.float64).min
        return self.encoder(self.embeddings(input_ids, token_type_ids), extended)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.encode(input_ids, token_type_ids, attention_mask)


class BertForSequenceClassification(nn.Module):
    """classifier(pooler(last hidden state)): output [1, 1, num_labels],
    with num_labels = len(config.id2label)."""

    base_prefix = "bert."
    tied_keys = ()

    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        labels = len(config.get("id2label") or {"0": 0, "1": 1})
        self.classifier = _linear(config["hidden_size"], labels)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        hidden = self.bert.encode(input_ids, token_type_ids, attention_mask)
        return self.classifier(self.bert.pooler(hidden)).unsqueeze(1)


class BertForMaskedLM(nn.Module):
    """The architecture bert-base-uncased's config.json names, computed here
    as its base model only: the last hidden state [1, T, hidden]. Its
    checkpoint holds "bert.*" (the pooler included) and BertForPreTraining's
    heads "cls.*" (pretraining_heads), which tmc has no counterpart of."""

    base_prefix = "bert."
    tied_keys = ()

    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.bert.encode(input_ids, token_type_ids, attention_mask)


def legacy_buffers(config):
    """The persistent buffer of transformers 4.0..4.30 that many published
    checkpoints carry: embeddings.position_ids, I64 [1, max_position_embeddings]."""
    positions = config["max_position_embeddings"]
    return {"embeddings.position_ids": torch.arange(positions, dtype=torch.int64).unsqueeze(0)}


def pretraining_heads(config, generator):
    """The BertForPreTraining heads that bert-base-uncased's checkpoint holds
    beside "bert.*" (unused by BertModel; a loader must skip them), with
    random values: cls.predictions.* (the MLM transform and decoder) and
    cls.seq_relationship.* (next-sentence prediction)."""
    hidden, vocab = config["hidden_size"], config["vocab_size"]

    def normal(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64) * 0.05

    return {
        "cls.predictions.bias": normal(vocab),
        "cls.predictions.transform.dense.weight": normal(hidden, hidden),
        "cls.predictions.transform.dense.bias": normal(hidden),
        "cls.predictions.transform.LayerNorm.weight": 1 + normal(hidden),
        "cls.predictions.transform.LayerNorm.bias": normal(hidden),
        "cls.predictions.decoder.weight": normal(vocab, hidden),
        "cls.seq_relationship.weight": normal(2, hidden),
        "cls.seq_relationship.bias": normal(2),
    }


CLASSES = {"BertModel": BertModel, "BertForSequenceClassification": BertForSequenceClassification,
           "BertForMaskedLM": BertForMaskedLM}
