//===- ModelSpec.cpp - Names of the spec enumerations --------------------===//

#include "frontend/ModelSpec.h"

namespace tmc {

const char *toString(PositionKind kind) {
  switch (kind) {
  case PositionKind::None: return "none";
  case PositionKind::Sinusoidal: return "sinusoidal";
  case PositionKind::Learned: return "learned";
  case PositionKind::Rope: return "rope";
  case PositionKind::Alibi: return "alibi";
  }
  return "?";
}

const char *toString(Activation kind) {
  switch (kind) {
  case Activation::Relu: return "relu";
  case Activation::Gelu: return "gelu";
  case Activation::GeluTanh: return "gelu_tanh";
  case Activation::Silu: return "silu";
  case Activation::SwiGLU: return "swiglu";
  case Activation::GeGLU: return "geglu";
  }
  return "?";
}

const char *toString(NormKind kind) {
  return kind == NormKind::LayerNorm ? "layernorm" : "rmsnorm";
}

const char *toString(NormPlacement placement) {
  return placement == NormPlacement::Post ? "post" : "pre";
}

const char *toString(MaskKind kind) {
  switch (kind) {
  case MaskKind::Causal: return "causal";
  case MaskKind::Padding: return "padding";
  case MaskKind::SlidingWindow: return "sliding_window";
  case MaskKind::DilatedWindow: return "dilated_window";
  case MaskKind::Global: return "global";
  case MaskKind::Random: return "random";
  }
  return "?";
}

const char *toString(Precision precision) {
  switch (precision) {
  case Precision::F32: return "f32";
  case Precision::BF16: return "bf16";
  case Precision::Int8: return "int8";
  case Precision::Q4:
    return "q4";
  }
  return "?";
}

std::optional<Precision> parsePrecision(const std::string &text) {
  if (text == "f32")
    return Precision::F32;
  if (text == "bf16")
    return Precision::BF16;
  if (text == "int8")
    return Precision::Int8;
  if (text == "q4")
    return Precision::Q4;
  return std::nullopt;
}

const char *toString(CachePrecision precision) {
  switch (precision) {
  case CachePrecision::F32:
    return "f32";
  case CachePrecision::F16:
    return "f16";
  case CachePrecision::BF16:
    return "bf16";
  }
  return "?";
}

std::optional<CachePrecision> parseCachePrecision(const std::string &text) {
  for (CachePrecision precision : {CachePrecision::F32, CachePrecision::F16, CachePrecision::BF16})
    if (text == toString(precision))
      return precision;
  return std::nullopt;
}

} // namespace tmc
