# hf_checkpoint.py - Hugging Face model folders: written as save_pretrained
# writes them, read back into the reference models.
#
# A folder holds config.json (hf_configs) and the weights: model.safetensors,
# or shards model-0000i-of-0000N.safetensors listed by
# model.safetensors.index.json. The tensors are the model's state_dict()
# under Hugging Face's names, less the tied LM head, in the stored dtype,
# plus, for some kinds, the buffers that older checkpoints carry and a
# loader must skip (legacy_buffers of each family module).

import json
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
import safetensors_io  # noqa: E402

import hf_bert  # noqa: E402
import hf_configs  # noqa: E402
import hf_gpt2  # noqa: E402
import hf_llama  # noqa: E402

FAMILIES = {"gpt2": hf_gpt2, "bert": hf_bert, "llama": hf_llama}
# Kinds written with the buffers older checkpoints of that family carry.
KINDS_WITH_LEGACY_BUFFERS = ("gpt2", "bert", "llama")
# The spread of the random weights: large enough, and biases nonzero, that
# any mapping mistake (a transpose, swapped q and k, a missing bias) moves
# the outputs far past the tolerance. Linear weights N(0, 0.2) rather than
# a milder 0.08: with 0.08 the layers barely move the residual stream, and a
# tied head's greedy continuation repeats the prompt's last token 32 times
# (gpt2, llama-tied, qwen2: 1 or 2 distinct tokens); with 0.2 every kind
# continues with 16 or more distinct tokens.
EMBEDDING_STD, LINEAR_STD, BIAS_STD, NORM_WEIGHT_STD, NORM_BIAS_STD = 0.3, 0.2, 0.05, 0.1, 0.05

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"


def shard_name(index, count):
    """save_pretrained's shard names: model-00001-of-00002.safetensors."""
    return f"model-{index:05d}-of-{count:05d}.safetensors"


def build_model(config):
    """The reference module of config.json's first architecture, in eval mode."""
    family = FAMILIES[hf_configs.family_of(config)]
    architecture = (config.get("architectures") or [None])[0]
    if architecture not in family.CLASSES:
        raise ValueError(f"architecture {architecture!r} is none of {sorted(family.CLASSES)}")
    return family.CLASSES[architecture](config).eval()


def randomize(model, seed):
    """Draws every parameter from `seed`, in module order: embeddings
    N(0, 0.3), norm weights 1 + N(0, 0.1) and biases N(0, 0.05), linear
    weights N(0, 0.2) and biases N(0, 0.05). A tied head is the token
    table, drawn once."""
    generator = torch.Generator().manual_seed(seed)
    norms = (nn.LayerNorm, hf_llama.LlamaRMSNorm)
    seen = set()
    with torch.no_grad():
        for module in model.modules():
            for name, param in module.named_parameters(recurse=False):
                if id(param) in seen:
                    continue
                seen.add(id(param))
                noise = torch.randn(param.shape, generator=generator, dtype=torch.float64)
                if isinstance(module, nn.Embedding):
                    param.copy_(noise * EMBEDDING_STD)
                elif isinstance(module, norms):
                    param.copy_(1 + noise * NORM_WEIGHT_STD if name == "weight"
                                else noise * NORM_BIAS_STD)
                else:
                    param.copy_(noise * (BIAS_STD if name == "bias" else LINEAR_STD))
    return generator


def _stored(tensor, dtype):
    """A float64 tensor as the checkpoint stores it: float32 (as the weights
    of a model trained in float32), then narrowed as model.to(dtype) does."""
    values = tensor.detach().numpy().astype(np.float32)
    if dtype == "float16":
        return values.astype(np.float16)
    if dtype == "bfloat16":
        return safetensors_io.BFloat16(values)
    return values


def checkpoint_tensors(kind, config, model, generator, dtype, legacy_names):
    """{name: numpy array or BFloat16}: what save_pretrained writes for
    `model` (its state dict less the tied keys) plus the kind's legacy
    buffers, with legacy_names as the older published files name them."""
    family = FAMILIES[hf_configs.family_of(config)]
    prefix = model.base_prefix
    tensors = {name: _stored(value, dtype) for name, value in model.state_dict().items()
               if name not in model.tied_keys}
    if kind in KINDS_WITH_LEGACY_BUFFERS:
        for name, value in family.legacy_buffers(config).items():
            if value.dtype == torch.int64:
                tensors[prefix + name] = value.numpy()
            elif family is hf_gpt2:
                tensors[prefix + name] = value.numpy().astype(np.float32)  # F32 in every file
            else:
                tensors[prefix + name] = _stored(value, dtype)
    if legacy_names and family is hf_gpt2:
        # openai-community/gpt2's model.safetensors holds GPT2Model's names:
        # no "transformer." prefix, and no head (tied).
        tensors = {name[len(prefix):]: value for name, value in tensors.items()}
    elif legacy_names and family is hf_bert:
        # bert-base-uncased's file: BertForPreTraining's heads beside "bert.*",
        # and every LayerNorm's weight and bias spelled gamma and beta.
        heads = hf_bert.pretraining_heads(config, generator)
        tensors.update({name: _stored(value, dtype) for name, value in heads.items()})
        renamed = {}
        for name, value in tensors.items():
            if ".LayerNorm." in name:
                name = name.replace(".LayerNorm.weight", ".LayerNorm.gamma").replace(
                    ".LayerNorm.bias", ".LayerNorm.beta")
            renamed[name] = value
        tensors = renamed
    elif legacy_names:
        raise ValueError(f"--legacy-names applies to gpt2 and bert kinds, not {kind}")
    return tensors


def _nbytes(value):
    return value.bits.nbytes if isinstance(value, safetensors_io.BFloat16) else value.nbytes


def save_tensors(folder, tensors, shards):
    """model.safetensors, or `shards` files split in order at equal byte
    counts and model.safetensors.index.json, as save_pretrained writes them
    (its index: total_size, the tensors' bytes; weight_map sorted by name;
    indent 2)."""
    metadata = {"format": "pt"}
    if shards <= 1:
        safetensors_io.save(os.path.join(folder, SINGLE_FILE), tensors, metadata)
        return [SINGLE_FILE]
    names = list(tensors)
    if shards > len(names):
        raise ValueError(f"{shards} shards for {len(names)} tensors")
    total = sum(_nbytes(value) for value in tensors.values())
    groups, done = [[]], 0
    for position, name in enumerate(names):
        # A new shard once this one holds its share of the bytes, or when
        # the tensors left are only enough for one in each shard to come.
        if len(groups) < shards and groups[-1] and (
                done >= len(groups) * total / shards
                or len(names) - position <= shards - len(groups)):
            groups.append([])
        groups[-1].append(name)
        done += _nbytes(tensors[name])
    files, weight_map = [], {}
    for index, group in enumerate(groups, start=1):
        file = shard_name(index, shards)
        safetensors_io.save(os.path.join(folder, file), {n: tensors[n] for n in group}, metadata)
        files.append(file)
        weight_map.update({n: file for n in group})
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(folder, INDEX_FILE), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return files


def write_folder(kind, folder, seed=0, dtype="float32", shards=1, legacy_names=False):
    """Writes `kind`'s config.json and weights into `folder`. Returns the
    file names of the weights."""
    if dtype not in hf_configs.DTYPES:
        raise ValueError(f"dtype {dtype!r} is none of {hf_configs.DTYPES}")
    config = (hf_configs.legacy_config_for if legacy_names else hf_configs.config_for)(
        kind, dtype)
    model = build_model(config)
    generator = randomize(model, seed)
    tensors = checkpoint_tensors(kind, config, model, generator, dtype, legacy_names)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(hf_configs.config_text(config))
    return save_tensors(folder, tensors, shards)


def read_tensors(folder):
    """{name: numpy array} of a folder's weights, sharded or not."""
    index_path = os.path.join(folder, INDEX_FILE)
    if os.path.exists(index_path):
        with open(index_path) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = [SINGLE_FILE]
    tensors = {}
    for file in files:
        tensors.update(safetensors_io.load_raw(os.path.join(folder, file))[0])
    return tensors


# Checkpoint tensors a model does not read: buffers of older versions and
# pretraining heads (hf_*.legacy_buffers, hf_bert.pretraining_heads).
_SKIPPED_SUFFIXES = (".attn.bias", ".attn.masked_bias", "embeddings.position_ids",
                     "rotary_emb.inv_freq")


def load_folder(folder):
    """(config dict, reference model holding the folder's weights as float64).
    Applies what from_pretrained does for these files: LayerNorm.gamma/beta
    read as weight/bias, a base model's names without the head model's
    prefix accepted, the skipped buffers and heads dropped, a tied head
    shared; anything else missing or unexpected is an error."""
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    model = build_model(config)
    expected = {name: param for name, param in model.state_dict(keep_vars=True).items()
                if name not in model.tied_keys}
    loaded = {}
    for name, value in read_tensors(folder).items():
        # modeling_utils renames LayerNorm.gamma/beta (since 4.48 only
        # under "LayerNorm."; before, any key containing gamma or beta).
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace(
            "LayerNorm.beta", "LayerNorm.bias")
        if name not in expected and model.base_prefix + name in expected:
            name = model.base_prefix + name
        if name.endswith(_SKIPPED_SUFFIXES) or name.startswith("cls."):
            continue
        if name not in expected:
            raise ValueError(f"{folder}: unexpected tensor {name}")
        loaded[name] = value
    missing = sorted(set(expected) - set(loaded))
    if missing:
        raise ValueError(f"{folder}: missing tensors {missing}")
    with torch.no_grad():
        for name, value in loaded.items():
            if tuple(value.shape) != tuple(expected[name].shape):
                raise ValueError(f"{folder}: tensor {name} has shape {list(value.shape)}, "
                                 f"expected {list(expected[name].shape)}")
            expected[name].copy_(torch.from_numpy(value.astype(np.float64)))
    return config, model
