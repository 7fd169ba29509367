//===- serve_engine.cpp - Continuous batching over a model's slots --------===//

#include "runtime/serve_engine.h"

#include <algorithm>
#include <exception>
#include <limits>

namespace tmr::serve {

void Job::wait(size_t seen, std::vector<int32_t> *more, bool *isDone,
               std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait_for(lock, timeout, [&] { return done || produced.size() > seen; });
  more->assign(produced.begin() + static_cast<std::ptrdiff_t>(std::min(seen, produced.size())),
               produced.end());
  *isDone = done;
}

std::string Job::finishReason() const {
  std::lock_guard<std::mutex> lock(mutex);
  return reason;
}

std::string Job::error() const {
  std::lock_guard<std::mutex> lock(mutex);
  return message;
}

std::vector<int32_t> Job::generated() const {
  std::lock_guard<std::mutex> lock(mutex);
  return produced;
}

std::vector<float> Job::output() const {
  std::lock_guard<std::mutex> lock(mutex);
  return rows;
}

std::vector<TokenLogprobs> Job::logprobsOf(size_t from, size_t to) const {
  std::lock_guard<std::mutex> lock(mutex);
  to = std::min(to, producedLogprobs.size());
  from = std::min(from, to);
  return std::vector<TokenLogprobs>(producedLogprobs.begin() + static_cast<std::ptrdiff_t>(from),
                                    producedLogprobs.begin() + static_cast<std::ptrdiff_t>(to));
}

std::vector<TokenLogprobs> Job::promptLogprobs() const {
  std::lock_guard<std::mutex> lock(mutex);
  return promptLogprobs_;
}

void Job::setPromptLogprobs(std::vector<TokenLogprobs> values) {
  std::lock_guard<std::mutex> lock(mutex);
  promptLogprobs_ = std::move(values);
}

void Job::push(int32_t token, std::optional<TokenLogprobs> logprobs) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    produced.push_back(token);
    if (logprobs)
      producedLogprobs.push_back(std::move(*logprobs));
  }
  changed.notify_all();
}

namespace {

/// The log-softmax of `logits` at `token`, and at the `top` likeliest ids
/// (ties to the lower id): sampling.h's logSoftmax, in double, with its
/// rules for NaN and infinities (the sampler has already refused a row of
/// nothing but NaN and -inf).
TokenLogprobs tokenLogprobs(const float *logits, int64_t vocab, int32_t token, int32_t top) {
  std::vector<double> logp;
  std::string error;
  TokenLogprobs out;
  if (!logSoftmax(logits, vocab, &logp, &error)) {
    out.logprob = -std::numeric_limits<float>::infinity();
    return out;
  }
  out.logprob = static_cast<float>(logp[static_cast<size_t>(token)]);
  std::vector<int32_t> best; // likeliest first; at most `top`
  for (int32_t id = 0; id < vocab && top > 0; ++id) {
    const double value = logp[static_cast<size_t>(id)];
    if (static_cast<int32_t>(best.size()) == top && value <= logp[static_cast<size_t>(best.back())])
      continue;
    auto at = std::find_if(best.begin(), best.end(),
                           [&](int32_t other) { return value > logp[static_cast<size_t>(other)]; });
    best.insert(at, id);
    if (static_cast<int32_t>(best.size()) > top)
      best.pop_back();
  }
  for (int32_t id : best)
    out.top.emplace_back(id, static_cast<float>(logp[static_cast<size_t>(id)]));
  return out;
}

/// The prompt's tokens 1.. of `job`, each scored by the logits of the row
/// before it (`logits`: one row of `width` per prompt token).
std::vector<TokenLogprobs> promptLogprobs(const float *logits, int64_t width, int64_t vocab,
                                          const Job &job) {
  std::vector<TokenLogprobs> values;
  for (size_t i = 1; i < job.tokens.size(); ++i)
    values.push_back(tokenLogprobs(logits + static_cast<int64_t>(i - 1) * width, vocab,
                                   job.tokens[i], job.logprobs));
  return values;
}

} // namespace

void Job::finish(std::string why, std::string text, std::vector<float> values) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (done) // a job ends once (a failed step may reach one it finished)
      return;
    reason = std::move(why);
    message = std::move(text);
    rows = std::move(values);
    done = true;
  }
  changed.notify_all();
}

Engine::Engine(const tmr_model_desc &desc, const std::vector<const void *> &weights,
               const void *prepared, int32_t slots, int32_t threads, int64_t maxQueued)
    : desc(desc), batch(desc, weights, prepared, slots, threads), maxQueued(maxQueued) {
  counters.slots = batch.slots();
  counters.stepsBySize.assign(static_cast<size_t>(batch.slots()) + 1, 0);
  worker = std::thread([this] { loop(); });
}

Engine::~Engine() { drain(); }

bool Engine::submit(std::shared_ptr<Job> job, std::string *why) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (draining) {
      *why = "the server is shutting down";
      return false;
    }
    if (static_cast<int64_t>(queue.size()) >= maxQueued) {
      *why = "too many requests are waiting (" + std::to_string(maxQueued) +
             ", --max-queue); retry later";
      return false;
    }
    queue.push_back(std::move(job));
    counters.queued = static_cast<int64_t>(queue.size());
  }
  wake.notify_one();
  return true;
}

void Engine::drain() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    draining = true;
  }
  wake.notify_one();
  if (worker.joinable())
    worker.join();
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return counters;
}

void Engine::loop() {
  std::vector<Active> active;
  std::vector<int32_t> freeSlots;
  for (int32_t s = batch.slots() - 1; s >= 0; --s)
    freeSlots.push_back(s);
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return !queue.empty() || !active.empty() || draining; });
      if (draining && queue.empty() && active.empty())
        return;
    }
    try {
      admit(&active, &freeSlots);
      if (!active.empty())
        step(&active, &freeSlots);
    } catch (const std::exception &e) {
      // Out of memory outside the model's run (a job's tokens or rows): the
      // jobs of this step fail; the engine, and the server, go on.
      for (Active &a : active) {
        a.job->finish("error", std::string("the server failed: ") + e.what());
        if (std::find(freeSlots.begin(), freeSlots.end(), a.slot) == freeSlots.end())
          freeSlots.push_back(a.slot);
      }
      active.clear();
    }
  }
}

void Engine::admit(std::vector<Active> *active, std::vector<int32_t> *freeSlots) {
  std::lock_guard<std::mutex> lock(mutex);
  while (!freeSlots->empty() && !queue.empty()) {
    std::shared_ptr<Job> job = std::move(queue.front());
    queue.pop_front();
    if (job->isCancelled()) {
      job->finish("cancelled");
      ++counters.jobsCancelled;
      continue;
    }
    Active entry;
    entry.job = std::move(job);
    entry.slot = freeSlots->back();
    batch.reset(entry.slot);
    std::string error;
    if (desc.encoder_decoder && !batch.setSource(entry.slot, entry.job->source, entry.job->segments,
                                                 entry.job->length, &error)) {
      entry.job->finish("error", error);
      ++counters.jobsFailed;
      continue;
    }
    freeSlots->pop_back();
    if (entry.job->kind == Job::Kind::Generate)
      entry.sampler.emplace(entry.job->sampling);
    active->push_back(std::move(entry));
  }
  counters.queued = static_cast<int64_t>(queue.size());
  counters.active = static_cast<int64_t>(active->size());
}

void Engine::step(std::vector<Active> *active, std::vector<int32_t> *freeSlots) {
  // Jobs whose clients left give their slots back before the call.
  std::vector<Active> kept;
  int64_t cancelled = 0;
  for (Active &a : *active) {
    if (a.job->isCancelled()) {
      a.job->finish("cancelled");
      freeSlots->push_back(a.slot);
      ++cancelled;
    } else {
      kept.push_back(std::move(a));
    }
  }
  *active = std::move(kept);
  if (active->empty()) {
    std::lock_guard<std::mutex> lock(mutex);
    counters.jobsCancelled += cancelled;
    counters.active = 0;
    return;
  }
  const bool generating = active->front().job->kind == Job::Kind::Generate;
  std::vector<Batch::Input> inputs;
  int64_t promptTokens = 0;
  for (Active &a : *active) {
    Batch::Input in;
    in.slot = a.slot;
    if (!a.prefilled) {
      in.tokens = a.job->tokens.data();
      in.count = static_cast<int64_t>(a.job->tokens.size());
      if (!desc.encoder_decoder) { // else they label the source (admit())
        in.segments = a.job->segments.empty() ? nullptr : a.job->segments.data();
        in.length = a.job->length;
      }
      promptTokens += in.count;
    } else {
      in.tokens = &a.last;
      in.count = 1;
    }
    inputs.push_back(in);
  }
  // A prompt echoed with its logprobs needs the logits of every row: the
  // step then keeps all rows (a row's values do not depend on how many rows
  // a call keeps; the others' last rows are the same).
  bool allRows = false;
  for (const Active &a : *active)
    allRows = allRows || (!a.prefilled && a.job->echo && a.job->logprobs >= 0);
  const bool lastRowOnly = generating && !allRows;
  AlignedVector<float> output;
  std::string error;
  const bool ok = batch.run(inputs, lastRowOnly, &output, &error);
  int64_t done = 0, failed = 0, generated = 0;
  std::vector<Active> next;
  const int64_t width = desc.output_width;
  int64_t row = 0;
  for (size_t i = 0; i < active->size(); ++i) {
    Active &a = (*active)[i];
    const int64_t rows = batch.outputRows(inputs[i].count, lastRowOnly);
    const float *values = output.data() + row * width;
    row += rows;
    const bool prefill = !a.prefilled;
    a.prefilled = true;
    bool finished = true;
    if (ok && generating && prefill && a.job->echo && a.job->logprobs >= 0)
      a.job->setPromptLogprobs(promptLogprobs(values, width, desc.vocab, *a.job));
    if (!ok) {
      a.job->finish("error", error);
      ++failed;
    } else if (!generating) {
      a.job->finish("stop", "", std::vector<float>(values, values + rows * width));
      ++done;
    } else if (prefill && a.job->maxTokens == 0) {
      // An echo that generates nothing (a prompt scored, not continued).
      a.job->finish("length");
      ++done;
    } else {
      values += (rows - 1) * width; // the last row's logits choose the next token
      std::optional<int32_t> token = a.sampler->next(values, desc.vocab, &error);
      if (!token) {
        a.job->finish("error", error);
        ++failed;
      } else {
        if (a.job->logprobs >= 0)
          a.job->push(*token, tokenLogprobs(values, desc.vocab, *token, a.job->logprobs));
        else
          a.job->push(*token);
        ++generated;
        a.last = *token;
        const int64_t count = ++a.generated;
        const bool stop = std::find(a.job->stopTokens.begin(), a.job->stopTokens.end(), *token) !=
                          a.job->stopTokens.end();
        if (stop)
          a.job->finish("stop");
        else if (count >= a.job->maxTokens || batch.position(a.slot) >= desc.max_seq)
          a.job->finish("length");
        else
          finished = false;
        done += finished ? 1 : 0;
      }
    }
    if (finished)
      freeSlots->push_back(a.slot);
    else
      next.push_back(std::move(a));
  }
  std::lock_guard<std::mutex> lock(mutex);
  ++counters.steps;
  ++counters.stepsBySize[std::min(active->size(), counters.stepsBySize.size() - 1)];
  counters.jobsDone += done;
  counters.jobsFailed += failed;
  counters.jobsCancelled += cancelled;
  counters.promptTokens += promptTokens;
  counters.generatedTokens += generated;
  *active = std::move(next);
  counters.active = static_cast<int64_t>(active->size());
}

} // namespace tmr::serve
