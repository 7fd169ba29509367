//===- Measure.cpp - Timing one kernel schedule in its own process --------===//

#include "compiler/tune/Measure.h"

#include "compiler/Toolchain.h"
#include "compiler/halide/AOT.h"
#include "compiler/halide/Lowering.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace tmc::tune {

namespace {

std::atomic<bool> stopFlag{false};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// Waits for the child process group `pid`; kills the group past `timeout`
/// or on a stop request. Returns the wait status, or -1 when killed.
int waitChild(pid_t pid, double timeout, std::string *why) {
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return status;
    if (r < 0 && errno != EINTR) {
      *why = "lost the child process";
      return -1;
    }
    bool late = secondsSince(start) > timeout;
    if (late || stopFlag) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      *why = stopFlag ? "stopped" : "timed out after " + std::to_string(int(timeout)) + " s (killed)";
      return -1;
    }
    usleep(2000);
  }
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status))
    return std::string("crashed (") + strsignal(WTERMSIG(status)) + ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

} // namespace

bool runInChild(const std::function<bool(std::string *)> &fn, double timeout,
                const std::string &errorFile, std::string *error) {
  std::remove(errorFile.c_str()); // a message is this child's or none
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork failed: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    setpgid(0, 0);
    std::string message;
    bool ok = false;
    try {
      ok = fn(&message);
    } catch (const std::exception &e) {
      message = e.what();
    }
    if (!ok) {
      std::ofstream(errorFile) << message;
    }
    std::fflush(nullptr);
    _exit(ok ? 0 : 1);
  }
  setpgid(pid, pid);
  int status = waitChild(pid, timeout, error);
  if (status == -1)
    return false;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return true;
  std::string message = readText(errorFile);
  *error = message.empty() ? "the child process " + describeStatus(status) : message;
  return false;
}

namespace {

/// Runs `argv` with stdout and stderr into files, HL_NUM_THREADS set.
bool runProgram(const std::vector<std::string> &argv, const std::string &outFile,
                const std::string &errFile, int threads, double timeout, std::string *error) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork failed: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    setpgid(0, 0);
    int out = open(outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0)
      _exit(126);
    dup2(out, 1);
    dup2(err, 2);
    if (threads > 0)
      setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  int status = waitChild(pid, timeout, error);
  if (status == -1)
    return false;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return true;
  std::string tail = readText(errFile);
  if (tail.size() > 400)
    tail = "..." + tail.substr(tail.size() - 400);
  *error = "the candidate " + describeStatus(status) + (tail.empty() ? "" : ": " + tail);
  return false;
}

/// The value a scalar argument takes: the valid length (T) for attention,
/// pooling and sequence projections; the cache offset (0) otherwise.
bool scalarIsLength(const KernelDesc &kernel) {
  return kernel.kind == KernelKind::Attention || kernel.kind == KernelKind::Pool ||
         kernel.kind == KernelKind::SeqProject;
}

} // namespace

void requestStop() { stopFlag = true; }
bool stopRequested() { return stopFlag; }

KernelBench::KernelBench(const KernelDesc &kernel, const TargetInfo &target, std::string dir,
                         std::string runtimeObject, int threads, int tokens)
    : kernel(kernel), target(target), dir(std::move(dir)),
      runtimeObject(std::move(runtimeObject)), threads(threads), tokens(tokens) {}

bool KernelBench::hasDecodeKernel() const {
  // Whether a kernel has the variant depends on fields the search never
  // changes (decode_variant, gpu): the default schedule's answer holds for all.
  return !decodeKernelSuffix(kernel, defaultSchedule(kernel, target)).empty();
}

std::string KernelBench::harnessSource() const {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  const bool linear = kernel.kind == KernelKind::Linear;
  std::ostringstream os;
  os << "// Generated by tmc tune: times kernel " << kernel.name() << ".\n"
     << R"(#include "HalideRuntime.h"
// Buffers start where the executor's do: a plain vector's large block sits
// 16 bytes past a page boundary, and every vector load from it then splits
// two cache lines (5-10% slower GEMMs than the compiled model runs, on Zen 4).
#include "runtime/aligned.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int tmk_cand()";
  std::ostringstream params;
  for (size_t i = 0; i < sig.size(); ++i)
    params << (i ? ", " : "") << (sig[i].isScalar ? "int32_t" : "halide_buffer_t *");
  os << params.str() << ");\n";
  // A kernel with a decoding-step variant runs it at T = 1, as the executor does.
  const bool decodeVariant = hasDecodeKernel();
  if (decodeVariant)
    os << "extern \"C\" int tmk_cand_decode(" << params.str() << ");\n";
  if (linear)
    os << "extern \"C\" int tmk_cand_pack(halide_buffer_t *, halide_buffer_t *);\n";
  os << R"(
namespace {
struct Buf {
  tmr::AlignedVector<float> f;
  tmr::AlignedVector<int32_t> i;
  halide_buffer_t b{};
  halide_dimension_t d[4]{};
  Buf(std::vector<int64_t> ext, bool isInt, int32_t maxInt, uint32_t seed) {
    int64_t n = 1;
    for (int64_t e : ext) n *= e;
    uint32_t s = seed * 2654435761u + 12345u;
    auto next = [&] { s = s * 1664525u + 1013904223u; return s >> 8; };
    if (isInt) {
      i.resize(n);
      for (auto &v : i) v = static_cast<int32_t>(next() % static_cast<uint32_t>(maxInt));
      b.host = reinterpret_cast<uint8_t *>(i.data());
      b.type = halide_type_t(halide_type_int, 32);
    } else {
      f.resize(n);
      for (auto &v : f) v = static_cast<float>(next()) / 8388608.0f - 1.0f;
      b.host = reinterpret_cast<uint8_t *>(f.data());
      b.type = halide_type_t(halide_type_float, 32);
    }
    int32_t stride = 1;
    for (size_t k = 0; k < ext.size(); ++k) {
      d[k] = halide_dimension_t(0, static_cast<int32_t>(ext[k]), stride);
      stride *= static_cast<int32_t>(ext[k]);
    }
    b.dimensions = static_cast<int32_t>(ext.size());
    b.dim = d;
  }
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Runs the kernel at T tokens; times it when `times` is given.
int run(int64_t T, std::vector<float> *output, std::vector<double> *times, double minSeconds) {
)";
  // Buffers in signature order; a linear kernel's weight is packed first.
  for (size_t i = 0; i < sig.size(); ++i) {
    const BufferShape &shape = sig[i];
    if (shape.isScalar)
      continue;
    std::vector<std::string> ext;
    for (size_t d = 0; d < shape.extents.size(); ++d) {
      int64_t e = shape.extents[d];
      if (e >= 0)
        ext.push_back(std::to_string(e));
      else if (kernel.kind == KernelKind::SeqProject && i + 1 == sig.size())
        ext.push_back(std::to_string(kernel.tableRows)); // a call binds its rows to k
      else
        ext.push_back("T");
    }
    int32_t maxInt = kernel.kind == KernelKind::Embed ? kernel.tableRows : kernel.positionRows;
    os << "  Buf a" << i << "({";
    for (size_t d = 0; d < ext.size(); ++d)
      os << (d ? ", " : "") << ext[d];
    os << "}, " << (shape.isInt32 ? "true" : "false") << ", " << std::max<int32_t>(1, maxInt)
       << ", " << i + 1 << ");\n";
  }
  std::string call = decodeVariant ? "(T == 1 ? tmk_cand_decode : tmk_cand)(" : "tmk_cand(";
  if (linear) {
    // TMC_P and TMC_PANELS (the packed layout) are defined per panel shape.
    os << "  Buf packed({TMC_P, " << kernel.inWidth << ", TMC_PANELS}, false, 1, 99);\n"
       << "  if (int e = tmk_cand_pack(&a1.b, &packed.b)) { std::fprintf(stderr, \"pack "
          "kernel failed: %d\\n\", e); return e; }\n";
  }
  for (size_t i = 0; i < sig.size(); ++i) {
    call += i ? ", " : "";
    if (sig[i].isScalar)
      call += scalarIsLength(kernel) ? "static_cast<int32_t>(T)" : "0";
    else if (linear && i == 1)
      call += "&packed.b";
    else
      call += "&a" + std::to_string(i) + ".b";
  }
  call += ")";
  size_t out = sig.size() - 1;
  os << "  auto once = [&] { return " << call << "; };\n"
     << R"(  if (int e = once()) { std::fprintf(stderr, "kernel failed: %d\n", e); return e; }
  if (times) {
    for (int w = 0; w < 2; ++w) once();
    double start = now();
    while ((times->size() < 7 || now() - start < minSeconds) && times->size() < 2000) {
      double t0 = now();
      once();
      times->push_back((now() - t0) * 1e3);
    }
  }
)";
  os << "  output->assign(a" << out << ".f.begin(), a" << out << ".f.end());\n  return 0;\n}\n} // namespace\n\n";
  os << "int main(int argc, char **argv) {\n"
     << "  const int64_t T = " << tokens << ";\n"
     << R"(  if (argc != 3) { std::fprintf(stderr, "usage: harness ref|check FILE\n"); return 2; }
  std::vector<float> big, small;
  std::vector<double> times;
  std::vector<double> decode;
  if (run(T, &big, &times, 0.25)) return 3;
  if (run(1, &small, &decode, 0.05)) return 3;
  big.insert(big.end(), small.begin(), small.end());
  for (float v : big)
    if (!std::isfinite(v)) { std::fprintf(stderr, "non-finite output\n"); return 4; }
  double maxError = 0;
  if (std::strcmp(argv[1], "ref") == 0) {
    FILE *f = std::fopen(argv[2], "wb");
    if (!f || std::fwrite(big.data(), sizeof(float), big.size(), f) != big.size()) return 5;
    std::fclose(f);
  } else {
    std::vector<float> ref(big.size());
    FILE *f = std::fopen(argv[2], "rb");
    if (!f || std::fread(ref.data(), sizeof(float), ref.size(), f) != ref.size()) {
      std::fprintf(stderr, "cannot read the reference output\n");
      return 5;
    }
    std::fclose(f);
    double scale = 1e-30;
    for (float v : ref) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    for (size_t k = 0; k < ref.size(); ++k)
      maxError = std::max(maxError, std::fabs(static_cast<double>(big[k]) - ref[k]) / scale);
  }
  std::sort(times.begin(), times.end());
  size_t n = times.size();
  double median = times[n / 2], p10 = times[n / 10], p90 = times[n - 1 - n / 10];
  std::sort(decode.begin(), decode.end());
  // The score is the 10th percentile: on a shared machine the median
  // measures the other processes as much as the kernel.
  std::printf("result %.6f %.6f %.6f %.9g %.6f %.6f\n", p10, times[0], (p90 - p10) / median,
              maxError, decode[decode.size() / 10], median);
  return 0;
}
)";
  return os.str();
}

bool KernelBench::prepare(std::string *error) {
  std::string source = harnessSource();
  // A linear kernel's packed layout depends on the schedule: its harness
  // is compiled once per panel shape (in measure), with the shape defined.
  std::string path = dir + "/harness.cpp";
  return writeFileAtomically(path, source, error);
}

Measurement KernelBench::measure(const Schedule &schedule, bool reference, double timeout,
                                 const std::string &keepAs) {
  Measurement m;
  std::string cand = dir + "/c" + std::to_string(serial++);
  std::string harnessObject = dir + "/harness.o";
  const bool linear = kernel.kind == KernelKind::Linear;
  if (linear) {
    GemmLayout l = gemmLayout(kernel, schedule);
    harnessObject = dir + "/harness_p" + std::to_string(l.panelWidth) + ".o";
  }
  auto start = std::chrono::steady_clock::now();
  std::string errorFile = cand + ".error";
  bool compiled = runInChild(
      [&](std::string *error) {
        // The harness object for this panel shape, once.
        if (access(harnessObject.c_str(), R_OK) != 0) {
          std::string source = dir + "/harness.cpp";
          if (linear) {
            GemmLayout l = gemmLayout(kernel, schedule);
            std::string text = readText(source);
            std::string define = "#define TMC_P " + std::to_string(l.panelWidth) +
                                 "\n#define TMC_PANELS " + std::to_string(l.panels) + "\n";
            source = harnessObject + ".cpp";
            if (!writeFileAtomically(source, define + text, error))
              return false;
          }
          if (!compileCxx(source, harnessObject, error))
            return false;
        }
        std::vector<std::string> objects = {harnessObject, cand + ".o"};
        halide::LoweredKernel lowered =
            linear ? halide::lowerPackedLinear(kernel, schedule) : halide::lowerKernel(kernel, schedule);
        halide::KernelOutputs outputs;
        outputs.object = cand + ".o";
        if (!halide::compileKernel(lowered, "tmk_cand", target, outputs, error))
          return false;
        if (hasDecodeKernel()) {
          halide::KernelOutputs decodeOutputs;
          decodeOutputs.object = cand + "_decode.o";
          if (!halide::compileKernel(
                  halide::lowerKernel(kernel, decodeKernelSchedule(kernel, schedule)),
                  "tmk_cand_decode", target, decodeOutputs, error))
            return false;
          objects.push_back(decodeOutputs.object);
        }
        if (linear) {
          halide::LoweredKernel pack = halide::lowerPackWeight(kernel, schedule);
          halide::KernelOutputs packOutputs;
          packOutputs.object = cand + "_pack.o";
          if (!halide::compileKernel(pack, "tmk_cand_pack", target, packOutputs, error))
            return false;
          objects.push_back(packOutputs.object);
        }
        objects.push_back(runtimeObject);
        return linkExecutable(objects, cand, error);
      },
      std::max(60.0, timeout * 4), errorFile, &m.error);
  m.compileSeconds = secondsSince(start);
  if (!compiled) {
    m.error = "compile: " + m.error;
    return m;
  }
  Measurement run = this->run(cand, reference, timeout);
  run.compileSeconds = m.compileSeconds;
  if (!keepAs.empty())
    std::rename(cand.c_str(), keepAs.c_str());
  std::remove(cand.c_str());
  std::remove((cand + ".o").c_str());
  std::remove((cand + "_pack.o").c_str());
  std::remove((cand + "_decode.o").c_str());
  return run;
}

Measurement KernelBench::rerun(const std::string &executable, double timeout) {
  return run(executable, false, timeout);
}

Measurement KernelBench::run(const std::string &executable, bool reference, double timeout) {
  Measurement m;
  auto start = std::chrono::steady_clock::now();
  std::string outFile = dir + "/run.out", errFile = dir + "/run.err";
  bool ran = runProgram({executable, reference ? "ref" : "check", dir + "/reference.bin"},
                        outFile, errFile, threads, timeout, &m.error);
  m.runSeconds = secondsSince(start);
  if (!ran)
    return m;
  std::istringstream in(readText(outFile));
  std::string word;
  if (!(in >> word >> m.scoreMs >> m.minMs >> m.noise >> m.maxError >> m.decodeMs >> m.medianMs) ||
      word != "result") {
    m.error = "the candidate printed no result";
    return m;
  }
  if (!reference && !(m.maxError <= 1e-4)) {
    std::ostringstream os;
    os << "wrong output: max relative error " << m.maxError << " > 1e-4 vs the default schedule";
    m.error = os.str();
    return m;
  }
  m.ok = true;
  return m;
}

bool compileRuntimeObject(const TargetInfo &target, const std::string &path, std::string *error) {
  return runInChild(
      [&](std::string *message) { return halide::compileRuntime(target, path, message); }, 300,
      path + ".error", error);
}

} // namespace tmc::tune
