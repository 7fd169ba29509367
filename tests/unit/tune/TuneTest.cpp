//===- TuneTest.cpp - Schedules as strings, the tuning database, the search space ===//

#include "compiler/Error.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/TuningDb.h"
#include "compiler/tune/Autoschedule.h"
#include "compiler/tune/FmaPeak.h"
#include "compiler/tune/Measure.h"
#include "compiler/tune/MemoryLimit.h"
#include "compiler/tune/Search.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <set>
#include <unistd.h>

using namespace tmc;
using namespace tmc::tune;

namespace {

TargetInfo avx2() { return llvm::cantFail(resolveTarget("x86-64-avx2")); }

TargetInfo avx512() { return llvm::cantFail(resolveTarget("x86-64-avx512")); }

KernelDesc linear(int64_t k, int64_t n) {
  KernelDesc d{KernelKind::linear};
  d.inWidth = k;
  d.width = n;
  d.hasBias = true;
  d.activation = "none";
  return d;
}

std::string tempPath(const char *name) {
  return std::string(::testing::TempDir()) + "/" + name + "." + std::to_string(getpid());
}

/// parseSchedule's error for `text` ("" when it parses).
std::string parseError(const std::string &text) {
  return llvm::toString(parseSchedule(text, Schedule()).takeError());
}

TEST(Schedule, StrParsesBack) {
  Schedule s = defaultSchedule(linear(768, 2304), avx512());
  s.tileRows = 5;
  s.kBlock = 256;
  s.unrollK = 2;
  s.parallelRows = true;
  llvm::Expected<Schedule> back = parseSchedule(s.str(), Schedule());
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->str(), s.str());
}

TEST(Schedule, ParseErrorsNameTheKey) {
  EXPECT_NE(parseError("tile_size=4").find("unknown schedule key 'tile_size'"), std::string::npos);
  EXPECT_NE(parseError("tile_rows=four").find("not an integer"), std::string::npos);
  EXPECT_NE(parseError("tile_rows=4x"), "");
  EXPECT_NE(parseError("tile_rows=0").find("out of range [1, 16]"), std::string::npos);
  EXPECT_NE(parseError("tile_rows"), "");
  // A key left out keeps its value.
  Schedule t;
  t.queryTile = 48;
  llvm::Expected<Schedule> parsed = parseSchedule("tile_rows=3", t);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->tileRows, 3);
  EXPECT_EQ(parsed->queryTile, 48);
}

TEST(Schedule, ValidityFollowsTheGemmLayout) {
  KernelDesc k = linear(768, 768);
  Schedule s = defaultSchedule(k, avx2());
  EXPECT_EQ(llvm::toString(validSchedule(k, avx2(), s)), "");
  s.tileCols = 20; // not a multiple of 8
  EXPECT_NE(llvm::toString(validSchedule(k, avx2(), s)), "");
  s = defaultSchedule(k, avx2());
  s.vectorWidth = 32; // past twice the AVX2 width
  EXPECT_NE(llvm::toString(validSchedule(k, avx2(), s)), "");
}

TEST(Schedule, ShortSumsTakeFourRowTilesWithTokensInPlace) {
  // AVX-512 f32 GEMMs of K <= 192 and at most 4096 features: 4-row tiles
  // (as wide as the layer's width picks), the tokens read in place
  // (Schedule.cpp has the measurements).
  auto tileOf = [](const KernelDesc &k, const TargetInfo &target) {
    Schedule s = defaultSchedule(k, target);
    return std::to_string(s.tileCols) + " x " + std::to_string(s.tileRows) +
           (s.packTokens ? " packed" : " in place");
  };
  EXPECT_EQ(tileOf(linear(128, 768), avx512()), "48 x 4 in place"); // packed at 8 rows before
  EXPECT_EQ(tileOf(linear(128, 128), avx512()), "64 x 4 in place");
  EXPECT_EQ(tileOf(linear(160, 864), avx512()), "48 x 4 in place");
  EXPECT_EQ(tileOf(linear(192, 4096), avx512()), "64 x 4 in place");
  // Not: a deeper sum, a wider layer (4097: a vocabulary-sized width in
  // cache), AVX2, reduced precision.
  EXPECT_EQ(tileOf(linear(224, 768), avx512()), "48 x 8 packed");
  EXPECT_EQ(tileOf(linear(256, 128), avx512()), "64 x 6 in place");
  EXPECT_EQ(tileOf(linear(128, 4097), avx512()), "48 x 8 packed");
  EXPECT_EQ(tileOf(linear(128, 768), avx2()), "24 x 4 packed");
  KernelDesc bf16 = linear(128, 768);
  bf16.precision = "bf16";
  EXPECT_EQ(tileOf(bf16, avx512()), "32 x 12 packed"); // (bf16 rounds its tokens in pairs)
}

TEST(Schedule, RopeLinearsTakePanelsOfWholeHeads) {
  // A linear with a rotary epilogue turns its heads in the register tile
  // when a panel holds whole heads: the multiple of head_dim nearest the
  // tile, rows to fit the accumulators (q4: half of them) and the register
  // file beside its weight vectors and broadcast; its tasks as any layer's
  // (panel, row tile) pairs for 8 panels or fewer without a bias on AVX-512,
  // else panels. AVX2 cannot fit heads of 48 or 64: its tile stays, and the
  // kernel turns its output in a second stage.
  auto tileOf = [](int64_t K, int64_t N, int64_t headDim, const char *precision, bool bias,
                   const TargetInfo &target) {
    KernelDesc k = linear(K, N);
    k.ropeColumns = N / 3 * 2;
    k.headDim = headDim;
    k.precision = precision;
    k.hasBias = bias;
    Schedule s = defaultSchedule(k, target);
    return std::to_string(s.tileCols) + " x " + std::to_string(s.tileRows) +
           (s.parallelRows ? " row tasks" : " panel tasks");
  };
  EXPECT_EQ(tileOf(128, 384, 64, "f32", false, avx512()),
            "64 x 4 row tasks"); // 48 x 4 without; 6 panels
  EXPECT_EQ(tileOf(320, 960, 64, "f32", false, avx512()),
            "64 x 6 panel tasks"); // 48 x 8 without; 15 panels
  EXPECT_EQ(tileOf(320, 960, 64, "f32", true, avx512()), "64 x 6 panel tasks");
  EXPECT_EQ(tileOf(288, 864, 48, "f32", false, avx512()), "48 x 8 panel tasks"); // fits already
  EXPECT_EQ(tileOf(512, 1536, 128, "f32", false, avx512()), "128 x 2 panel tasks"); // 3: 33 zmm
  EXPECT_EQ(tileOf(512, 1536, 64, "q4", false, avx512()), "64 x 3 panel tasks");
  EXPECT_EQ(tileOf(256, 768, 32, "f32", false, avx2()), "32 x 2 panel tasks"); // 3: 17 ymm
  EXPECT_EQ(tileOf(160, 240, 40, "f32", false, avx2()), "40 x 2 panel tasks");
  EXPECT_EQ(tileOf(288, 864, 48, "f32", false, avx2()), "24 x 4 panel tasks"); // 48 x 2: 19 ymm
  EXPECT_EQ(tileOf(320, 960, 64, "f32", false, avx2()), "24 x 4 panel tasks");
}

/// The AVX-512 target of a core that splits each zmm operation in two (Zen
/// 4) or runs it whole (Zen 5, Intel's server cores), whichever this
/// machine is.
TargetInfo avx512Splitting(bool splitsZmm) {
  TargetInfo target = avx512();
  target.splitsZmm = splitsZmm;
  return target;
}

TEST(Schedule, LayersOfFewPanelsTakeRowMajorRowTasks) {
  // AVX-512 f32 layers of 8 panels or fewer, without a bias: (panel, row
  // tile) tasks, row by row, so that each thread's share is a share of the
  // rows; wider layers, biased ones and other precisions keep panel tasks.
  auto unbiased = [](int64_t K, int64_t N) {
    KernelDesc k = linear(K, N);
    k.hasBias = false;
    return k;
  };
  auto tasksOf = [](const KernelDesc &k) {
    Schedule s = defaultSchedule(k, avx512());
    return std::to_string(s.tileCols) + (s.parallelRows ? " row tasks" : " panel tasks") +
           (s.rowsOuter ? ", rows outer" : "");
  };
  EXPECT_EQ(tasksOf(unbiased(320, 320)), "64 row tasks, rows outer"); // 5 panels
  EXPECT_EQ(tasksOf(unbiased(864, 320)), "64 row tasks, rows outer");
  EXPECT_EQ(tasksOf(unbiased(128, 128)), "64 row tasks, rows outer"); // 2 panels
  EXPECT_EQ(tasksOf(unbiased(512, 512)), "64 row tasks, rows outer"); // 8 panels
  EXPECT_EQ(tasksOf(unbiased(320, 1728)), "48 panel tasks");          // 36 panels
  EXPECT_EQ(tasksOf(unbiased(768, 768)), "48 panel tasks");           // 16 panels
  EXPECT_EQ(tasksOf(linear(320, 320)), "64 panel tasks");
  KernelDesc q4 = unbiased(320, 320);
  q4.precision = "q4";
  EXPECT_FALSE(defaultSchedule(q4, avx512()).parallelRows);
  EXPECT_FALSE(defaultSchedule(unbiased(320, 320), llvm::cantFail(resolveTarget("x86-64-avx2")))
                   .parallelRows);
}

TEST(Schedule, VocabularyHeadsTakeOneVectorByEightRowsInPanelGroups) {
  // AVX-512 f32 GEMMs whose weights stream from memory (more than 4 MiB),
  // 8192 features wide or more, of K 768 or less: on a core that splits
  // zmm operations, 1 vector x 8 rows, each row tile through a group of up
  // to 16 panels holding up to 256 KiB of weights (Schedule.cpp says why).
  auto tileOf = [](const KernelDesc &k, const TargetInfo &target) {
    Schedule s = defaultSchedule(k, target);
    return std::to_string(s.tileCols) + " x " + std::to_string(s.tileRows) + " in groups of " +
           std::to_string(s.panelGroup);
  };
  const TargetInfo zen4 = avx512Splitting(true);
  EXPECT_EQ(tileOf(linear(128, 32000), zen4), "16 x 8 in groups of 16");
  EXPECT_EQ(tileOf(linear(160, 16384), zen4), "16 x 8 in groups of 16");
  EXPECT_EQ(tileOf(linear(192, 8208), zen4), "16 x 8 in groups of 16");  // 6.3 MB
  EXPECT_EQ(tileOf(linear(256, 50257), zen4), "16 x 8 in groups of 16"); // rows off lines
  EXPECT_EQ(tileOf(linear(320, 32000), zen4), "16 x 8 in groups of 12"); // 20 KiB panels
  EXPECT_EQ(tileOf(linear(512, 32008), zen4), "16 x 8 in groups of 8");
  EXPECT_EQ(tileOf(linear(768, 50257), zen4), "16 x 8 in groups of 5"); // GPT-2's head
  // Full-width cores: 3 vectors x 8 rows, groups of the same bytes (none
  // where a group would hold one panel).
  const TargetInfo zen5 = avx512Splitting(false);
  EXPECT_EQ(tileOf(linear(128, 32000), zen5), "48 x 8 in groups of 10");
  EXPECT_EQ(tileOf(linear(256, 50257), zen5), "48 x 8 in groups of 5");
  EXPECT_EQ(tileOf(linear(320, 32000), zen5), "48 x 8 in groups of 4");
  EXPECT_EQ(tileOf(linear(512, 32008), zen5), "48 x 8 in groups of 2");
  EXPECT_EQ(tileOf(linear(768, 50257), zen5), "48 x 8 in groups of 0");
  EXPECT_EQ(llvm::toString(
                validSchedule(linear(320, 32000), zen5, defaultSchedule(linear(320, 32000), zen5))),
            "");
  // Not: weights of 4 MiB or less (they stay in cache: blocks of tokens
  // instead), narrower than a vocabulary (GPT-2's FFN: 9.4 MB), K past the
  // measured range, AVX2, reduced precision.
  EXPECT_EQ(tileOf(linear(128, 8000), avx512()), "64 x 6 in groups of 0");
  EXPECT_EQ(tileOf(linear(768, 3072), avx512()), "48 x 8 in groups of 0");
  EXPECT_EQ(tileOf(linear(1024, 32000), avx512()), "64 x 6 in groups of 0");
  EXPECT_EQ(tileOf(linear(128, 32000), avx2()), "24 x 4 in groups of 0");
  KernelDesc bf16 = linear(128, 32000);
  bf16.precision = "bf16";
  EXPECT_EQ(tileOf(bf16, avx512()), "32 x 12 in groups of 0");
  Schedule head = defaultSchedule(linear(128, 32000), zen4);
  EXPECT_EQ(head.tokenBlock, 0);
  EXPECT_TRUE(head.packTokens);
  EXPECT_EQ(llvm::toString(validSchedule(linear(128, 32000), zen4, head)), "");
  // The tuner's canonical form: no groups where the lowering takes none
  // (K blocked, row tasks).
  const KernelDesc narrowHead = linear(128, 32000);
  const TargetInfo target = zen4;
  SearchSpace space(narrowHead, target);
  Schedule blocked = head;
  blocked.kBlock = 64;
  EXPECT_EQ(space.canonical(blocked).panelGroup, 0);
  Schedule rows = head;
  rows.parallelRows = true;
  EXPECT_EQ(space.canonical(rows).panelGroup, 0);
  EXPECT_EQ(space.canonical(head).panelGroup, 16);
}

TEST(TuningDb, RoundTripAndSelection) {
  KernelPlan plan;
  plan.kernels = {linear(64, 128), linear(128, 64)};
  TargetInfo target = avx2();
  auto entryFor = [&](const KernelDesc &k, Schedule s, double ms) {
    TuningEntry e;
    e.kernel = k.name();
    e.signature = kernelSignatureText(k);
    e.target = target.halideTarget;
    e.tmcVersion = tmcVersion();
    e.schedule = s.str();
    e.defaultSchedule = defaultSchedule(k, target).str();
    e.defaultMs = 2;
    e.bestMs = ms;
    e.trials = 3;
    e.history = {{1, 2.0}, {3, ms}};
    return e;
  };
  Schedule tuned = defaultSchedule(plan.kernels[0], target);
  tuned.tileRows = 2;
  Schedule slower = tuned;
  slower.tileRows = 3;
  TuningDb db;
  db.entries.push_back(entryFor(plan.kernels[0], slower, 1.5));
  db.entries.push_back(entryFor(plan.kernels[0], tuned, 1.0)); // the faster one wins
  db.entries.back().fmaPeakGflops = 231.5;
  db.entries.back().memoryMs = 0.0625;
  TuningEntry foreign = entryFor(plan.kernels[1], tuned, 0.5);
  foreign.target = "arm-64-linux";
  db.entries.push_back(foreign);
  TuningEntry stale = entryFor(plan.kernels[1], tuned, 0.5);
  stale.tmcVersion = "0.0.0";
  db.entries.push_back(stale);

  std::string path = tempPath("db.jsonl");
  ASSERT_EQ(llvm::toString(saveTuningDb(path, db)), "");
  llvm::Expected<TuningDb> loaded = loadTuningDb(path);
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  const TuningDb &back = *loaded;
  ASSERT_EQ(back.entries.size(), 4u);
  EXPECT_EQ(back.entries[1].history.size(), 2u);
  EXPECT_EQ(back.entries[1].line, 3);
  EXPECT_EQ(back.entries[1].fmaPeakGflops, 231.5);
  EXPECT_EQ(back.entries[0].fmaPeakGflops, 0); // not measured
  EXPECT_EQ(back.entries[1].memoryMs, 0.0625);
  EXPECT_EQ(back.entries[0].memoryMs, 0);

  std::vector<std::string> warnings, found;
  ScheduleTable table = selectSchedules(back, plan, target, &warnings, &found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], plan.kernels[0].name());
  EXPECT_EQ(table.at(scheduleKey(plan.kernels[0], target)).tileRows, 2);
  ASSERT_EQ(warnings.size(), 3u);
  // Two usable entries for one kernel: used, but not silently.
  EXPECT_NE(warnings[0].find("lines 2 and 3: two entries for kernel '" + plan.kernels[0].name() +
                             "'"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("using line 3, the faster"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("another target"), std::string::npos);
  EXPECT_NE(warnings[2].find("stale: tuned with tmc 0.0.0"), std::string::npos);
  EXPECT_EQ(scheduleFor(plan.kernels[1], target, table).str(),
            defaultSchedule(plan.kernels[1], target).str());
  std::remove(path.c_str());
}

TEST(TuningDb, MultiIsaVariantsTakeTheirOwnEntries) {
  TargetInfo host = llvm::cantFail(resolveTarget("host"));
  if (host.variants.size() < 2)
    GTEST_SKIP() << "host is not a multi-ISA target here";
  const TargetInfo &first = host.variants[0], &second = host.variants[1];
  KernelPlan plan;
  plan.kernels = {linear(64, 128)};
  const KernelDesc &k = plan.kernels[0];
  Schedule tuned = defaultSchedule(k, second);
  tuned.tileRows = 2;
  TuningEntry e;
  e.kernel = k.name();
  e.signature = kernelSignatureText(k);
  e.target = second.halideTarget;
  e.tmcVersion = tmcVersion();
  e.schedule = tuned.str();
  e.bestMs = 1;
  TuningDb db;
  db.entries.push_back(e);
  std::vector<std::string> warnings, found;
  ScheduleTable table = selectSchedules(db, plan, host, &warnings, &found);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], k.name() + " (" + second.isaName() + ")");
  EXPECT_EQ(scheduleFor(k, second, table).tileRows, 2);
  EXPECT_EQ(scheduleFor(k, first, table).str(), defaultSchedule(k, first).str());
}

/// The message of the error loading `path` fails with; empty if it loads.
std::string loadError(const std::string &path, bool allowMissing = false) {
  llvm::Expected<TuningDb> db = loadTuningDb(path, allowMissing);
  return db ? "" : llvm::toString(db.takeError());
}

TEST(TuningDb, BadFilesAreErrors) {
  std::string path = tempPath("bad.jsonl"), error;
  std::ofstream(path) << "{\"format\":\"tmc-tuning-db\",\"schema\":1}\n{\"kernel\":";
  error = loadError(path);
  EXPECT_NE(error.find(":2: corrupt tuning database"), std::string::npos) << error;
  std::ofstream(path) << "hello\n";
  error = loadError(path);
  EXPECT_NE(error.find("not a tmc tuning database"), std::string::npos) << error;
  std::ofstream(path) << "";
  EXPECT_NE(loadError(path), "");
  std::remove(path.c_str());
  EXPECT_EQ(loadError(path, /*allowMissing=*/true), "");
  EXPECT_NE(loadError(path), "");
}

TEST(FmaPeak, MeasuredWhereTheCpuRunsTheTarget) {
  // 12 chains of 8 (AVX2) or 16 (AVX-512) lanes, 2 FLOPs per lane.
  EXPECT_EQ(fmaPeakFlopsPerIteration(avx2()), 192);
  EXPECT_EQ(fmaPeakFlopsPerIteration(avx512()), 384);
  TargetInfo gpu = avx2();
  gpu.gpu = true;
  llvm::Expected<double> gpuPeak = measureFmaPeak(gpu, 1);
  EXPECT_FALSE(static_cast<bool>(gpuPeak));
  std::string why = llvm::toString(gpuPeak.takeError());
  EXPECT_NE(why.find("GPU"), std::string::npos) << why;
  __builtin_cpu_init();
  for (const TargetInfo &target : {avx2(), avx512()}) {
    llvm::Expected<double> peak = measureFmaPeak(target, 2);
    bool measured = static_cast<bool>(peak);
    why = measured ? "" : llvm::toString(peak.takeError());
    bool runs = target.isa == Isa::AVX512 ? __builtin_cpu_supports("avx512f")
                                          : __builtin_cpu_supports("avx2");
    // No figure is asserted (the machine is shared); only that one exists
    // exactly when the CPU can run the target, and a reason when it cannot.
    EXPECT_EQ(measured && *peak > 0, runs) << target.name << ": " << why;
    EXPECT_EQ(why.empty(), runs) << target.name << ": " << why;
  }
}

TEST(MemoryLimit, TrafficCountsEachBufferOnceInItsStoredForm) {
  const int64_t T = 128, K = 320, N = 32000;
  KernelDesc head = linear(K, N); // with a bias
  KernelTraffic f32 = kernelTraffic(head, T);
  EXPECT_EQ(f32.readBytes, 4 * (T * K + K * N + N));
  EXPECT_EQ(f32.writeBytes, 4 * T * N);
  head.precision = "bf16";
  EXPECT_EQ(kernelTraffic(head, T).readBytes, 4 * (T * K + N) + 2 * K * N);
  head.precision = "int8"; // a float scale per output channel
  EXPECT_EQ(kernelTraffic(head, T).readBytes, 4 * (T * K + N) + K * N + 4 * N);
  head.precision = "q4"; // ten blocks of 32: 16 bytes of nibbles and an f16 scale each
  EXPECT_EQ(kernelTraffic(head, T).readBytes, 4 * (T * K + N) + 10 * 18 * N);
  head.precision = "f32";
  head.hasResidual = true; // read like the input
  EXPECT_EQ(kernelTraffic(head, T).readBytes, f32.readBytes + 4 * T * N);

  // An embedding reads its tokens' rows of the table (and of the learned
  // positions), not the tables.
  KernelDesc embed{KernelKind::embed};
  embed.width = 64;
  embed.tableRows = 50257;
  embed.position = "learned";
  embed.positionRows = 1024;
  KernelTraffic lookup = kernelTraffic(embed, 16);
  EXPECT_EQ(lookup.readBytes, 4 * 16 + 2 * 4 * 16 * 64);
  EXPECT_EQ(lookup.writeBytes, 4 * 16 * 64);
}

TEST(MemoryLimit, MeasuredWhereTheCpuRunsTheTarget) {
  TargetInfo gpu = avx2();
  gpu.gpu = true;
  llvm::Expected<double> none = measureMemoryMs(gpu, {1 << 20, 1 << 20}, 1);
  ASSERT_FALSE(static_cast<bool>(none));
  std::string why = llvm::toString(none.takeError());
  EXPECT_NE(why.find("GPU"), std::string::npos) << why;
  __builtin_cpu_init();
  for (const TargetInfo &target : {avx2(), avx512()}) {
    bool runs = target.isa == Isa::AVX512 ? __builtin_cpu_supports("avx512f")
                                          : __builtin_cpu_supports("avx2");
    // No figure is asserted (the machine is shared): one exists exactly when
    // the CPU runs the target, for traffic of any size (none, one odd byte).
    for (KernelTraffic traffic : {KernelTraffic{1 << 20, 1 << 19}, KernelTraffic{0, 0},
                                  KernelTraffic{1, 0}, KernelTraffic{3 << 20, 7}}) {
      llvm::Expected<double> msOrError = measureMemoryMs(target, traffic, 2);
      bool measured = static_cast<bool>(msOrError);
      why = measured ? "" : llvm::toString(msOrError.takeError());
      EXPECT_EQ(measured && *msOrError > 0, runs) << target.name << ": " << why;
      EXPECT_EQ(why.empty(), runs) << target.name << ": " << why;
    }
  }
}

TEST(SearchSpace, SeedsAndMutationsAreValidCanonicalAndDistinct) {
  for (TargetInfo target : {avx2(), avx512()}) {
    for (KernelDesc k : {linear(768, 2304), linear(3072, 768), linear(32, 50)}) {
      SearchSpace space(k, target);
      std::set<std::string> seen;
      std::string why;
      for (const Schedule &s : space.seeds()) {
        EXPECT_TRUE(space.valid(s, &why)) << s.str() << ": " << why;
        EXPECT_EQ(space.canonical(s).str(), s.str());
        EXPECT_TRUE(seen.insert(s.str()).second) << "duplicate seed " << s.str();
      }
      EXPECT_EQ(space.seeds().front().str(), defaultSchedule(k, target).str());
      std::mt19937 rng(3);
      Schedule s = space.defaults();
      for (int i = 0; i < 500; ++i) {
        s = space.mutate(s, rng);
        ASSERT_TRUE(space.valid(s, &why)) << s.str() << ": " << why;
      }
    }
  }
}

KernelDesc attention() {
  KernelDesc d{KernelKind::attention};
  d.heads = d.kvHeads = 12;
  d.headDim = 64;
  d.width = 768;
  d.scale = 0.125;
  d.mask.causal = d.mask.decoder = true;
  return d;
}

KernelDesc addNorm() {
  KernelDesc d{KernelKind::add_norm};
  d.variant = "layernorm";
  d.width = 768;
  d.eps = 1e-5;
  d.hasBias = true;
  return d;
}

TEST(SearchSpace, ComputeAtChoicesBelongToTheirKernels) {
  for (TargetInfo target : {avx2(), avx512()}) {
    // Attention: where the keys are transposed, only in the key-blocked form.
    SearchSpace attn(attention(), target);
    bool perBlockSeed = false;
    for (const Schedule &s : attn.seeds())
      perBlockSeed |= s.keysAt == 1 && s.keyBlock > 0;
    EXPECT_TRUE(perBlockSeed);
    Schedule onePass = attn.defaults();
    onePass.keyBlock = 0;
    onePass.keysAt = 1;
    EXPECT_EQ(attn.canonical(onePass).keysAt, 0) << "keys_at means nothing in one pass";
    // Per block only where the keys transpose in square tiles (no gathers).
    KernelDesc odd = attention();
    odd.headDim = 6;
    odd.width = 72;
    Schedule perBlock = defaultSchedule(odd, target);
    perBlock.keysAt = 1;
    std::string reason = llvm::toString(validSchedule(odd, target, perBlock));
    EXPECT_NE(reason.find("keys_at=1"), std::string::npos) << reason;
    // Norms: the staged rows or fused passes.
    SearchSpace norm(addNorm(), target);
    bool fusedSeed = false;
    for (const Schedule &s : norm.seeds())
      fusedSeed |= !s.stageRows;
    EXPECT_TRUE(fusedSeed);
    // A GEMM has neither: both reset to the default's.
    SearchSpace gemm(linear(768, 768), target);
    Schedule g = gemm.defaults();
    g.keysAt = 1;
    g.stageRows = false;
    EXPECT_EQ(gemm.canonical(g).str(), gemm.defaults().str());
    // Mutations reach both choices and stay valid.
    std::mt19937 rng(11);
    std::set<int> keysAt;
    std::set<bool> staged;
    std::string why;
    Schedule a = attn.defaults(), n = norm.defaults();
    for (int i = 0; i < 300; ++i) {
      a = attn.mutate(a, rng);
      n = norm.mutate(n, rng);
      ASSERT_TRUE(attn.valid(a, &why)) << a.str() << ": " << why;
      ASSERT_TRUE(norm.valid(n, &why)) << n.str() << ": " << why;
      keysAt.insert(a.keysAt);
      staged.insert(n.stageRows);
    }
    EXPECT_EQ(keysAt.size(), 2u);
    EXPECT_EQ(staged.size(), 2u);
  }
}

TEST(Measure, WindowCachesAttentionIsTimedWithAWholeWindowOfEarlierKeys) {
  // Its keys and values (arguments 1 and 2) get the window less one rows
  // past T, as a chunk after the first and a decoding step read them; its
  // queries and output keep T rows, and other attention none past T.
  auto extraRows = [](const KernelDesc &kernel) {
    std::string source = KernelBench(kernel, avx512(), "/nonexistent", "", 1, 128).harnessSource();
    std::vector<std::string> rows;
    for (size_t at = source.find("    {"); at != std::string::npos;
         at = source.find("    {", at + 1)) {
      size_t end = source.find("},\n", at);
      size_t comma = source.rfind(", ", end);
      rows.push_back(source.substr(comma + 2, end - comma - 2));
    }
    return rows;
  };
  KernelDesc windowed = attention();
  windowed.mask.window = 256;
  windowed.windowKeys = true;
  EXPECT_EQ(extraRows(windowed), (std::vector<std::string>{"0", "255", "255", "0"}));
  windowed.mask.window = 0;
  windowed.mask.dilated = 64;
  EXPECT_EQ(extraRows(windowed), (std::vector<std::string>{"0", "63", "63", "0"}));
  KernelDesc whole = attention();
  whole.mask.window = 256;
  EXPECT_EQ(extraRows(whole), (std::vector<std::string>{"0", "0", "0", "0"}));
  // The report's traffic counts the rows the harness reads: q, k and v of
  // 12 heads of 64 at T = 128, k and v with 63 rows more.
  EXPECT_EQ(kernelTraffic(windowed, 128).readBytes, 4 * 768 * (128 + 2 * (128 + 63)));
  EXPECT_EQ(kernelTraffic(whole, 128).readBytes, 4 * 768 * 3 * 128);
}

TEST(Measure, TheDecodingVariantIsTimedWhereTheExecutorRunsIt) {
  // A decoder's attention runs tmk_<kernel>_decode at T = 1: the harness
  // must call its candidate's variant there, not the prefill kernel.
  KernelDesc decoderAttention = attention();
  decoderAttention.decodeVariant = true;
  KernelBench decoding(decoderAttention, avx512(), "/nonexistent", "", 1, 128);
  EXPECT_TRUE(decoding.hasDecodeKernel());
  EXPECT_NE(decoding.harnessSource().find("(T == 1 ? tmk_cand_decode : tmk_cand)("),
            std::string::npos);
  KernelDesc encoderAttention = attention();
  encoderAttention.decodeVariant = false;
  KernelBench encoding(encoderAttention, avx512(), "/nonexistent", "", 1, 128);
  EXPECT_FALSE(encoding.hasDecodeKernel());
  EXPECT_EQ(encoding.harnessSource().find("tmk_cand_decode"), std::string::npos);
  // CPU GEMMs decode through a specialization inside their own kernel.
  KernelDesc gemm = linear(768, 768);
  gemm.decodeVariant = true;
  EXPECT_FALSE(KernelBench(gemm, avx512(), "/nonexistent", "", 1, 128).hasDecodeKernel());

  // A candidate whose decoding variant is the default's is not judged by its
  // (noisy, microsecond) T = 1 time; one that changes it is.
  SearchSpace space(decoderAttention, avx512());
  Schedule prefillOnly = space.defaults();
  prefillOnly.keyBlock = 32;
  prefillOnly.keysAt = 1;
  EXPECT_TRUE(space.decodesAsDefault(prefillOnly));
  Schedule narrower = space.defaults();
  narrower.vectorWidth = 8;
  EXPECT_FALSE(space.decodesAsDefault(narrower));
  SearchSpace gemmSpace(gemm, avx512());
  EXPECT_FALSE(gemmSpace.decodesAsDefault(gemmSpace.defaults())); // no variant kernel
}

TEST(Schedule, ComputeAtKeysParseBackAndAreBounded) {
  Schedule s;
  s.keysAt = 1;
  s.stageRows = false;
  llvm::Expected<Schedule> back = parseSchedule(s.str(), Schedule());
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->keysAt, 1);
  EXPECT_FALSE(back->stageRows);
  std::string error = parseError("keys_at=2");
  EXPECT_NE(error.find("keys_at=2 is out of range [0, 1]"), std::string::npos) << error;
  // A database line written before these keys existed keeps the defaults.
  llvm::Expected<Schedule> old = parseSchedule("vector_width=16 key_block=64", Schedule());
  ASSERT_TRUE(static_cast<bool>(old)) << llvm::toString(old.takeError());
  EXPECT_EQ(old->keysAt, 0);
  EXPECT_TRUE(old->stageRows);
}

TEST(SearchSpace, RegisterPressureIsRejected) {
  KernelDesc k = linear(768, 768);
  SearchSpace space(k, avx2());
  Schedule s = space.defaults();
  s.tileCols = 6 * s.vectorWidth;
  s.tileRows = 8; // 48 accumulators in 16 registers
  std::string why;
  EXPECT_FALSE(space.valid(s, &why));
  EXPECT_NE(why.find("registers"), std::string::npos);
}

TEST(Autoschedule, TileSizesAreReadFromTheOutputFunc) {
  // As Halide 14's Adams2019 printed it for linear_k256_n256 (AVX2).
  std::string adams = R"S(
Func linear = pipeline.get_func(5);
Func acc = pipeline.get_func(4);
Var n(linear.get_schedule().dims()[0].var);
Var ni("ni");
Var nii("nii");
Var t(linear.get_schedule().dims()[1].var);
RVar r_x(acc.update(0).get_schedule().dims()[0].var);
RVar r_xi("r$xi");
linear
    .split(n, n, ni, 64, TailStrategy::ShiftInwards)
    .split(t, t, ti, 32, TailStrategy::ShiftInwards)
    .split(ti, ti, tii, 4, TailStrategy::ShiftInwards)
    .split(ni, ni, nii, 8, TailStrategy::ShiftInwards)
    .vectorize(nii)
    .compute_root()
    .reorder({nii, ni, tii, ti, n, t})
    .fuse(n, t, n)
    .parallel(n);
acc.update(0)
    .split(r_x, r_x, r_xi, 64, TailStrategy::GuardWithIf)
    .split(j, j, ji, 8, TailStrategy::GuardWithIf)
    .vectorize(ji);
)S";
  KernelDesc k = linear(256, 256);
  Schedule base = defaultSchedule(k, avx2());
  Schedule s = seedFromSource(k, avx2(), "linear", adams, base);
  EXPECT_EQ(s.vectorWidth, 8);
  EXPECT_EQ(s.tileRows, 4);   // the innermost token split
  EXPECT_EQ(s.tileCols, 48);  // 64 features, at most 6 vectors
  EXPECT_EQ(s.kBlock, 64);

  // Mullapudi2016: declarations first, then a block per Func.
  std::string mullapudi = R"S(
Var t_vi("t_vi");
Func acc = pipeline.get_func(4);
Func linear = pipeline.get_func(5);
{
    Var j = acc.args()[0];
    acc
        .compute_root()
        .split(j, j_vo, j_vi, 8)
        .vectorize(j_vi);
}
{
    Var n = linear.args()[0];
    Var t = linear.args()[1];
    linear
        .compute_root()
        .reorder(t, n)
        .split(t, t_vo, t_vi, 8)
        .vectorize(t_vi)
        .parallel(n);
}
)S";
  s = seedFromSource(k, avx2(), "linear", mullapudi, base);
  EXPECT_EQ(s.vectorWidth, 8);
  EXPECT_EQ(s.tileRows, 8);
  EXPECT_EQ(s.tileCols, 8);
  EXPECT_EQ(s.kBlock, 0);

  // Li2018: no spaces, fused loops.
  std::string li = R"S(
linear.compute_root()
    .split(n,v1,v2,16,ShiftInwards)
    .fuse(v1,t,v1)
    .reorder(v2,v1)
    .parallel(v1,264,ShiftInwards)
    .vectorize(v2)
;
)S";
  s = seedFromSource(k, avx512(), "linear", li, defaultSchedule(k, avx512()));
  EXPECT_EQ(s.vectorWidth, 16);
  EXPECT_EQ(s.tileCols, 16);
}

TEST(Measure, ACrashOrHangCostsOnlyTheChild) {
  std::string errorFile = tempPath("child.error");
  auto message = [](llvm::Error error) { return llvm::toString(std::move(error)); };
  EXPECT_EQ(message(runInChild([] { return llvm::Error::success(); }, 10, errorFile)), "");
  std::string error = message(runInChild(
      [] {
        // The default action, so that the child dies of the signal even where
        // a handler is installed (ASan's turns a SEGV into exit status 1).
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
        return llvm::Error::success();
      },
      10, errorFile));
  EXPECT_NE(error.find("crashed"), std::string::npos) << error;
  error = message(runInChild(
      [] {
        for (;;)
          pause();
        return llvm::Error::success();
      },
      1, errorFile));
  EXPECT_NE(error.find("timed out"), std::string::npos) << error;
  error = message(runInChild([] { return makeError("no such schedule"); }, 10, errorFile));
  EXPECT_EQ(error, "no such schedule");
  std::remove(errorFile.c_str());
}

} // namespace

namespace {

TEST(Autoschedule, EverySchedulerGivesASeedOrSaysWhyNot) {
  KernelDesc k = linear(256, 256);
  TargetInfo target = avx2();
  std::string dir = tempPath("autoschedule");
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  // The time limit guards against a hang only: under ASan, beside the rest of
  // the suite on two cores, Adams2019 took 28 s on average and once over 60.
  std::vector<AutoschedulerSeed> seeds = autoschedulerSeeds(k, target, dir, 2, 240);
  ASSERT_EQ(seeds.size(), 3u);
  for (const AutoschedulerSeed &seed : seeds) {
    // Debian's Halide 14 ships all three plugins (scripts/setup.sh).
    EXPECT_TRUE(seed.ok) << seed.scheduler << ": " << seed.error;
    EXPECT_EQ(llvm::toString(validSchedule(k, target, seed.schedule)), "")
        << seed.scheduler << ": " << seed.schedule.str();
  }
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

} // namespace
