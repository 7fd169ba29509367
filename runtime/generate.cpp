//===- generate.cpp - Token generation after a prompt ---------------------===//

#include "runtime/generate.h"

#include "runtime/beam_search.h"

#include <memory>

namespace tmr {

namespace {

bool sampleLoop(Session &session, const std::vector<float> &lastLogits,
                const GenerationOptions &options, std::vector<int32_t> *generated,
                std::string *error, AlignedVector<float> *generatedLogits) {
  const int64_t vocab = session.model().output_width;
  Sampler sampler(options.sampling);
  AlignedVector<float> logits(lastLogits.begin(), lastLogits.end());
  for (int64_t step = 0; step < options.maxNew; ++step) {
    std::optional<int32_t> next = sampler.next(logits.data(), vocab, error);
    if (!next)
      return false;
    generated->push_back(*next);
    bool last = next == options.stop || step + 1 == options.maxNew;
    if (last && !generatedLogits)
      break;
    if (!session.run({*next}, {}, &logits, error))
      return false;
    if (generatedLogits)
      generatedLogits->insert(generatedLogits->end(), logits.begin(), logits.end());
    if (last)
      break;
  }
  return true;
}

/// The rows of `tokens` decoded one step at a time after the prompt, from a
/// copy of the prompt session's caches (which beam search leaves untouched).
bool replaySteps(const Session &prompt, const std::vector<int32_t> &tokens,
                 AlignedVector<float> *rows, std::string *error) {
  Session replay(prompt.model(), prompt.weights(), prompt.prepared(), prompt.threads());
  replay.copyStateFrom(prompt);
  AlignedVector<float> row;
  for (int32_t token : tokens) {
    if (!replay.run({token}, {}, &row, error))
      return false;
    rows->insert(rows->end(), row.begin(), row.end());
  }
  return true;
}

bool beamLoop(Session &session, const std::vector<float> &lastLogits,
              const GenerationOptions &options, std::vector<int32_t> *generated,
              std::string *error, AlignedVector<float> *generatedLogits) {
  const tmr_model_desc &desc = session.model();
  const int64_t vocab = desc.output_width;
  BeamOptions beamOptions;
  beamOptions.beams = options.beams;
  beamOptions.maxNew = static_cast<int32_t>(options.maxNew);
  beamOptions.lengthPenalty = options.lengthPenalty;
  beamOptions.stopToken = options.stop;
  BeamSearch search(beamOptions);

  // One session per live beam; a step's new beam j continues beam parents[j],
  // so it starts from a copy of that beam's caches.
  std::vector<std::unique_ptr<Session>> beams;
  beams.push_back(std::make_unique<Session>(desc, session.weights(), session.prepared(), session.threads()));
  beams[0]->copyStateFrom(session);
  std::vector<float> rows = lastLogits;
  AlignedVector<float> row;
  while (!search.finished()) {
    std::optional<BeamStep> step = search.step(rows.data(), vocab, error);
    if (!step)
      return false;
    if (step->tokens.empty())
      break;
    std::vector<std::unique_ptr<Session>> next;
    rows.clear();
    for (size_t j = 0; j < step->tokens.size(); ++j) {
      next.push_back(std::make_unique<Session>(desc, session.weights(), session.prepared(), session.threads()));
      next.back()->copyStateFrom(*beams[static_cast<size_t>(step->parents[j])]);
    }
    beams = std::move(next);
    if (search.finished())
      break;
    for (int32_t j = 0; j < search.liveBeams(); ++j) {
      const std::vector<int32_t> &tokens = search.liveTokens(j);
      if (!beams[static_cast<size_t>(j)]->run({tokens.back()}, {}, &row, error))
        return false;
      rows.insert(rows.end(), row.begin(), row.end());
    }
  }
  std::optional<BeamHypothesis> best = search.best();
  if (!best) {
    *error = "beam search ended without a hypothesis";
    return false;
  }
  *generated = best->tokens;
  // Beams are forked and dropped step by step; replaying the winner is
  // simpler than carrying every beam's rows, and costs steps only when asked.
  return !generatedLogits || replaySteps(session, best->tokens, generatedLogits, error);
}

} // namespace

bool generate(Session &session, const std::vector<float> &lastLogits,
              const GenerationOptions &options, std::vector<int32_t> *generated,
              std::string *error, AlignedVector<float> *generatedLogits) {
  if (options.maxNew <= 0)
    return true;
  if (options.beams > 1)
    return beamLoop(session, lastLogits, options, generated, error, generatedLogits);
  return sampleLoop(session, lastLogits, options, generated, error, generatedLogits);
}

} // namespace tmr
