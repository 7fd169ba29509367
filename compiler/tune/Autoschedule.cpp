//===- Autoschedule.cpp - Seeds from Halide's autoschedulers --------------===//

#include "compiler/tune/Autoschedule.h"

#include "compiler/Error.h"
#include "compiler/halide/Lowering.h"
#include "compiler/tune/Measure.h"

#include <algorithm>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>
#include <map>
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
  // The three plugins print differently (Func handles declared up front or
  // not, blocks or not, spaces or not), but each schedules a Func by one
  // chained statement `NAME[.update(0)] .directive(...) ... ;`.
  std::string flat;
  for (char c : source)
    flat += c == '\n' ? ' ' : c;
  // Leading braces: Mullapudi2016 wraps each Func's directives in a block.
  std::regex head(R"(^[\s{}]*(\w+)\s*(\.update\(\d+\))?\s*\.)");
  std::regex split(R"(\.split\(\s*([\w$]+)\s*,\s*([\w$]+)\s*,\s*([\w$]+)\s*,\s*(\d+))");
  std::regex vectorize(R"(\.vectorize\(\s*([\w$]+)\s*(?:,\s*(\d+))?)");
  std::regex fuse(R"(\.fuse\(\s*([\w$]+)\s*,\s*([\w$]+)\s*,\s*([\w$]+))");
  Schedule s = base;
  std::map<std::string, std::vector<int>> factors; // per output dimension
  std::map<std::string, int> innerFactor;
  int vector = 0, reductionBlock = 0;
  bool parallel = false;
  size_t begin = 0;
  while (begin < flat.size()) {
    size_t semicolon = flat.find(';', begin);
    std::string statement = flat.substr(begin, semicolon == std::string::npos
                                                   ? std::string::npos
                                                   : semicolon - begin);
    begin = semicolon == std::string::npos ? flat.size() : semicolon + 1;
    std::smatch m;
    if (!std::regex_search(statement, m, head))
      continue;
    const bool isOutput = m[1] == outputName, isUpdate = m[2].matched;
    // Which output dimension each variable comes from: n (features) and
    // t (tokens) at first, then through every split.
    std::map<std::string, std::string> dim = {{"n", "n"}, {"t", "t"}};
    for (auto it = std::sregex_iterator(statement.begin(), statement.end(), split);
         it != std::sregex_iterator(); ++it) {
      std::string var = (*it)[1];
      int factor = std::stoi((*it)[4]);
      if (var[0] == 'r' && isUpdate && !reductionBlock)
        reductionBlock = factor; // a split of the reduction: its K block
      if (!isOutput)
        continue;
      innerFactor[(*it)[3]] = factor;
      auto d = dim.find(var);
      if (d == dim.end())
        continue;
      factors[d->second].push_back(factor);
      dim[(*it)[2]] = dim[(*it)[3]] = d->second;
    }
    if (!isOutput || isUpdate)
      continue;
    for (auto it = std::sregex_iterator(statement.begin(), statement.end(), fuse);
         it != std::sregex_iterator(); ++it)
      innerFactor.erase((*it)[3]);
    for (auto it = std::sregex_iterator(statement.begin(), statement.end(), vectorize);
         it != std::sregex_iterator(); ++it) {
      int width = (*it)[2].matched ? std::stoi((*it)[2]) : innerFactor[(*it)[1]];
      if (width > 1 && !vector)
        vector = width;
    }
    parallel = parallel || statement.find(".parallel(") != std::string::npos;
  }
  if (vector > 1)
    s.vectorWidth = std::min(target.vectorWidth, floorPow2(vector));
  s.parallel = parallel || base.parallel;
  if (kernel.kind == KernelKind::linear) {
    const int vw = s.vectorWidth;
    // Register tile: the innermost token tile; feature tile: the smallest
    // split of the features wider than one vector (else one vector).
    if (!factors["t"].empty())
      s.tileRows = std::clamp(*std::min_element(factors["t"].begin(), factors["t"].end()), 1, 14);
    int cols = 0;
    for (int f : factors["n"])
      if (f > vw && (!cols || f < cols))
        cols = f;
    s.tileCols = std::clamp(cols ? cols / vw * vw : vw, vw, 6 * vw);
    s.kBlock = reductionBlock > 1 && reductionBlock < kernel.inWidth ? reductionBlock : 0;
  }
  return s;
}

std::vector<AutoschedulerSeed> autoschedulerSeeds(const KernelDesc &kernel,
                                                  const TargetInfo &target,
                                                  const std::string &dir, int threads,
                                                  double timeout) {
  std::vector<AutoschedulerSeed> seeds;
  // Only the GEMM lowering can leave its Funcs unscheduled (the
  // autoschedulers refuse scheduled ones), and GEMMs are most of the time.
  const bool linear = kernel.kind == KernelKind::linear;
  if (!linear)
    return seeds;
  Schedule base = defaultSchedule(kernel, target);
  Schedule bare = base;
  bare.algorithmOnly = true;
  bare.kBlock = 0; // the unblocked algorithm: the schedulers choose their own blocking
  for (const Plugin &plugin : kPlugins) {
    AutoschedulerSeed seed;
    seed.scheduler = plugin.name;
    std::string out = dir + "/" + plugin.name + ".schedule";
    std::string library = std::string(TMC_HALIDE_PLUGIN_DIR) + "/" + plugin.library;
    std::string outputName;
    llvm::Error ran = runInChild(
        [&]() -> llvm::Error {
          // The plugins narrate their search on stderr; the tuner's
          // progress is there. (This is the child: its stderr only.)
          if (int null = open("/dev/null", O_WRONLY); null >= 0)
            dup2(null, 2);
          try {
            Halide::load_plugin(library);
            halide::LoweredKernel lowered = halide::lowerPackedLinear(kernel, bare);
            Halide::Pipeline pipeline(lowered.output);
            Halide::AutoSchedulerResults results = pipeline.auto_schedule(
                plugin.name, Halide::Target(target.halideTarget),
                Halide::MachineParams(threads, 32 << 20, 40));
            std::ofstream(out) << lowered.output.name() << "\n" << results.schedule_source;
            return llvm::Error::success();
          } catch (const std::exception &e) {
            return makeError(e.what());
          }
        },
        timeout, out + ".error");
    if (ran) {
      seed.error = llvm::toString(std::move(ran));
      if (seed.error.size() > 300)
        seed.error = seed.error.substr(0, 300) + "...";
    } else {
      std::string text = readText(out);
      size_t newline = text.find('\n');
      outputName = text.substr(0, newline);
      seed.source = newline == std::string::npos ? "" : text.substr(newline + 1);
      seed.schedule = seedFromSource(kernel, target, outputName, seed.source, base);
      seed.ok = true;
    }
    seeds.push_back(seed);
  }
  return seeds;
}

} // namespace tmc::tune
