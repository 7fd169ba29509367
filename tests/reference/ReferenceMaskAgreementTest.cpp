//===- ReferenceMaskAgreementTest.cpp - The compiler's masks vs the oracle's ===//
//
// The reference decides masks with its own code (reference/ReferenceMask.h);
// the compiler with frontend/Masks.h. Each is pinned to hand-worked patterns
// elsewhere (ReferenceMaskTest.cpp, tests/unit/frontend); here the two are
// swept against each other over every small mask the spec language allows,
// so a rule the product gets wrong in a corner no hand-worked case or e2e
// spec visits (an odd window, a dilation, a global token in a decoder) fails
// here, naming the first pair that differs.
//
//===----------------------------------------------------------------------===//

#include "frontend/Masks.h"
#include "reference/ReferenceMask.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using namespace tmc;

namespace {

constexpr int64_t maxSeq = 12;

MaskTerm makeTerm(MaskKind kind, int64_t size = 0, int64_t dilation = 1) {
  MaskTerm term;
  term.kind = kind;
  term.size = size;
  term.dilation = dilation;
  return term;
}

/// The window, global and random parts the sweep puts under each of
/// none / causal / padding / causal + padding.
std::vector<std::vector<MaskTerm>> unionParts() {
  std::vector<std::vector<MaskTerm>> parts = {{}};
  for (int64_t size = 1; size <= maxSeq; ++size) {
    parts.push_back({makeTerm(MaskKind::SlidingWindow, size)});
    for (int64_t dilation = 1; dilation <= 4; ++dilation)
      parts.push_back({makeTerm(MaskKind::DilatedWindow, size, dilation)});
  }
  for (std::vector<int64_t> tokens : {std::vector<int64_t>{0}, {3, 9}, {11}}) {
    MaskTerm global = makeTerm(MaskKind::Global);
    global.tokens = tokens;
    parts.push_back({global});
    parts.push_back({makeTerm(MaskKind::SlidingWindow, 3), global});
  }
  for (int64_t perRow = 1; perRow <= 3; ++perRow)
    for (uint64_t seed : {0ull, 5ull, 0xFFFFFFFFFFFFFFFFull}) {
      MaskTerm random = makeTerm(MaskKind::Random);
      random.perRow = perRow;
      random.seed = seed;
      parts.push_back({random});
      parts.push_back({makeTerm(MaskKind::DilatedWindow, 8, 2), random});
    }
  return parts;
}

std::string describe(const MaskSpec &mask) {
  std::ostringstream out;
  for (const MaskTerm &term : mask.terms)
    out << toString(term.kind) << "(size " << term.size << ", dilation " << term.dilation
        << ", tokens " << term.tokens.size() << ", per_row " << term.perRow << ", seed "
        << term.seed << ") ";
  return out.str();
}

TEST(ReferenceMaskAgreement, CompilerRulesMatchTheReferenceOnEverySmallMask) {
  const std::vector<std::vector<MaskTerm>> restrictions = {
      {}, {makeTerm(MaskKind::Causal)}, {makeTerm(MaskKind::Padding)},
      {makeTerm(MaskKind::Causal), makeTerm(MaskKind::Padding)}};
  int64_t pairs = 0;
  for (const std::vector<MaskTerm> &restriction : restrictions)
    for (const std::vector<MaskTerm> &part : unionParts())
      for (bool decoder : {false, true})
        for (int64_t length : {maxSeq, int64_t{7}}) {
          MaskSpec mask;
          mask.terms = restriction;
          mask.terms.insert(mask.terms.end(), part.begin(), part.end());
          for (int64_t i = 0; i < maxSeq; ++i)
            for (int64_t j = 0; j < maxSeq; ++j, ++pairs)
              ASSERT_EQ(maskAllows(mask, decoder, maxSeq, i, j, length),
                        ref::queryMaySeeKey(mask, decoder, maxSeq, i, j, length))
                  << "query " << i << ", key " << j << ", length " << length
                  << (decoder ? ", decoder: " : ", encoder: ") << describe(mask);
        }
  EXPECT_GT(pairs, 100000); // the sweep ran over what it says
}

TEST(ReferenceMaskAgreement, CompilerRandomDrawsMatchTheReference) {
  for (uint64_t seed : {0ull, 42ull, 0x8000000000000000ull})
    for (int64_t perRow : {1, 3, 7})
      for (int64_t modulus : {int64_t{1}, int64_t{6}, int64_t{1000003}, INT64_MAX})
        for (int64_t row : {int64_t{0}, int64_t{5}, int64_t{4095}}) {
          MaskTerm term = makeTerm(MaskKind::Random);
          term.perRow = perRow;
          term.seed = seed;
          EXPECT_EQ(randomMaskKeys(term, modulus, row),
                    ref::randomMaskDraws(perRow, seed, modulus, row))
              << "seed " << seed << ", per_row " << perRow << ", max_seq " << modulus
              << ", row " << row;
        }
}

} // namespace
