//===- Report.cpp - `tmc tune --report`: the table and the chart ----------===//
//
// Reads the database, keeps the entries usable for the model's kernels on
// the target (reporting the others, as compile does), prints a table per
// kernel and writes an SVG of best-so-far speedup against trials.
//
//===----------------------------------------------------------------------===//

#include "compiler/Error.h"
#include "compiler/KernelPlan.h"
#include "compiler/Pipeline.h"
#include "compiler/Target.h"
#include "compiler/Toolchain.h"
#include "compiler/TuningDb.h"
#include "compiler/tune/FmaPeak.h"
#include "compiler/tune/Format.h"
#include "compiler/tune/MemoryLimit.h"
#include "compiler/tune/Tuner.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace tmc::tune {

namespace {

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

/// Best-so-far speedup (default / best) against trials, one line per kernel.
std::string chart(const std::vector<const TuningEntry *> &entries, const std::string &title) {
  const int W = 760, H = 420, left = 60, right = 260, top = 40, bottom = 50;
  int maxTrials = 1;
  double maxSpeedup = 1.1;
  for (const TuningEntry *e : entries) {
    maxTrials = std::max(maxTrials, e->trials);
    // The search's own baseline: its first point, the default measured
    // then (the entry's default_ms is the later, confirming re-run).
    double base = e->history.empty() ? e->defaultMs : e->history.front().second;
    for (const auto &[trial, ms] : e->history)
      if (ms > 0)
        maxSpeedup = std::max(maxSpeedup, base / ms);
    if (e->bestMs > 0)
      maxSpeedup = std::max(maxSpeedup, e->defaultMs / e->bestMs);
  }
  const double lo = std::min(0.9, 1.0), hi = maxSpeedup * 1.05;
  const int plotW = W - left - right, plotH = H - top - bottom;
  auto x = [&](double trial) { return left + plotW * (trial - 1) / std::max(1, maxTrials - 1); };
  auto y = [&](double s) { return top + plotH * (1 - (s - lo) / (hi - lo)); };
  static const char *colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\">" << escape(title) << "</text>\n"
     << "<line x1=\"" << left << "\" y1=\"" << top + plotH << "\" x2=\"" << left + plotW
     << "\" y2=\"" << top + plotH << "\" stroke=\"black\"/>\n"
     << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\""
     << top + plotH << "\" stroke=\"black\"/>\n"
     << "<text x=\"" << left << "\" y=\"" << H - 28 << "\" font-size=\"10\">lines: best so far "
        "during the search; legend: the speedup kept after the confirming re-runs</text>\n"
     << "<line x1=\"" << left << "\" y1=\"" << y(1) << "\" x2=\"" << left + plotW << "\" y2=\""
     << y(1) << "\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n"
     << "<text x=\"" << left + plotW / 2 - 20 << "\" y=\"" << H - 12 << "\">trials</text>\n"
     << "<text x=\"14\" y=\"" << top + plotH / 2 << "\" transform=\"rotate(-90 14 "
     << top + plotH / 2 << ")\">best-so-far speedup vs default</text>\n";
  for (int i = 0; i <= 4; ++i) {
    double s = lo + (hi - lo) * i / 4;
    os << "<text x=\"" << left - 40 << "\" y=\"" << y(s) + 4 << "\">" << fixed(s, 2)
       << "x</text>\n";
    int trial = 1 + (maxTrials - 1) * i / 4;
    os << "<text x=\"" << x(trial) - 6 << "\" y=\"" << top + plotH + 18 << "\">" << trial
       << "</text>\n";
  }
  for (size_t k = 0; k < entries.size(); ++k) {
    const TuningEntry &e = *entries[k];
    const char *color = colors[k % 10];
    std::ostringstream points;
    double current = 1;
    int last = 1;
    double base = e.history.empty() ? e.defaultMs : e.history.front().second;
    for (const auto &[trial, ms] : e.history) {
      double s = ms > 0 ? base / ms : 1;
      points << fixed(x(trial), 1) << "," << fixed(y(current), 1) << " ";
      current = std::max(current, s);
      points << fixed(x(trial), 1) << "," << fixed(y(current), 1) << " ";
      last = trial;
    }
    (void)last;
    points << fixed(x(std::max(1, e.trials)), 1) << "," << fixed(y(current), 1);
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\""
       << points.str() << "\"/>\n"
       << "<text x=\"" << left + plotW + 10 << "\" y=\"" << top + 14 * k + 10 << "\" fill=\""
       << color << "\">" << escape(e.kernel) << " " << fixed(e.bestMs > 0 ? e.defaultMs / e.bestMs : 1, 2)
       << "x kept</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

/// The `key=value` pairs of `schedule` that differ from `base`.
std::string difference(const std::string &schedule, const std::string &base) {
  std::istringstream a(schedule), b(base);
  std::map<std::string, std::string> old;
  std::string item, out;
  while (b >> item)
    old[item.substr(0, item.find('='))] = item;
  while (a >> item)
    if (old[item.substr(0, item.find('='))] != item)
      out += (out.empty() ? "" : " ") + item;
  return out.empty() ? "(default)" : out;
}

/// An entry against its two ceilings, the FMA peak (GEMMs) and the memory
/// system's time for its traffic, both measured by the tuning run.
struct Roofline {
  double flopMs = 0;   ///< the flops at the FMA peak (0: not a GEMM or no peak)
  double memoryMs = 0; ///< the traffic at the measured memory rate (0: not measured)
  double bytes = 0;    ///< the traffic of one call
  double limitMs() const { return std::max(flopMs, memoryMs); }
  bool fmaBound() const { return flopMs >= memoryMs; }
};

Roofline roofline(const TuningEntry &e, const KernelDesc &k) {
  Roofline r;
  r.flopMs = fmaPeakMs(k, e.tokens, e.fmaPeakGflops);
  r.memoryMs = e.memoryMs;
  r.bytes = static_cast<double>(kernelTraffic(k, e.tokens).total());
  return r;
}

/// "62% FMA": the best time's distance from the nearer ceiling; "-" if none.
std::string ofLimit(const TuningEntry &e, const Roofline &r) {
  if (r.limitMs() <= 0 || e.bestMs <= 0)
    return "-";
  return fixed(100 * r.limitMs() / e.bestMs, 0) + "% " + (r.fmaBound() ? "FMA" : "mem");
}

} // namespace

int runReport(const TuneOptions &options) {
  TargetInfo resolved = llvm::cantFail(resolveTarget(options.target)); // checked by the command
  // What tmc tune tunes (and so what is reported): the concrete variant of a
  // multi-ISA target this machine runs.
  std::optional<TargetInfo> target = runnableVariant(resolved);
  PipelineOptions pipeline;
  pipeline.input = options.spec;
  pipeline.overrides = options.overrides;
  pipeline.target = options.target;
  llvm::Expected<std::unique_ptr<PlannedModel>> model = runPipeline(pipeline);
  if (!model)
    return reportError(model.takeError());
  const KernelPlan &plan = (*model)->plan;
  llvm::Expected<TuningDb> loaded = loadTuningDb(options.db);
  if (!loaded)
    return reportError(loaded.takeError());
  const TuningDb &db = *loaded;
  std::vector<std::string> warnings, found, atDefault;
  selectSchedules(db, plan, *target, &warnings, &found, &atDefault);
  found.insert(found.end(), atDefault.begin(), atDefault.end());
  for (const std::string &w : warnings)
    reportWarning(options.db + ": " + w);
  std::map<std::string, const KernelDesc *> kernels;
  std::map<std::string, int> calls;
  for (const KernelDesc &k : plan.kernels)
    kernels[k.name()] = &k;
  for (const KernelCall &call : plan.calls)
    if (call.kind == KernelCall::Kind::Kernel)
      ++calls[plan.kernels[call.kernel].name()];
  // The entry selectSchedules chose per kernel: usable, lowest best time.
  std::vector<const TuningEntry *> chosen;
  for (const std::string &name : found) {
    const TuningEntry *best = nullptr;
    for (const TuningEntry &e : db.entries) {
      std::string why;
      if (e.kernel == name && entryUsable(e, *kernels[name], *target, &why) &&
          (!best || e.bestMs < best->bestMs))
        best = &e;
    }
    chosen.push_back(best);
  }
  std::stable_sort(chosen.begin(), chosen.end(), [&](const TuningEntry *a, const TuningEntry *b) {
    return a->defaultMs * calls[a->kernel] > b->defaultMs * calls[b->kernel];
  });
  size_t nameWidth = 8;
  for (const TuningEntry *e : chosen)
    nameWidth = std::max(nameWidth, e->kernel.size() + 2);
  auto &os = llvm::outs();
  os << "tuning report: " << options.db << ", target " << target->halideTarget << ", tmc "
     << tmcVersion() << "\n";
  os << llvm::left_justify("kernel", nameWidth) << llvm::right_justify("calls", 6)
     << llvm::right_justify("default ms", 12) << llvm::right_justify("best ms", 10)
     << llvm::right_justify("speedup", 9) << llvm::right_justify("trials", 8)
     << llvm::right_justify("GFLOP/s", 9) << llvm::right_justify("GB/s", 8)
     << llvm::right_justify("of limit", 10) << "  schedule\n";
  double before = 0, after = 0, gemmMs[2] = {0, 0}, gemmFlops = 0, fmaPeak = 0;
  int peakThreads = 0;
  for (const TuningEntry *e : chosen) {
    const KernelDesc &k = *kernels[e->kernel];
    int n = calls[e->kernel];
    before += e->defaultMs * n;
    after += e->bestMs * n;
    std::string gflops = "-";
    if (k.kind == KernelKind::linear && e->bestMs > 0)
      gflops = fixed(linearFlops(k, e->tokens) / (e->bestMs * 1e6), 1);
    Roofline r = roofline(*e, k);
    std::string gbps = e->bestMs > 0 ? fixed(r.bytes / (e->bestMs * 1e6), 1) : "-";
    std::string schedule = difference(e->schedule, e->defaultSchedule);
    if (k.kind == KernelKind::linear) {
      gemmMs[0] += e->defaultMs * n;
      gemmMs[1] += e->bestMs * n;
      gemmFlops += linearFlops(k, e->tokens) * n;
      // Runs may have measured different peaks: the highest is the limit.
      if (e->fmaPeakGflops > fmaPeak) {
        fmaPeak = e->fmaPeakGflops;
        peakThreads = e->threads;
      }
    }
    os << llvm::left_justify(e->kernel, nameWidth) << llvm::right_justify(std::to_string(n), 6)
       << llvm::right_justify(ms(e->defaultMs), 12) << llvm::right_justify(ms(e->bestMs), 10)
       << llvm::right_justify(fixed(e->bestMs > 0 ? e->defaultMs / e->bestMs : 1, 2) + "x", 9)
       << llvm::right_justify(std::to_string(e->trials), 8) << llvm::right_justify(gflops, 9)
       << llvm::right_justify(gbps, 8) << llvm::right_justify(ofLimit(*e, r), 10) << "  "
       << schedule << (e->origin.empty() || e->origin == "default" ? "" : " [" + e->origin + "]")
       << (e->confirmed || e->schedule == e->defaultSchedule ? "" : " (unconfirmed)") << "\n";
  }
  os << "kernels without an entry: " << plan.kernels.size() - chosen.size() << " of "
     << plan.kernels.size() << "\n";
  os << "kernel time per forward pass: " << ms(before) << " ms default, " << ms(after)
     << " ms tuned (" << fixed(after > 0 ? before / after : 1, 2) << "x)\n";
  if (gemmMs[0] > 0) {
    double rate[2] = {gemmFlops / (gemmMs[0] * 1e6), gemmFlops / (gemmMs[1] * 1e6)};
    os << "GEMM (linear) kernels: " << fixed(100 * gemmMs[0] / before, 0)
       << "% of the kernel time, " << fixed(rate[0], 1) << " GFLOP/s default, "
       << fixed(rate[1], 1) << " GFLOP/s tuned\n";
    if (fmaPeak > 0) {
      // The bar: tuning pays, or the defaults leave under 10% on the table.
      os << "GEMM limit: " << fixed(fmaPeak, 1) << " GFLOP/s (FMA peak at " << peakThreads
         << " threads, measured by the tuning run); default " << fixed(100 * rate[0] / fmaPeak, 1)
         << "%, tuned " << fixed(100 * rate[1] / fmaPeak, 1) << "% of it: ";
      // No GEMM outruns the FMA units: a limit below the kernels' own rate
      // was measured while something else had the cores.
      if (std::max(rate[0], rate[1]) > fmaPeak)
        os << "the limit was measured low (the machine was busy); re-tune on a quiet machine to "
              "judge the defaults against it\n";
      else
        os << "the defaults are " << (rate[0] >= 0.9 * fmaPeak ? "within" : "not within")
           << " 10% of the limit\n";
    } else {
      os << "GEMM limit: not measured (a database of an older tmc, or a target this machine "
            "cannot run)\n";
    }
  }
  // The bar per GEMM that matters: one taking 10% or more of the
  // tuned kernel time ends within 10% of the FMA peak, or is shown by its
  // measured bytes per second to be memory-bound.
  int heavy = 0, atLimit = 0;
  for (const TuningEntry *e : chosen) {
    const KernelDesc &k = *kernels[e->kernel];
    double share = after > 0 ? e->bestMs * calls[e->kernel] / after : 0;
    if (k.kind != KernelKind::linear || share < 0.1 || e->bestMs <= 0)
      continue;
    if (heavy++ == 0)
      os << "GEMMs taking 10% or more of the kernel time, against their limits (FMA peak and "
            "memory, measured by the tuning run):\n";
    Roofline r = roofline(*e, k);
    os << "  " << e->kernel << ": " << fixed(100 * share, 0) << "% of the time, " << ms(e->bestMs)
       << " ms; ";
    if (r.flopMs > 0)
      os << fixed(100 * r.flopMs / e->bestMs, 0) << "% of the FMA peak ("
         << fixed(linearFlops(k, e->tokens) / (e->bestMs * 1e6), 1) << " of "
         << fixed(e->fmaPeakGflops, 1) << " GFLOP/s); ";
    else
      os << "FMA peak not measured; ";
    os << fixed(r.bytes / 1e6, 2) << " MB at " << fixed(r.bytes / (e->bestMs * 1e6), 1)
       << " GB/s, ";
    if (r.memoryMs > 0)
      os << fixed(100 * r.memoryMs / e->bestMs, 0) << "% of the memory limit for that traffic ("
         << fixed(r.bytes / (r.memoryMs * 1e6), 1) << " GB/s): ";
    else
      os << "memory limit not measured: ";
    bool fmaClose = r.flopMs >= 0.9 * e->bestMs, memoryClose = r.memoryMs >= 0.9 * e->bestMs;
    atLimit += fmaClose || memoryClose;
    os << (fmaClose ? "within 10% of the FMA peak"
           : memoryClose
               ? "memory-bound"
               : "neither (at " + fixed(100 * r.limitMs() / e->bestMs, 0) +
                     "% of its nearer limit, " + (r.fmaBound() ? "the FMA peak)" : "memory)"))
       << "\n";
  }
  if (heavy > 0)
    os << heavy - atLimit << " of " << heavy << " such GEMMs "
       << (heavy - atLimit == 1 ? "is" : "are") << " more than 10% from their limit\n";
  std::string svg = options.chartPath();
  if (llvm::Error error = writeFileAtomically(
          svg, chart(chosen, "tmc tune: " + llvm::sys::path::filename(options.spec).str() + " (" +
                                 std::to_string(chosen.size()) + " kernels)")))
    return reportError(std::move(error));
  os << "chart: " << svg << "\n";
  return 0;
}

} // namespace tmc::tune
