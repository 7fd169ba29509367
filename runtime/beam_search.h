//===- beam_search.h - Length-normalized beam search state --------*- C++ -*-===//
//
// The bookkeeping of `--beam B`, apart from the model: the caller runs one
// decode step per live beam, hands the logits over, and gets back which old
// beam each new beam continues (to reorder its KV caches) and the token each
// new beam appends:
//
//   tmr::BeamSearch search({.beams = 4, .maxNew = 32, .stopToken = eos});
//   // logits: [search.liveBeams(), vocab]; 1 row before the first step.
//   while (!search.finished()) {
//     std::optional<tmr::BeamStep> step = search.step(logits, vocab, &error);
//     if (!step) ...error...
//     // new beam j = old beam step->parents[j] + token step->tokens[j]:
//     // copy KV cache parents[j] into slot j, then decode tokens[j] for it.
//   }
//   search.best()->tokens
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tmr {

/// --beam, --max-new, the length penalty and --stop.
struct BeamOptions {
  int32_t beams = 1;  ///< B >= 1: live hypotheses kept per step.
  int32_t maxNew = 1; ///< >= 1: tokens generated per hypothesis at most.
  /// Final score = sum of token log-probs / length^lengthPenalty, where length
  /// counts the generated tokens (the stop token included, the prompt not).
  /// 1 is Hugging Face's default; 0 ranks by raw log-probability; larger
  /// values favour longer hypotheses.
  float lengthPenalty = 1;
  /// A hypothesis that generates this token ends there (the token is kept).
  std::optional<int32_t> stopToken;
};

/// "" when usable, else a message naming the flag and its allowed range.
std::string validate(const BeamOptions &options);

/// A finished hypothesis.
struct BeamHypothesis {
  std::vector<int32_t> tokens; ///< generated tokens, stop token included
  double logProb = 0;          ///< sum of the tokens' log-probabilities
  double score = 0;            ///< logProb / tokens.size()^lengthPenalty
};

/// What step() did to the live beams.
struct BeamStep {
  /// New live beam j continues old live beam parents[j] ...
  std::vector<int32_t> parents;
  /// ... and appends tokens[j]. Both are empty once the search has finished.
  std::vector<int32_t> tokens;
};

/// The state of one beam search. Each step, every live beam b (log-prob sum
/// S_b) proposes S_b + log_softmax(row b)[v] for every token v; candidates are
/// ranked by that sum (ties: lower beam, then lower token). Walking down the
/// ranking, a stop-token candidate within the first B ranks finishes a
/// hypothesis (later ones are dropped, as in Hugging Face), any other
/// candidate becomes a live beam, until B live beams are chosen. After maxNew
/// tokens every live beam finishes. The B best finished hypotheses are kept.
/// The search also ends as soon as no live beam can still beat the best
/// finished score (it bounds what any continuation could reach up to maxNew,
/// so best() is exactly what running on to maxNew would return).
class BeamSearch {
public:
  explicit BeamSearch(const BeamOptions &options);

  /// Rows step() expects next: 1 before the first step (the prompt), then up
  /// to B (fewer when the vocabulary has fewer usable tokens); 0 when done.
  int32_t liveBeams() const { return static_cast<int32_t>(live_.size()); }
  /// Tokens generated so far by live beam `beam`.
  const std::vector<int32_t> &liveTokens(int32_t beam) const { return live_.at(beam).tokens; }
  bool finished() const { return finished_; }

  /// Advances by one token. logits: [liveBeams(), vocab], row b for live beam
  /// b. Errors (invalid options, finished search, a row that is all NaN or
  /// -inf, a stop token >= vocab) return nullopt + *error and change nothing.
  std::optional<BeamStep> step(const float *logits, int64_t vocab, std::string *error = nullptr);

  /// The highest-scoring finished hypothesis (ties: the one finished first);
  /// nullopt until the search has finished.
  std::optional<BeamHypothesis> best() const;
  /// All kept finished hypotheses, best first.
  const std::vector<BeamHypothesis> &hypotheses() const { return done_; }

private:
  struct Live {
    std::vector<int32_t> tokens;
    double logProb = 0;
  };
  void addFinished(BeamHypothesis hypothesis);
  bool cannotImprove() const;

  BeamOptions options_;
  std::vector<Live> live_;
  std::vector<BeamHypothesis> done_;
  bool finished_ = false;
  std::vector<double> logProbs_;
};

} // namespace tmr
