//===- Quantize.cpp - Weights files stored as the kernels multiply them ---===//
//
// Each quantizer below mirrors one pack kernel of compiler/halide/LowerPack.cpp
// operation by operation, in f32, including how Halide's min, max, clamp and
// float-to-int casts treat NaN (so a file quantized here packs into the same
// bytes as the f32 file, non-finite weights aside only where x86 and another
// ISA convert differently). This file is compiled with -ffp-contract=off: a
// fused multiply-add would round once where the contract rounds twice.
//
//===----------------------------------------------------------------------===//

#include "compiler/Quantize.h"

#include "compiler/Error.h"
#include "compiler/PreparedWeights.h"
#include "runtime/half.h"
#include "runtime/hf_checkpoint.h"
#include "runtime/message_text.h"
#include "runtime/safetensors.h"

#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>

namespace tmc {

namespace {

/// Halide's max(a, b) and min(a, b) on floats: a compare and a select, so a
/// NaN operand yields the other operand or NaN depending on its side.
float halideMax(float a, float b) { return a > b ? a : b; }
float halideMin(float a, float b) { return a < b ? a : b; }

/// Halide's cast<int32_t>(float) on x86 (cvttss2si / cvttps2dq): toward
/// zero, and INT32_MIN for NaN or a value outside int32.
int32_t halideToInt32(float value) {
  if (!(value >= -2147483648.0f && value < 2147483648.0f))
    return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(value);
}

constexpr int64_t kQ4Block = 32;

int64_t q4Blocks(int64_t K) { return (K + kQ4Block - 1) / kQ4Block; }

/// "2 non-finite values (the first, at [3, 17], is NaN)", or "" when every
/// value is finite; `value(i)` is element i as f32.
template <typename Value>
std::string nonFiniteText(int64_t count, const std::vector<int64_t> &shape, Value value) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(value(i)) && bad++ == 0)
      first = i;
  if (bad == 0)
    return "";
  return std::to_string(bad) + " non-finite value" + (bad == 1 ? "" : "s") + " (the first, at " +
         tmr::formatShape(tmr::elementIndex(first, shape)) + ", is " +
         (std::isnan(value(first)) ? "NaN" : "infinite") + ")";
}

} // namespace

llvm::Expected<std::vector<StoredTensor>> quantizedLayout(const std::vector<TensorSpec> &manifest,
                                                          const std::vector<std::string> &storage) {
  if (storage.size() != manifest.size())
    return makeError("internal error: " + std::to_string(storage.size()) + " storage entries for " +
                     std::to_string(manifest.size()) + " tensors");
  std::vector<StoredTensor> layout;
  for (size_t i = 0; i < manifest.size(); ++i) {
    const TensorSpec &tensor = manifest[i];
    const std::string &kind = storage[i];
    StoredTensor values;
    values.name = tensor.name;
    values.shape = tensor.shape;
    values.dtype = storageDType(tensor.dtype);
    values.source = static_cast<int64_t>(i);
    values.storage = kind;
    if (kind.empty()) {
      layout.push_back(values);
      continue;
    }
    if (tensor.shape.size() != 2)
      return makeError("internal error: tensor " + tmr::quoted(tensor.name) + " of shape " +
                       tmr::formatShape(tensor.shape) + " cannot be stored as " + kind);
    const int64_t N = tensor.shape[0], K = tensor.shape[1];
    StoredTensor scale = values;
    scale.name += ".scale";
    scale.shape = {N};
    scale.dtype = TMR_F32;
    scale.isScale = true;
    if (kind == "bf16") {
      values.dtype = TMR_BF16;
      layout.push_back(values);
    } else if (kind == "int8") {
      values.dtype = TMR_I8;
      layout.push_back(values);
      layout.push_back(scale);
    } else if (kind == "q4") {
      values.dtype = TMR_U8;
      values.shape = {N, 16 * q4Blocks(K)};
      scale.dtype = TMR_F16;
      scale.shape = {N, q4Blocks(K)};
      layout.push_back(values);
      layout.push_back(scale);
    } else {
      return makeError("internal error: unknown storage '" + kind + "' for tensor " +
                       tmr::quoted(tensor.name));
    }
  }
  return layout;
}

void quantizeInt8Row(const float *row, int64_t K, int8_t *q, float *scale) {
  // LowerPack.cpp's absMax: max(absMax, |w|), in k order.
  float m = 0.0f;
  for (int64_t k = 0; k < K; ++k)
    m = halideMax(m, std::fabs(row[k]));
  *scale = m / 127.0f;
  const float inv = m > 0.0f ? 127.0f / m : 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    const float product = row[k] * inv;
    const float rounded = std::nearbyint(product); // ties to even (the default mode)
    // Halide's clamp(x, lo, hi) is max(min(x, hi), lo): NaN goes to hi.
    const float clamped = halideMax(halideMin(rounded, 127.0f), -127.0f);
    q[k] = static_cast<int8_t>(clamped);
  }
}

void quantizeQ4Row(const float *row, int64_t K, uint8_t *nibbles, uint16_t *scales) {
  const int64_t blocks = q4Blocks(K);
  for (int64_t b = 0; b < blocks; ++b) {
    float w[kQ4Block];
    for (int64_t j = 0; j < kQ4Block; ++j)
      w[j] = kQ4Block * b + j < K ? row[kQ4Block * b + j] : 0.0f;
    // The first value of largest magnitude: only a strictly larger one replaces it.
    float amax = 0.0f, mx = 0.0f;
    for (float v : w)
      if (std::fabs(v) > amax) {
        amax = std::fabs(v);
        mx = v;
      }
    const float d = mx / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    scales[b] = tmr::floatToHalf(d);
    uint8_t stored[kQ4Block];
    for (int64_t j = 0; j < kQ4Block; ++j) {
      const float product = w[j] * id;
      const float sum = product + 8.5f;
      // min(15, int32(sum)), then the uint8 cast keeps the low byte.
      stored[j] = static_cast<uint8_t>(std::min<int32_t>(15, halideToInt32(sum)) & 0xff);
    }
    // ggml's block_q4_0 qs: element j in the low nibble, j + 16 in the high one.
    for (int64_t j = 0; j < kQ4Block / 2; ++j)
      nibbles[16 * b + j] = static_cast<uint8_t>((stored[j] & 0x0f) | (stored[j + 16] << 4));
  }
}

llvm::Expected<QuantizeSummary>
quantizeWeightsFile(const KernelPlan &plan, const std::string &input, const std::string &output) {
  std::string error;
  // Checked as an executable checks it: the manifest's dtypes only, so that
  // a file quantized already is refused, naming its tensors.
  const std::vector<TensorSpec> &manifest = plan.weights;
  std::vector<tmr_tensor_desc> expected(manifest.size());
  for (size_t i = 0; i < manifest.size(); ++i) {
    tmr_tensor_desc &desc = expected[i];
    std::memset(&desc, 0, sizeof desc);
    desc.name = manifest[i].name.c_str();
    desc.rank = static_cast<int32_t>(manifest[i].shape.size());
    for (int32_t d = 0; d < desc.rank && d < TMR_MAX_RANK; ++d)
      desc.shape[d] = manifest[i].shape[static_cast<size_t>(d)];
    desc.dtype = storageDType(manifest[i].dtype);
    desc.quantized = TMR_QUANT_NONE;
  }
  // A Hugging Face checkpoint is read under canonical names, which the
  // output then carries (an executable reads either).
  std::unique_ptr<tmr::SafetensorsFile> file =
      tmr::openWeights(input, plan.model.weightScheme.c_str(), expected.data(),
                       static_cast<int32_t>(expected.size()), &error, /*guardTruncation=*/true);
  if (!file)
    return makeError(error);
  if (!tmr::checkTensors(*file, input, expected.data(), static_cast<int32_t>(expected.size()),
                         &error))
    return makeError(error);

  llvm::Expected<std::vector<StoredTensor>> layout =
      quantizedLayout(manifest, quantizedStorage(plan));
  if (!layout)
    return layout.takeError();

  QuantizeSummary summary;
  summary.tensors = static_cast<int64_t>(manifest.size());
  // Quantized tensors' bytes (a deque: the pointers stay put as it grows);
  // the rest are written from the input's mapping.
  std::deque<std::vector<unsigned char>> buffers;
  std::vector<tmr::TensorToWrite> tensors;
  for (size_t t = 0; t < layout->size(); ++t) {
    const StoredTensor &stored = (*layout)[t];
    const tmr::TensorView *view = file->find(manifest[stored.source].name);
    if (stored.storage.empty()) {
      tensors.push_back({stored.name, stored.dtype, stored.shape, view->data});
      continue;
    }
    if (stored.isScale)
      continue; // written with its values, below
    const int64_t N = view->shape[0], K = view->shape[1];
    const size_t count = static_cast<size_t>(N * K);
    tmr::AlignedVector<float> widened;
    const float *w = static_cast<const float *>(view->data);
    if (view->dtype != TMR_F32) {
      widened = tmr::widenToF32(view->data, count, view->dtype);
      w = widened.data();
    }
    std::string problem =
        nonFiniteText(static_cast<int64_t>(count), view->shape, [&](int64_t i) { return w[i]; });
    std::string scaleProblem;
    if (stored.storage == "bf16") {
      std::vector<unsigned char> &values = buffers.emplace_back(count * 2);
      auto *bits = reinterpret_cast<uint16_t *>(values.data());
      for (size_t i = 0; i < count; ++i)
        bits[i] = tmr::floatToBfloat16(w[i]);
      tensors.push_back({stored.name, TMR_BF16, stored.shape, values.data()});
      ++summary.bf16;
    } else if (stored.storage == "int8") {
      std::vector<unsigned char> &values = buffers.emplace_back(count);
      std::vector<unsigned char> &scales = buffers.emplace_back(static_cast<size_t>(N) * 4);
      auto *q = reinterpret_cast<int8_t *>(values.data());
      auto *s = reinterpret_cast<float *>(scales.data());
      for (int64_t n = 0; n < N; ++n)
        quantizeInt8Row(w + n * K, K, q + n * K, s + n);
      const StoredTensor &scale = (*layout)[t + 1];
      tensors.push_back({stored.name, TMR_I8, stored.shape, values.data()});
      tensors.push_back({scale.name, TMR_F32, scale.shape, scales.data()});
      scaleProblem = nonFiniteText(N, scale.shape, [&](int64_t i) { return s[i]; });
      ++summary.int8;
    } else {
      const int64_t blocks = q4Blocks(K);
      std::vector<unsigned char> &values =
          buffers.emplace_back(static_cast<size_t>(N * 16 * blocks));
      std::vector<unsigned char> &scales =
          buffers.emplace_back(static_cast<size_t>(N * blocks) * 2);
      auto *bits = reinterpret_cast<uint16_t *>(scales.data());
      for (int64_t n = 0; n < N; ++n)
        quantizeQ4Row(w + n * K, K, values.data() + n * 16 * blocks, bits + n * blocks);
      const StoredTensor &scale = (*layout)[t + 1];
      tensors.push_back({stored.name, TMR_U8, stored.shape, values.data()});
      tensors.push_back({scale.name, TMR_F16, scale.shape, scales.data()});
      scaleProblem = nonFiniteText(N * blocks, scale.shape,
                                   [&](int64_t i) { return tmr::halfToFloat(bits[i]); });
      ++summary.q4;
    }
    // The executable warns about non-finite weights at load; a quantized
    // file no longer shows them as such, so the user hears about them now.
    std::string tensorText = input + ": tensor " + tmr::quoted(manifest[stored.source].name);
    if (!problem.empty() && scaleProblem.empty())
      summary.warnings.push_back(tensorText + " has " + problem + "; quantized to " +
                                 stored.storage + " anyway");
    else if (!problem.empty())
      summary.warnings.push_back(tensorText + " has " + problem + "; quantized to " +
                                 stored.storage + " anyway, its scales have " + scaleProblem);
    else if (!scaleProblem.empty())
      summary.warnings.push_back(
          tensorText + ": its q4 scales have " + scaleProblem +
          ": a block's largest magnitude is 524160 or more, past f16's range, so every output "
          "it reaches is infinite or NaN (keep its layer in f32 or int8)");
  }
  // Tensors written as they are come straight from the input's mapping: a
  // truncation of the input while they are read reads zeros (mapping_guard.h),
  // and then no output appears.
  if (!tmr::writeSafetensors(output, tensors, &error, [&](std::string *problem) {
        if (!file->lost())
          return true;
        *problem = file->lostMessage();
        return false;
      }))
    return makeError(error);
  std::error_code ec;
  summary.inputBytes = 0;
  if (std::filesystem::is_directory(input, ec)) {
    // A Hugging Face checkpoint folder: its safetensors files, shards or one.
    for (const auto &entry : std::filesystem::directory_iterator(input, ec))
      if (entry.path().extension() == ".safetensors" && entry.is_regular_file(ec))
        summary.inputBytes += entry.file_size(ec);
  } else {
    summary.inputBytes = std::filesystem::file_size(input, ec);
  }
  summary.outputBytes = std::filesystem::file_size(output, ec);
  return summary;
}

} // namespace tmc
