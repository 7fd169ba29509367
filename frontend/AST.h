//===- AST.h - Syntax tree of a .tm model spec ------------------*- C++ -*-===//
//
// The parser builds this tree straight from the grammar in docs/spec-language.md,
// without interpreting keys: `Sema` gives the keys their meaning and turns the
// tree into a `ModelSpec`. Every node keeps the source location of its first
// character so that later stages can point at the spec line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tmc::ast {

struct Value;
using ValuePtr = std::unique_ptr<Value>;

/// `name = value` inside a call: `layernorm(eps = 1e-5)`.
struct Argument {
  std::string name;
  llvm::SMLoc loc;
  ValuePtr value;
};

/// A right-hand side: a literal, a name, a call, a list, or a `+` sum of terms.
struct Value {
  enum class Kind { Int, Float, Bool, Name, Call, List, Sum };

  Kind kind;
  llvm::SMLoc loc;
  int64_t intValue = 0;       // Int
  double floatValue = 0;      // Float
  bool boolValue = false;     // Bool
  std::string name;           // Name, or the callee of a Call
  std::vector<Argument> args; // Call
  std::vector<ValuePtr> elements; // List elements, or the terms of a Sum (>= 2)

  explicit Value(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

/// `key = value`.
struct Assignment {
  std::string key;
  llvm::SMLoc loc; // of the key
  ValuePtr value;
};

/// `layers A..B { key = value ... }` inside a stack; the range is inclusive.
struct LayerOverride {
  int64_t first = 0;
  int64_t last = 0;
  llvm::SMLoc loc; // of the `layers` keyword
  llvm::SMLoc rangeLoc; // of A
  std::vector<Assignment> assignments;
};

/// `encoder { ... }` or `decoder { ... }`.
struct Stack {
  std::string kind; // "encoder" | "decoder"
  llvm::SMLoc loc;
  std::vector<Assignment> assignments;
  std::vector<LayerOverride> overrides;
};

/// `model NAME { ... }`: the whole file.
struct Model {
  std::string name;
  llvm::SMLoc loc;
  std::vector<Assignment> assignments;
  std::vector<Stack> stacks;
};

} // namespace tmc::ast
