//===- hf_names.h - Where each canonical tensor lies in a Hugging Face checkpoint -*- C++ -*-===//
//
// The naming schemes of `weights = huggingface(FAMILY)`: for each of tmc's
// canonical tensor names, the tensor of a Hugging Face checkpoint that holds
// it and how its layout differs. hf_checkpoint.cpp reads the files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmr::hf {

/// Where a canonical tensor comes from.
struct Source {
  /// The checkpoint's name for it, without the model's prefix; later entries
  /// are older spellings (BERT's LayerNorm `gamma`/`beta`).
  std::vector<std::string> names;
  /// Under the model's prefix ("transformer.", "bert.", "model.") when the
  /// checkpoint uses one; a head outside the base model (`lm_head.weight`,
  /// `classifier.*`) is not.
  bool prefixed = true;
  /// Stored [in, out] (GPT-2's Conv1D) where tmc's is [out, in].
  bool transposed = false;
  /// Rows [part * n, (part + 1) * n) of a tensor fusing `parts` of them
  /// along the output dimension (GPT-2's c_attn holds q, k and v).
  int part = 0, parts = 1;
  /// The checkpoint may hold more rows than the model reads (a position table
  /// longer than max_seq): the leading ones are taken.
  bool leadingRows = false;
  /// A bias the checkpoint may leave out, read as zeros (Qwen2 has biases on
  /// q, k and v only).
  bool zerosIfAbsent = false;
};

/// One naming scheme.
struct Family {
  const char *name;   ///< "gpt2": the spec writes huggingface(gpt2)
  const char *prefix; ///< the base model's prefix in a checkpoint with a head
  /// The source of canonical tensor `name`, or nullopt for a tensor the
  /// family has no counterpart for (an error naming it).
  std::optional<Source> (*source)(std::string_view name);
  /// Whether a checkpoint tensor (without prefix) that the model does not
  /// read may be ignored: buffers (`attn.bias`, `position_ids`,
  /// `rotary_emb.inv_freq`) and heads a model without them leaves unused.
  bool (*ignorable)(std::string_view name, bool modelHasClassifier);
  /// The token table's name: whether the checkpoint uses the prefix is told
  /// by where this is.
  const char *tokenTable;
};

/// The family called `name`, or null.
const Family *findFamily(std::string_view name);

} // namespace tmr::hf
