//===- sampling.h - Choosing the next token from a row of logits -*- C++ -*-===//
//
// The per-step decision of a generation loop (--temperature, --top-k, --top-p,
// --seed), independent of any model: the caller hands over one row of f32
// logits [vocab] per step. Semantics follow Hugging Face's logits warpers
// (temperature, then top-k, then top-p) except where noted, and a run is a
// pure function of (options, the sequence of logit rows).
//
//   tmr::SamplingOptions options{.temperature = 0.8f, .topK = 40, .seed = 7};
//   if (std::string problem = tmr::validate(options); !problem.empty()) ...
//   tmr::Sampler sampler(options);
//   std::optional<int32_t> token = sampler.next(logits, vocab, &error);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tmr {

/// How the next token is chosen. The defaults mean greedy decoding.
struct SamplingOptions {
  /// 0: greedy, the argmax (ties to the lowest id; top-k/top-p are moot).
  /// > 0: draw from softmax(logits / temperature).
  float temperature = 0;
  /// 0: off. Else keep only the topK most likely tokens; among equally likely
  /// tokens the lower ids are kept, so exactly min(topK, candidates) remain
  /// (Hugging Face keeps every token tied with the K-th).
  int32_t topK = 0;
  /// 1: off. Else keep the smallest prefix of the tokens sorted by descending
  /// probability (ties: lower id first) whose probability mass, computed after
  /// top-k and renormalization, is >= topP. At least one token remains.
  /// (Masses are summed in double: a cut within rounding error of topP may
  /// fall either way.)
  float topP = 1;
  /// Seeds the generator (xoshiro256** initialized through SplitMix64).
  uint64_t seed = 0;
  /// OpenAI's penalties, in [-2, 2] (0: off), over the tokens this sampler
  /// has chosen (the prompt's are not counted, as in vLLM): a token chosen c
  /// times has its logit lowered by presencePenalty (if c > 0) plus
  /// c * frequencyPenalty before temperature, top-k and top-p, greedy too.
  float presencePenalty = 0;
  float frequencyPenalty = 0;
};

/// "" when `options` are usable, else a message naming the command-line flag
/// and its allowed range, e.g. "--top-p must be in (0, 1] (1 = off), got 1.5".
std::string validate(const SamplingOptions &options);

/// One token of a filtered distribution.
struct TokenProb {
  int32_t token;
  double prob;
};

/// The distribution Sampler::next draws from for this row of logits: the
/// kept tokens in increasing id order with their renormalized probabilities
/// (summing to 1 up to rounding; a kept token's probability may underflow to
/// 0 at tiny temperatures). Greedy gives the argmax alone with probability 1.
/// Logit rules: NaN counts as -inf and -inf tokens are never kept; if some
/// logits are +inf, the distribution is uniform over those (the limit of
/// growing logits). Errors (invalid options, vocab outside [1, 2^31 - 1],
/// every logit NaN or -inf) return nullopt + *error.
std::optional<std::vector<TokenProb>> filteredDistribution(const SamplingOptions &options,
                                                           const float *logits, int64_t vocab,
                                                           std::string *error);

/// Log-softmax of one row in double precision with the same NaN/inf rules as
/// filteredDistribution (NaN and -inf give -inf; any +inf entries share all
/// the mass). False + *error when every logit is NaN or -inf.
bool logSoftmax(const float *logits, int64_t vocab, std::vector<double> *out, std::string *error);

/// A seeded token chooser; one per generated sequence.
class Sampler {
public:
  explicit Sampler(const SamplingOptions &options);

  /// The next token for this row of logits [vocab] (less the penalties of
  /// the tokens chosen so far, if any). Sampling draws one 64-bit
  /// number u from the generator and returns the token whose interval
  /// contains u * total when the kept tokens' probabilities are laid end to
  /// end in increasing id order; greedy draws nothing. So the same seed and
  /// the same logits give the same tokens (across platforms up to last-ulp
  /// differences in std::exp). nullopt + *error as for filteredDistribution.
  std::optional<int32_t> next(const float *logits, int64_t vocab, std::string *error = nullptr);

  const SamplingOptions &options() const { return options_; }

private:
  /// next() without counting the token.
  std::optional<int32_t> choose(const float *logits, int64_t vocab, std::string *error);
  /// xoshiro256** (Blackman and Vigna): small, fast and fully specified, unlike
  /// std::*_distribution whose output differs between standard libraries.
  uint64_t nextRandom();

  SamplingOptions options_;
  uint64_t state_[4];
  std::vector<TokenProb> scratch_;
  /// With a penalty: how often each token was chosen, and the row less the
  /// penalties.
  std::vector<int32_t> chosen_;
  std::vector<float> penalized_;
};

} // namespace tmr
