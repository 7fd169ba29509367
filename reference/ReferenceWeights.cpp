//===- ReferenceWeights.cpp - A weight file as the reference reads it -----===//

#include "reference/ReferenceWeights.h"

#include "frontend/Manifest.h"
#include "reference/ReferenceHalf.h"
#include "runtime/hf_checkpoint.h"

namespace tmc::ref {

namespace {

/// The f32 values of a tensor stored as 16-bit words (safetensors is
/// little-endian), widened by the reference's own reading of the format, not
/// the runtime's: the oracle must not share the widening it checks. Every f16
/// and bf16 value is exactly a float, so the narrowing from double loses nothing.
std::vector<float> widenNarrowTensor(const tmr::TensorView &tensor) {
  const auto *bytes = static_cast<const unsigned char *>(tensor.data);
  std::vector<float> values(tensor.bytes / 2);
  for (size_t k = 0; k < values.size(); ++k) {
    auto bits = static_cast<uint16_t>(bytes[2 * k] | (bytes[2 * k + 1] << 8));
    values[k] = static_cast<float>(tensor.dtype == TMR_BF16 ? bfloat16Value(bits)
                                                            : binary16Value(bits));
  }
  return values;
}

} // namespace

std::unique_ptr<ReferenceWeights>
ReferenceWeights::open(const ModelSpec &spec, const std::string &path,
                       std::string *error) {
  std::unique_ptr<ReferenceWeights> weights(new ReferenceWeights());
  // A Hugging Face checkpoint (weights = huggingface(...)) is read under
  // canonical names, as the executable reads it.
  const std::vector<TensorSpec> required = requiredTensors(spec);
  std::vector<tmr_tensor_desc> descs(required.size());
  for (size_t i = 0; i < required.size(); ++i) {
    descs[i] = tmr_tensor_desc{};
    descs[i].name = required[i].name.c_str();
    descs[i].rank = static_cast<int32_t>(required[i].shape.size());
    for (int32_t d = 0; d < descs[i].rank && d < TMR_MAX_RANK; ++d)
      descs[i].shape[d] = required[i].shape[static_cast<size_t>(d)];
    descs[i].dtype = storageDType(required[i].dtype);
  }
  std::string openError;
  weights->file = tmr::openWeights(path, spec.weightScheme.c_str(), descs.data(),
                                   static_cast<int32_t>(descs.size()), &openError,
                                   /*guardTruncation=*/false);
  if (!weights->file) {
    if (error)
      *error = openError;
    return nullptr;
  }
  for (const TensorSpec &expected : required) {
    const tmr::TensorView *tensor = weights->file->find(expected.name);
    std::string problem;
    if (!tensor)
      problem = "missing tensor '" + expected.name + "'";
    else if (tensor->dtype != storageDType(expected.dtype))
      problem = "tensor '" + expected.name + "' has dtype " +
                tmr::dtypeName(tensor->dtype) + ", expected " +
                tmr::dtypeName(storageDType(expected.dtype));
    else if (tensor->shape != expected.shape)
      problem = "tensor '" + expected.name + "' has shape " +
                tmr::formatShape(tensor->shape) + ", expected " +
                tmr::formatShape(expected.shape);
    if (!problem.empty()) {
      if (error)
        *error = path + ": " + problem;
      return nullptr;
    }
    if (tensor->dtype == TMR_F32) {
      weights->byName[expected.name] = static_cast<const float *>(tensor->data);
    } else {
      // Weights are stored narrow and computed with in f32, as the contract says.
      weights->widened.push_back(widenNarrowTensor(*tensor));
      weights->byName[expected.name] = weights->widened.back().data();
    }
  }
  return weights;
}

WeightLookup ReferenceWeights::lookup() const {
  return [this](const std::string &name) -> const float * {
    auto it = byName.find(name);
    return it == byName.end() ? nullptr : it->second;
  };
}

} // namespace tmc::ref
