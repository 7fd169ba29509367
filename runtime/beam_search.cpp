//===- beam_search.cpp - Length-normalized beam search state --------------===//
//
// Each step needs only the best B + 1 candidates of each beam: at most one of
// them is the stop token, so B + 1 always holds the B non-stop continuations
// the beam could contribute. That keeps a step at O(beams * vocab), a running
// top list per beam instead of a sort over beams * vocab candidates.
//
//===----------------------------------------------------------------------===//
#include "runtime/beam_search.h"

#include "runtime/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tmr {
namespace {

/// Sets *error and yields the empty result of a failed step.
std::nullopt_t failStep(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return std::nullopt;
}

struct Candidate {
  double score; ///< the beam's log-prob sum plus the token's log-prob
  int32_t beam;
  int32_t token;
};

/// The ranking of candidates: score descending, then beam, then token.
bool better(const Candidate &a, const Candidate &b) {
  if (a.score != b.score)
    return a.score > b.score;
  return a.beam != b.beam ? a.beam < b.beam : a.token < b.token;
}

} // namespace

std::string validate(const BeamOptions &options) {
  if (options.beams < 1)
    return "--beam must be >= 1, got " + std::to_string(options.beams);
  if (options.maxNew < 1)
    return "--max-new must be >= 1 for beam search, got " + std::to_string(options.maxNew);
  if (!std::isfinite(options.lengthPenalty)) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%g", options.lengthPenalty);
    return std::string("the length penalty must be a finite number, got ") + buffer;
  }
  if (options.stopToken && *options.stopToken < 0)
    return "--stop must be a token id >= 0, got " + std::to_string(*options.stopToken);
  return "";
}

BeamSearch::BeamSearch(const BeamOptions &options) : options_(options), live_(1) {}

void BeamSearch::addFinished(BeamHypothesis hypothesis) {
  hypothesis.score = hypothesis.logProb /
                     std::pow(double(hypothesis.tokens.size()), double(options_.lengthPenalty));
  // After every hypothesis scoring at least as well: earlier ones win ties.
  auto at = std::upper_bound(done_.begin(), done_.end(), hypothesis.score,
                             [](double score, const BeamHypothesis &h) { return score > h.score; });
  done_.insert(at, std::move(hypothesis));
  if (done_.size() > static_cast<size_t>(options_.beams))
    done_.pop_back();
}

bool BeamSearch::cannotImprove() const {
  if (done_.empty())
    return false;
  double bestScore = done_.front().score;
  double penalty = options_.lengthPenalty;
  for (const Live &beam : live_) {
    // Log-probs are <= 0, so a continuation's sum S' <= S. Its score S'/L'^p
    // over lengths L' in (L, maxNew] is largest at L' = maxNew for p > 0 and
    // at L' = L + 1 for p < 0.
    double length = penalty > 0 ? options_.maxNew : double(beam.tokens.size() + 1);
    double bound = beam.logProb / std::pow(length, penalty);
    if (bound > bestScore)
      return false;
  }
  return true;
}

std::optional<BeamStep> BeamSearch::step(const float *logits, int64_t vocab, std::string *error) {
  if (std::string problem = validate(options_); !problem.empty())
    return failStep(error, problem);
  if (finished_)
    return failStep(error, "the beam search has already finished");
  if (!logits)
    return failStep(error, "no logits given");
  if (vocab < 1 || vocab > std::numeric_limits<int32_t>::max())
    return failStep(error,
                    "vocabulary size " + std::to_string(vocab) + " is outside [1, 2^31 - 1]");
  if (options_.stopToken && *options_.stopToken >= vocab)
    return failStep(error, "--stop " + std::to_string(*options_.stopToken) +
                               " is not a token id of this vocabulary (" + std::to_string(vocab) +
                               " ids)");

  const size_t beams = options_.beams;
  const size_t perBeam = std::min<size_t>(vocab, beams + 1);
  std::vector<Candidate> candidates, row;
  for (size_t b = 0; b < live_.size(); ++b) {
    std::string rowError;
    if (!logSoftmax(logits + b * vocab, vocab, &logProbs_, &rowError))
      return failStep(error, "beam " + std::to_string(b) + ": " + rowError);
    // The beam's best perBeam candidates, kept sorted; most tokens lose
    // against the current last one and cost a single comparison.
    row.clear();
    for (int64_t v = 0; v < vocab; ++v) {
      if (logProbs_[v] == -std::numeric_limits<double>::infinity())
        continue;
      Candidate c{live_[b].logProb + logProbs_[v], int32_t(b), int32_t(v)};
      if (row.size() == perBeam && !better(c, row.back()))
        continue;
      row.insert(std::upper_bound(row.begin(), row.end(), c, better), c);
      if (row.size() > perBeam)
        row.pop_back();
    }
    candidates.insert(candidates.end(), row.begin(), row.end());
  }
  std::sort(candidates.begin(), candidates.end(), better);

  std::vector<Live> next;
  BeamStep result;
  for (size_t rank = 0; rank < candidates.size() && next.size() < beams; ++rank) {
    const Candidate &c = candidates[rank];
    std::vector<int32_t> tokens = live_[c.beam].tokens;
    tokens.push_back(c.token);
    if (options_.stopToken && c.token == *options_.stopToken) {
      if (rank < beams)
        addFinished({std::move(tokens), c.score, 0});
      continue;
    }
    next.push_back({std::move(tokens), c.score});
    result.parents.push_back(c.beam);
    result.tokens.push_back(c.token);
  }
  live_ = std::move(next);

  bool atLimit = !live_.empty() && live_.front().tokens.size() >= size_t(options_.maxNew);
  if (atLimit)
    for (Live &beam : live_)
      addFinished({std::move(beam.tokens), beam.logProb, 0});
  if (atLimit || live_.empty() || cannotImprove()) {
    finished_ = true;
    live_.clear();
    result = BeamStep{};
  }
  return result;
}

std::optional<BeamHypothesis> BeamSearch::best() const {
  if (!finished_ || done_.empty())
    return std::nullopt;
  return done_.front();
}

} // namespace tmr
