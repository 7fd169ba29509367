//===- BufferLimitsTest.cpp - The 2^31 - 1 element limit, at its edge -----===//
//
// findOversizedBuffer (compiler/BufferLimits.h) on hand-made plans: a buffer
// of exactly 2^31 elements is refused and one below passes, whether it is a
// weight, rows at max_seq, or a column view that spans wide rows.
//
//===----------------------------------------------------------------------===//

#include "compiler/BufferLimits.h"

#include <gtest/gtest.h>

using namespace tmc;

namespace {

constexpr int64_t T = BufferShape::kTokens;

/// One embed call reading `table` ([rows, width]) into rows of `width`.
KernelPlan embedPlan(int64_t tableRows, int64_t width, int64_t maxSeq) {
  KernelPlan plan;
  plan.model.maxSeq = maxSeq;
  plan.weights = {{"embed.tokens", {tableRows, width}}};
  KernelDesc embed{KernelKind::embed};
  embed.width = width;
  embed.tableRows = tableRows;
  embed.position = "none";
  plan.kernels = {embed};
  KernelCall call;
  call.kernel = 0;
  call.opName = "tm.embed";
  call.location = "embed.tokens @ model.tm:3:3";
  call.args = {{{Slot::Kind::Tokens}, {true, false, {T}}},
               {{Slot::Kind::Offset}, {true, true, {}}},
               {{Slot::Kind::Weight, 0}, {false, false, {width, tableRows}}},
               {{Slot::Kind::Arena, 0, width}, {false, false, {width, T}}}};
  plan.calls = {call};
  return plan;
}

TEST(BufferLimits, WeightAtTwoToThe31IsRefusedOneRowLessIsNot) {
  EXPECT_EQ(findOversizedBuffer(embedPlan(65535, 32768, 16)), std::nullopt);
  std::optional<std::string> problem = findOversizedBuffer(embedPlan(65536, 32768, 16));
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem, "model.tm:3:3: tm.embed (embed.tokens) runs as kernel " +
                          embedPlan(65536, 32768, 16).kernels[0].name() +
                          ", which would take tensor 'embed.tokens' [65536, 32768], 2147483648 "
                          "elements; a kernel's buffer spans at most 2147483647 (2^31 - 1) "
                          "elements, on every target");
}

TEST(BufferLimits, RowsCountAtMaxSeq) {
  // 2^21 features: 1023 rows fit, 1024 do not (the table is 16 rows).
  EXPECT_EQ(findOversizedBuffer(embedPlan(16, 1 << 21, 1023)), std::nullopt);
  std::optional<std::string> problem = findOversizedBuffer(embedPlan(16, 1 << 21, 1024));
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("would take its result [1024, 2097152], 2147483648 elements"),
            std::string::npos)
      << *problem;
}

TEST(BufferLimits, AColumnViewSpansItsWideRows) {
  // 64 columns of rows 2^22 floats apart: 512 rows span 2^31 elements.
  KernelPlan plan = embedPlan(16, 64, 512);
  Slot &view = plan.calls[0].args[3].slot;
  view.rowStride = int64_t(1) << 22;
  std::optional<std::string> problem = findOversizedBuffer(plan);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("its result [512, 64], 2147483648 elements"), std::string::npos)
      << *problem;
  plan.model.maxSeq = 511;
  EXPECT_EQ(findOversizedBuffer(plan), std::nullopt);
}

TEST(BufferLimits, CountsTheOthers) {
  // The table and the rows are both too large: the first is named, the other counted.
  std::optional<std::string> problem = findOversizedBuffer(embedPlan(1 << 20, 1 << 20, 4096));
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("tensor 'embed.tokens'"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("(1 more buffer is too large as well)"), std::string::npos) << *problem;
}

} // namespace
