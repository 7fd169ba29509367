//===- Tuner.cpp - `tmc tune`: measured schedule search -------------------===//
//
// 1. Profile: every distinct kernel is measured with its default schedule
//    (this also saves the reference output candidates are checked against);
//    times its number of calls, that is its share of the model's time; and
//    its limit (the FMA peak's time for its flops, the memory system's for
//    its bytes: MemoryLimit.h), and so how far the default is from it.
// 2. Search: kernels in order of share, each given the remaining budget times
//    its weight (share times headroom below the limit) over what remains.
//    Seeds (the default's neighbours, the database entry on --resume) first,
//    then an evolutionary loop: a parent from the best few, mutated or
//    crossed with another. Every improvement is written to the database at
//    once (anytime: an interrupt loses nothing).
// 3. Confirm: the best and the default run again, interleaved, three times;
//    the best is kept only if it is still at least 2% faster. So a tuned
//    kernel is never slower than its default, within the noise measured.
//
//===----------------------------------------------------------------------===//

#include "compiler/tune/Tuner.h"

#include "compiler/Error.h"
#include "compiler/KernelPlan.h"
#include "compiler/Pipeline.h"
#include "compiler/Target.h"
#include "compiler/TuningDb.h"
#include "compiler/halide/ObjectCache.h"
#include "compiler/tune/Autoschedule.h"
#include "compiler/tune/FmaPeak.h"
#include "compiler/tune/Format.h"
#include "compiler/tune/Measure.h"
#include "compiler/tune/MemoryLimit.h"
#include "compiler/tune/Search.h"
#include "frontend/Frontend.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <unistd.h>

namespace tmc::tune {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string clock(double seconds) {
  int s = static_cast<int>(std::max(0.0, seconds) + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%d:%02d", s / 60, s % 60);
  return text;
}

void onSignal(int) { requestStop(); }

/// One status line, redrawn in place on a terminal; plain lines otherwise.
class Progress {
public:
  Progress() : tty(isatty(2)) {}
  ~Progress() { done(); }
  void update(const std::string &line) {
    if (tty) {
      std::string shown = line.size() > 150 ? line.substr(0, 150) : line;
      llvm::errs() << "\r\033[K" << shown;
      llvm::errs().flush();
      open = true;
    } else {
      llvm::errs() << line << "\n";
    }
  }
  void note(const std::string &line) {
    done();
    llvm::errs() << line << "\n";
  }
  void done() {
    if (open)
      llvm::errs() << "\n";
    open = false;
  }

private:
  bool tty, open = false;
};

/// Prefill is what is tuned, but a decoding step (T = 1) must not pay for
/// it: a schedule 10% (plus timer noise) slower there than the default is
/// out, unless the step runs the same variant kernel as the default's
/// (SearchSpace::decodesAsDefault: then the difference is noise).
bool slowerDecoding(const SearchSpace &space, const Schedule &schedule, double decodeMs,
                    double defaultDecodeMs) {
  return decodeMs > 1.1 * defaultDecodeMs + 5e-4 && !space.decodesAsDefault(schedule);
}

struct Job {
  const KernelDesc *kernel = nullptr;
  std::string name;
  int calls = 0;
  std::unique_ptr<KernelBench> bench;
  std::unique_ptr<SearchSpace> space;
  std::string dir;
  bool profiled = false;
  double defaultMs = 0;
  double defaultDecodeMs = 0; ///< the default at T = 1
  double share = 0;
  /// The default's distance from the kernel's limit, 1 - limit / time (the
  /// limit: the FMA peak's time for a GEMM's flops or the memory system's
  /// for its bytes, whichever is longer): what a search can still win.
  double headroom = 1;
  const TuningEntry *prior = nullptr; ///< a usable entry of the database
  TuningEntry entry;
};

class Tuner {
public:
  Tuner(const TuneOptions &options) : options(options), start(Clock::now()) {}
  ~Tuner() {
    if (!workDir.empty())
      llvm::sys::fs::remove_directories(workDir);
  }
  int run();

private:
  llvm::Error setUp();
  void profile();
  void search(Job &job, double seconds);
  void confirm(Job &job, const Schedule &best, double bestMs);
  void remeasureFmaPeak();
  bool save();
  std::string status(const Job &job, size_t index) const;
  double left() const { return options.budgetSeconds - since(start); }
  bool over() const { return left() <= 0 || stopRequested(); }

  const TuneOptions &options;
  Clock::time_point start;
  TargetInfo target;
  KernelPlan plan;
  std::string modelName;
  int tokens = 128;
  double fmaPeak = 0; ///< GFLOP/s at options.threads; 0: not measured
  TuningDb db;
  std::string workDir, runtimeObject;
  std::vector<Job> jobs;
  Progress progress;
};

std::string Tuner::status(const Job &job, size_t index) const {
  double budget = options.budgetSeconds, used = std::min(budget, since(start));
  int width = 20, filled = static_cast<int>(width * used / budget);
  std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
  double speedup = job.entry.bestMs > 0 ? job.defaultMs / job.entry.bestMs : 1;
  return "tune " + bar + " " + clock(used) + "/" + clock(budget) + " ETA " + clock(budget - used) +
         "  [" + std::to_string(index + 1) + "/" + std::to_string(jobs.size()) + "] " + job.name +
         "  trials " + std::to_string(job.entry.trials) + "  best " + fixed(speedup, 2) + "x (" +
         ms(job.entry.bestMs) + " ms)";
}

/// Any measurement of a peak only bounds it from below, and a busy moment on
/// a shared machine bounds it low: measure again after the search and keep
/// the higher figure in every entry.
void Tuner::remeasureFmaPeak() {
  if (fmaPeak <= 0 || stopRequested())
    return;
  llvm::Expected<double> again = measureFmaPeak(target, options.threads);
  if (!again) {
    llvm::consumeError(again.takeError());
    return;
  }
  if (*again <= fmaPeak)
    return;
  progress.note("tmc: FMA peak measured again: " + fixed(*again, 1) + " GFLOP/s (was " +
                fixed(fmaPeak, 1) + "), the GEMM limit of the report");
  fmaPeak = *again;
  for (Job &job : jobs)
    if (job.entry.trials > 0)
      job.entry.fmaPeakGflops = fmaPeak;
}

bool Tuner::save() {
  // Entries of other models, targets or versions stay as they were; this
  // model's entries for this target and version are replaced, and so are
  // entries under a tuned kernel's former, unreadable name.
  TuningDb out;
  std::set<std::string> mine;
  for (const Job &job : jobs)
    if (job.entry.trials > 0) {
      mine.insert(job.name);
      mine.insert(job.kernel->legacyName());
    }
  for (const TuningEntry &e : db.entries)
    if (!(mine.count(e.kernel) && e.target == target.halideTarget && e.tmcVersion == tmcVersion()))
      out.entries.push_back(e);
  for (const Job &job : jobs)
    if (job.entry.trials > 0)
      out.entries.push_back(job.entry);
  if (llvm::Error error = saveTuningDb(options.db, out)) {
    progress.note(errorLine(llvm::toString(std::move(error))));
    return false;
  }
  return true;
}

llvm::Error Tuner::setUp() {
  PipelineOptions pipeline;
  pipeline.input = options.spec;
  pipeline.overrides = options.overrides;
  pipeline.target = options.target;
  llvm::Expected<std::unique_ptr<PlannedModel>> model = runPipeline(pipeline);
  if (!model)
    return model.takeError();
  plan = std::move((*model)->plan);
  modelName = plan.model.name;
  tokens = options.tokens;
  if (plan.model.maxSeq > 0)
    tokens = static_cast<int>(std::min<int64_t>(tokens, plan.model.maxSeq));
  // Candidates run here: a multi-ISA target is tuned for the variant this
  // CPU runs (the executable picks the same one at start-up); a cross
  // target cannot be measured on this machine.
  // The pipeline's target (options.target is never empty: the command's
  // default is host): with bf16, int8 or q4 linears, `host` carries the AVX512-BF16/VNNI
  // variant first.
  TargetInfo resolved = *(*model)->target;
  if (!resolved.crossTriple.empty())
    return makeError("--target " + resolved.name +
                     ": a cross-compiled target cannot be tuned here (its candidates would not "
                     "run on this machine); run tmc tune on a " + resolved.name + " machine");
  if (resolved.gpu)
    return makeError("--target " + resolved.name +
                     ": GPU schedules cannot be tuned yet (candidates are timed on this "
                     "machine's CPU); tune a CPU target, or compile for " + resolved.name +
                     " with its default schedules");
  target = runnableVariant(resolved);
  llvm::Expected<TuningDb> stored = loadTuningDb(options.db, /*allowMissing=*/true);
  if (!stored)
    return stored.takeError();
  db = std::move(*stored);
  // Say now, not after the budget, if the database cannot be written.
  if (!save())
    return makeDiagnosedError(); // save() said why

  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tmc-tune", dir))
    return makeError("cannot create a temporary directory: " + ec.message());
  workDir = std::string(dir);
  runtimeObject = workDir + "/halide_runtime.o";
  // A kernel cache that cannot be written warns once here, not per candidate.
  std::string kernelCache = options.kernelCache;
  if (!kernelCache.empty() && !halide::ObjectCache(kernelCache).writable())
    kernelCache.clear();
  if (llvm::Error error = compileRuntimeObject(target, runtimeObject, kernelCache))
    return withContext(std::move(error), "compiling the Halide runtime");

  std::map<size_t, int> calls;
  for (const KernelCall &call : plan.calls)
    if (call.kind == KernelCall::Kind::Kernel)
      ++calls[call.kernel];
  jobs.resize(plan.kernels.size());
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    Job &job = jobs[i];
    job.kernel = &plan.kernels[i];
    job.name = job.kernel->name();
    job.calls = calls[i];
    job.dir = workDir + "/k" + std::to_string(i);
    llvm::sys::fs::create_directories(job.dir);
    job.space = std::make_unique<SearchSpace>(*job.kernel, target);
    job.bench = std::make_unique<KernelBench>(*job.kernel, target, job.dir, runtimeObject,
                                              options.threads, tokens);
    job.bench->setKernelCache(kernelCache);
    for (const TuningEntry &e : db.entries) {
      if (e.kernel == job.kernel->legacyName() && e.kernel != job.name) {
        progress.note(warningLine(options.db + ":" + std::to_string(e.line) +
                                  ": entry for kernel '" + e.kernel +
                                  "': stale: an older tmc's name for kernel '" + job.name +
                                  "': this run's entry replaces it"));
        continue;
      }
      if (e.kernel != job.name)
        continue;
      std::string why;
      if (!entryUsable(e, *job.kernel, target, &why)) {
        progress.note(warningLine(options.db + ":" + std::to_string(e.line) +
                                  ": entry for kernel '" + e.kernel + "': " + why + ": ignored"));
        continue;
      }
      if (!job.prior || e.bestMs < job.prior->bestMs)
        job.prior = &e;
    }
    if (job.prior && !options.resume)
      progress.note("tmc: note: " + options.db + ": replacing the entry for kernel '" + job.name +
                    "' (--resume continues from it)");
  }
  // The GEMM limit the report compares with, measured now, on this machine,
  // at the tuning thread count (before any candidate runs).
  llvm::Expected<double> peak = measureFmaPeak(target, options.threads);
  fmaPeak = peak ? *peak : 0;
  progress.note(peak ? "tmc: FMA peak (" + std::string(target.isaName()) + ", " +
                           std::to_string(options.threads) + " threads): " + fixed(fmaPeak, 1) +
                           " GFLOP/s, the GEMM limit of the report"
                     : "tmc: note: no FMA peak measured: " + llvm::toString(peak.takeError()));
  progress.note("tmc: tuning " + std::to_string(jobs.size()) + " distinct kernels of " +
                modelName + " (" + std::to_string(plan.calls.size()) + " calls) for " +
                target.halideTarget + ", T = " + std::to_string(tokens) + ", " +
                std::to_string(options.threads) + " threads, budget " +
                clock(options.budgetSeconds) + "; database " + options.db);
  return llvm::Error::success();
}

void Tuner::profile() {
  for (size_t i = 0; i < jobs.size() && !over(); ++i) {
    Job &job = jobs[i];
    if (llvm::Error error = job.bench->prepare()) {
      progress.note(warningLine(job.name + ": " + llvm::toString(std::move(error)) + ": not tuned"));
      continue;
    }
    Schedule base = job.space->defaults();
    Measurement m = job.bench->measure(base, /*reference=*/true,
                                       std::max(60.0, options.timeoutSeconds),
                                       job.dir + "/default");
    if (!m.ok) {
      if (!stopRequested())
        progress.note(warningLine(job.name + ": the default schedule failed to run (" + m.error +
                                  "): not tuned"));
      continue;
    }
    job.profiled = true;
    job.defaultMs = m.scoreMs;
    job.defaultDecodeMs = m.decodeMs;
    TuningEntry &e = job.entry;
    e.kernel = job.name;
    e.signature = kernelSignatureText(*job.kernel);
    e.target = target.halideTarget;
    e.tmcVersion = tmcVersion();
    e.model = modelName;
    e.schedule = e.defaultSchedule = base.str();
    e.tokens = tokens;
    e.threads = options.threads;
    e.fmaPeakGflops = fmaPeak;
    e.calls = job.calls;
    e.defaultMs = e.bestMs = m.scoreMs;
    e.defaultDecodeMs = e.bestDecodeMs = m.decodeMs;
    if (llvm::Expected<double> memory =
            measureMemoryMs(target, kernelTraffic(*job.kernel, tokens), options.threads))
      e.memoryMs = *memory;
    else
      llvm::consumeError(memory.takeError()); // the report then shows no memory limit
    double limitMs = std::max(e.memoryMs, fmaPeakMs(*job.kernel, tokens, fmaPeak));
    if (limitMs > 0)
      job.headroom = std::clamp(1 - limitMs / m.scoreMs, 0.0, 1.0);
    if (options.resume && job.prior) {
      e.trials = job.prior->trials;
      e.history = job.prior->history;
    }
    e.trials += 1;
    e.history.emplace_back(e.trials, m.scoreMs);
    progress.update("tune profile [" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) +
                    "] " + job.name + ": " + ms(m.scoreMs) + " ms x " +
                    std::to_string(job.calls) + " calls (noise " + fixed(100 * m.noise, 0) +
                    "%)");
  }
  progress.done();
  double total = 0;
  for (const Job &job : jobs)
    if (job.profiled)
      total += job.defaultMs * job.calls;
  for (Job &job : jobs)
    job.share = job.profiled && total > 0 ? job.defaultMs * job.calls / total : 0;
}

void Tuner::search(Job &job, double seconds) {
  size_t index = &job - jobs.data();
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  std::mt19937 rng(options.seed + static_cast<unsigned>(index) * 7919u);
  const SearchSpace &space = *job.space;
  Schedule best = space.defaults();
  double bestMs = job.defaultMs;
  std::string bestOrigin = "default";
  std::vector<std::pair<double, Schedule>> population = {{bestMs, best}};
  std::set<std::string> seen = {space.canonical(best).str()};
  // Seeds, in order: the database's best (--resume), the autoschedulers'
  // tile sizes, the default's neighbours; each with where it came from.
  std::vector<std::pair<Schedule, std::string>> queue;
  if (options.resume && job.prior) {
    if (llvm::Expected<Schedule> prior = parseSchedule(job.prior->schedule, space.defaults()))
      queue.emplace_back(space.canonical(*prior),
                         job.prior->origin.empty() ? "database" : job.prior->origin);
    else
      llvm::consumeError(prior.takeError());
  }
  // Halide's autoschedulers on the same pipeline, when the kernel's budget
  // allows (each runs in a child process under a timeout).
  double autoTimeout = std::clamp(seconds * 0.1, 4.0, 30.0);
  if (seconds >= 10 && !stopRequested()) {
    for (const AutoschedulerSeed &seed :
         autoschedulerSeeds(*job.kernel, target, job.dir, options.threads, autoTimeout)) {
      if (!seed.ok) {
        if (!stopRequested())
          progress.note("tune: " + job.name + ": " + seed.scheduler + ": no seed (" + seed.error +
                        ")");
        continue;
      }
      Schedule s = space.canonical(seed.schedule);
      std::string why;
      if (!space.valid(s, &why)) {
        progress.note("tune: " + job.name + ": " + seed.scheduler + ": its tile sizes map to " +
                      s.str() + ", not valid here (" + why + ")");
        continue;
      }
      progress.note("tune: " + job.name + ": " + seed.scheduler + " seed: " + s.str() +
                    " (tile sizes read from its schedule)");
      queue.emplace_back(s, seed.scheduler + " seed");
    }
  }
  for (const Schedule &s : space.seeds())
    queue.emplace_back(s, s.str() == space.defaults().str() ? "default" : "neighbour of the default");
  std::reverse(queue.begin(), queue.end()); // popped from the back
  double timeout = std::max(options.timeoutSeconds, 50 * job.defaultMs / 1e3 + 5);
  int duplicates = 0;
  progress.update(status(job, index));
  int trialsThisRun = 0;
  while (Clock::now() < deadline && !over() &&
         (options.maxTrials == 0 || trialsThisRun < options.maxTrials)) {
    Schedule candidate;
    std::string origin = "evolution";
    if (!queue.empty()) {
      candidate = queue.back().first;
      origin = queue.back().second;
      queue.pop_back();
    } else {
      std::sort(population.begin(), population.end(),
                [](const auto &a, const auto &b) { return a.first < b.first; });
      size_t top = std::min<size_t>(population.size(), 4);
      std::uniform_int_distribution<size_t> parent(0, top - 1);
      const Schedule &a = population[parent(rng)].second;
      if (top > 1 && std::bernoulli_distribution(0.25)(rng))
        candidate = space.mutate(space.crossover(a, population[parent(rng)].second, rng), rng);
      else
        candidate = space.mutate(a, rng);
    }
    candidate = space.canonical(candidate);
    if (!seen.insert(candidate.str()).second) {
      if (++duplicates > 200)
        break; // the space is exhausted
      continue;
    }
    duplicates = 0;
    std::string why;
    if (!space.valid(candidate, &why))
      continue;
    Measurement m = job.bench->measure(candidate, false, timeout, job.dir + "/last");
    if (stopRequested())
      break;
    job.entry.trials += 1;
    trialsThisRun += 1;
    if (m.ok && slowerDecoding(space, candidate, m.decodeMs, job.defaultDecodeMs)) {
      m.ok = false;
      m.error = "slower at T = 1 (decode): " + ms(m.decodeMs) + " ms vs the default's " +
                ms(job.defaultDecodeMs) + " ms";
    }
    if (!m.ok) {
      progress.note("tune: " + job.name + ": candidate " + candidate.str() + " rejected: " +
                    m.error);
    } else {
      population.emplace_back(m.scoreMs, candidate);
      if (m.scoreMs < bestMs) {
        bestMs = m.scoreMs;
        job.entry.bestDecodeMs = m.decodeMs;
        best = candidate;
        bestOrigin = origin;
        std::rename((job.dir + "/last").c_str(), (job.dir + "/best").c_str());
        job.entry.bestMs = bestMs;
        job.entry.history.emplace_back(job.entry.trials, bestMs);
        // Anytime: an improvement of 3% or more is saved now, unconfirmed;
        // smaller ones wait for the confirmation below.
        if (bestMs < 0.97 * job.defaultMs) {
          job.entry.schedule = best.str();
          job.entry.origin = bestOrigin;
          job.entry.confirmed = false;
          save();
        }
      }
    }
    progress.update(status(job, index));
  }
  confirm(job, best, bestMs);
  job.entry.origin = job.entry.schedule == job.entry.defaultSchedule ? "default" : bestOrigin;
  save();
}

void Tuner::confirm(Job &job, const Schedule &best, double bestMs) {
  TuningEntry &e = job.entry;
  if (best.str() == job.space->defaults().str() || stopRequested()) {
    // Stopped before confirming: what was saved stays (a gain of >= 3%).
    e.confirmed = !stopRequested();
    return;
  }
  // Interleaved re-runs of the two kept executables: the gain must survive
  // the machine's noise of the moment, not just one lucky measurement.
  std::vector<double> base, tuned, baseDecode, tunedDecode;
  double timeout = std::max(options.timeoutSeconds, 50 * job.defaultMs / 1e3 + 5);
  for (int round = 0; round < 3 && !stopRequested(); ++round) {
    Measurement d = job.bench->rerun(job.dir + "/default", timeout);
    Measurement t = job.bench->rerun(job.dir + "/best", timeout);
    if (d.ok && t.ok) {
      base.push_back(d.scoreMs);
      tuned.push_back(t.scoreMs);
      baseDecode.push_back(d.decodeMs);
      tunedDecode.push_back(t.decodeMs);
    }
  }
  if (base.empty()) {
    e.schedule = e.defaultSchedule;
    e.bestMs = e.defaultMs;
    e.confirmed = false;
    return;
  }
  std::sort(base.begin(), base.end());
  std::sort(tuned.begin(), tuned.end());
  std::sort(baseDecode.begin(), baseDecode.end());
  std::sort(tunedDecode.begin(), tunedDecode.end());
  double d = base[base.size() / 2], t = tuned[tuned.size() / 2];
  double dd = baseDecode[base.size() / 2], td = tunedDecode[tuned.size() / 2];
  e.defaultMs = d;
  e.defaultDecodeMs = dd;
  e.confirmed = true;
  if (t < 0.98 * d && !slowerDecoding(*job.space, best, td, dd)) {
    e.schedule = best.str();
    e.bestMs = t;
    e.bestDecodeMs = td;
  } else if (t < 0.98 * d) {
    progress.note("tune: " + job.name + ": the best candidate is slower at T = 1 in re-runs (" +
                  ms(td) + " vs " + ms(dd) + " ms): the default is kept");
    e.schedule = e.defaultSchedule;
    e.bestMs = d;
    e.bestDecodeMs = dd;
  } else {
    progress.note("tune: " + job.name + ": the best candidate (" + ms(bestMs) +
                  " ms once) did not stay 2% ahead of the default in re-runs (" + ms(t) +
                  " vs " + ms(d) + " ms): the default is kept");
    e.schedule = e.defaultSchedule;
    e.bestMs = d;
    e.bestDecodeMs = dd;
  }
}

int Tuner::run() {
  if (llvm::Error error = setUp())
    return reportError(std::move(error));
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  profile();
  std::vector<Job *> order;
  for (Job &job : jobs)
    if (job.profiled)
      order.push_back(&job);
  std::stable_sort(order.begin(), order.end(),
                   [](const Job *a, const Job *b) { return a->share > b->share; });
  // A kernel's budget goes by what tuning it can win: its share of the
  // model's time times its headroom below its limit (at least a tenth of
  // the share: a limit is measured, and a measurement can be high). A head
  // GEMM at 60% of the FMA peak gets more than a norm at its memory limit.
  auto weight = [](const Job *job) { return job->share * std::max(0.1, job->headroom); };
  double weightLeft = 0;
  for (const Job *job : order)
    weightLeft += weight(job);
  for (Job *job : order) {
    if (over())
      break;
    double seconds = weightLeft > 0 ? left() * weight(job) / weightLeft : left();
    weightLeft -= weight(job);
    search(*job, seconds);
  }
  progress.done();
  remeasureFmaPeak();
  save();
  double before = 0, after = 0;
  int tuned = 0;
  for (const Job &job : jobs) {
    if (!job.profiled)
      continue;
    before += job.entry.defaultMs * job.calls;
    after += job.entry.bestMs * job.calls;
    tuned += job.entry.schedule != job.entry.defaultSchedule;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  llvm::errs() << "tmc: " << (stopRequested() ? "stopped" : "done") << " after "
               << clock(since(start)) << ": " << tuned << " of " << jobs.size()
               << " kernels got a faster schedule; kernel time per forward pass (T = " << tokens
               << ") " << ms(before) << " ms -> " << ms(after) << " ms ("
               << fixed(after > 0 ? before / after : 1, 2) << "x); saved in " << options.db
               << "\n";
  return 0;
}

} // namespace

int runTune(const TuneOptions &options) { return Tuner(options).run(); }

} // namespace tmc::tune
