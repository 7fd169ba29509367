//===- sampling.cpp - Choosing the next token from a row of logits --------===//
//
// All arithmetic is in double and every ordering is a strict total order
// (logit descending, then id ascending), so the kept set and the drawn token
// do not depend on sort algorithms or on how ties happen to be visited.
//
//===----------------------------------------------------------------------===//
#include "runtime/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tmr {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

std::string formatFloat(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

bool checkRow(const float *logits, int64_t vocab, std::string *error) {
  if (!logits)
    return fail(error, "no logits given");
  if (vocab < 1 || vocab > std::numeric_limits<int32_t>::max())
    return fail(error, "vocabulary size " + std::to_string(vocab) + " is outside [1, 2^31 - 1]");
  return true;
}

/// Kept for sampling: not NaN and not -inf (NaN compares false).
bool usable(float logit) { return logit > -kInf; }

/// Divides the probabilities by their sum.
void normalize(std::vector<TokenProb> &tokens) {
  double total = 0;
  for (const TokenProb &t : tokens)
    total += t.prob;
  for (TokenProb &t : tokens)
    t.prob /= total;
}

/// Keeps the smallest prefix of `tokens` (id order, normalized) in the
/// `moreLikely` order whose mass reaches `topP`. Sorting a flat distribution
/// of 50k tokens costs milliseconds per step, so tokens are first bucketed by
/// scaled logit (a monotone function of probability): whole buckets are taken
/// from the most likely down, and only the bucket where the mass crosses topP
/// is sorted. Bucket masses are summed in id order, so the result is the same
/// for every standard library.
template <typename Scaled, typename Less>
void applyTopP(std::vector<TokenProb> &tokens, double topP, const Scaled &scaled,
               const Less &moreLikely) {
  constexpr int kBuckets = 256;
  constexpr double kWidth = 0.125; // in scaled-logit units; the last bucket is open-ended
  auto bucketOf = [&](const TokenProb &t) {
    double distance = -scaled(t.token) / kWidth;
    return distance < kBuckets - 1 ? static_cast<int>(distance) : kBuckets - 1;
  };
  std::vector<double> mass(kBuckets, 0.0);
  for (const TokenProb &t : tokens)
    mass[bucketOf(t)] += t.prob;
  double below = 0;
  int crossing = 0;
  while (crossing < kBuckets - 1 && below + mass[crossing] < topP)
    below += mass[crossing++];

  std::vector<TokenProb> inCrossing;
  for (const TokenProb &t : tokens)
    if (bucketOf(t) == crossing)
      inCrossing.push_back(t);
  if (inCrossing.empty()) // cannot happen with normalized masses; be safe
    return;
  std::sort(inCrossing.begin(), inCrossing.end(), moreLikely);
  // Rounding can leave the whole bucket short of topP: then it is all kept.
  const TokenProb *last = &inCrossing.back();
  for (const TokenProb &t : inCrossing)
    if ((below += t.prob) >= topP) {
      last = &t;
      break;
    }
  std::erase_if(tokens, [&](const TokenProb &t) {
    int bucket = bucketOf(t);
    return bucket > crossing || (bucket == crossing && moreLikely(*last, t));
  });
}

/// The filtered distribution into `out`, kept tokens in increasing id order.
bool distribution(const SamplingOptions &options, const float *logits, int64_t vocab,
                  std::vector<TokenProb> &out, std::string *error) {
  if (std::string problem = validate(options); !problem.empty())
    return fail(error, problem);
  if (!checkRow(logits, vocab, error))
    return false;
  out.clear();
  // "More likely" is decided on the logits themselves, so probabilities that
  // underflow to 0 at low temperature are still ranked correctly.
  auto moreLikely = [logits](const TokenProb &a, const TokenProb &b) {
    float la = logits[a.token], lb = logits[b.token];
    return la != lb ? la > lb : a.token < b.token;
  };
  bool anyPosInf = false;
  float maxLogit = -kInf;
  int32_t argmax = -1;
  for (int64_t i = 0; i < vocab; ++i) {
    float v = logits[i];
    anyPosInf |= v == kInf;
    if (usable(v) && (argmax < 0 || v > maxLogit))
      maxLogit = v, argmax = static_cast<int32_t>(i);
  }
  if (argmax < 0)
    return fail(error, "every logit is NaN or -inf; there is no token to choose");
  if (options.temperature == 0) {
    out.push_back({argmax, 1.0});
    return true;
  }

  // Select on the logits first, so top-k exponentiates only the K it keeps.
  for (int64_t i = 0; i < vocab; ++i)
    if (anyPosInf ? logits[i] == kInf : usable(logits[i]))
      out.push_back({static_cast<int32_t>(i), 0.0});
  if (options.topK > 0 && static_cast<size_t>(options.topK) < out.size()) {
    std::nth_element(out.begin(), out.begin() + options.topK, out.end(), moreLikely);
    out.resize(options.topK);
    std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.token < b.token; });
  }
  // Scaled logits relative to the maximum, which top-k always keeps: <= 0.
  auto scaled = [&](int32_t token) {
    return anyPosInf ? 0.0 : (double(logits[token]) - double(maxLogit)) / options.temperature;
  };
  for (TokenProb &t : out)
    t.prob = std::exp(scaled(t.token));
  normalize(out);
  if (options.topP < 1) {
    applyTopP(out, options.topP, scaled, moreLikely);
    normalize(out);
  }
  return true;
}

uint64_t splitMix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

} // namespace

std::string validate(const SamplingOptions &options) {
  if (!std::isfinite(options.temperature) || options.temperature < 0)
    return "--temperature must be a finite number >= 0 (0 = greedy), got " +
           formatFloat(options.temperature);
  if (options.topK < 0)
    return "--top-k must be >= 0 (0 = off), got " + std::to_string(options.topK);
  if (!(options.topP > 0 && options.topP <= 1))
    return "--top-p must be in (0, 1] (1 = off), got " + formatFloat(options.topP);
  if (!(options.presencePenalty >= -2 && options.presencePenalty <= 2))
    return "--presence-penalty must be in [-2, 2] (0 = off), got " +
           formatFloat(options.presencePenalty);
  if (!(options.frequencyPenalty >= -2 && options.frequencyPenalty <= 2))
    return "--frequency-penalty must be in [-2, 2] (0 = off), got " +
           formatFloat(options.frequencyPenalty);
  return "";
}

std::optional<std::vector<TokenProb>> filteredDistribution(const SamplingOptions &options,
                                                           const float *logits, int64_t vocab,
                                                           std::string *error) {
  std::vector<TokenProb> out;
  if (!distribution(options, logits, vocab, out, error))
    return std::nullopt;
  return out;
}

bool logSoftmax(const float *logits, int64_t vocab, std::vector<double> *out, std::string *error) {
  if (!checkRow(logits, vocab, error))
    return false;
  int64_t posInf = 0;
  double maxLogit = -kInf;
  for (int64_t i = 0; i < vocab; ++i) {
    posInf += logits[i] == kInf;
    if (usable(logits[i]))
      maxLogit = std::max(maxLogit, double(logits[i]));
  }
  if (maxLogit == -kInf)
    return fail(error, "every logit is NaN or -inf");
  out->assign(vocab, -kInf);
  if (posInf) {
    for (int64_t i = 0; i < vocab; ++i)
      if (logits[i] == kInf)
        (*out)[i] = -std::log(double(posInf));
    return true;
  }
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    if (usable(logits[i]))
      sum += std::exp(double(logits[i]) - maxLogit);
  double logSum = maxLogit + std::log(sum);
  for (int64_t i = 0; i < vocab; ++i)
    if (usable(logits[i]))
      (*out)[i] = double(logits[i]) - logSum;
  return true;
}

Sampler::Sampler(const SamplingOptions &options) : options_(options) {
  uint64_t seed = options.seed;
  for (uint64_t &word : state_)
    word = splitMix64(seed);
}

uint64_t Sampler::nextRandom() {
  uint64_t result = rotl(state_[1] * 5, 7) * 9;
  uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

std::optional<int32_t> Sampler::next(const float *logits, int64_t vocab, std::string *error) {
  std::optional<int32_t> token = choose(logits, vocab, error);
  if (token && (options_.presencePenalty != 0 || options_.frequencyPenalty != 0)) {
    chosen_.resize(static_cast<size_t>(vocab), 0);
    ++chosen_[static_cast<size_t>(*token)];
  }
  return token;
}

std::optional<int32_t> Sampler::choose(const float *logits, int64_t vocab, std::string *error) {
  if (!chosen_.empty() && static_cast<int64_t>(chosen_.size()) == vocab) {
    penalized_.assign(logits, logits + vocab);
    for (int64_t i = 0; i < vocab; ++i)
      if (int32_t count = chosen_[static_cast<size_t>(i)])
        penalized_[static_cast<size_t>(i)] -=
            options_.presencePenalty + static_cast<float>(count) * options_.frequencyPenalty;
    logits = penalized_.data();
  }
  if (!distribution(options_, logits, vocab, scratch_, error))
    return std::nullopt;
  if (options_.temperature == 0)
    return scratch_.front().token;
  // 53 random bits: every double in [0, 1) this can produce is exact.
  double u = double(nextRandom() >> 11) * 0x1.0p-53;
  double total = 0;
  for (const TokenProb &t : scratch_)
    total += t.prob;
  double target = u * total, mass = 0;
  for (const TokenProb &t : scratch_)
    if (target < (mass += t.prob))
      return t.token;
  // Only rounding gets here (target within an ulp of total): the last token
  // that has any probability.
  for (auto it = scratch_.rbegin(); it != scratch_.rend(); ++it)
    if (it->prob > 0)
      return it->token;
  return scratch_.back().token;
}

} // namespace tmr
