//===- model.h - A compiled model with its weights loaded -------*- C++ -*-===//
//
// What tmr_model_open (tmr.h) builds and every run reads: the mmapped
// safetensors file, checked against the model's manifest, f16/bf16 tensors
// widened to f32, and the model's prepared (packed) weights. Raw weights the
// kernels read only through their packed copies are dropped as prepare()
// finishes with them, so the weights are resident about once, not twice; a
// tied head's table, also looked up by rows, keeps only the rows runs touch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/safetensors.h"
#include "runtime/tmr.h"
#include "runtime/tmr_abi.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tmr {

class Model {
public:
  /// Opens `path` for `desc`; nullptr with *status and *error (naming the
  /// file, tensor or field) on failure. `threads` is prepare()'s thread count.
  static std::unique_ptr<Model> open(const tmr_model_desc *desc, const std::string &path,
                                     int32_t threads, tmr_status *status, std::string *error);
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const tmr_model_desc &desc() const { return *desc_; }
  /// One pointer per manifest tensor, f32 and aligned (null for a weight that
  /// only its packed copy represents now).
  const std::vector<const void *> &weights() const { return pointers_; }
  /// Warnings about the weights (NaN or Inf values), one line each.
  const std::vector<std::string> &warnings() const { return warnings_; }
  const void *prepared() const { return prepared_; }
  /// f32 bytes of the weights kernels read: raw ones kept plus packed ones.
  int64_t weightBytes() const;

private:
  explicit Model(const tmr_model_desc *desc) : desc_(desc) {}
  /// prepare()'s tmr_weight_done_fn: drops weight `index`'s raw memory.
  static void weightDone(void *self, int32_t index, int32_t stillRead);
  void dropRaw(int32_t index, bool stillRead);

  const tmr_model_desc *desc_;
  std::unique_ptr<SafetensorsFile> file_;
  std::vector<const void *> pointers_;
  /// Per weight: its scales where the file holds it pre-quantized (I8 or
  /// U8 values in pointers_), else null; all null: none (prepare() gets null).
  std::vector<const void *> scales_;
  std::vector<std::string> warnings_;
  /// Widened copies of f16/bf16 tensors, by manifest index (empty for f32).
  std::vector<AlignedVector<float>> widened_;
  std::vector<bool> dropped_;
  void *prepared_ = nullptr;
};

/// Checks what the runtime relies on in a compiled model's description;
/// false + *error (TMR_ERROR_ABI) for one made by another tmc.
bool checkCompiledModel(const tmr_model_desc *desc, std::string *error);

} // namespace tmr
