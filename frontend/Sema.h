//===- Sema.h - Checks a .tm syntax tree and gives it meaning --*- C++ -*-===//
//
// Sema is the only place that knows what keys mean: it checks every key and
// value, applies the defaults of docs/spec-language.md and produces the
// ModelSpec that all later stages read. It reports every problem it can find
// in one pass rather than stopping at the first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/ModelSpec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tmc {

class DiagnosticEngine;

/// Checks `model` with the command line's `overrides` applied; std::nullopt
/// if any error was reported.
std::optional<ModelSpec> analyze(const ast::Model &model,
                                 DiagnosticEngine &diags,
                                 const SpecOverrides &overrides = {});

/// The keys of the model block, in documentation order.
llvm::ArrayRef<llvm::StringRef> modelKeys();
/// The keys of an `encoder { }` / `decoder { }` block, in documentation order.
llvm::ArrayRef<llvm::StringRef> stackKeys();
/// The stack keys a `layers A..B { }` block may override: all but `layers`,
/// `final_norm` and `cross_attention`, which describe the stack as a whole.
llvm::ArrayRef<llvm::StringRef> layerKeys();

namespace sema {
class ValueReader;

/// What a stack's checks need to know about the rest of the model.
struct StackContext {
  bool isDecoder = false;
  /// The model also has an encoder (so a decoder may cross-attend).
  bool hasEncoder = false;
  /// The model also has a decoder (so cross_attention belongs there).
  bool hasDecoder = false;
};

/// Checks one stack block against the already checked model keys in `model`
/// and fills `out` with the keys' values and the defaults.
void checkStack(ValueReader &reader, const ast::Stack &stack,
                const ModelSpec &model, const StackContext &context,
                StackSpec &out);
} // namespace sema

} // namespace tmc
