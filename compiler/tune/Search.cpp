//===- Search.cpp - The schedule search space of one kernel ---------------===//

#include "compiler/tune/Search.h"

#include <algorithm>
#include <set>

namespace tmc::tune {

namespace {

bool isNorm(const KernelDesc &kernel) {
  return kernel.kind == KernelKind::Norm || kernel.kind == KernelKind::AddNorm;
}

template <typename T> T pick(const std::vector<T> &values, std::mt19937 &rng) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

} // namespace

SearchSpace::SearchSpace(const KernelDesc &kernel, const TargetInfo &target)
    : kernel(kernel), target(target), base(defaultSchedule(kernel, target)) {}

int SearchSpace::fieldCount() const {
  switch (kernel.kind) {
  case KernelKind::Linear:
    return 6; // vector width, tile cols, tile rows, k block, unroll, parallel rows
  case KernelKind::Attention:
    return 5; // vector width, query tile, key block, parallel, where keys are transposed
  default:
    return isNorm(kernel) ? 3 : 2; // vector width, parallel (, norms: staged rows)
  }
}

Schedule SearchSpace::canonical(Schedule s) const {
  s.tokensEstimate = base.tokensEstimate;
  s.decodeVariant = base.decodeVariant;
  if (kernel.kind != KernelKind::Attention)
    s.keyBlock = base.keyBlock;
  // keys_at places a stage of the key-blocked attention only.
  if (kernel.kind != KernelKind::Attention || s.keyBlock == 0)
    s.keysAt = base.keysAt;
  if (!isNorm(kernel))
    s.stageRows = base.stageRows;
  if (kernel.kind == KernelKind::Linear) {
    s.queryTile = base.queryTile;
    // k_block 0 and k_block >= K both mean unblocked: spell it as the
    // default does when the default is unblocked.
    auto unblocked = [&](int kb) { return kb == 0 || kb >= kernel.inWidth; };
    if (unblocked(s.kBlock))
      s.kBlock = unblocked(base.kBlock) ? base.kBlock : 0;
    return s;
  }
  s.tileCols = base.tileCols;
  s.tileRows = base.tileRows;
  s.kBlock = base.kBlock;
  s.unrollK = base.unrollK;
  s.parallelRows = base.parallelRows;
  if (kernel.kind != KernelKind::Attention)
    s.queryTile = base.queryTile;
  return s;
}

bool SearchSpace::valid(const Schedule &s, std::string *why) const {
  if (!validSchedule(kernel, target, s, why))
    return false;
  if (kernel.kind != KernelKind::Linear)
    return true;
  GemmLayout l = gemmLayout(kernel, s);
  // The register tile: accumulators, one weight row, one broadcast value.
  // AVX-512 and NEON have 32 vector registers, AVX2 16; a tile past them spills.
  const int registers = target.vectorRegisters;
  const int vectors = l.panelWidth / l.vectorWidth;
  if (vectors * l.tileRows + vectors + 1 > registers) {
    *why = "the register tile (" + std::to_string(vectors) + " vectors x " +
           std::to_string(l.tileRows) + " rows) needs more than " + std::to_string(registers) +
           " registers";
    return false;
  }
  int64_t rounded = (kernel.width + l.vectorWidth - 1) / l.vectorWidth * l.vectorWidth;
  if (l.panelWidth > std::max<int64_t>(rounded, l.vectorWidth)) {
    *why = "tile_cols wider than the layer";
    return false;
  }
  if (s.kBlock > 0 && s.kBlock < kernel.inWidth && s.kBlock % s.unrollK != 0) {
    *why = "unroll_k does not divide k_block";
    return false;
  }
  return true;
}

void SearchSpace::randomize(Schedule &s, int field, std::mt19937 &rng) const {
  const int tw = target.vectorWidth;
  if (kernel.kind == KernelKind::Linear) {
    switch (field) {
    case 0: {
      int old = s.vectorWidth;
      s.vectorWidth = pick<int>({tw, std::max(4, tw / 2)}, rng);
      s.tileCols = std::max(s.vectorWidth, s.tileCols / old * s.vectorWidth);
      break;
    }
    case 1:
      s.tileCols = s.vectorWidth * pick<int>({1, 2, 3, 4, 5, 6}, rng);
      break;
    case 2:
      s.tileRows = pick<int>({1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14}, rng);
      break;
    case 3:
      s.kBlock = pick<int>({0, 64, 96, 128, 192, 256, 384, 512, 768, 1024}, rng);
      break;
    case 4:
      s.unrollK = pick<int>({1, 2, 4}, rng);
      break;
    default:
      s.parallelRows = !s.parallelRows;
      break;
    }
    return;
  }
  if (field == 0) {
    s.vectorWidth = pick<int>({std::max(4, tw / 2), tw, 2 * tw}, rng);
  } else if (kernel.kind == KernelKind::Attention && field == 1) {
    s.queryTile = pick<int>({4, 8, 16, 24, 32, 48, 64}, rng);
  } else if (kernel.kind == KernelKind::Attention && field == 2) {
    // 0: the one-pass softmax over all keys; else the online softmax's block.
    s.keyBlock = pick<int>({0, 16, 32, 64, 128}, rng);
  } else if (kernel.kind == KernelKind::Attention && field == 4) {
    s.keysAt = 1 - s.keysAt;
  } else if (isNorm(kernel) && field == 2) {
    s.stageRows = !s.stageRows;
  } else {
    s.parallel = !s.parallel;
  }
}

std::vector<Schedule> SearchSpace::seeds() const {
  std::vector<Schedule> out = {base};
  std::set<std::string> seen = {canonical(base).str()};
  auto add = [&](Schedule s) {
    s = canonical(s);
    std::string why;
    if (valid(s, &why) && seen.insert(s.str()).second)
      out.push_back(s);
  };
  Schedule s = base;
  if (kernel.kind == KernelKind::Linear) {
    for (int rows : {base.tileRows - 1, base.tileRows + 1, base.tileRows + 2}) {
      s = base;
      s.tileRows = std::max(1, rows);
      add(s);
    }
    for (int kb : {0, 256, 512}) {
      s = base;
      s.kBlock = kb;
      add(s);
    }
    s = base;
    s.tileCols = base.tileCols - base.vectorWidth;
    s.tileRows = base.tileRows + 2;
    add(s);
    s = base;
    s.unrollK = 2;
    add(s);
    s = base;
    s.parallelRows = true;
    s.kBlock = 0;
    add(s);
  } else if (kernel.kind == KernelKind::Attention) {
    for (int q : {8, 32, 64}) {
      s = base;
      s.queryTile = q;
      add(s);
    }
    for (int kb : {0, 32, 128}) {
      s = base;
      s.keyBlock = kb;
      add(s);
    }
    s = base;
    s.keysAt = 1 - base.keysAt;
    add(s);
  } else {
    s.vectorWidth = 2 * base.vectorWidth;
    add(s);
    s = base;
    s.parallel = false;
    add(s);
    s = base;
    s.stageRows = !base.stageRows;
    add(s);
  }
  return out;
}

Schedule SearchSpace::mutate(const Schedule &from, std::mt19937 &rng) const {
  for (int attempt = 0; attempt < 64; ++attempt) {
    Schedule s = from;
    int changes = std::uniform_int_distribution<int>(1, 2)(rng);
    for (int c = 0; c < changes; ++c)
      randomize(s, std::uniform_int_distribution<int>(0, fieldCount() - 1)(rng), rng);
    s = canonical(s);
    std::string why;
    if (valid(s, &why))
      return s;
  }
  return canonical(from);
}

Schedule SearchSpace::crossover(const Schedule &a, const Schedule &b, std::mt19937 &rng) const {
  std::bernoulli_distribution coin(0.5);
  Schedule s = a;
  if (coin(rng)) {
    s.vectorWidth = b.vectorWidth;
    s.tileCols = b.tileCols;
  }
  if (coin(rng))
    s.tileRows = b.tileRows;
  if (coin(rng))
    s.kBlock = b.kBlock;
  if (coin(rng))
    s.unrollK = b.unrollK;
  if (coin(rng))
    s.parallelRows = b.parallelRows;
  if (coin(rng))
    s.queryTile = b.queryTile;
  if (coin(rng))
    s.keyBlock = b.keyBlock;
  if (coin(rng))
    s.parallel = b.parallel;
  if (coin(rng))
    s.keysAt = b.keysAt;
  if (coin(rng))
    s.stageRows = b.stageRows;
  s = canonical(s);
  std::string why;
  return valid(s, &why) ? s : canonical(a);
}

bool SearchSpace::decodesAsDefault(const Schedule &schedule) const {
  return !decodeKernelSuffix(kernel, base).empty() &&
         decodeKernelSchedule(kernel, schedule).str() == decodeKernelSchedule(kernel, base).str();
}

size_t SearchSpace::sizeEstimate() const {
  switch (kernel.kind) {
  case KernelKind::Linear:
    return 2 * 6 * 11 * 10 * 3 * 2;
  case KernelKind::Attention:
    return 3 * 7 * 5 * 2 * 2;
  default:
    return isNorm(kernel) ? 3 * 2 * 2 : 3 * 2;
  }
}

} // namespace tmc::tune
