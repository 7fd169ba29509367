//===- KernelKind.h - What a tmk kernel computes ----------------*- C++ -*-===//
//
// The tmk dialect's KernelKind enum (TMKOps.td), with no MLIR type around it:
// the kernel-level IR and the plain-data kernel plan (compiler/KernelPlan.h)
// share this one enum.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

#include "dialects/tmk/KernelKind.h.inc"
