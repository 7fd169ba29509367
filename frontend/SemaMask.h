//===- SemaMask.h - Reading and checking `mask = ...` ---------------*- C++ -*-===//
//
// Sema's rules for attention masks: the terms of a `+` sum and their
// arguments (read once per `mask` key), and the checks that need the rest of
// a layer (attention kind, encoder or decoder), run once per layer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/ModelSpec.h"

#include <cstdint>
#include <optional>

namespace tmc::sema {

class ValueReader;

/// Reads a mask value: `none`, or a `+` sum of causal, padding,
/// sliding_window(size), dilated_window(size, dilation), global(tokens),
/// random(per_row, seed). Sizes and positions are checked against `maxSeq`
/// (0 when max_seq itself is invalid: then only their sign is checked).
/// Reports every problem and returns nullopt if there was one.
std::optional<MaskSpec> readMask(ValueReader &reader, const ast::Value &value,
                                 int64_t maxSeq, bool decoder);

/// Checks a layer's effective mask: no query row may be left without a key,
/// and a decoder's mask should keep later positions hidden (a warning).
/// `given` says whether the mask was written (else it is the default, which
/// is always fine); `linformer`, that the layer's attention takes no causal
/// term (the warning then does not suggest one).
void checkLayerMask(ValueReader &reader, const MaskSpec &mask, bool given, int64_t maxSeq,
                    bool decoder, bool linformer = false);

} // namespace tmc::sema
