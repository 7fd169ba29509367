//===- SemaValues.h - Typed reading of spec values, with diagnostics -*- C++
//-*-===//
//
// The building blocks of Sema: read a value as an integer, a boolean, a number
// or one of a set of names/calls, reporting a located error (and returning
// nothing) when it is not one. Keeping every message here keeps them uniform:
// "expected an integer for 'layers', found a name".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/ModelSpec.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tmc::sema {

/// Suffix of every "this is valid but not implemented" error, so that users
/// (and tests) can tell it apart from a mistake in the spec.
inline constexpr const char *kNotSupported =
    " is not supported yet by this version of tmc";

/// Largest size accepted for any dimension: keeps products of sizes (tensor
/// element counts) far from int64 overflow in later stages.
inline constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;

/// Most blocks a stack may hold. Later stages keep one LayerSpec per layer
/// and one set of tensors per layer; no published transformer comes near.
inline constexpr int64_t kMaxLayers = 4096;

/// "an integer", "a name", ...: how a value's kind reads in messages.
const char *describe(ast::Value::Kind kind);

/// One accepted form of a name-or-call value: `learned`, `rope(theta = ...)`.
struct Choice {
  llvm::StringRef name;
  /// Named arguments it accepts.
  llvm::ArrayRef<llvm::StringRef> args = {};
  /// Named arguments it needs (a subset of `args`).
  llvm::ArrayRef<llvm::StringRef> required = {};
  /// Whether it takes one unnamed argument, as `post(layernorm(...))` does.
  bool positional = false;
};

/// A value that matched one of the choices.
struct Chosen {
  unsigned index = 0;
  const ast::Value *value = nullptr;
  const ast::Value *positional = nullptr;
  llvm::SmallVector<const ast::Argument *, 4> args;

  /// The named argument's value, or null if it was not given.
  const ast::Value *arg(llvm::StringRef name) const;
};

/// Keys of one block, checked for unknown names and repeats.
using KeyMap = llvm::StringMap<const ast::Assignment *>;

/// Keys that are valid somewhere else than the block being read, and where
/// they belong: "at model level, outside the encoder block".
struct Misplaced {
  llvm::ArrayRef<llvm::StringRef> keys;
  std::string where;
};

class ValueReader {
public:
  explicit ValueReader(DiagnosticEngine &diags) : diags(diags) {}

  DiagnosticEngine &diagnostics() { return diags; }

  /// Whether an unknown key was answered with "did you mean '<key>'?": a
  /// missing-key error for it would repeat the same mistake.
  bool wasSuggested(llvm::StringRef key) const {
    return suggested.contains(key);
  }

  /// An integer in [min, max]; `what` names it in messages ("'layers'").
  std::optional<int64_t> integer(const ast::Value &value, llvm::StringRef what,
                                 int64_t min, int64_t max = kMaxDim);
  std::optional<bool> boolean(const ast::Value &value, llvm::StringRef what);
  /// A finite number (an integer is accepted too), > 0 when `positive`.
  std::optional<double> number(const ast::Value &value, llvm::StringRef what,
                               bool positive);
  /// Matches a name or call against `choices`: unknown names get the allowed
  /// list and a did-you-mean, arguments are checked for unknown names,
  /// repeats, and missing required ones.
  std::optional<Chosen> choose(const ast::Value &value, llvm::StringRef what,
                               llvm::ArrayRef<Choice> choices);
  /// `layernorm(eps = F)` or `rmsnorm(eps = F)` (eps defaults to 1e-5); with
  /// `allowNone`, `none` too, which yields std::nullopt and sets `isNone`.
  std::optional<NormSpec> norm(const ast::Value &value, llvm::StringRef what,
                               bool allowNone, bool &isNone);
  /// `f32`, `bf16`, `int8` or `q4`: the `precision` key, at model, stack or
  /// layer level.
  std::optional<Precision> precision(const ast::Value &value, llvm::StringRef what);
  /// `f32`, `f16` or `bf16`: the `kv_cache` key, at model, stack or layer level.
  std::optional<CachePrecision> cachePrecision(const ast::Value &value, llvm::StringRef what);

  /// Gathers `assignments` by key, reporting unknown keys (with a
  /// did-you-mean) and repeated ones (with a note at the first). A key of
  /// another block kind (one of `misplaced`) is told where it belongs instead:
  /// "'heads' belongs <where>". `block` names the block in messages.
  KeyMap collectKeys(llvm::ArrayRef<ast::Assignment> assignments,
                     llvm::StringRef block,
                     llvm::ArrayRef<llvm::StringRef> known,
                     llvm::ArrayRef<Misplaced> misplaced);

private:
  DiagnosticEngine &diags;
  llvm::StringSet<> suggested;
};

/// "relu, gelu, silu": the names of `choices`, for "expected one of" lists.
std::string joinNames(llvm::ArrayRef<Choice> choices);

} // namespace tmc::sema
