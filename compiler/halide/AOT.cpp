//===- AOT.cpp - Ahead-of-time compilation of Halide kernels --------------===//

#include "compiler/halide/AOT.h"

#include "compiler/Error.h"
#include "compiler/halide/ObjectCache.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

using namespace Halide;

namespace tmc::halide {

namespace {

Target kernelTarget(const TargetInfo &info) {
  // One runtime object serves every kernel of the executable.
  return Target(info.halideTarget).with_feature(Target::NoRuntime);
}

template <typename Fn> llvm::Error catchHalide(Fn &&fn) {
  try {
    fn();
    return llvm::Error::success();
  } catch (const Halide::Error &e) {
    return makeError(e.what());
  } catch (const std::exception &e) {
    return makeError(e.what());
  }
}

void printDefinition(std::ostream &os, const std::string &name,
                     const std::vector<Expr> &args, const std::vector<Expr> &values,
                     const char *op) {
  os << "  " << name << "(";
  for (size_t i = 0; i < args.size(); ++i)
    os << (i ? ", " : "") << args[i];
  os << ") " << op << " ";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << "\n";
}

/// Halide writes objects through its own LLVM (14), which ends the process
/// on a failed write (a file-size limit, ulimit -f, or a full disk):
/// "LLVM ERROR: IO failure on output stream: File too large", abort(), and
/// tmc's stack dump. For the scope of one Halide write, stderr goes to a
/// temporary file (replayed afterwards: Halide's warnings) and SIGABRT to a
/// handler that turns LLVM's reason into tmc's one-line error naming the
/// file, exit 1. Only async-signal-safe calls run in the handler.
class HalideWriteGuard {
public:
  explicit HalideWriteGuard(const std::string &path) {
    size_t n = std::min(path.size(), sizeof(file) - 1);
    std::memcpy(file, path.data(), n);
    file[n] = '\0';
    limit[0] = '\0';
    struct rlimit fileSize {};
    if (::getrlimit(RLIMIT_FSIZE, &fileSize) == 0 && fileSize.rlim_cur != RLIM_INFINITY)
      std::snprintf(limit, sizeof(limit), " (the file-size limit, ulimit -f, is %llu bytes)",
                    static_cast<unsigned long long>(fileSize.rlim_cur));
    std::fflush(stderr);
    capture = std::tmpfile();
    savedStderr = capture ? ::dup(STDERR_FILENO) : -1;
    if (savedStderr < 0)
      return;
    captureFd = ::fileno(capture);
    ::dup2(captureFd, STDERR_FILENO);
    struct sigaction action {};
    action.sa_handler = onAbort;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGABRT, &action, &previous);
    active = true;
  }
  ~HalideWriteGuard() {
    if (!active)
      return;
    ::sigaction(SIGABRT, &previous, nullptr);
    std::fflush(stderr);
    ::dup2(savedStderr, STDERR_FILENO);
    ::close(savedStderr);
    // Replay what Halide printed (warnings), now that stderr is back.
    std::rewind(capture);
    char buffer[4096];
    size_t got;
    while ((got = std::fread(buffer, 1, sizeof(buffer), capture)) > 0)
      std::fwrite(buffer, 1, got, stderr);
    std::fclose(capture);
    active = false;
  }
  HalideWriteGuard(const HalideWriteGuard &) = delete;
  HalideWriteGuard &operator=(const HalideWriteGuard &) = delete;

private:
  static void append(char *out, size_t &at, size_t size, const char *text, size_t n) {
    for (size_t i = 0; i < n && at + 1 < size; ++i)
      out[at++] = text[i];
  }
  static void onAbort(int) {
    // LLVM's reason: the captured text after "LLVM ERROR: ", to its newline.
    char captured[1024];
    ssize_t n = ::pread(captureFd, captured, sizeof(captured) - 1, 0);
    captured[n > 0 ? n : 0] = '\0';
    const char *reason = std::strstr(captured, "LLVM ERROR: ");
    reason = reason ? reason + 12 : "Halide's code generator aborted";
    size_t reasonLength = std::strcspn(reason, "\n");
    char message[2048];
    size_t at = 0;
    // In a compile job's child the parent reports it, with tmc's prefix.
    const char *head = reportFd >= 0 ? "cannot write the kernels' object files ("
                                     : "tmc: error: cannot write the kernels' object files (";
    append(message, at, sizeof(message), head, std::strlen(head));
    append(message, at, sizeof(message), file, std::strlen(file));
    append(message, at, sizeof(message), "): ", 3);
    append(message, at, sizeof(message), reason, reasonLength);
    append(message, at, sizeof(message), limit, std::strlen(limit));
    if (reportFd < 0)
      append(message, at, sizeof(message), "\n", 1);
    ssize_t ignored = ::write(reportFd >= 0 ? reportFd : savedStderr, message, at);
    (void)ignored;
    ::_exit(1);
  }

public:
  static inline int reportFd = -1; ///< reportWriteFailuresTo

private:
  static inline char file[1024], limit[128];
  static inline int savedStderr = -1, captureFd = -1;
  std::FILE *capture = nullptr;
  struct sigaction previous {};
  bool active = false;
};

/// Writes `objectPath` by `compile` (under HalideWriteGuard), or copies it
/// from `cache`'s entry `key` where there is one; `cacheHit` (if given)
/// says which. A disabled cache always compiles.
template <typename Compile>
void compileThroughCache(const ObjectCache &cache, const std::function<std::string()> &key,
                         const std::string &objectPath, const std::string &guardedPath,
                         bool *cacheHit, std::string *keyOut, Compile &&compile) {
  std::string entry = cache.enabled() ? key() : std::string();
  if (keyOut)
    *keyOut = entry;
  bool hit = cache.fetch(entry, objectPath);
  if (cacheHit)
    *cacheHit = hit;
  if (hit)
    return;
  {
    HalideWriteGuard guard(guardedPath);
    compile();
  }
  cache.store(entry, objectPath);
}

} // namespace

void reportWriteFailuresTo(int fd) { HalideWriteGuard::reportFd = fd; }

llvm::Error compileKernel(const LoweredKernel &kernel, const std::string &functionName,
                          const TargetInfo &target, const KernelOutputs &outputs) {
  std::map<OutputFileType, std::string> files;
  if (!outputs.object.empty())
    files[OutputFileType::object] = outputs.object;
  if (!outputs.stmt.empty())
    files[OutputFileType::stmt] = outputs.stmt;
  if (!outputs.assembly.empty())
    files[OutputFileType::assembly] = outputs.assembly;
  return catchHalide([&] {
    Func output = kernel.output;
    Module module =
        output.compile_to_module(kernel.arguments, functionName, kernelTarget(target));
    // A GPU target's device code is a buffer of the module (embedded in
    // the object's read-only data): PTX text, NUL-terminated.
    for (const Buffer<void> &buffer : module.buffers()) {
      if (!outputs.deviceCode || buffer.name().find("_gpu_source_kernels") == std::string::npos)
        continue;
      const char *text = static_cast<const char *>(buffer.data());
      *outputs.deviceCode += std::string(text, strnlen(text, buffer.size_in_bytes()));
    }
    // Only a lone object is cached: the other outputs need Halide anyway.
    ObjectCache cache(files.size() == 1 && !outputs.object.empty() && !outputs.deviceCode
                          ? outputs.cacheDir
                          : std::string());
    compileThroughCache(
        cache, [&] { return objectKey(module); }, outputs.object,
        files.begin() != files.end() ? files.begin()->second : functionName, outputs.cacheHit,
        outputs.objectKey, [&] { module.compile(files); });
  });
}

llvm::Error compileRuntime(const TargetInfo &target, const std::string &objectPath,
                           const std::string &cacheDir, bool *cacheHit) {
  return catchHalide([&] {
    Target halideTarget(target.halideTarget);
    compileThroughCache(
        ObjectCache(cacheDir), [&] { return runtimeKey(halideTarget); }, objectPath, objectPath,
        cacheHit, nullptr, [&] { compile_standalone_runtime(objectPath, halideTarget); });
  });
}

std::string describeKernel(const std::string &name, const LoweredKernel &kernel,
                           const Schedule &schedule) {
  std::ostringstream os;
  os << "kernel " << name << "(";
  for (size_t i = 0; i < kernel.arguments.size(); ++i)
    os << (i ? ", " : "") << kernel.arguments[i].name;
  os << ") -> " << kernel.output.name() << "\n";
  os << "  schedule: " << schedule.str() << "\n";
  for (const Func &stage : kernel.stages) {
    Func f = stage;
    std::vector<Expr> args;
    for (const Var &v : f.args())
      args.push_back(v);
    // Tuple-valued Funcs (the online softmax's state) print every element.
    printDefinition(os, f.name(), args, f.values().as_vector(), "=");
    for (int u = 0; u < f.num_update_definitions(); ++u)
      printDefinition(os, f.name(), f.update_args(u), f.update_values(u).as_vector(), "<-");
  }
  return os.str();
}

} // namespace tmc::halide
