//===- SamplingTest.cpp - Sampler, filteredDistribution, logSoftmax -------===//
//
// Supports are checked twice: exactly, through filteredDistribution, and
// empirically, through the tokens Sampler::next actually draws, so a draw that
// ignored the filter would fail even if the filter itself were right.
//
//===----------------------------------------------------------------------===//
#include "runtime/sampling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

using namespace tmr;
using testing::HasSubstr;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Logits whose softmax is `probs` (up to float rounding).
std::vector<float> logitsOf(const std::vector<double> &probs) {
  std::vector<float> logits;
  for (double p : probs)
    logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

std::set<int32_t> support(const SamplingOptions &options, const std::vector<float> &logits) {
  std::string error;
  auto dist = filteredDistribution(options, logits.data(), logits.size(), &error);
  EXPECT_TRUE(dist) << error;
  std::set<int32_t> tokens;
  if (dist)
    for (const TokenProb &t : *dist)
      tokens.insert(t.token);
  return tokens;
}

/// The tokens drawn in `draws` calls to next() on the same row.
std::map<int32_t, int> drawCounts(const SamplingOptions &options, const std::vector<float> &logits,
                                  int draws) {
  Sampler sampler(options);
  std::map<int32_t, int> counts;
  for (int i = 0; i < draws; ++i) {
    std::string error;
    std::optional<int32_t> token = sampler.next(logits.data(), logits.size(), &error);
    EXPECT_TRUE(token) << error;
    if (token)
      ++counts[*token];
  }
  return counts;
}

std::set<int32_t> keys(const std::map<int32_t, int> &counts) {
  std::set<int32_t> out;
  for (auto [token, count] : counts)
    out.insert(token);
  return out;
}

/// Top-p by the definition: softmax, a full sort, the shortest prefix.
std::set<int32_t> referenceTopP(const std::vector<float> &row, double p, double temperature = 1) {
  std::vector<int32_t> order(row.size());
  for (size_t i = 0; i < row.size(); ++i)
    order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
  auto weight = [&](int32_t token) {
    return std::exp((double(row[token]) - row[order[0]]) / temperature);
  };
  double z = 0;
  for (int32_t token : order)
    z += weight(token);
  std::set<int32_t> kept;
  double mass = 0;
  for (int32_t token : order) {
    kept.insert(token);
    if ((mass += weight(token) / z) >= p)
      break;
  }
  return kept;
}

/// A row of `vocab` random logits with a few exact ties.
std::vector<float> randomRow(std::mt19937 &rng, int vocab) {
  std::normal_distribution<float> normal(0, 3);
  std::vector<float> row(vocab);
  for (float &v : row)
    v = std::round(normal(rng) * 4) / 4; // quarter steps: ties happen
  return row;
}

TEST(SamplingOptions, ValidateNamesTheFlagAndItsRange) {
  EXPECT_EQ(validate(SamplingOptions{}), "");
  EXPECT_EQ(validate(SamplingOptions{.temperature = 0.7f, .topK = 40, .topP = 0.9f, .seed = 3}),
            "");
  EXPECT_THAT(validate(SamplingOptions{.temperature = -1}),
              HasSubstr("--temperature must be a finite number >= 0"));
  EXPECT_THAT(validate(SamplingOptions{.temperature = kNaN}), HasSubstr("--temperature"));
  EXPECT_THAT(validate(SamplingOptions{.temperature = kInf}), HasSubstr("--temperature"));
  EXPECT_THAT(validate(SamplingOptions{.topK = -2}),
              HasSubstr("--top-k must be >= 0 (0 = off), got -2"));
  EXPECT_THAT(validate(SamplingOptions{.topP = 0}), HasSubstr("--top-p must be in (0, 1]"));
  EXPECT_THAT(validate(SamplingOptions{.topP = 1.5f}), HasSubstr("got 1.5"));
  EXPECT_THAT(validate(SamplingOptions{.topP = kNaN}), HasSubstr("--top-p"));
}

TEST(SamplingGreedy, ArgmaxWithTiesToTheLowestId) {
  Sampler sampler(SamplingOptions{});
  std::vector<float> row = {1, 3, 3, 2};
  EXPECT_EQ(sampler.next(row.data(), row.size()), 1);
  std::vector<float> nan = {kNaN, 1, -kInf, 0.5f};
  EXPECT_EQ(sampler.next(nan.data(), nan.size()), 1);
  std::vector<float> inf = {1, kInf, kInf};
  EXPECT_EQ(sampler.next(inf.data(), inf.size()), 1);
}

TEST(SamplingGreedy, NoUsableLogitIsAnError) {
  for (float fill : {kNaN, -kInf}) {
    std::vector<float> row(5, fill);
    for (SamplingOptions options : {SamplingOptions{}, SamplingOptions{.temperature = 1}}) {
      Sampler sampler(options);
      std::string error;
      EXPECT_EQ(sampler.next(row.data(), row.size(), &error), std::nullopt);
      EXPECT_THAT(error, HasSubstr("every logit is NaN or -inf"));
    }
  }
}

TEST(SamplingErrors, BadArgumentsAndOptionsAreErrorsNotCrashes) {
  std::vector<float> row = {0, 1};
  std::string error;
  Sampler sampler(SamplingOptions{.temperature = 1});
  EXPECT_EQ(sampler.next(nullptr, 2, &error), std::nullopt);
  EXPECT_THAT(error, HasSubstr("no logits"));
  EXPECT_EQ(sampler.next(row.data(), 0, &error), std::nullopt);
  EXPECT_THAT(error, HasSubstr("vocabulary size 0"));
  EXPECT_EQ(sampler.next(row.data(), int64_t(1) << 40, &error), std::nullopt);
  Sampler bad(SamplingOptions{.topP = 2});
  EXPECT_EQ(bad.next(row.data(), 2, &error), std::nullopt);
  EXPECT_THAT(error, HasSubstr("--top-p"));
  EXPECT_EQ(bad.next(row.data(), 2), std::nullopt); // no error pointer: still no crash
}

TEST(SamplingTemperature, DistributionIsSoftmaxOfScaledLogits) {
  std::vector<float> row = {0.5f, -1, 2, kNaN, 0, -kInf};
  for (float temperature : {0.25f, 1.0f, 3.0f}) {
    auto dist = filteredDistribution({.temperature = temperature}, row.data(), row.size(), nullptr);
    ASSERT_TRUE(dist);
    ASSERT_EQ(dist->size(), 4u); // NaN and -inf are never kept
    double z = 0;
    for (int i : {0, 1, 2, 4})
      z += std::exp(row[i] / double(temperature));
    int k = 0;
    for (int i : {0, 1, 2, 4}) {
      EXPECT_EQ((*dist)[k].token, i);
      EXPECT_NEAR((*dist)[k].prob, std::exp(row[i] / double(temperature)) / z, 1e-12);
      ++k;
    }
  }
}

TEST(SamplingTemperature, PositiveInfinitySharesAllTheMass) {
  std::vector<float> row = {kInf, 100, kInf, kNaN};
  auto dist = filteredDistribution({.temperature = 1}, row.data(), row.size(), nullptr);
  ASSERT_TRUE(dist);
  ASSERT_EQ(dist->size(), 2u);
  EXPECT_EQ((*dist)[0].token, 0);
  EXPECT_EQ((*dist)[1].token, 2);
  EXPECT_DOUBLE_EQ((*dist)[0].prob, 0.5);
  EXPECT_EQ(keys(drawCounts({.temperature = 1, .seed = 1}, row, 400)), (std::set<int32_t>{0, 2}));
}

TEST(SamplingTemperature, ApproachingZeroBecomesGreedy) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> row = randomRow(rng, 300);
    row[trial] = 50; // a unique maximum
    for (float temperature : {1e-3f, 1e-20f, 1e-45f}) {
      Sampler sampler({.temperature = temperature, .seed = uint64_t(trial)});
      for (int draw = 0; draw < 5; ++draw)
        EXPECT_EQ(sampler.next(row.data(), row.size()), trial) << "T=" << temperature;
    }
  }
}

TEST(SamplingTopK, KeepsExactlyTheKMostLikely) {
  // Ties at the boundary keep the lower ids: exactly K tokens remain.
  std::vector<float> row = {3, 5, 3, 1, 3, kNaN, 4};
  EXPECT_EQ(support({.temperature = 1, .topK = 1}, row), (std::set<int32_t>{1}));
  EXPECT_EQ(support({.temperature = 1, .topK = 2}, row), (std::set<int32_t>{1, 6}));
  EXPECT_EQ(support({.temperature = 1, .topK = 3}, row), (std::set<int32_t>{0, 1, 6}));
  EXPECT_EQ(support({.temperature = 1, .topK = 4}, row), (std::set<int32_t>{0, 1, 2, 6}));
  EXPECT_EQ(support({.temperature = 1, .topK = 50}, row), (std::set<int32_t>{0, 1, 2, 3, 4, 6}));
  // Renormalized over the kept tokens.
  auto dist = filteredDistribution({.temperature = 1, .topK = 2}, row.data(), row.size(), nullptr);
  ASSERT_TRUE(dist);
  EXPECT_NEAR((*dist)[0].prob, std::exp(5.0) / (std::exp(5.0) + std::exp(4.0)), 1e-12);
}

TEST(SamplingTopK, DrawsStayInsideTheTopK) {
  std::mt19937 rng(5);
  std::vector<float> row = randomRow(rng, 1000);
  row[10] = 30, row[500] = 29, row[999] = 28.5f, row[3] = 28; // a clear top 3
  auto counts = drawCounts({.temperature = 1.5f, .topK = 3, .seed = 9}, row, 3000);
  EXPECT_EQ(keys(counts), (std::set<int32_t>{10, 500, 999}));
}

TEST(SamplingTopK, OneIsGreedy) {
  std::mt19937 rng(7);
  for (uint64_t seed : {0, 1, 12345}) {
    Sampler greedy(SamplingOptions{});
    Sampler topOne({.temperature = 2, .topK = 1, .seed = seed});
    for (int step = 0; step < 200; ++step) {
      std::vector<float> row = randomRow(rng, 64);
      EXPECT_EQ(topOne.next(row.data(), row.size()), greedy.next(row.data(), row.size()));
    }
  }
}

TEST(SamplingTopP, KeepsTheSmallestPrefixReachingP) {
  // Probabilities 0.05, 0.5, 0.15, 0.3 at ids 0..3: sorted 1, 3, 2, 0.
  std::vector<float> row = logitsOf({0.05, 0.5, 0.15, 0.3});
  EXPECT_EQ(support({.temperature = 1, .topP = 0.3f}, row), (std::set<int32_t>{1}));
  EXPECT_EQ(support({.temperature = 1, .topP = 0.75f}, row), (std::set<int32_t>{1, 3}));
  EXPECT_EQ(support({.temperature = 1, .topP = 0.85f}, row), (std::set<int32_t>{1, 2, 3}));
  EXPECT_EQ(support({.temperature = 1, .topP = 0.97f}, row), (std::set<int32_t>{0, 1, 2, 3}));
  // Equally likely tokens are taken in id order.
  std::vector<float> flat(10, 0.0f);
  EXPECT_EQ(support({.temperature = 1, .topP = 0.45f}, flat), (std::set<int32_t>{0, 1, 2, 3, 4}));
  auto dist =
      filteredDistribution({.temperature = 1, .topP = 0.75f}, row.data(), row.size(), nullptr);
  ASSERT_TRUE(dist);
  EXPECT_NEAR((*dist)[0].prob, 0.5 / 0.8, 1e-6);
  EXPECT_NEAR((*dist)[1].prob, 0.3 / 0.8, 1e-6);
}

TEST(SamplingTopP, WorksOnALargeVocabularyAndDrawsStayInside) {
  // 50000 tokens of which four hold 90% of the mass; the rest is a long tail
  // the progressive sort must not cut into.
  std::vector<double> probs(50000, 0.1 / 49996);
  probs[7] = 0.4, probs[49999] = 0.25, probs[123] = 0.15, probs[20000] = 0.1;
  std::vector<float> row = logitsOf(probs);
  EXPECT_EQ(support({.temperature = 1, .topP = 0.85f}, row),
            (std::set<int32_t>{7, 123, 20000, 49999}));
  for (float p : {0.93f, 0.99f})
    EXPECT_EQ(support({.temperature = 1, .topP = p}, row), referenceTopP(row, p)) << p;
  auto counts = drawCounts({.temperature = 1, .topP = 0.7f, .seed = 4}, row, 500);
  EXPECT_EQ(keys(counts), (std::set<int32_t>{7, 123, 49999}));
}

TEST(SamplingTopP, MatchesTheDefinitionOnRandomRows) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> uniform(0.02f, 0.99f);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<float> row = randomRow(rng, 2000);
    float p = uniform(rng);
    float temperature = std::vector<float>{0.3f, 1.0f, 2.5f}[trial % 3];
    EXPECT_EQ(support({.temperature = temperature, .topP = p}, row),
              referenceTopP(row, p, temperature))
        << "trial " << trial << " p " << p << " T " << temperature;
  }
}

TEST(SamplingTopKTopP, TopPIsAppliedToTheRenormalizedTopK) {
  // 0.4 0.3 0.2 0.1: after top-3 the masses are 4/9 3/9 2/9, so 0.75 needs
  // two tokens (4/9 + 3/9 = 0.78); on the raw distribution it would need three.
  std::vector<float> row = logitsOf({0.4, 0.3, 0.2, 0.1});
  EXPECT_EQ(support({.temperature = 1, .topK = 3, .topP = 0.75f}, row), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(support({.temperature = 1, .topP = 0.75f}, row), (std::set<int32_t>{0, 1, 2}));
}

TEST(SamplingSeed, SameSeedSameTokensOtherSeedOtherTokens) {
  std::mt19937 rng(3);
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 300; ++i)
    rows.push_back(randomRow(rng, 100));
  auto run = [&](uint64_t seed) {
    Sampler sampler({.temperature = 1.2f, .topK = 50, .topP = 0.95f, .seed = seed});
    std::vector<int32_t> tokens;
    for (const auto &row : rows)
      tokens.push_back(*sampler.next(row.data(), row.size()));
    return tokens;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(SamplingDraw, FrequenciesFollowTheDistribution) {
  std::vector<double> probs = {0.1, 0.02, 0.5, 0.08, 0.3};
  std::vector<float> row = logitsOf(probs);
  const int draws = 40000;
  auto counts = drawCounts({.temperature = 1, .seed = 2024}, row, draws);
  for (size_t i = 0; i < probs.size(); ++i) {
    double sigma = std::sqrt(draws * probs[i] * (1 - probs[i]));
    EXPECT_NEAR(counts[i], draws * probs[i], 5 * sigma) << "token " << i;
  }
}

TEST(SamplingLogSoftmax, MatchesTheDefinitionAndHandlesNonFiniteLogits) {
  std::vector<float> row = {1, 2, kNaN, -kInf, 0};
  std::vector<double> out;
  std::string error;
  ASSERT_TRUE(logSoftmax(row.data(), row.size(), &out, &error)) << error;
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(0.0);
  EXPECT_NEAR(out[0], 1 - std::log(z), 1e-12);
  EXPECT_NEAR(out[1], 2 - std::log(z), 1e-12);
  EXPECT_EQ(out[2], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(out[3], -std::numeric_limits<double>::infinity());
  std::vector<float> inf = {kInf, 1, kInf, kInf};
  ASSERT_TRUE(logSoftmax(inf.data(), inf.size(), &out, &error));
  EXPECT_NEAR(out[0], -std::log(3.0), 1e-12);
  EXPECT_EQ(out[1], -std::numeric_limits<double>::infinity());
  std::vector<float> none = {kNaN, -kInf};
  EXPECT_FALSE(logSoftmax(none.data(), none.size(), &out, &error));
  EXPECT_THAT(error, HasSubstr("every logit is NaN or -inf"));
}

} // namespace

TEST(SamplingPenalties, LowerTheLogitsOfChosenTokens) {
  // Token 0 leads token 1 by 0.5 and token 2 by 1.0, every step.
  const std::vector<float> logits = {2.0f, 1.5f, 1.0f, -3.0f};
  auto greedy = [&](SamplingOptions options, int steps) {
    Sampler sampler(options);
    std::vector<int32_t> tokens;
    for (int s = 0; s < steps; ++s)
      tokens.push_back(*sampler.next(logits.data(), logits.size()));
    return tokens;
  };
  EXPECT_EQ(greedy({}, 4), (std::vector<int32_t>{0, 0, 0, 0}));
  // Frequency 0.3, each step's logits of tokens 0 and 1: 2.0 and 1.5 (0),
  // 1.7 and 1.5 (0), 1.4 and 1.5 (1), 1.4 and 1.2 (0), 1.1 and 1.2 (1).
  SamplingOptions frequency;
  frequency.frequencyPenalty = 0.3f;
  EXPECT_EQ(greedy(frequency, 5), (std::vector<int32_t>{0, 0, 1, 0, 1}));
  // Presence 0.6: once chosen, a token loses 0.6 however often: 0 (then
  // 1.4), 1 (then 0.9), then 0 (1.4 against 0.9 and 1.0) for good.
  SamplingOptions presence;
  presence.presencePenalty = 0.6f;
  EXPECT_EQ(greedy(presence, 4), (std::vector<int32_t>{0, 1, 0, 0}));
  // A negative penalty rewards repeats; a sampled run draws from the
  // penalized row: with presence -2 nothing but the first token follows.
  SamplingOptions sticky;
  sticky.presencePenalty = -2.0f;
  sticky.temperature = 0.05f;
  sticky.seed = 3;
  std::vector<int32_t> tokens = greedy(sticky, 8);
  EXPECT_EQ(std::count(tokens.begin(), tokens.end(), tokens[0]), 8);
}

TEST(SamplingPenalties, ValidateNamesTheFlagAndItsRange) {
  SamplingOptions options;
  options.presencePenalty = 2.5f;
  EXPECT_THAT(validate(options), HasSubstr("--presence-penalty must be in [-2, 2]"));
  options.presencePenalty = 0;
  options.frequencyPenalty = std::nanf("");
  EXPECT_THAT(validate(options), HasSubstr("--frequency-penalty must be in [-2, 2]"));
}
