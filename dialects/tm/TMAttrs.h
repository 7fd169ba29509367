//===- TMAttrs.h - Attributes of the tm dialect -----------------*- C++ -*-===//
#pragma once

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"

#define GET_ATTRDEF_CLASSES
#include "dialects/tm/TMAttrs.h.inc"

namespace tmc::tm {
/// The largest size tmc gives any dimension, count or window: Halide indexes
/// with int32, so a larger one would fail inside Halide with no location
/// (frontend/SemaValues.h's kMaxDim bounds the spec's sizes the same).
inline constexpr int64_t kMaxExtent = (int64_t(1) << 31) - 1;
/// Random keys per row at most (docs/spec-language.md, `random`).
inline constexpr int64_t kMaxRandomPerRow = 4096;
/// The rules docs/spec-language.md states for a mask's terms, for the ops
/// that carry one (tm.attention, tmk.kernel): reported through `emitError`,
/// so at the op's location, which is the spec line it came from.
mlir::LogicalResult verifyMask(llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                               MaskAttr mask);
} // namespace tmc::tm
