//===- SamplingBeamSearchTest.cpp - BeamSearch on toy models --------------===//
//
// A "model" here is a function from a generated prefix to a row of logits.
// The driver plays the role of the generation loop: it keeps one prefix per
// live beam (standing in for a KV cache) and reorders them with the parents
// that step() returns, so a wrong parent would feed the model a wrong prefix.
//
//===----------------------------------------------------------------------===//
#include "runtime/beam_search.h"
#include "runtime/sampling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

using namespace tmr;
using testing::HasSubstr;

namespace {

using Prefix = std::vector<int32_t>;
using Model = std::function<std::vector<float>(const Prefix &)>;

/// Runs `search` to the end against `model`; checks the parent bookkeeping.
BeamHypothesis runBeam(BeamSearch &search, const Model &model, int64_t vocab) {
  std::vector<Prefix> caches(1);
  while (!search.finished()) {
    EXPECT_EQ(search.liveBeams(), static_cast<int32_t>(caches.size()));
    std::vector<float> logits;
    for (const Prefix &prefix : caches) {
      std::vector<float> row = model(prefix);
      logits.insert(logits.end(), row.begin(), row.end());
    }
    std::string error;
    std::optional<BeamStep> step = search.step(logits.data(), vocab, &error);
    if (!step) {
      ADD_FAILURE() << error;
      break;
    }
    std::vector<Prefix> next;
    for (size_t j = 0; j < step->parents.size(); ++j) {
      next.push_back(caches.at(step->parents[j]));
      next.back().push_back(step->tokens[j]);
      EXPECT_EQ(next.back(), search.liveTokens(static_cast<int32_t>(j)));
    }
    caches = std::move(next);
  }
  std::optional<BeamHypothesis> best = search.best();
  EXPECT_TRUE(best);
  return best.value_or(BeamHypothesis{});
}

std::vector<float> logitsOf(const std::vector<double> &probs) {
  std::vector<float> logits;
  for (double p : probs)
    logits.push_back(p > 0 ? static_cast<float>(std::log(p))
                           : -std::numeric_limits<float>::infinity());
  return logits;
}

/// Deterministic pseudo-random logits for every prefix.
Model hashedModel(int64_t vocab, uint64_t salt) {
  return [vocab, salt](const Prefix &prefix) {
    uint64_t h = 1469598103934665603ull ^ salt;
    for (int32_t t : prefix)
      h = (h ^ uint64_t(t + 1)) * 1099511628211ull;
    std::vector<float> row(vocab);
    for (float &v : row) {
      h ^= h >> 29, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 32;
      v = static_cast<float>(double(h % 10000) / 1000.0); // [0, 10)
    }
    return row;
  };
}

TEST(BeamSearch, FindsTheBestSequenceThatGreedyMisses) {
  enum { A, B, C };
  // A is likelier first (0.6), but everything after A is a coin toss, while
  // B (0.4) is followed by A with 0.9: P(B A) = 0.36 > P(A *) <= 0.204.
  Model model = [](const Prefix &prefix) {
    if (prefix.empty())
      return logitsOf({0.6, 0.4, 0.0});
    if (prefix[0] == A)
      return logitsOf({0.34, 0.33, 0.33});
    return logitsOf({0.9, 0.05, 0.05});
  };
  // Greedy, through the Sampler.
  Sampler greedy(SamplingOptions{});
  Prefix greedyTokens;
  for (int i = 0; i < 2; ++i)
    greedyTokens.push_back(*greedy.next(model(greedyTokens).data(), 3));
  EXPECT_EQ(greedyTokens, (Prefix{A, A}));

  BeamSearch search({.beams = 2, .maxNew = 2});
  BeamHypothesis best = runBeam(search, model, 3);
  EXPECT_EQ(best.tokens, (Prefix{B, A}));
  EXPECT_NEAR(best.logProb, std::log(0.36), 1e-6);
  EXPECT_NEAR(best.score, std::log(0.36) / 2, 1e-6);
}

TEST(BeamSearch, OneBeamIsGreedy) {
  for (uint64_t salt = 0; salt < 20; ++salt) {
    Model model = hashedModel(17, salt);
    Sampler greedy(SamplingOptions{});
    Prefix expected;
    for (int i = 0; i < 6; ++i)
      expected.push_back(*greedy.next(model(expected).data(), 17));
    BeamSearch search({.beams = 1, .maxNew = 6});
    EXPECT_EQ(runBeam(search, model, 17).tokens, expected) << "salt " << salt;
  }
}

TEST(BeamSearch, LengthPenaltyDecidesBetweenShortAndLong) {
  enum { Stop, A, B };
  // [Stop]: log 0.5 = -0.69 over 1 token. [A, Stop]: log(0.45 * 0.9) = -0.90
  // over 2 tokens, i.e. -0.45 per token.
  Model model = [](const Prefix &prefix) {
    if (prefix.empty())
      return logitsOf({0.5, 0.45, 0.05});
    return logitsOf({0.9, 0.05, 0.05});
  };
  BeamSearch normalized({.beams = 2, .maxNew = 5, .lengthPenalty = 1, .stopToken = Stop});
  BeamHypothesis best = runBeam(normalized, model, 3);
  EXPECT_EQ(best.tokens, (Prefix{A, Stop}));
  EXPECT_NEAR(best.score, std::log(0.45 * 0.9) / 2, 1e-6);

  BeamSearch raw({.beams = 2, .maxNew = 5, .lengthPenalty = 0, .stopToken = Stop});
  EXPECT_EQ(runBeam(raw, model, 3).tokens, (Prefix{Stop}));
}

TEST(BeamSearch, EndsEarlyWhenNoLiveBeamCanWin) {
  enum { Stop, A, B };
  Model model = [](const Prefix &prefix) { return logitsOf({0.5, 0.45, 0.05}); };
  // Without length normalization a longer hypothesis only loses probability:
  // once [Stop] (-0.69) is done, the live beams (-0.80, -3.0) cannot win.
  BeamSearch search({.beams = 2, .maxNew = 50, .lengthPenalty = 0, .stopToken = Stop});
  std::vector<float> row = model({});
  ASSERT_TRUE(search.step(row.data(), 3));
  EXPECT_TRUE(search.finished());
  EXPECT_EQ(search.liveBeams(), 0);
  EXPECT_EQ(search.best()->tokens, (Prefix{Stop}));
}

TEST(BeamSearch, MaxNewFinishesEveryBeam) {
  BeamSearch search({.beams = 3, .maxNew = 4});
  runBeam(search, hashedModel(9, 1), 9);
  ASSERT_EQ(search.hypotheses().size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const BeamHypothesis &h = search.hypotheses()[i];
    EXPECT_EQ(h.tokens.size(), 4u);
    EXPECT_DOUBLE_EQ(h.score, h.logProb / 4);
    if (i > 0) {
      EXPECT_GE(search.hypotheses()[i - 1].score, h.score);
    }
  }
}

TEST(BeamSearch, FewerUsableTokensThanBeams) {
  BeamSearch search({.beams = 4, .maxNew = 3});
  std::vector<float> two = {0.0f, 1.0f};
  ASSERT_TRUE(search.step(two.data(), 2));
  EXPECT_EQ(search.liveBeams(), 2);
  std::vector<float> rows = {0, 1, 0.5f, 0.25f};
  ASSERT_TRUE(search.step(rows.data(), 2));
  EXPECT_EQ(search.liveBeams(), 4);
}

/// With more beams than sequences, beam search is exhaustive: it must find
/// the sequence a brute-force search over all of them finds, for every length
/// penalty, despite stopping early.
TEST(BeamSearch, ExhaustiveBeamMatchesBruteForce) {
  const int64_t vocab = 4;
  const int32_t maxNew = 3, stop = 2;
  for (uint64_t salt = 0; salt < 10; ++salt) {
    Model model = hashedModel(vocab, salt * 7 + 3);
    for (float penalty : {-0.5f, 0.0f, 0.5f, 1.0f, 2.0f}) {
      double bestScore = -std::numeric_limits<double>::infinity();
      Prefix bestTokens;
      std::function<void(Prefix, double)> visit = [&](Prefix prefix, double logProb) {
        std::vector<float> row = model(prefix);
        std::vector<double> lp;
        ASSERT_TRUE(logSoftmax(row.data(), vocab, &lp, nullptr));
        for (int32_t t = 0; t < vocab; ++t) {
          Prefix next = prefix;
          next.push_back(t);
          double sum = logProb + lp[t];
          if (t == stop || int32_t(next.size()) == maxNew) {
            double score = sum / std::pow(double(next.size()), penalty);
            if (score > bestScore)
              bestScore = score, bestTokens = next;
          } else {
            visit(next, sum);
          }
        }
      };
      visit({}, 0);
      BeamSearch search(
          {.beams = 64, .maxNew = maxNew, .lengthPenalty = penalty, .stopToken = stop});
      BeamHypothesis best = runBeam(search, model, vocab);
      EXPECT_EQ(best.tokens, bestTokens) << "salt " << salt << " penalty " << penalty;
      EXPECT_NEAR(best.score, bestScore, 1e-9);
    }
  }
}

TEST(BeamSearch, ErrorsLeaveTheSearchUsable) {
  EXPECT_THAT(validate(BeamOptions{.beams = 0}), HasSubstr("--beam must be >= 1, got 0"));
  EXPECT_THAT(validate(BeamOptions{.maxNew = 0}), HasSubstr("--max-new"));
  EXPECT_THAT(validate(BeamOptions{.lengthPenalty = std::nanf("")}), HasSubstr("length penalty"));
  EXPECT_THAT(validate(BeamOptions{.stopToken = -1}), HasSubstr("--stop"));
  EXPECT_EQ(validate(BeamOptions{.beams = 4, .maxNew = 8, .stopToken = 0}), "");

  std::string error;
  std::vector<float> row = {0, 1, 2};
  BeamSearch invalid({.beams = 0});
  EXPECT_FALSE(invalid.step(row.data(), 3, &error));
  EXPECT_THAT(error, HasSubstr("--beam"));

  BeamSearch search({.beams = 2, .maxNew = 2, .stopToken = 7});
  EXPECT_FALSE(search.step(row.data(), 3, &error));
  EXPECT_THAT(error, HasSubstr("--stop 7 is not a token id"));

  BeamSearch search2({.beams = 2, .maxNew = 1});
  std::vector<float> nan(3, std::nanf(""));
  EXPECT_FALSE(search2.step(nan.data(), 3, &error));
  EXPECT_THAT(error, HasSubstr("beam 0: every logit is NaN or -inf"));
  EXPECT_FALSE(search2.step(nullptr, 3, &error));
  EXPECT_EQ(search2.liveBeams(), 1);
  ASSERT_TRUE(search2.step(row.data(), 3, &error)) << error;
  EXPECT_TRUE(search2.finished());
  EXPECT_EQ(search2.best()->tokens, (Prefix{2}));
  EXPECT_FALSE(search2.step(row.data(), 3, &error));
  EXPECT_THAT(error, HasSubstr("already finished"));
}

} // namespace
