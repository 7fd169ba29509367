//===- Autoschedule.cpp - Seeds from Halide's autoschedulers --------------===//

#include "compiler/tune/Autoschedule.h"

#include "compiler/halide/Lowering.h"
#include "compiler/tune/Measure.h"

#include <fstream>
#include <regex>
#include <sstream>

#ifndef TMC_HALIDE_PLUGIN_DIR
#define TMC_HALIDE_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/halide14"
#endif

namespace tmc::tune {

namespace {

struct Plugin {
  const char *name, *library;
};
const Plugin kPlugins[] = {
    {"Mullapudi2016", "libautoschedule_mullapudi2016.so"},
    {"Adams2019", "libautoschedule_adams2019.so"},
    {"Li2018", "libautoschedule_li2018.so"},
};

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

int floorPow2(int v) {
  int p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

} // namespace

Schedule seedFromSource(const KernelDesc &kernel, const TargetInfo &target,
                        const std::string &outputName, const std::string &source,
                        const Schedule &base) {
  // The directives of the output Func: from the line naming it up to the
  // next Func's. Halide prints `Func NAME = pipeline.get_func(i);` and then
  // NAME's chained directives.
  std::string block;
  {
    std::istringstream in(source);
    std::string line;
    bool inside = false;
    std::regex funcLine(R"(^\s*Func\s+(\w+)\s*=)");
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, funcLine))
        inside = m[1] == outputName;
      if (inside)
        block += line + "\n";
    }
  }
  Schedule s = base;
  // split(VAR, OUTER, INNER, FACTOR): the first split of each of the
  // output's dimensions is its tile; a vectorized inner variable gives the
  // vector width.
  std::regex split(R"(\.split\((\w+),\s*(\w+),\s*(\w+),\s*(\d+))");
  std::regex vectorize(R"(\.vectorize\((\w+)(?:,\s*(\d+))?)");
  std::map<std::string, int> firstSplit, innerFactor;
  std::vector<std::pair<std::string, int>> splits;
  for (auto it = std::sregex_iterator(block.begin(), block.end(), split);
       it != std::sregex_iterator(); ++it) {
    std::string var = (*it)[1];
    int factor = std::stoi((*it)[4]);
    // A variable split again is a split of its parts: key by the root name.
    std::string root = var.substr(0, var.find('_'));
    firstSplit.try_emplace(root, factor);
    innerFactor[(*it)[3]] = factor;
    splits.emplace_back(var, factor);
  }
  for (auto it = std::sregex_iterator(block.begin(), block.end(), vectorize);
       it != std::sregex_iterator(); ++it) {
    int width = (*it)[2].matched ? std::stoi((*it)[2]) : innerFactor[(*it)[1]];
    if (width > 1) {
      s.vectorWidth = std::min(2 * target.vectorWidth, floorPow2(width));
      break;
    }
  }
  s.parallel = block.find(".parallel(") != std::string::npos || base.parallel;
  if (kernel.kind == KernelKind::Linear) {
    // The output is out(n, t): n the features, t the tokens.
    int vw = std::min(s.vectorWidth, target.vectorWidth);
    s.vectorWidth = vw;
    if (auto it = firstSplit.find("n"); it != firstSplit.end())
      s.tileCols = std::clamp(it->second / vw * vw, vw, 6 * vw);
    if (auto it = firstSplit.find("t"); it != firstSplit.end())
      s.tileRows = std::clamp(it->second, 1, 14);
    // A split of the reduction (in any Func) is its K block.
    std::regex rsplit(R"(\.split\((r\w*),\s*\w+,\s*\w+,\s*(\d+))");
    std::smatch m;
    if (std::regex_search(source, m, rsplit)) {
      int kb = std::stoi(m[2]);
      s.kBlock = kb > 1 && kb < kernel.inWidth ? kb : 0;
    }
  } else if (kernel.kind == KernelKind::Attention) {
    // out(d, h, i): the queries are i.
    if (auto it = firstSplit.find("i"); it != firstSplit.end())
      s.queryTile = std::clamp(it->second, 1, 128);
  }
  return s;
}

std::vector<AutoschedulerSeed> autoschedulerSeeds(const KernelDesc &kernel,
                                                  const TargetInfo &target,
                                                  const std::string &dir, int threads,
                                                  double timeout) {
  std::vector<AutoschedulerSeed> seeds;
  const bool linear = kernel.kind == KernelKind::Linear;
  if (!linear && kernel.kind != KernelKind::Attention)
    return seeds;
  Schedule base = defaultSchedule(kernel, target);
  for (const Plugin &plugin : kPlugins) {
    AutoschedulerSeed seed;
    seed.scheduler = plugin.name;
    std::string out = dir + "/" + plugin.name + ".schedule";
    std::string library = std::string(TMC_HALIDE_PLUGIN_DIR) + "/" + plugin.library;
    std::string outputName;
    bool ran = runInChild(
        [&](std::string *error) {
          try {
            Halide::load_plugin(library);
            halide::LoweredKernel lowered =
                linear ? halide::lowerPackedLinear(kernel, base) : halide::lowerKernel(kernel, base);
            Halide::Pipeline pipeline(lowered.output);
            Halide::AutoSchedulerResults results = pipeline.auto_schedule(
                plugin.name, Halide::Target(target.halideTarget),
                Halide::MachineParams(threads, 32 << 20, 40));
            std::ofstream(out) << lowered.output.name() << "\n" << results.schedule_source;
            return true;
          } catch (const std::exception &e) {
            *error = e.what();
          }
          return false;
        },
        timeout, out + ".error", &seed.error);
    if (ran) {
      std::string text = readText(out);
      size_t newline = text.find('\n');
      outputName = text.substr(0, newline);
      seed.source = newline == std::string::npos ? "" : text.substr(newline + 1);
      seed.schedule = seedFromSource(kernel, target, outputName, seed.source, base);
      seed.ok = true;
    } else if (seed.error.size() > 300) {
      seed.error = seed.error.substr(0, 300) + "...";
    }
    seeds.push_back(seed);
  }
  return seeds;
}

} // namespace tmc::tune
