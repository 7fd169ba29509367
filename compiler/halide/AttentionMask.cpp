//===- AttentionMask.cpp - Attention masks as Halide expressions ----------===//

#include "compiler/halide/AttentionMask.h"

#include <algorithm>

using namespace Halide;

namespace tmc::halide {

Expr randomKey(const MaskDesc &mask, const Expr &row, int r) {
  Expr z = cast<uint64_t>(Expr(mask.randomSeed)) +
           cast<uint64_t>(row * static_cast<int>(mask.randomPerRow) + (r + 1)) *
               Expr(static_cast<uint64_t>(0x9E3779B97F4A7C15ull));
  z = (z ^ (z >> 30)) * Expr(static_cast<uint64_t>(0xBF58476D1CE4E5B9ull));
  z = (z ^ (z >> 27)) * Expr(static_cast<uint64_t>(0x94D049BB133111EBull));
  z = z ^ (z >> 31);
  return cast<int>(z % cast<uint64_t>(Expr(static_cast<uint64_t>(mask.maxSeq))));
}

Expr alibiBias(const MaskDesc &mask, int64_t heads, const Expr &h, const Expr &pos, const Expr &j) {
  Expr slope = pow(2.0f, -8.0f * cast<float>(h + 1) / static_cast<float>(heads));
  Expr distance = mask.decoder ? pos - j : abs(pos - j);
  return -slope * cast<float>(distance);
}

Expr isGlobal(const MaskDesc &mask, const Expr &x) {
  Expr any = Internal::const_false();
  for (int64_t token : mask.globals)
    any = any || x == static_cast<int>(token);
  return any;
}

Expr beforePadding(const MaskDesc &mask, const Expr &j, const Expr &length) {
  return mask.padding ? j < length : Internal::const_true();
}

Expr allowed(const MaskDesc &mask, const Expr &pos, const Expr &j, const Expr &length) {
  return allowedWith(mask, pos, j, beforePadding(mask, j, length), isGlobal(mask, pos),
                     isGlobal(mask, j));
}

Expr allowedWith(const MaskDesc &mask, const Expr &pos, const Expr &j, const Expr &keyValid,
                 const Expr &rowGlobal, const Expr &keyGlobal) {
  Expr ok = keyValid;
  if (mask.causal)
    ok = ok && j <= pos;
  if (!mask.restricted())
    return ok;
  Expr any = Internal::const_false();
  auto window = [&](int64_t size) {
    int w = static_cast<int>(size);
    return mask.decoder ? (pos - w < j && j <= pos) : (abs(pos - j) <= w / 2);
  };
  if (mask.window > 0)
    any = any || window(mask.window);
  if (mask.dilated > 0)
    any = any || (window(mask.dilated) && (pos - j) % static_cast<int>(mask.dilation) == 0);
  if (!mask.globals.empty())
    any = any || rowGlobal || keyGlobal;
  for (int r = 0; r < mask.randomPerRow; ++r)
    any = any || randomKey(mask, pos, r) == j;
  return ok && any;
}

std::pair<Expr, Expr> visibleKeys(const MaskDesc &mask, const Expr &pos, const Expr &length,
                                  const Expr &stored, const Expr &keys) {
  Expr first = stored, last = keys - 1;
  if (mask.causal)
    last = min(last, pos);
  if (mask.padding)
    last = min(last, length - 1);
  if (mask.restricted() && mask.globals.empty() && mask.randomPerRow == 0) {
    int w = static_cast<int>(std::max(mask.window, mask.dilated));
    if (mask.decoder) {
      first = max(first, pos - w + 1);
      last = min(last, pos);
    } else {
      first = max(first, pos - w / 2);
      last = min(last, pos + w / 2);
    }
  }
  return {first, last};
}

} // namespace tmc::halide
