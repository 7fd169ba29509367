//===- ScheduleFieldsTest.cpp - The table of schedule fields, field by field ===//
//
// Every field of the table (compiler/ScheduleFields.h) through str() and
// parseSchedule at its bounds, out of them, and through validSchedule; and
// the text str() prints, which --emit=halide, lit tests and tuning databases
// hold, pinned.
//
//===----------------------------------------------------------------------===//

#include "compiler/ScheduleFields.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/tune/Search.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace tmc;

namespace {

/// The keys of `text` (str()'s form), in order.
std::vector<std::string> keysOf(const std::string &text) {
  std::vector<std::string> keys;
  std::istringstream in(text);
  std::string item;
  while (in >> item)
    keys.push_back(item.substr(0, item.find('=')));
  return keys;
}

/// A schedule whose str() shows `field` (a GPU one for the gpu_* fields).
Schedule showing(const ScheduleField &field) {
  Schedule s;
  s.gpu = field.target == FieldTarget::Gpu;
  return s;
}

/// The values `field` accepts that the tests try: its bounds, one between
/// them, and 0 where 0 stands for something.
std::vector<int> acceptedValues(const ScheduleField &field) {
  std::vector<int> values = {field.min, field.max, field.min + (field.max - field.min) / 2};
  if (field.zeroMeans)
    values.push_back(0);
  return values;
}

/// A GEMM of 768 by 768.
KernelDesc gemm() {
  KernelDesc d{KernelKind::linear};
  d.inWidth = d.width = 768;
  return d;
}

TEST(ScheduleFields, StrPrintsWhatItAlwaysHas) {
  Schedule s;
  EXPECT_EQ(
      s.str(),
      "vector_width=16 tile_cols=64 tile_rows=4 query_tile=16 key_block=0 "
      "parallel=1 parallel_min_rows=0 k_block=0 unroll_k=1 parallel_rows=0 rows_outer=0 "
      "pack_tokens=1 "
      "token_block=0 panel_group=0 decode_variant=1 tokens_estimate=128 keys_at=0 stage_rows=1");
  s.gpu = true;
  EXPECT_EQ(s.str(),
            "vector_width=16 tile_cols=64 tile_rows=4 query_tile=16 key_block=0 "
            "parallel=1 parallel_min_rows=0 k_block=0 unroll_k=1 parallel_rows=0 rows_outer=0 "
            "pack_tokens=1 "
            "token_block=0 panel_group=0 decode_variant=1 tokens_estimate=128 keys_at=0 "
            "stage_rows=1 gpu=1 "
            "gpu_threads=256 "
            "gpu_tile_rows=16 gpu_rows_per_thread=4 gpu_k_chunk=16 gpu_key_tile=32");
}

TEST(ScheduleFields, TheTableHasEveryKeyStrPrints) {
  std::set<std::string> keys;
  std::vector<std::string> printed, printedOnCpu;
  for (const ScheduleField &field : scheduleFields()) {
    EXPECT_TRUE(keys.insert(field.key).second) << "duplicate key " << field.key;
    EXPECT_NE((field.intMember != nullptr), (field.boolMember != nullptr)) << field.key;
    EXPECT_LE(field.min, field.max) << field.key;
    if (field.boolMember) {
      EXPECT_TRUE(field.min == 0 && field.max == 1) << field.key;
    }
    EXPECT_NE(field.kinds, 0u) << field.key << " is read by no kernel";
    EXPECT_EQ(field.search.kinds & ~field.kinds, 0u) << field.key << " is searched where unread";
    if (field.printed)
      printed.push_back(field.key);
    if (field.printed && field.target != FieldTarget::Gpu)
      printedOnCpu.push_back(field.key);
  }
  Schedule gpu;
  gpu.gpu = true;
  EXPECT_EQ(keysOf(gpu.str()), printed);
  EXPECT_EQ(keysOf(Schedule().str()), printedOnCpu);
}

TEST(ScheduleFields, EveryFieldParsesBackAtItsBoundsAndBetween) {
  for (const ScheduleField &field : scheduleFields()) {
    for (int value : acceptedValues(field)) {
      Schedule s = showing(field);
      field.set(s, value);
      std::string text = s.str();
      if (!field.printed) {
        EXPECT_EQ(text.find(field.key), std::string::npos) << text;
        continue;
      }
      llvm::Expected<Schedule> back = parseSchedule(text, Schedule());
      ASSERT_TRUE(static_cast<bool>(back)) << text << ": " << llvm::toString(back.takeError());
      EXPECT_EQ(field.get(*back), value) << text;
      EXPECT_TRUE(*back == s) << field.key << "=" << value << ": " << text << " parsed back as "
                              << back->str();
    }
  }
}

TEST(ScheduleFields, OutOfRangeValuesAreRefusedNamingTheKey) {
  const TargetInfo avx2 = llvm::cantFail(resolveTarget("x86-64-avx2"));
  for (const ScheduleField &field : scheduleFields()) {
    std::vector<int> refused = {field.min - 1, field.max + 1};
    if (field.zeroMeans)
      refused.push_back(-1);
    for (int value : refused) {
      if (field.zeroMeans && value == 0)
        continue;
      std::string written = std::string(field.key) + "=" + std::to_string(value);
      std::string error = llvm::toString(parseSchedule(written, Schedule()).takeError());
      if (!field.printed) {
        EXPECT_EQ(error, "unknown schedule key '" + std::string(field.key) + "'");
        continue;
      }
      EXPECT_EQ(error.rfind(written + " ", 0), 0u) << "parsing " << written << ": " << error;
      if (!field.intMember)
        continue; // a bool holds no value out of [0, 1]
      // A schedule made in code is held to the same range.
      Schedule s = defaultSchedule(gemm(), avx2);
      field.set(s, value);
      EXPECT_EQ(llvm::toString(validSchedule(gemm(), avx2, s)), error) << written;
    }
  }
}

TEST(ScheduleFields, ReducedPrecisionGemmsRefuseWhatTheirKernelsCannotRun) {
  KernelDesc int8 = gemm();
  int8.precision = "int8";
  const TargetInfo vnni = llvm::cantFail(resolveTarget("x86-64-avx512-bf16"));
  const TargetInfo avx512 = llvm::cantFail(resolveTarget("x86-64-avx512"));
  // 8 int32 lanes of vpdpbusd are AVX-VNNI's VEX encoding: SIGILL on Zen 4.
  Schedule narrow = defaultSchedule(int8, vnni);
  EXPECT_FALSE(static_cast<bool>(validSchedule(int8, vnni, narrow)));
  narrow.vectorWidth = 8;
  narrow.tileCols = 16;
  EXPECT_EQ(llvm::toString(validSchedule(int8, vnni, narrow)),
            "vector_width=8: int8 GEMMs on x86-64-avx512-bf16 need 16 lanes or more (narrower "
            "dot products would not run on AVX512-VNNI CPUs)");
  // q4 sums its blocks with the same instruction.
  KernelDesc q4 = gemm();
  q4.precision = "q4";
  EXPECT_EQ(llvm::toString(validSchedule(q4, vnni, narrow)),
            "vector_width=8: q4 GEMMs on x86-64-avx512-bf16 need 16 lanes or more (narrower "
            "dot products would not run on AVX512-VNNI CPUs)");
  // Without VNNI the bytes are widened: any width runs.
  Schedule widened = defaultSchedule(int8, avx512);
  widened.vectorWidth = 8;
  widened.tileCols = 16;
  EXPECT_FALSE(static_cast<bool>(validSchedule(int8, avx512, widened)));
  // No reduced-precision GEMM is blocked along K.
  for (const char *precision : {"bf16", "int8", "q4"}) {
    KernelDesc reduced = gemm();
    reduced.precision = precision;
    Schedule blocked = defaultSchedule(reduced, vnni);
    blocked.kBlock = 128;
    EXPECT_EQ(llvm::toString(validSchedule(reduced, vnni, blocked)),
              "k_block=128: " + std::string(precision) +
                  " GEMMs are not blocked (0, or at least K = 768)");
  }
  // The layout keeps 16 lanes for a layer narrower than a vector.
  for (const KernelDesc &quantized : {int8, q4}) {
    KernelDesc tiny = quantized;
    tiny.width = 3;
    GemmLayout layout = gemmLayout(tiny, defaultSchedule(tiny, vnni));
    EXPECT_EQ(layout.vectorWidth, 16) << quantized.precision;
    EXPECT_EQ(layout.panels, 1) << quantized.precision;
  }
}

TEST(ScheduleFields, TheSearchSpacesAreThoseOfTheFields) {
  // The products of the numbers of values the tuner tries per field: 2 vector
  // widths x 6 tile widths x 11 row counts x 10 K blocks x 3 unrolls x
  // parallel rows or not x rows outer or not x tokens packed or not x 6 panel groups for a GEMM; 3
  // widths x 7 query tiles x 5 key blocks x 2 x 2 for attention; 3 widths x 2 x 6 row thresholds
  // (0, and a quarter to four times the default of 22 rows of 768) for a row-wise kernel.
  const TargetInfo avx2 = llvm::cantFail(resolveTarget("x86-64-avx2"));
  EXPECT_EQ(tune::SearchSpace(gemm(), avx2).sizeEstimate(), 2u * 6 * 11 * 10 * 3 * 2 * 2 * 2 * 6);
  KernelDesc attention{KernelKind::attention};
  attention.heads = attention.kvHeads = 12;
  attention.headDim = 64;
  attention.width = 768;
  EXPECT_EQ(tune::SearchSpace(attention, avx2).sizeEstimate(), 3u * 7 * 5 * 2 * 2);
  KernelDesc add{KernelKind::add};
  add.width = 768;
  EXPECT_EQ(tune::SearchSpace(add, avx2).sizeEstimate(), 3u * 2 * 6);
  EXPECT_EQ(defaultParallelMinRows(add), 22); // 2^14 values in rows of 768
  KernelDesc rope{KernelKind::rope};
  rope.heads = 4;
  rope.headDim = 32;
  rope.width = 128;
  EXPECT_EQ(defaultParallelMinRows(rope), 128); // rows of 4 heads x 32
  EXPECT_EQ(defaultParallelMinRows(gemm()), 0);
}

} // namespace
