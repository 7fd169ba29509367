//===- IRResultNumbers.h - Result numbers MLIR's parser cannot take -*- C++ -*-===//
#pragma once

#include "llvm/Support/SourceMgr.h"

namespace tmc {

/// The largest result number (`%name#N`) a .mlir input may use: no tm, tmk
/// or func op has that many results.
constexpr unsigned kMaxResultNumber = 4096;

/// Checks the result numbers of the SSA uses in `bufferId` of `sourceMgr`
/// before MLIR parses it: MLIR 19's parser sizes a value's table of forward
/// references by the number it reads, so `%x#2147483648` asks for 32 GiB.
/// Reports the first one above kMaxResultNumber at its line and column
/// through `sourceMgr` and returns false; strings and comments are skipped.
bool checkResultNumbers(const llvm::SourceMgr &sourceMgr, unsigned bufferId);

} // namespace tmc
