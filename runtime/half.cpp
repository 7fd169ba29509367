//===- half.cpp - f16 and bf16 weights as f32 -----------------------------===//

#include "runtime/half.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tmr {

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24); // zero or subnormal
  else if (exponent == 31)
    magnitude = mantissa ? std::nanf("") : INFINITY;
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  uint32_t out;
  std::memcpy(&out, &magnitude, sizeof out);
  out |= sign;
  float result;
  std::memcpy(&result, &out, sizeof result);
  return result;
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float result;
  std::memcpy(&result, &wide, sizeof result);
  return result;
}

AlignedVector<float> widenToF32(const void *data, size_t count, tmr_dtype dtype) {
  AlignedVector<float> out(count);
  const auto *words = static_cast<const uint16_t *>(data);
  for (size_t i = 0; i < count; ++i) {
    switch (dtype) {
    case TMR_F32: out[i] = static_cast<const float *>(data)[i]; break;
    case TMR_F16: out[i] = halfToFloat(words[i]); break;
    case TMR_BF16: out[i] = bfloat16ToFloat(words[i]); break;
    // Pre-quantized values are never widened (their scales say what they mean).
    case TMR_I8:
    case TMR_U8:
      out[i] = 0;
      break;
    }
  }
  return out;
}

namespace {
#if defined(__x86_64__)
/// F16C's conversion rounds to nearest even, subnormals and overflow as
/// floatToHalf does; eight values with a NaN among them go through
/// floatToHalf, which keeps every NaN the same quiet NaN.
__attribute__((target("avx,f16c"))) void narrowToHalfF16c(const float *in, uint16_t *out,
                                                          size_t count) {
  size_t c = 0;
  for (; c + 8 <= count; c += 8) {
    __m256 values = _mm256_loadu_ps(in + c);
    if (_mm256_movemask_ps(_mm256_cmp_ps(values, values, _CMP_UNORD_Q)) != 0) {
      for (size_t i = c; i < c + 8; ++i)
        out[i] = floatToHalf(in[i]);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + c),
                     _mm256_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; c < count; ++c)
    out[c] = floatToHalf(in[c]);
}

const bool hasF16c = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#endif
} // namespace

void narrowToHalf(const float *in, uint16_t *out, size_t count) {
#if defined(__x86_64__)
  if (hasF16c)
    return narrowToHalfF16c(in, out, count);
#endif
  for (size_t c = 0; c < count; ++c)
    out[c] = floatToHalf(in[c]);
}

std::vector<uint16_t> narrowFromF32(const float *values, size_t count, tmr_dtype dtype) {
  std::vector<uint16_t> out(count);
  if (dtype != TMR_BF16) {
    narrowToHalf(values, out.data(), count);
    return out;
  }
  for (size_t i = 0; i < count; ++i)
    out[i] = floatToBfloat16(values[i]);
  return out;
}

} // namespace tmr
