//===- SemaMaskTest.cpp - Masks: terms, arguments, rows, warnings ---------===//
//
// encoderSpec() puts the stack body on lines 6 and after (max_seq = 32);
// decoderSpec() does the same for a decoder block.
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"

#include "frontend/MaskAnalysis.h"
#include "frontend/Masks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmc;
using namespace tmc::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::string decoderSpec(llvm::StringRef stack) {
  std::string text = encoderSpec("", stack);
  text.replace(text.find("encoder"), 7, "decoder");
  return text;
}

/// The mask of the single-layer encoder (or decoder) `mask = <text>`.
MaskSpec maskOf(const std::string &text, bool decoder = false) {
  std::string body = "layers = 1\nheads = 1\nmask = " + text + "\n";
  Loaded loaded = load(decoder ? decoderSpec(body) : encoderSpec("", body));
  EXPECT_TRUE(loaded.result.ok()) << text << "\n" << loaded.diagnostics;
  EXPECT_EQ(loaded.result.warningCount, 0u) << loaded.diagnostics;
  if (!loaded.result.ok())
    return MaskSpec();
  const StackSpec &stack = decoder ? loaded.result.spec->decoder : loaded.result.spec->encoder;
  EXPECT_TRUE(stack.maskLoc.isValid());
  return stack.layer(0).mask;
}

Loaded loadMask(const std::string &text, bool decoder = false) {
  std::string body = "layers = 1\nheads = 1\nmask = " + text + "\n";
  return load(decoder ? decoderSpec(body) : encoderSpec("", body));
}

TEST(SemaMaskTest, EveryTermIsRead) {
  EXPECT_TRUE(maskOf("none").none());
  EXPECT_EQ(maskOf("causal").terms[0].kind, MaskKind::Causal);
  EXPECT_EQ(maskOf("padding").terms[0].kind, MaskKind::Padding);

  MaskSpec sliding = maskOf("sliding_window(size = 8)");
  ASSERT_EQ(sliding.terms.size(), 1u);
  EXPECT_EQ(sliding.terms[0].kind, MaskKind::SlidingWindow);
  EXPECT_EQ(sliding.terms[0].size, 8);

  MaskSpec dilated = maskOf("dilated_window(size = 8, dilation = 2)");
  EXPECT_EQ(dilated.terms[0].kind, MaskKind::DilatedWindow);
  EXPECT_EQ(dilated.terms[0].size, 8);
  EXPECT_EQ(dilated.terms[0].dilation, 2);

  MaskSpec global = maskOf("global(tokens = [5, 0, 31])");
  EXPECT_EQ(global.terms[0].kind, MaskKind::Global);
  EXPECT_THAT(global.terms[0].tokens, ElementsAre(0, 5, 31)); // sorted

  MaskSpec random = maskOf("random(per_row = 3, seed = 7)");
  EXPECT_EQ(random.terms[0].kind, MaskKind::Random);
  EXPECT_EQ(random.terms[0].perRow, 3);
  EXPECT_EQ(random.terms[0].seed, 7u);
  EXPECT_EQ(maskOf("random(per_row = 2)").terms[0].seed, 0u); // the default seed
}

TEST(SemaMaskTest, SumsKeepTheirTermsInOrder) {
  MaskSpec mask = maskOf("padding + sliding_window(size = 4) + global(tokens = [0]) + "
                         "random(per_row = 1)");
  ASSERT_EQ(mask.terms.size(), 4u);
  EXPECT_EQ(mask.terms[0].kind, MaskKind::Padding);
  EXPECT_EQ(mask.terms[1].kind, MaskKind::SlidingWindow);
  EXPECT_EQ(mask.terms[2].kind, MaskKind::Global);
  EXPECT_EQ(mask.terms[3].kind, MaskKind::Random);
  EXPECT_TRUE(mask.loc.isValid());
  for (const MaskTerm &term : mask.terms)
    EXPECT_TRUE(term.loc.isValid());
  EXPECT_EQ(formatMask(mask), "padding + sliding_window(size = 4) + global(tokens = [0]) + "
                              "random(per_row = 1, seed = 0)");
  EXPECT_EQ(formatMask(MaskSpec()), "none");
}

TEST(SemaMaskTest, DefaultsPerStack) {
  Loaded encoder = load(encoderSpec());
  ASSERT_TRUE(encoder.result.ok());
  EXPECT_TRUE(encoder.result.spec->encoder.mask.none());
  Loaded decoder = load(decoderSpec("layers = 2\nheads = 1\n"));
  ASSERT_TRUE(decoder.result.ok()) << decoder.diagnostics;
  for (int64_t i = 0; i < 2; ++i) {
    const MaskSpec &mask = decoder.result.spec->decoder.layer(i).mask;
    ASSERT_EQ(mask.terms.size(), 1u);
    EXPECT_EQ(mask.terms[0].kind, MaskKind::Causal);
  }
  // padding in a decoder is allowed, and so is a causal encoder.
  EXPECT_TRUE(maskOf("causal + padding", true).has(MaskKind::Padding));
  EXPECT_TRUE(maskOf("causal").has(MaskKind::Causal));
}

TEST(SemaMaskTest, ArgumentErrors) {
  Loaded unknown = loadMask("casual");
  EXPECT_THAT(unknown.diagnostics, HasSubstr("8:8: error: unknown value 'casual' for 'mask'"));
  // A mask that failed to read draws no warning about what it would allow.
  Loaded decoder = loadMask("causal + sliding(size = 4)", true);
  EXPECT_EQ(decoder.result.errorCount, 1u) << decoder.diagnostics;
  EXPECT_EQ(decoder.result.warningCount, 0u) << decoder.diagnostics;
  EXPECT_THAT(unknown.diagnostics, HasSubstr("note: did you mean 'causal'?"));

  Loaded size = loadMask("sliding_window");
  EXPECT_THAT(size.diagnostics, HasSubstr("error: 'sliding_window' needs the argument 'size'"));
  EXPECT_THAT(size.diagnostics, HasSubstr("note: write sliding_window(size = ...)"));

  Loaded none = loadMask("none + causal");
  EXPECT_THAT(none.diagnostics,
              HasSubstr("8:8: error: 'none' cannot be combined with other masks"));

  Loaded zero = loadMask("sliding_window(size = 0)");
  EXPECT_THAT(zero.diagnostics, HasSubstr("8:30: error: 'size' must be > 0, found 0"));
  Loaded dilation = loadMask("dilated_window(size = 4, dilation = 0)");
  EXPECT_THAT(dilation.diagnostics,
              HasSubstr("8:44: error: 'dilation' must be > 0, found 0"));
  Loaded seed = loadMask("random(per_row = 1, seed = -1)");
  EXPECT_THAT(seed.diagnostics, HasSubstr("8:35: error: 'seed' must be >= 0, found -1"));
  Loaded perRow = loadMask("random(per_row = 0)");
  EXPECT_THAT(perRow.diagnostics, HasSubstr("8:25: error: 'per_row' must be > 0, found 0"));
  Loaded type = loadMask("sliding_window(size = 1.5)");
  EXPECT_THAT(type.diagnostics,
              HasSubstr("error: expected an integer for 'size', found a float"));
}

TEST(SemaMaskTest, SizesAreBoundedByMaxSeq) {
  EXPECT_EQ(maskOf("sliding_window(size = 32)").terms[0].size, 32);
  Loaded window = loadMask("sliding_window(size = 33)");
  EXPECT_EQ(window.result.errorCount, 1u);
  EXPECT_THAT(window.diagnostics,
              HasSubstr("8:30: error: sliding_window size (33) is larger than max_seq (32)\n"
                        "mask = sliding_window(size = 33)\n"
                        "                             ^~\n"
                        "note: use size = 32 or less"));
  Loaded dilated = loadMask("dilated_window(size = 64, dilation = 2)");
  EXPECT_THAT(dilated.diagnostics,
              HasSubstr("error: dilated_window size (64) is larger than max_seq (32)"));
  EXPECT_EQ(maskOf("random(per_row = 32)").terms[0].perRow, 32);
  std::string large = encoderSpec("", "layers = 1\nheads = 1\nmask = random(per_row = 4097)\n");
  large.replace(large.find("max_seq = 32"), 12, "max_seq = 99999");
  Loaded cap = load(large);
  EXPECT_THAT(cap.diagnostics,
              HasSubstr("8:25: error: random per_row (4097) is larger than 4096, the most "
                        "tmc supports"));
  Loaded random = loadMask("random(per_row = 40)");
  EXPECT_THAT(random.diagnostics,
              HasSubstr("8:25: error: random per_row (40) is larger than max_seq (32)"));
}

TEST(SemaMaskTest, GlobalTokens) {
  Loaded notList = loadMask("global(tokens = 0)");
  EXPECT_THAT(notList.diagnostics,
              HasSubstr("error: expected a list of positions for 'tokens', found an integer"));
  Loaded empty = loadMask("global(tokens = [])");
  EXPECT_THAT(empty.diagnostics,
              HasSubstr("8:24: error: 'global' needs at least one position in 'tokens'"));
  Loaded beyond = loadMask("global(tokens = [0, 32])");
  EXPECT_EQ(beyond.result.errorCount, 1u);
  EXPECT_THAT(beyond.diagnostics,
              HasSubstr("8:28: error: global token position 32 is past the end of the "
                        "sequence (max_seq = 32: positions 0..31)"));
  Loaded negative = loadMask("global(tokens = [-1])");
  EXPECT_THAT(negative.diagnostics, HasSubstr("error: 'tokens' must be >= 0, found -1"));

  Loaded twice = loadMask("global(tokens = [3, 1, 3])");
  ASSERT_TRUE(twice.result.ok()) << twice.diagnostics;
  EXPECT_EQ(twice.result.warningCount, 1u);
  EXPECT_THAT(twice.diagnostics, HasSubstr("8:31: warning: position 3 is listed twice in "
                                           "'tokens'"));
  EXPECT_THAT(twice.diagnostics, HasSubstr("8:25: note: first listed here"));
  EXPECT_THAT(twice.result.spec->encoder.mask.terms[0].tokens, ElementsAre(1, 3));
}

TEST(SemaMaskTest, OneWindowOfEachKind) {
  Loaded loaded = loadMask("sliding_window(size = 4) + sliding_window(size = 8)");
  EXPECT_EQ(loaded.result.errorCount, 1u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:35: error: a mask takes one 'sliding_window' term"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("8:8: note: first given here"));
  Loaded dilated = loadMask("dilated_window(size = 4, dilation = 2) + "
                            "dilated_window(size = 8, dilation = 2)");
  EXPECT_THAT(dilated.diagnostics, HasSubstr("error: a mask takes one 'dilated_window' term"));
  MaskSpec both = maskOf("sliding_window(size = 4) + dilated_window(size = 16, dilation = 4)");
  EXPECT_EQ(both.terms.size(), 2u);
}

TEST(SemaMaskTest, RepeatedRestrictionsWarn) {
  Loaded loaded = loadMask("causal + padding + causal");
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_EQ(loaded.result.warningCount, 1u);
  EXPECT_THAT(loaded.diagnostics, HasSubstr("8:27: warning: 'causal' appears twice in the "
                                            "mask"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("8:8: note: first given here"));
  EXPECT_EQ(loaded.result.spec->encoder.mask.terms.size(), 2u);
}

TEST(SemaMaskTest, DilationThatLeavesOnlyTheQueryWarns) {
  // Encoder windows reach size / 2 either side, decoder windows size - 1 back.
  Loaded encoder = loadMask("dilated_window(size = 8, dilation = 5)");
  ASSERT_TRUE(encoder.result.ok());
  EXPECT_THAT(encoder.diagnostics,
              HasSubstr("8:8: warning: dilated_window(size = 8, dilation = 5) lets each "
                        "query see only itself"));
  EXPECT_THAT(encoder.diagnostics, HasSubstr("note: the dilation must be at most 4"));
  EXPECT_EQ(maskOf("dilated_window(size = 8, dilation = 4)").terms[0].dilation, 4);
  EXPECT_EQ(maskOf("causal + dilated_window(size = 8, dilation = 7)", true).terms[1].dilation,
            7);
  Loaded decoder = loadMask("causal + dilated_window(size = 8, dilation = 8)", true);
  EXPECT_THAT(decoder.diagnostics, HasSubstr("warning: dilated_window(size = 8, dilation = "
                                             "8) lets each query see only itself"));
}

TEST(SemaMaskTest, RowsWithNoKeyAreAnError) {
  // Causal hides every key after position 0 and global(tokens = [5]) is the
  // only other term: positions 0..4 see nothing.
  Loaded loaded = loadMask("causal + global(tokens = [5])", true);
  EXPECT_EQ(loaded.result.errorCount, 1u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:8: error: this mask leaves position 0 with no key to attend to"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("add a sliding_window term or "
                                            "global(tokens = [0])"));
  // Fine with the first token global, or with a window.
  maskOf("causal + global(tokens = [0])", true);
  maskOf("causal + global(tokens = [5]) + sliding_window(size = 2)", true);
  // Without causal, every row sees the global tokens.
  maskOf("global(tokens = [5])");
}

TEST(SemaMaskTest, DecoderMasksThatSeeTheFutureWarn) {
  for (const char *mask : {"none", "padding", "global(tokens = [0])",
                           "random(per_row = 2, seed = 1)"}) {
    Loaded loaded = loadMask(mask, true);
    ASSERT_TRUE(loaded.result.ok()) << mask << loaded.diagnostics;
    EXPECT_EQ(loaded.result.warningCount, 1u) << mask;
    EXPECT_THAT(loaded.diagnostics,
                HasSubstr("8:8: warning: without 'causal', this decoder's mask lets "
                          "positions attend to later ones"))
        << mask;
  }
  // A decoder's windows only look back, so they need no causal term.
  maskOf("sliding_window(size = 4)", true);
  maskOf("padding + dilated_window(size = 8, dilation = 2)", true);
  // Encoders see both ways by design.
  maskOf("none");
}

TEST(SemaMaskTest, LinformerTakesNoPositionalMask) {
  Loaded causal = load(encoderSpec(
      "", "layers = 1\nheads = 1\nmask = causal\nattention = linformer(k = 8)\n"));
  EXPECT_EQ(causal.result.errorCount, 1u) << causal.diagnostics;
  EXPECT_THAT(causal.diagnostics,
              HasSubstr("9:13: error: attention = linformer cannot be combined with a "
                        "'causal' mask"));
  EXPECT_THAT(causal.diagnostics, HasSubstr("use mask = none or mask = padding"));
  Loaded decoder = load(decoderSpec("layers = 1\nheads = 1\nattention = linformer(k = 8)\n"));
  EXPECT_THAT(decoder.diagnostics,
              HasSubstr("8:13: error: attention = linformer cannot be used with the "
                        "decoder's default mask (causal)"));
  Loaded padding = load(encoderSpec(
      "", "layers = 1\nheads = 1\nmask = padding\nattention = linformer(k = 8)\n"));
  EXPECT_TRUE(padding.result.ok()) << padding.diagnostics;
}

TEST(SemaMaskTest, BlockSparseIsRecognizedButNotSupported) {
  Loaded loaded = loadMask("block_sparse(block = 16)");
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(loaded.diagnostics, HasSubstr("8:8: error: mask = block_sparse is not "
                                            "supported yet by this version of tmc"));
  Loaded bad = loadMask("block_sparse(block = 0)");
  EXPECT_THAT(bad.diagnostics, HasSubstr("'block' must be > 0, found 0"));
  EXPECT_THAT(bad.diagnostics, Not(HasSubstr("not supported")));
}

// --- MaskRows against a brute-force count over maskAllows -----------------

MaskTerm term(MaskKind kind, int64_t size = 0, int64_t dilation = 1,
              std::vector<int64_t> tokens = {}, int64_t perRow = 0, uint64_t seed = 0) {
  MaskTerm t;
  t.kind = kind;
  t.size = size;
  t.dilation = dilation;
  t.tokens = std::move(tokens);
  t.perRow = perRow;
  t.seed = seed;
  return t;
}

int64_t bruteForce(const MaskSpec &mask, bool decoder, int64_t n, int64_t i) {
  int64_t count = 0;
  for (int64_t j = 0; j < n; ++j)
    count += maskAllows(mask, decoder, n, i, j, n);
  return count;
}

TEST(MaskRowsTest, CountsMatchMaskAllows) {
  using K = MaskKind;
  std::vector<std::vector<MaskTerm>> masks = {
      {},
      {term(K::Causal)},
      {term(K::Padding)},
      {term(K::SlidingWindow, 5)},
      {term(K::Causal), term(K::SlidingWindow, 4)},
      {term(K::DilatedWindow, 9, 3)},
      {term(K::Causal), term(K::DilatedWindow, 7, 2)},
      {term(K::SlidingWindow, 3), term(K::DilatedWindow, 12, 4)},
      {term(K::Global, 0, 1, {0, 7})},
      {term(K::Causal), term(K::Global, 0, 1, {2})},
      {term(K::SlidingWindow, 4), term(K::Global, 0, 1, {0, 1}), term(K::Random, 0, 1, {}, 3, 9)},
      {term(K::Causal), term(K::Random, 0, 1, {}, 5, 1)},
      {term(K::Random, 0, 1, {}, 4, 2), term(K::Random, 0, 1, {}, 2, 3)},
      {term(K::Padding), term(K::SlidingWindow, 6), term(K::Global, 0, 1, {15})},
      {term(K::DilatedWindow, 16, 5), term(K::Causal), term(K::SlidingWindow, 7)},
      // Two windows of a kind: Sema rejects them, MaskRows counts key by key.
      {term(K::SlidingWindow, 3), term(K::SlidingWindow, 6), term(K::DilatedWindow, 9, 2)},
  };
  for (bool decoder : {false, true}) {
    for (const std::vector<MaskTerm> &terms : masks) {
      MaskSpec mask;
      mask.terms = terms;
      for (int64_t n : {1, 2, 16, 23}) {
        bool fits = true;
        for (const MaskTerm &t : terms)
          fits &= t.size <= n && t.perRow <= n &&
                  std::all_of(t.tokens.begin(), t.tokens.end(), [&](int64_t p) { return p < n; });
        if (!fits)
          continue;
        MaskRows rows(mask, decoder, n);
        int64_t total = 0;
        std::optional<int64_t> empty;
        for (int64_t i = 0; i < n; ++i) {
          int64_t expected = bruteForce(mask, decoder, n, i);
          EXPECT_EQ(rows.allowedKeys(i), expected)
              << formatMask(mask) << " decoder=" << decoder << " n=" << n << " i=" << i;
          total += expected;
          if (expected == 0 && !empty)
            empty = i;
        }
        bool exact = false;
        EXPECT_EQ(rows.totalAllowedKeys(exact), static_cast<double>(total)) << formatMask(mask);
        EXPECT_TRUE(exact);
        EXPECT_EQ(rows.firstEmptyRow(), empty) << formatMask(mask) << " n=" << n;
      }
    }
  }
}

TEST(MaskRowsTest, ClosedFormsForPlainMasks) {
  bool exact = false;
  EXPECT_EQ(MaskRows(MaskSpec(), false, 1024).totalAllowedKeys(exact), 1024.0 * 1024);
  MaskSpec causal;
  causal.terms.push_back(term(MaskKind::Causal));
  EXPECT_EQ(MaskRows(causal, true, 1024).totalAllowedKeys(exact), 1024.0 * 1025 / 2);
  EXPECT_EQ(MaskRows(causal, true, 1024).allowedKeys(1023), 1024);
  EXPECT_TRUE(exact);
}

TEST(MaskRowsTest, CostlyMasksAreSampled) {
  // 4096 random keys for each of 65536 rows: too many to count every row, so
  // the total is extrapolated from a sample.
  MaskSpec mask;
  mask.terms = {term(MaskKind::SlidingWindow, 64), term(MaskKind::Random, 0, 1, {}, 4096, 3)};
  MaskRows rows(mask, false, 65536);
  bool exact = true;
  double total = rows.totalAllowedKeys(exact);
  EXPECT_FALSE(exact);
  // Each row sees its window and at most 4096 more keys.
  EXPECT_GT(total, 65536.0 * 64);
  EXPECT_LE(total, 65536.0 * (65 + 4096));
}

TEST(MaskRowsTest, WindowsOfAnyWidthCostTheSame) {
  // A window as wide as the sequence is counted in closed form, row by row.
  MaskSpec mask;
  mask.terms = {term(MaskKind::SlidingWindow, 1 << 20), term(MaskKind::DilatedWindow, 1 << 20, 3)};
  bool exact = false;
  double total = MaskRows(mask, false, 1 << 20).totalAllowedKeys(exact);
  EXPECT_TRUE(exact);
  EXPECT_GT(total, 0);
}

} // namespace
