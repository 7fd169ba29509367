//===- Lowering.cpp - Dispatch and shared helpers -------------------------===//

#include "compiler/halide/Lowering.h"

#include "compiler/halide/HalfBits.h"
#include "compiler/halide/Trigonometry.h"

#include <algorithm>
#include <cmath>

using namespace Halide;

namespace tmc::halide {

ImageParam makeInput(const BufferShape &shape, const std::string &name,
                     std::initializer_list<int> bufferExtents) {
  assert(!shape.isScalar && "scalars are Param<int32_t>, not buffers");
  Type type = shape.isInt32    ? Int(32)
              : shape.isBF16   ? BFloat(16)
              : shape.isInt8   ? Int(8)
              : shape.isUInt16 ? UInt(16)
                               : Float(32);
  ImageParam param(type, static_cast<int>(shape.extents.size()), name);
  // Weights are mmap'd at whatever offset the file gives them: promise
  // element alignment only, so that Halide never emits aligned vector loads.
  param.set_host_alignment(4);
  // Inner dimensions are dense. The row dimension (a symbolic extent) may be
  // strided: a tmk.split part is a column range of a wider buffer.
  Expr stride = 1;
  for (size_t i = 0; i < shape.extents.size(); ++i) {
    param.dim(i).set_min(0);
    bool rows = i > 0 && i + 1 == shape.extents.size() && shape.extents[i] < 0;
    if (!rows)
      param.dim(i).set_stride(stride);
    if (std::find(bufferExtents.begin(), bufferExtents.end(), static_cast<int>(i)) !=
        bufferExtents.end()) {
      stride = stride * param.dim(i).extent();
    } else if (shape.extents[i] >= 0) {
      param.dim(i).set_extent(static_cast<int>(shape.extents[i]));
      stride = stride * static_cast<int>(shape.extents[i]);
    }
  }
  return param;
}

Expr keyValueElement(const Expr &stored, const KernelDesc &kernel) {
  // Not Halide's Float(16) cast: Halide 14 widens it in software on x86,
  // with gathers, F16C or not.
  if (kernel.kvPrecision == "f16")
    return floatOfHalfBits(stored);
  if (kernel.kvPrecision == "bf16")
    return floatOfBfloatBits(stored);
  return stored;
}

Region estimatesOf(const BufferShape &shape) {
  Region region;
  for (int64_t extent : shape.extents) {
    assert(extent >= 0 && "estimatesOf needs every extent known");
    region.emplace_back(0, static_cast<int>(extent));
  }
  return region;
}

void constrainOutput(Func &output, const BufferShape &shape) {
  OutputImageParam buffer = output.output_buffer();
  buffer.set_host_alignment(4);
  Expr stride = 1;
  for (size_t i = 0; i < shape.extents.size(); ++i) {
    buffer.dim(i).set_min(0).set_stride(stride);
    if (shape.extents[i] >= 0) {
      buffer.dim(i).set_extent(static_cast<int>(shape.extents[i]));
      stride = stride * static_cast<int>(shape.extents[i]);
    }
  }
}

TailStrategy vectorTail(int64_t extent, int width) {
  return extent % width == 0 ? TailStrategy::RoundUp : TailStrategy::GuardWithIf;
}

Expr applyActivation(const Expr &x, const std::string &kind) {
  if (kind == "relu")
    return max(x, 0.0f);
  if (kind == "gelu")
    return 0.5f * x * (1.0f + erf(x * static_cast<float>(M_SQRT1_2)));
  if (kind == "gelu_tanh") {
    // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): Halide 14 calls libm's scalar
    // tanhf per element but inlines a vector exp, 2.5x faster in a GEMM epilogue.
    const float k = static_cast<float>(std::sqrt(2.0 / M_PI));
    return x / (1.0f + exp(-2.0f * k * (x + 0.044715f * x * x * x)));
  }
  if (kind == "silu")
    return x / (1.0f + exp(-x));
  if (kind == "tanh") // as gelu_tanh: a vector exp, not libm's scalar tanhf
    return 1.0f - 2.0f / (1.0f + exp(2.0f * x));
  return x;
}

Expr sinusoid(const Expr &c, const Expr &t, int64_t d, bool gpu) {
  // The angle reaches max_seq radians: in f32 its rounding alone would cost
  // 1e-4 absolute at position 1000, so the encoding is computed in double.
  if (gpu) { // device sin/cos/pow are the GPU's own, fast and vectorless
    Expr pair = cast<double>((c / 2) * 2);
    Expr angle = cast<double>(t) / pow(Expr(10000.0), pair / Expr(static_cast<double>(d)));
    return cast<float>(select(c % 2 == 0, sin(angle), cos(angle)));
  }
  // On CPUs: the wavelengths are constants, sin/cos vector arithmetic.
  std::vector<double> wavelength(static_cast<size_t>((d + 1) / 2));
  for (size_t i = 0; i < wavelength.size(); ++i)
    wavelength[i] = std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(d));
  Func wavelengths = constantTable(wavelength, "wavelength");
  SinCos trig = vectorSinCos(cast<double>(t) / wavelengths(c / 2));
  return cast<float>(select(c % 2 == 0, trig.sin, trig.cos));
}

namespace {

LoweredKernel lowerAlgorithm(const KernelDesc &kernel, const Schedule &schedule) {
  switch (kernel.kind) {
  case KernelKind::linear:
    return lowerPackedLinear(kernel, schedule);
  case KernelKind::attention:
    return lowerAttention(kernel, schedule);
  case KernelKind::embed:
    return lowerEmbed(kernel, schedule);
  case KernelKind::positions:
    return lowerAddPositions(kernel, schedule);
  case KernelKind::segments:
    return lowerAddSegments(kernel, schedule);
  case KernelKind::add:
  case KernelKind::activation:
  case KernelKind::gated_activation:
    return lowerElementwise(kernel, schedule);
  case KernelKind::norm:
  case KernelKind::add_norm:
    return lowerNorm(kernel, schedule);
  case KernelKind::rope:
    return lowerRope(kernel, schedule);
  case KernelKind::rope_table:
    return lowerRopeTable(kernel, schedule);
  case KernelKind::pool:
    return lowerPool(kernel, schedule);
  case KernelKind::seq_project:
    return lowerSeqProject(kernel, schedule);
  }
  return {};
}

} // namespace

LoweredKernel lowerKernel(const KernelDesc &kernel, const Schedule &schedule) {
  LoweredKernel lowered = lowerAlgorithm(kernel, schedule);
  // The GEMM schedules itself (its lowering holds the Funcs to stage);
  // every other kind leaves its stages unscheduled for the GPU.
  if (schedule.gpu && kernel.kind != KernelKind::linear)
    scheduleForGpu(kernel, lowered, schedule);
  return lowered;
}

} // namespace tmc::halide
