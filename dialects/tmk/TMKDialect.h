//===- TMKDialect.h - The tmk (kernel-level) dialect ------------*- C++ -*-===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "dialects/tm/TMDialect.h"

#include "dialects/tmk/TMKDialect.h.inc"
