//===- ReferenceChecks.cpp - What the reference refuses, and why ----------===//
//
// Sema already rejects bad specs; these checks exist because the reference is
// also fed hand-built ModelSpecs (unit tests) and must turn anything it would
// otherwise index out of bounds or divide by zero on into a message.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceInternal.h"

namespace tmc::ref::detail {

namespace {

std::string str(int64_t value) { return std::to_string(value); }

std::string checkMask(const MaskSpec &mask) {
  for (const MaskTerm &term : mask.terms) {
    bool window = term.kind == MaskKind::SlidingWindow ||
                  term.kind == MaskKind::DilatedWindow;
    if (window && term.size < 1)
      return std::string(toString(term.kind)) + " size " + str(term.size) +
             " must be >= 1";
    if (term.kind == MaskKind::DilatedWindow && term.dilation < 1)
      return "dilated_window dilation " + str(term.dilation) + " must be >= 1";
    if (term.kind == MaskKind::Random && term.perRow < 0)
      return "random per_row " + str(term.perRow) + " must be >= 0";
  }
  return "";
}

std::string checkLayer(const ModelSpec &spec, const LayerSpec &layer) {
  if (layer.heads <= 0 || layer.kvHeads <= 0 || layer.headDim <= 0 || layer.dFF <= 0 ||
      layer.heads % layer.kvHeads != 0)
    return "invalid shape (heads " + str(layer.heads) + ", kv_heads " +
           str(layer.kvHeads) + ", head_dim " + str(layer.headDim) + ", d_ff " +
           str(layer.dFF) + ")";
  if (spec.position == PositionKind::Rope && layer.headDim % 2 != 0)
    return "rope needs an even head_dim, not " + str(layer.headDim);
  if (std::string why = checkMask(layer.mask); !why.empty())
    return why;
  if (layer.attention == AttentionKind::Linformer) {
    if (layer.linformerK <= 0)
      return "linformer k " + str(layer.linformerK) + " must be > 0";
    // Projected keys are mixtures of positions: only padding (which drops
    // whole positions before the projection) still has a meaning.
    for (const MaskTerm &term : layer.mask.terms)
      if (term.kind != MaskKind::Padding)
        return std::string("linformer attention cannot apply a '") + toString(term.kind) +
               "' mask term (projected keys are not positions)";
    if (spec.position == PositionKind::Alibi)
      return "linformer attention cannot apply alibi (projected keys are not "
             "positions)";
  }
  return "";
}

std::string checkStack(const ModelSpec &spec, const StackSpec &stack,
                       const std::string &name) {
  if (stack.layers < 0)
    return name + " has " + str(stack.layers) + " layers";
  if (static_cast<int64_t>(stack.layerSpecs.size()) != stack.layers)
    return name + " has " + str(static_cast<int64_t>(stack.layerSpecs.size())) +
           " per-layer specs for " + str(stack.layers) +
           " layers (a ModelSpec carries one LayerSpec per layer)";
  for (int64_t i = 0; i < stack.layers; ++i)
    if (std::string why = checkLayer(spec, stack.layer(i)); !why.empty())
      return name + " layer " + str(i) + ": " + why;
  return "";
}

std::string checkTokens(const ModelSpec &spec, const std::vector<int32_t> &tokens,
                        const std::string &what) {
  if (tokens.empty())
    return "no " + what + "s given";
  if (static_cast<int64_t>(tokens.size()) > spec.maxSeq)
    return str(static_cast<int64_t>(tokens.size())) + " " + what + "s exceed max_seq " +
           str(spec.maxSeq);
  for (size_t p = 0; p < tokens.size(); ++p)
    if (tokens[p] < 0 || tokens[p] >= spec.vocab)
      return what + " " + str(tokens[p]) + " at position " + str(static_cast<int64_t>(p)) +
             " is outside [0, " + str(spec.vocab) + ")";
  return "";
}

std::string checkLength(const std::optional<int64_t> &length, size_t count,
                        const std::string &what) {
  int64_t n = static_cast<int64_t>(count);
  if (length && (*length < 1 || *length > n))
    return what + " " + str(*length) + " is outside [1, " + str(n) + "]";
  return "";
}

} // namespace

std::string checkSpec(const ModelSpec &spec) {
  if (spec.dModel <= 0 || spec.vocab <= 0 || spec.maxSeq <= 0)
    return "model shape is invalid (vocab, d_model and max_seq must be > 0)";
  if (!spec.encoder.present && !spec.decoder.present)
    return "the model has neither an encoder nor a decoder stack";
  if (spec.segments < 0)
    return "segments " + str(spec.segments) + " must be >= 0";
  if (spec.position == PositionKind::Rope && !(spec.ropeTheta > 0.0))
    return "rope theta must be > 0";
  if (spec.output == OutputKind::Classifier && spec.classes <= 0)
    return "classifier classes " + str(spec.classes) + " must be > 0";
  if (spec.encoder.present && spec.encoder.crossAttention)
    return "an encoder has no encoder output to cross-attend to";
  if (spec.decoder.present && spec.decoder.crossAttention && !spec.encoder.present)
    return "decoder cross_attention needs an encoder stack";
  if (spec.encoder.present)
    if (std::string why = checkStack(spec, spec.encoder, "encoder"); !why.empty())
      return why;
  if (spec.decoder.present)
    if (std::string why = checkStack(spec, spec.decoder, "decoder"); !why.empty())
      return why;
  return "";
}

std::string checkInputs(const ModelSpec &spec, const Inputs &inputs) {
  if (std::string why = checkTokens(spec, inputs.tokens, "token"); !why.empty())
    return why;
  if (std::string why = checkLength(inputs.length, inputs.tokens.size(), "length");
      !why.empty())
    return why;
  const std::vector<int32_t> *segmented = &inputs.tokens;
  if (spec.isEncoderDecoder()) {
    if (std::string why = checkTokens(spec, inputs.sourceTokens, "source token");
        !why.empty())
      return why;
    if (std::string why = checkLength(inputs.sourceLength, inputs.sourceTokens.size(),
                                      "source length");
        !why.empty())
      return why;
    segmented = &inputs.sourceTokens;
  } else if (!inputs.sourceTokens.empty() || inputs.sourceLength) {
    return "source tokens are only read by an encoder-decoder model";
  }
  if (!inputs.segments.empty()) {
    if (spec.segments == 0)
      return "segment ids are given but the model has no segments";
    if (inputs.segments.size() != segmented->size())
      return str(static_cast<int64_t>(inputs.segments.size())) + " segment ids for " +
             str(static_cast<int64_t>(segmented->size())) +
             (spec.isEncoderDecoder() ? " source tokens" : " tokens");
    for (size_t p = 0; p < inputs.segments.size(); ++p)
      if (inputs.segments[p] < 0 || inputs.segments[p] >= spec.segments)
        return "segment id " + str(inputs.segments[p]) + " at position " +
               str(static_cast<int64_t>(p)) + " is outside [0, " + str(spec.segments) +
               ")";
  }
  return "";
}

} // namespace tmc::ref::detail
