//===- TMOps.h - Operations of the tm dialect -------------------*- C++ -*-===//
#pragma once

#include "dialects/tm/TMAttrs.h"
#include "dialects/tm/TMDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/tm/TMInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/tm/TMOps.h.inc"

namespace tmc::tm {
/// The model path a location names ("decoder.layers.0.ffn"), from the first
/// NameLoc MLIRGen put in it; empty if none.
std::string originName(mlir::Location loc);
/// "[decoder.layers.0.ffn] ", or "" for a location without a name: the
/// prefix of --explain remarks.
std::string originPrefix(mlir::Location loc);
/// `loc` without its value names (NameLocs, also inside fused locations):
/// for an op that computes no value of the spec, or a name of its own.
mlir::Location withoutNames(mlir::Location loc);
/// The verifier of tm.concat and tmk.concat: static weights of one rank
/// that agree past dimension 0 and stack to `result`.
mlir::LogicalResult verifyStackedWeights(mlir::Operation *op, mlir::ValueRange inputs,
                                         mlir::Value result);
/// The verifier of tm.split and tmk.split: static part widths that add up
/// to the input's, every part with the input's rows.
mlir::LogicalResult verifyColumnSplit(mlir::Operation *op, mlir::Value input,
                                      mlir::ValueRange parts);
/// Names the weight and gives it a static shape of sizes 1..kMaxExtent
/// (tm.weight and tmk.weight).
mlir::LogicalResult verifyWeightShape(mlir::Operation *op, llvm::StringRef name,
                                      mlir::ShapedType type);
/// A scale, eps or theta: finite and > 0, as every spec gives them.
mlir::LogicalResult expectPositiveFinite(mlir::Operation *op, llvm::StringRef name,
                                         double value);
/// A cache's name and capacity (tm and tmk cache ops): a capacity of
/// 1..kMaxExtent rows; its storage `precision` "f16", "bf16" or absent (f32).
mlir::LogicalResult verifyCache(mlir::Operation *op, llvm::StringRef name, int64_t capacity,
                                std::optional<llvm::StringRef> precision);
} // namespace tmc::tm
