//===- Measure.cpp - Timing one kernel schedule in its own process --------===//

#include "compiler/tune/Measure.h"
#include "compiler/tune/MemoryLimit.h"

#include "compiler/Error.h"
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

llvm::Error runInChild(const std::function<llvm::Error()> &fn, double timeout,
                       const std::string &errorFile) {
  std::remove(errorFile.c_str()); // a message is this child's or none
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return makeError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    std::string message;
    bool ok = false;
    try {
      llvm::Error failure = fn();
      ok = !failure;
      message = llvm::toString(std::move(failure));
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
  std::string why;
  int status = waitChild(pid, timeout, &why);
  if (status == -1)
    return makeError(why);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return llvm::Error::success();
  std::string message = readText(errorFile);
  return makeError(message.empty() ? "the child process " + describeStatus(status) : message);
}

namespace {

/// Runs `argv` with stdout and stderr into files, HL_NUM_THREADS set.
llvm::Error runProgram(const std::vector<std::string> &argv, const std::string &outFile,
                       const std::string &errFile, int threads, double timeout) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return makeError(std::string("fork failed: ") + std::strerror(errno));
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
  std::string why;
  int status = waitChild(pid, timeout, &why);
  if (status == -1)
    return makeError(why);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return llvm::Error::success();
  std::string tail = readText(errFile);
  if (tail.size() > 400)
    tail = "..." + tail.substr(tail.size() - 400);
  return makeError("the candidate " + describeStatus(status) + (tail.empty() ? "" : ": " + tail));
}

/// The value a scalar argument takes: the valid length (T) for attention,
/// pooling and sequence projections; the cache offset (0) otherwise.
bool scalarIsLength(const KernelDesc &kernel) {
  return kernel.kind == KernelKind::attention || kernel.kind == KernelKind::pool ||
         kernel.kind == KernelKind::seq_project;
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
  const bool linear = kernel.kind == KernelKind::linear;
  std::ostringstream os;
  os << "// Generated by tmc tune: kernel " << kernel.name()
     << " as the measuring harness\n// (compiler/tune/MeasureHarness.cpp) calls it. Do not edit.\n";
  std::ostringstream params;
  for (size_t i = 0; i < sig.size(); ++i)
    params << (i ? ", " : "") << (sig[i].isScalar ? "int32_t" : "halide_buffer_t *");
  os << "extern \"C\" int tmk_cand(" << params.str() << ");\n";
  // A kernel with a decoding-step variant runs it at T = 1, as the executor does.
  const bool decodeVariant = hasDecodeKernel();
  if (decodeVariant)
    os << "extern \"C\" int tmk_cand_decode(" << params.str() << ");\n";
  if (linear)
    os << "extern \"C\" int tmk_cand_pack(halide_buffer_t *, halide_buffer_t *);\n";
  os << "\nnamespace kernel {\n\nconstexpr int64_t kTokens = " << tokens << ";\n\n"
     << "constexpr Argument kArguments[] = {\n";
  int32_t maxInt = kernel.kind == KernelKind::embed ? kernel.tableRows : kernel.positionRows;
  for (size_t i = 0; i < sig.size(); ++i) {
    const BufferShape &shape = sig[i];
    os << "    {" << (shape.isScalar ? 0 : shape.extents.size()) << ", {";
    for (size_t d = 0; d < shape.extents.size() && !shape.isScalar; ++d) {
      int64_t e = shape.extents[d];
      os << (d ? ", " : "");
      if (e >= 0)
        os << e;
      else if (kernel.kind == KernelKind::seq_project && i + 1 == sig.size())
        os << kernel.tableRows; // a call binds its rows to k
      else
        os << "kT";
    }
    os << "}, " << (shape.isInt32 ? "true" : "false") << ", " << std::max<int32_t>(1, maxInt)
       << ", " << (shape.isUInt16 ? "true" : "false") << ", " << (shape.isBF16 ? "true" : "false")
       << ", " << (shape.isInt8 ? "true" : "false") << ", " << rowsBeforeTokens(kernel, i)
       << "},\n";
  }
  os << "};\n\n";
  if (linear)
    os << "constexpr size_t kPackedWeight = 1;\nconstexpr int64_t kPackedK = " << kernel.inWidth
       << ";\n\n";
  os << "inline int call(int64_t T, halide_buffer_t *const *buffers) {\n  return "
     << (decodeVariant ? "(T == 1 ? tmk_cand_decode : tmk_cand)(" : "tmk_cand(");
  for (size_t i = 0; i < sig.size(); ++i) {
    os << (i ? ", " : "");
    if (!sig[i].isScalar)
      os << "buffers[" << i << "]";
    else
      os << (scalarIsLength(kernel) ? "static_cast<int32_t>(T)" : "0");
  }
  os << ");\n}\n\n} // namespace kernel\n";
  return os.str();
}

llvm::Error KernelBench::prepare() {
  // MeasureHarness.cpp includes it; measure() compiles the harness.
  return writeFileAtomically(dir + "/tune_kernel.h", harnessSource());
}

Measurement KernelBench::measure(const Schedule &schedule, bool reference, double timeout,
                                 const std::string &keepAs) {
  Measurement m;
  std::string cand = dir + "/c" + std::to_string(serial++);
  std::string harnessObject = dir + "/harness.o";
  const bool linear = kernel.kind == KernelKind::linear;
  if (linear) {
    GemmLayout l = gemmLayout(kernel, schedule);
    harnessObject = dir + "/harness_p" + std::to_string(l.panelWidth) + ".o";
  }
  auto start = std::chrono::steady_clock::now();
  std::string errorFile = cand + ".error";
  llvm::Error compiled = runInChild(
      [&]() -> llvm::Error {
        // The harness object, once (a linear kernel's once per panel shape:
        // its packed layout depends on the schedule).
        if (access(harnessObject.c_str(), R_OK) != 0) {
          std::vector<std::string> flags = {"-I" + dir};
          if (linear) {
            GemmLayout l = gemmLayout(kernel, schedule);
            flags.push_back("-DTMC_P=" + std::to_string(l.panelWidth));
            flags.push_back("-DTMC_PANELS=" + std::to_string(l.panels));
            if (l.bf16)
              flags.push_back("-DTMC_BF16_PAIRS=" + std::to_string(l.kPairs));
            if (l.quantized())
              flags.push_back("-DTMC_QUANT_ROWS=" + std::to_string(l.quantRows()));
          }
          if (llvm::Error error =
                  compileCxx(TMC_MEASURE_HARNESS, harnessObject, /*target=*/nullptr, flags))
            return error;
        }
        std::vector<std::string> objects = {harnessObject, cand + ".o"};
        halide::LoweredKernel lowered =
            linear ? halide::lowerPackedLinear(kernel, schedule) : halide::lowerKernel(kernel, schedule);
        halide::KernelOutputs outputs;
        outputs.object = cand + ".o";
        outputs.cacheDir = kernelCache;
        const TargetInfo kernelTarget =
            kernel.usesDotProducts() ? target : withoutDotProducts(target);
        if (llvm::Error error = halide::compileKernel(lowered, "tmk_cand", kernelTarget, outputs))
          return error;
        if (hasDecodeKernel()) {
          halide::KernelOutputs decodeOutputs;
          decodeOutputs.object = cand + "_decode.o";
          decodeOutputs.cacheDir = kernelCache;
          if (llvm::Error error = halide::compileKernel(
                  halide::lowerKernel(kernel, decodeKernelSchedule(kernel, schedule)),
                  "tmk_cand_decode", kernelTarget, decodeOutputs))
            return error;
          objects.push_back(decodeOutputs.object);
        }
        if (linear) {
          halide::LoweredKernel pack = halide::lowerPackWeight(kernel, schedule);
          halide::KernelOutputs packOutputs;
          packOutputs.object = cand + "_pack.o";
          packOutputs.cacheDir = kernelCache;
          if (llvm::Error error = halide::compileKernel(pack, "tmk_cand_pack",
                                                        withoutDotProducts(target), packOutputs))
            return error;
          objects.push_back(packOutputs.object);
        }
        objects.push_back(runtimeObject);
        return linkExecutable(objects, cand);
      },
      std::max(60.0, timeout * 4), errorFile);
  m.compileSeconds = secondsSince(start);
  if (compiled) {
    m.error = "compile: " + llvm::toString(std::move(compiled));
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
  llvm::Error failure = runProgram({executable, reference ? "ref" : "check", dir + "/reference.bin"},
                                   outFile, errFile, threads, timeout);
  m.runSeconds = secondsSince(start);
  if (failure) {
    m.error = llvm::toString(std::move(failure));
    return m;
  }
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

llvm::Error compileRuntimeObject(const TargetInfo &target, const std::string &path,
                                 const std::string &kernelCache) {
  return runInChild([&] { return halide::compileRuntime(target, path, kernelCache); }, 300,
                    path + ".error");
}

} // namespace tmc::tune
