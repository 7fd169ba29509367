//===- AttentionKernelTest.cpp - Fused attention against a double reference ===//
//
// JIT-compiles the attention kernel under both of its algorithms (one pass
// over a query tile's keys, keyBlock = 0; and the online softmax over key
// blocks, with several block and tile sizes, odd ones included) for every
// mask kind and sums of them, GQA, ALiBi, an awkward head_dim and whole
// vectors of it, the keys transposed per head or per block, both x86
// targets, and compares with a naive double attention whose mask is
// frontend/Masks.h's maskAllows (the contract's one definition), for prefill
// (T = 1, 37, 150: several key blocks, a partial last one), a decoding step
// (1 query against 70 keys) and a chunk (3 queries against 50 keys), and
// under a decoder's window a step and a chunk given only the keys a cache
// bounded by the window holds (positions from 128 or 130, say: a buffer
// whose rows start there): max |y - ref| / max |ref| <= 1e-5.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/halide/Lowering.h"
#include "frontend/Masks.h"

#include "tests/unit/kernels/ParamFinder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <map>
#include <random>

using namespace tmc;

namespace {


struct MaskCase {
  const char *name;
  bool decoder;
  std::vector<MaskTerm> terms;
  bool alibi = false;
};

MaskTerm term(MaskKind kind, int64_t size = 0, int64_t dilation = 1) {
  MaskTerm t;
  t.kind = kind;
  t.size = size;
  t.dilation = dilation;
  return t;
}
MaskTerm globals(std::vector<int64_t> tokens) {
  MaskTerm t = term(MaskKind::Global);
  t.tokens = std::move(tokens);
  return t;
}
MaskTerm randomTerm(int64_t perRow, uint64_t seed) {
  MaskTerm t = term(MaskKind::Random);
  t.perRow = perRow;
  t.seed = seed;
  return t;
}

constexpr int64_t kMaxSeq = 160;

std::vector<MaskCase> maskCases() {
  using K = MaskKind;
  return {
      {"none", false, {}},
      {"causal", true, {term(K::Causal)}},
      {"padding", false, {term(K::Padding)}},
      {"window_enc", false, {term(K::SlidingWindow, 9)}},
      {"causal_window_alibi", true, {term(K::Causal), term(K::SlidingWindow, 20)}, true},
      {"dilated_enc", false, {term(K::Padding), term(K::DilatedWindow, 40, 3)}},
      {"causal_dilated", true, {term(K::Causal), term(K::DilatedWindow, 70, 2)}},
      {"window_global", false, {term(K::SlidingWindow, 6), globals({0, 37, 120})}},
      {"window_random", false, {term(K::SlidingWindow, 4), randomTerm(2, 7)}},
      // Global tokens alone (no block is walked), one repeated, one past the
      // padded length; ALiBi's bias on the global rows and gathered keys.
      {"padding_globals_alibi", false, {term(K::Padding), globals({2, 2, 145})}, true},
      // More global tokens than the kernel gathers (walked as blocks instead).
      {"many_globals", false, {term(K::Padding), globals({0, 5, 17, 33, 64, 65, 99, 128, 149})}},
      // Every kind of term; the last case (sanitizedMaskPaths reads it there).
      {"causal_all", true,
       {term(K::Causal), term(K::SlidingWindow, 8), globals({3, 90}), randomTerm(2, 11)}},
  };
}

/// The kernel's MaskDesc for a case (as KernelPlan derives it from the IR).
MaskDesc describe(const MaskCase &c) {
  MaskDesc m;
  m.decoder = c.decoder;
  m.alibi = c.alibi;
  m.maxSeq = kMaxSeq;
  for (const MaskTerm &t : c.terms) {
    switch (t.kind) {
    case MaskKind::Causal: m.causal = true; break;
    case MaskKind::Padding: m.padding = true; break;
    case MaskKind::SlidingWindow: m.window = t.size; break;
    case MaskKind::DilatedWindow: m.dilated = t.size; m.dilation = t.dilation; break;
    case MaskKind::Global: m.globals = t.tokens; break;
    case MaskKind::Random: m.randomPerRow = t.perRow; m.randomSeed = t.seed; break;
    default: break;
    }
  }
  return m;
}

struct Sched {
  const char *name;
  int keyBlock, queryTile;
  int keysAt = 0;  ///< Schedule::keysAt: keys transposed per head (0) or per block (1)
  int headDim = 6; ///< 6: below and not a multiple of any vector width (the keys
                   ///< gathered); 16, 32: whole vectors (the keys transposed by shuffles)
  bool parallel = true; ///< false: a serial task (decodeRowsAttentionSchedule)
};
const Sched kScheds[] = {{"onepass", 0, 16},
                         {"kb64q16", 64, 16},
                         {"kb16q8", 16, 8},
                         {"kb32q5", 32, 5},
                         {"kb16q8d16", 16, 8, 0, 16},
                         {"kb32q5d32keysblock", 32, 5, 1, 32},
                         {"kb64q16d16keysblock", 64, 16, 1, 16},
                         // The decoding step's variant (decodeAttentionSchedule): one
                         // query per task, dot products along head_dim (run here on
                         // every shape, prefill included).
                         {"decode_d16", 0, 1, 0, 16},
                         {"decode_d32", 0, 1, 0, 32},
                         // A batched step's variant (decodeRowsAttentionSchedule):
                         // serial, every head of a key row before the next row.
                         {"decode_rows_d16", 0, 1, 0, 16, false}};

using Param = std::tuple<std::string, int, int>; // target, mask case, schedule

class AttentionKernelTest : public ::testing::TestWithParam<Param> {};

TEST_P(AttentionKernelTest, MatchesDoubleAttention) {
  auto [targetName, maskIndex, schedIndex] = GetParam();
  const MaskCase mc = maskCases()[maskIndex];
  const Sched sc = kScheds[schedIndex];
  test::TestTarget tt = test::testTarget(targetName);
  ASSERT_TRUE(tt.info) << tt.error;
  if (!tt.runsHere)
    GTEST_SKIP() << "this CPU has no AVX-512";

  KernelDesc kernel;
  kernel.kind = KernelKind::attention;
  kernel.heads = 4;
  kernel.kvHeads = 2;
  kernel.headDim = sc.headDim;
  kernel.width = kernel.heads * kernel.headDim;
  kernel.scale = 1.0 / std::sqrt(double(sc.headDim));
  kernel.mask = describe(mc);
  kernel.hasLength = kernel.mask.padding;
  Schedule schedule = defaultSchedule(kernel, *tt.info);
  schedule.keyBlock = sc.keyBlock;
  schedule.queryTile = sc.queryTile;
  schedule.keysAt = sc.keysAt;
  schedule.parallel = sc.parallel;
  // A decoder's window with nothing that reaches further back: such a mask
  // is tested on the kernel that reads caches bounded by the window
  // (windowKeys, what those models run), here also given only the keys such
  // a cache holds (the windowed shapes below). Its rows from 0 (every other
  // shape) are what the kernel without windowKeys reads; one kernel per case
  // keeps the JIT compilations (minutes under the sanitizers) as they were.
  const MaskDesc &m = kernel.mask;
  const int window = m.decoder && m.causal && !m.padding && m.globals.empty() && m.randomPerRow == 0
                         ? static_cast<int>(std::max(m.window, m.dilated))
                         : 0;
  kernel.windowKeys = window > 0;
  halide::LoweredKernel lowered = halide::lowerAttention(kernel, schedule);
  std::map<std::string, Halide::Internal::Parameter> params = test::findParams(lowered.output);
  MaskSpec spec;
  spec.terms = mc.terms;

  const int H = 4, G = 2, D = sc.headDim, group = H / G;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  struct Shape {
    int queries, keys, length;
    /// The first position the keys buffer holds: a cache bounded by a
    /// window (tmk-window-caches) keeps the W - 1 before the first query.
    int stored = 0;
  };
  // One Func: the pipeline is JIT-compiled once for every shape.
  Halide::Func out = lowered.output;
  for (Shape shape :
       {Shape{1, 1, 1}, Shape{37, 37, 30}, Shape{150, 150, 141}, Shape{1, 70, 70}, Shape{3, 50, 50},
        Shape{3, 150, 150, 150 - 3 - (window - 1)}, Shape{1, 150, 150, 150 - 1 - (window - 1)}}) {
    // Only the shapes the mask admits: a padded encoder never decodes, and
    // without causal a decoding step would see later keys (the reference
    // below handles it, but the contract never asks for it).
    if (shape.queries != shape.keys && !mc.decoder)
      continue;
    if (shape.stored != 0 && (window == 0 || shape.stored < 0))
      continue;
    const int Tq = shape.queries, Tk = shape.keys;
    const int length = kernel.mask.padding ? shape.length : Tk;
    Halide::Buffer<float> q(D, H, Tq), k(D, G, Tk), v(D, G, Tk);
    for (Halide::Buffer<float> *b : {&q, &k, &v})
      b->for_each_value([&](float &x) { x = dist(rng); });
    params.at("query").set_buffer(Halide::Buffer<>(q));
    // Positions [stored, Tk) of the keys and values, at their positions
    // (copies: Halide::Buffer's crop changes the buffer it shares).
    Halide::Buffer<float> kStored = k.copy(), vStored = v.copy();
    kStored.crop(2, shape.stored, Tk - shape.stored);
    vStored.crop(2, shape.stored, Tk - shape.stored);
    params.at("key").set_buffer(Halide::Buffer<>(kStored));
    params.at("value").set_buffer(Halide::Buffer<>(vStored));
    if (kernel.mask.padding)
      params.at("length").set_scalar<int32_t>(length);
    Halide::Buffer<float> y = out.realize({D, H, Tq}, tt.halide);

    double maxDiff = 0, maxRef = 1e-30;
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < Tq; ++i) {
        const int64_t pos = Tk - Tq + i;
        std::vector<double> w(Tk, 0.0);
        double mx = -INFINITY;
        for (int j = 0; j < Tk; ++j) {
          if (!maskAllows(spec, mc.decoder, kMaxSeq, pos, j, length))
            continue;
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += double(q(d, h, i)) * k(d, h / group, j);
          s *= kernel.scale;
          if (mc.alibi)
            s -= std::pow(2.0, -8.0 * (h + 1) / H) * double(mc.decoder ? pos - j : std::abs(pos - j));
          w[j] = s;
          mx = std::max(mx, s);
        }
        double sum = 0;
        for (int j = 0; j < Tk; ++j)
          if (maskAllows(spec, mc.decoder, kMaxSeq, pos, j, length))
            sum += (w[j] = std::exp(w[j] - mx));
          else
            w[j] = 0;
        for (int d = 0; d < D; ++d) {
          double acc = 0;
          for (int j = 0; j < Tk; ++j)
            acc += w[j] * v(d, h / group, j);
          double ref = sum > 0 ? acc / sum : 0.0;
          double diff = std::abs(y(d, h, i) - ref);
          maxDiff = std::isnan(diff) ? INFINITY : std::max(maxDiff, diff);
          maxRef = std::max(maxRef, std::abs(ref));
        }
      }
    EXPECT_LE(maxDiff / maxRef, 1e-5) << mc.name << " " << sc.name << " on " << targetName << ": "
                                      << Tq << " queries, " << Tk << " keys from " << shape.stored;
  }
}

std::string paramName(const ::testing::TestParamInfo<Param> &info) {
  auto [target, mask, sched] = info.param;
  std::string name = std::string(target == "x86-64-avx2" ? "avx2" : "avx512") + "_" +
                     maskCases()[mask].name + "_" + kScheds[sched].name;
  return name;
}

// The main build: every schedule on AVX-512 (this machine's ISA); on AVX2
// the five that take different paths through the lowering: one pass; the
// online softmax in blocks of 64 over a head_dim of 6 (the keys gathered),
// and over whole vectors with the keys transposed per block; and the
// decoding variant, parallel over heads and serial over rows.
const int kPathSchedules[] = {0, 1, 5, 7, 9};
#ifdef TMC_SANITIZED
// The sanitizer build runs on one target, the richest this CPU runs
// (ParamFinder.h's suiteTargets says why): every mask through one pass and
// through blocks with the keys transposed (the two ways a mask's terms are
// lowered: per element, and per key block with the key-only terms hoisted),
// and the other three paths under the mask that has every kind of term.
// Each case costs a JIT compilation under ASan's allocator (~10 s); the
// masks' own code is the same C++ on every path, and the main build checks
// every pair value by value.
std::vector<Param> sanitizedMaskPaths() {
  std::vector<Param> params;
  const int masks = int(maskCases().size());
  for (const std::string &target : test::suiteTargets({"x86-64-avx2", "x86-64-avx512"})) {
    for (int mask = 0; mask < masks; ++mask)
      for (int sched : {0, 5})
        params.emplace_back(target, mask, sched);
    for (int sched : {1, 7, 9})
      params.emplace_back(target, masks - 1, sched); // causal_all
  }
  return params;
}
INSTANTIATE_TEST_SUITE_P(Masks, AttentionKernelTest, ::testing::ValuesIn(sanitizedMaskPaths()),
                         paramName);
#else
INSTANTIATE_TEST_SUITE_P(Masks, AttentionKernelTest,
                         ::testing::Combine(::testing::Values("x86-64-avx512"),
                                            ::testing::Range(0, int(maskCases().size())),
                                            ::testing::Range(0, int(std::size(kScheds)))),
                         paramName);
INSTANTIATE_TEST_SUITE_P(MasksAvx2, AttentionKernelTest,
                         ::testing::Combine(::testing::Values("x86-64-avx2"),
                                            ::testing::Range(0, int(maskCases().size())),
                                            ::testing::ValuesIn(kPathSchedules)),
                         paramName);
#endif

} // namespace
