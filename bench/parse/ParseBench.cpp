//===- ParseBench.cpp - How long parsing and checking a spec takes --------===//
//
// `parse_bench [--runs N] FILE.tm...` loads each spec N times (read from
// memory, so the disk is not measured) through the lexer, parser and Sema,
// exactly as `tmc check` does before printing, and reports the median, the
// fastest and the slowest run. The target is a median under 10 ms per spec.
//
//===----------------------------------------------------------------------===//

#include "frontend/Frontend.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace llvm;

namespace {

/// Milliseconds taken by each of `runs` loads of `source`.
std::vector<double> timeLoads(StringRef source, StringRef name, unsigned runs, bool &ok) {
  std::vector<double> times;
  times.reserve(runs);
  for (unsigned run = 0; run < runs; ++run) {
    auto start = std::chrono::steady_clock::now();
    tmc::LoadedSpec loaded = tmc::loadSpecFromString(source, name, nulls());
    auto end = std::chrono::steady_clock::now();
    ok = loaded.ok();
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  return times;
}

} // namespace

int main(int argc, char **argv) {
  unsigned runs = 200;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
    } else if (arg.starts_with("-")) {
      errs() << "usage: parse_bench [--runs N] FILE.tm...\n";
      return 1;
    } else {
      files.push_back(arg.str());
    }
  }
  if (files.empty()) {
    errs() << "usage: parse_bench [--runs N] FILE.tm...\n";
    return 1;
  }
  int status = 0;
  outs() << left_justify("spec", 32) << right_justify("median ms", 11)
         << right_justify("min ms", 11) << right_justify("max ms", 11) << "  (" << runs
         << " runs, parse + check)\n";
  for (const std::string &file : files) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(file);
    if (!buffer) {
      errs() << file << ": cannot read: " << buffer.getError().message() << "\n";
      status = 1;
      continue;
    }
    bool ok = false;
    std::vector<double> times = timeLoads((*buffer)->getBuffer(), file, runs, ok);
    double median = times[times.size() / 2];
    outs() << left_justify(sys::path::filename(file), 32)
           << format(" %10.3f %10.3f %10.3f", median, times.front(), times.back());
    if (!ok) {
      outs() << "  (spec has errors)";
      status = 1;
    }
    if (median >= 10.0) {
      outs() << "  (over the 10 ms target)";
      status = 1;
    }
    outs() << "\n";
  }
  return status;
}
