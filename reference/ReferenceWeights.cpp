//===- ReferenceWeights.cpp - A weight file as the reference reads it -----===//

#include "reference/ReferenceWeights.h"

#include "frontend/Manifest.h"
#include "runtime/half.h"


namespace tmc::ref {


std::unique_ptr<ReferenceWeights>
ReferenceWeights::open(const ModelSpec &spec, const std::string &path,
                       std::string *error) {
  std::unique_ptr<ReferenceWeights> weights(new ReferenceWeights());
  weights->file = tmr::SafetensorsFile::open(path, error);
  if (!weights->file)
    return nullptr;
  for (const TensorSpec &expected : requiredTensors(spec)) {
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
      weights->widened.push_back(tmr::widenToF32(
          tensor->data, tensor->bytes / tmr::dtypeSize(tensor->dtype), tensor->dtype));
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
