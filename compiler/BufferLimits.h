//===- BufferLimits.h - Buffers too large for a compiled kernel -*- C++ -*-===//
//
// Halide describes every buffer a kernel takes with 32-bit extents and
// strides, and (without its large_buffers feature, which no target of tmc
// enables: it makes every index computation 64-bit) checks at each kernel's
// entry that no buffer spans more than 2^31 - 1 elements. A kernel whose
// shapes are static breaks that check for every input, so Halide can only
// warn that the pipeline "is guaranteed to fail an assertion at runtime" and
// compile it anyway, for minutes. The plan knows every buffer's shape before
// Halide sees a kernel: `tmc compile` refuses such a model up front, and
// `tmc check` warns about it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tmc {

/// The most elements one kernel buffer may span: 2^31 - 1.
constexpr int64_t kMaxBufferElements = (int64_t(1) << 31) - 1;

/// The first buffer of `plan`'s kernel calls (in call order, with every
/// sequence dimension at max_seq) that spans more than kMaxBufferElements,
/// as a message naming it, its shape and size, the kernel and the spec
/// location of the call, and how many other buffers are too large as well;
/// nullopt if every buffer fits. With `target`, a linear kernel's weight is
/// counted as the packed panels that target's schedule lays it out in
/// (padded to whole panels), else as stored.
std::optional<std::string> findOversizedBuffer(const KernelPlan &plan,
                                               const TargetInfo *target = nullptr);

} // namespace tmc
