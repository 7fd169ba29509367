//===- TMDialect.h - The tm dialect -----------------------------*- C++ -*-===//
#pragma once

#include "mlir/IR/Dialect.h"

#include "dialects/tm/TMDialect.h.inc"
