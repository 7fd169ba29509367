//===- ReferenceWeights.h - A weight file as the reference reads it -*- C++ -*-===//
//
// Opens a safetensors file for the reference evaluator, after checking every
// tensor the reference reads (requiredTensors) against it (present, of the
// model's dtype, same shape), so the evaluator's raw pointers are known to
// cover what it indexes. f16 and bf16 tensors are widened to f32 by the
// reference's own code (ReferenceHalf.h), never the runtime's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"
#include "runtime/safetensors.h"
#include "reference/Reference.h"

#include <map>
#include <vector>
#include <memory>
#include <string>

namespace tmc::ref {

/// A checked weight file; lookup() stays valid while this object lives.
class ReferenceWeights {
public:
  /// nullptr + *error naming the file and tensor when the file cannot be read
  /// or disagrees with requiredTensors(spec).
  static std::unique_ptr<ReferenceWeights>
  open(const ModelSpec &spec, const std::string &path, std::string *error);

  /// Resolves the names requiredTensors(spec) lists only; anything else in the file reads as absent.
  WeightLookup lookup() const;

private:
  ReferenceWeights() = default;

  std::unique_ptr<tmr::SafetensorsFile> file;
  std::map<std::string, const float *, std::less<>> byName;
  std::vector<std::vector<float>> widened; ///< f16/bf16 tensors as f32 (ReferenceHalf.h)
};

} // namespace tmc::ref
