//===- hf_checkpoint.h - Hugging Face checkpoints under tmc's names -*- C++ -*-===//
//
// A model compiled with `weights = huggingface(FAMILY)` reads a checkpoint as
// Hugging Face's save_pretrained writes it: a folder holding model.safetensors,
// or shards listed by model.safetensors.index.json, whose tensors carry the
// family's names and layouts. openWeights presents them under tmc's canonical
// names (docs/spec-language.md), converting where a family's layout differs
// from tmc's (GPT-2's Conv1D matrices stored [in, out], its fused c_attn), so
// that everything after it (checks, widening, packing) sees one format.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/safetensors.h"
#include "runtime/tmr_abi.h"

#include <memory>
#include <string>
#include <string_view>

namespace tmr {

/// Whether `family` names a naming scheme the loader knows: "gpt2", "bert",
/// "llama" (the Llama family: Llama, Mistral, Qwen2).
bool isWeightScheme(std::string_view family);

/// The weights at `path` for a model whose tensors are `expected` (its
/// manifest). With `scheme` null or empty, `path` is a safetensors file with
/// tmc's canonical names, opened as is. Else `path` is a Hugging Face
/// checkpoint of that family: a folder (model.safetensors.index.json, else
/// model.safetensors), an index file, or one .safetensors file. The result
/// holds exactly the expected tensors, under canonical names, each in its
/// manifest dtype (f16 and bf16 checkpoint tensors widen to an f32 model's
/// dtype; nothing narrows). nullptr + *error (one line per problem, each
/// naming the file and the checkpoint's tensor, and tmc's name for it) for a
/// missing file or shard, a missing, misshapen or unexpected tensor. A
/// single file that holds the first expected tensor under its canonical
/// name (what `tmc quantize` writes) is opened as is, whatever `scheme` says.
std::unique_ptr<SafetensorsFile> openWeights(const std::string &path, const char *scheme,
                                             const tmr_tensor_desc *expected, int32_t count,
                                             std::string *error, bool guardTruncation);

} // namespace tmr
