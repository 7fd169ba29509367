//===- Toolchain.cpp - The system C++ compiler and linker -----------------===//

#include "compiler/Toolchain.h"

#include "compiler/Error.h"
#include "runtime/atomic_file.h"
#include "runtime/memory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sys/resource.h>

namespace tmc {

namespace {

/// The runtime's headers and archives: $TMC_RUNTIME_DIR (holding include/
/// and lib/) if set, else the locations of this build.
std::string runtimeIncludeDir() {
  if (const char *dir = std::getenv("TMC_RUNTIME_DIR"))
    return std::string(dir) + "/include";
  return TMC_RUNTIME_INCLUDE_DIR;
}

std::string runtimeLibDir() {
  if (const char *dir = std::getenv("TMC_RUNTIME_DIR"))
    return std::string(dir) + "/lib";
  return TMC_RUNTIME_LIB_DIR;
}

bool isCross(const TargetInfo *target) { return target && !target->crossTriple.empty(); }

/// The system compiler, or for a cross target the GNU cross compiler of its
/// triple ($TMC_CROSS_CXX overrides it).
std::string cxxCompiler(const TargetInfo *target = nullptr) {
  if (isCross(target)) {
    if (const char *cxx = std::getenv("TMC_CROSS_CXX"); cxx && *cxx)
      return cxx;
    return target->crossTriple + "-g++";
  }
  if (const char *cxx = std::getenv("CXX"); cxx && *cxx)
    return cxx;
  return "c++";
}

std::string archiver(const TargetInfo *target = nullptr) {
  if (isCross(target))
    return target->crossTriple + "-ar";
  if (const char *ar = std::getenv("AR"); ar && *ar)
    return ar;
  return "ar";
}

/// The runtime archives for `target`: a cross target's were built by the
/// cross compiler into lib/<triple>/ (CMake does so when it finds one).
llvm::Expected<std::string> targetLibDir(const TargetInfo *target) {
  std::string dir = runtimeLibDir();
  if (!isCross(target))
    return dir;
  dir += "/" + target->crossTriple;
  if (llvm::sys::fs::exists(dir + "/libtmr_runtime.a"))
    return dir;
  return makeError("--target " + target->name + ": the runtime was not built for " +
                   target->crossTriple + " (no " + dir + "/libtmr_runtime.a): install " +
                   target->crossTriple + "-g++ (Debian: g++-aarch64-linux-gnu) and rebuild tmc");
}

/// A tool started by startTool: its command, process and log.
struct RunningTool {
  std::vector<std::string> argv;
  llvm::sys::ProcessInfo process;
  std::string log;     ///< its stdout and stderr
  std::string failure; ///< why it could not start (then no process)
};

/// Starts `argv` (reading `input` as stdin when given), its output into a
/// temporary log; finishTool waits for it.
llvm::Expected<RunningTool> startTool(std::vector<std::string> argv,
                                      const std::string &input = "") {
  auto program = llvm::sys::findProgramByName(argv[0]);
  if (!program) {
    bool cross = llvm::StringRef(argv[0]).contains("-linux-gnu-");
    return makeError(llvm::StringRef(argv[0]).ends_with("ar")
                         ? "cannot find the archiver '" + argv[0] + "' on PATH" +
                               (cross ? std::string() : " (set AR to choose one)")
                         : "cannot find the C++ compiler '" + argv[0] + "' on PATH (set " +
                               (cross ? "TMC_CROSS_CXX" : "CXX") + " to choose one)");
  }
  RunningTool tool;
  tool.argv = std::move(argv);
  llvm::SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("tmc-tool", "log", log);
  tool.log = std::string(log);
  std::vector<llvm::StringRef> args(tool.argv.begin(), tool.argv.end());
  std::optional<llvm::StringRef> redirects[] = {
      input.empty() ? std::nullopt : std::optional<llvm::StringRef>(input), llvm::StringRef(log),
      llvm::StringRef(log)};
  tool.process =
      llvm::sys::ExecuteNoWait(*program, args, std::nullopt, redirects, 0, &tool.failure);
  if (tool.process.Pid == llvm::sys::ProcessInfo::InvalidPid && tool.failure.empty())
    tool.failure = "cannot start it";
  return std::move(tool);
}

/// Waits for a started tool; on failure, the error holds the command and its
/// diagnostics.
llvm::Error finishTool(RunningTool &tool) {
  int rc = -1;
  std::string message = tool.failure;
  if (tool.process.Pid != llvm::sys::ProcessInfo::InvalidPid) {
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(tool.process, /*SecondsToWait=*/std::nullopt, &message);
    rc = done.ReturnCode;
  }
  std::string output;
  if (auto buffer = llvm::MemoryBuffer::getFile(tool.log))
    output = (*buffer)->getBuffer().str();
  llvm::sys::fs::remove(tool.log);
  if (rc == 0)
    return llvm::Error::success();
  std::string command;
  for (const std::string &arg : tool.argv)
    command += (command.empty() ? "" : " ") + arg;
  return makeError("command failed (" +
                   (message.empty() ? "exit " + std::to_string(rc) : message) + "): " + command +
                   "\n" + output);
}

/// Runs `argv` (reading `input` as stdin when given): startTool, finishTool.
llvm::Error run(std::vector<std::string> argv, const std::string &input = "") {
  llvm::Expected<RunningTool> tool = startTool(std::move(argv), input);
  if (!tool)
    return tool.takeError();
  return finishTool(*tool);
}

/// A unique temporary path beside `path`, so the final rename stays on one file system.
std::string siblingTemp(const std::string &path) {
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  llvm::SmallString<256> temp;
  llvm::sys::fs::createUniquePath(model, temp, /*MakeAbsolute=*/false);
  return std::string(temp);
}

llvm::Error renameInto(const std::string &temp, const std::string &path) {
  // `-o /dev/null`: renaming over a device would replace the node itself, so
  // its contents are written into it instead.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
      !llvm::sys::fs::is_regular_file(status) && !llvm::sys::fs::is_directory(status)) {
    auto buffer = llvm::MemoryBuffer::getFile(temp, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    llvm::sys::fs::remove(temp);
    if (!buffer)
      return makeError("cannot read '" + temp + "': " + buffer.getError().message());
    return writeFileAtomically(path, (*buffer)->getBuffer().str());
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return makeError("cannot write '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}

/// A link stopped by the file-size limit (`ulimit -f`, which the linker
/// inherits) as one line naming the output, not the linker's command line
/// and messages; any other failure as it is.
llvm::Error explainLinkFailure(llvm::Error error, const std::string &output) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return error;
  std::string message = llvm::toString(std::move(error));
  const char *tooLarge = std::strerror(EFBIG);
  if (message.find(tooLarge) == std::string::npos)
    return makeError(message);
  return makeError("cannot write '" + output + "': " + tooLarge +
                   " (the file-size limit, ulimit -f, is " +
                   tmr::formatBytes(static_cast<uint64_t>(limit.rlim_cur)) + ")");
}

/// A sanitizer build's runtime archives are instrumented: what links them must
/// link the sanitizer runtime too (empty in a normal build).
void addSanitizeFlag(std::vector<std::string> *argv) {
  if (*TMC_SANITIZE_LINK_FLAG)
    argv->push_back(TMC_SANITIZE_LINK_FLAG);
}

} // namespace

/// The compiler's command line for compileCxx.
std::vector<std::string> compileCommand(const std::string &source, const std::string &object,
                                        const TargetInfo *target,
                                        const std::vector<std::string> &flags) {
  std::vector<std::string> argv = {cxxCompiler(target), "-std=c++17", "-O2", "-c",
                                   "-I" + runtimeIncludeDir(), "-I" TMC_HALIDE_INCLUDE_DIR};
  if (!isCross(target) && *TMC_SANITIZE_LINK_FLAG) {
    // Instrumented, the generated executor took 6 s at -O2 against 0.6 s at
    // -O0 (the kernels it calls are Halide's, compiled apart): a sanitizer
    // build's tests compile hundreds of them. -O0 also keeps every report at
    // the line that made the access.
    addSanitizeFlag(&argv);
    argv.push_back("-O0");
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {source, "-o", object});
  return argv;
}

llvm::Error compileCxx(const std::string &source, const std::string &object,
                       const TargetInfo *target, const std::vector<std::string> &flags) {
  return run(compileCommand(source, object, target, flags));
}

llvm::Error compileCxxAll(const std::vector<std::pair<std::string, std::string>> &sourcesAndObjects,
                          const TargetInfo *target, int jobs) {
  const size_t parallel = static_cast<size_t>(std::max(1, jobs));
  std::vector<RunningTool> running; // in order; at most `parallel` at once
  std::optional<llvm::Error> firstError;
  auto finishOldest = [&] {
    llvm::Error error = finishTool(running.front());
    running.erase(running.begin());
    if (error && !firstError)
      firstError.emplace(std::move(error));
    else
      llvm::consumeError(std::move(error));
  };
  for (const auto &[source, object] : sourcesAndObjects) {
    if (firstError)
      break;
    if (running.size() == parallel)
      finishOldest();
    llvm::Expected<RunningTool> tool = startTool(compileCommand(source, object, target, {}));
    if (!tool) {
      firstError.emplace(tool.takeError());
      break;
    }
    running.push_back(std::move(*tool));
  }
  while (!running.empty())
    finishOldest();
  return firstError ? std::move(*firstError) : llvm::Error::success();
}

llvm::Error linkExecutable(const std::vector<std::string> &objects, const std::string &output,
                           const TargetInfo *target) {
  llvm::Expected<std::string> libDir = targetLibDir(target);
  if (!libDir)
    return libDir.takeError();
  std::string temp = siblingTemp(output);
  std::vector<std::string> argv = {cxxCompiler(target), "-o", temp};
  // A cross-compiled executable links statically: it then runs on any Linux
  // of its architecture (and under qemu-user) without that system's libraries.
  if (isCross(target))
    argv.push_back("-static");
  else
    addSanitizeFlag(&argv);
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.insert(argv.end(), {*libDir + "/libtmr_main.a", *libDir + "/libtmr_runtime.a",
                           "-lpthread", "-ldl", "-lm"});
  if (llvm::Error error = run(argv)) {
    llvm::sys::fs::remove(temp);
    return explainLinkFailure(std::move(error), output);
  }
  return renameInto(temp, output);
}

llvm::Error linkRelocatable(const std::vector<std::string> &objects, const std::string &output,
                            const TargetInfo *target) {
  std::string temp = siblingTemp(output);
  std::vector<std::string> argv = {cxxCompiler(target), "-r", "-nostdlib", "-o", temp};
  argv.insert(argv.end(), objects.begin(), objects.end());
  if (llvm::Error error = run(argv)) {
    llvm::sys::fs::remove(temp);
    return explainLinkFailure(std::move(error), output);
  }
  return renameInto(temp, output);
}

llvm::Error archiveLibrary(const std::vector<std::string> &objects, const std::string &output,
                           const std::string &workDir, const TargetInfo *target) {
  llvm::Expected<std::string> libDir = targetLibDir(target);
  if (!libDir)
    return libDir.takeError();
  // An ar MRI script merges the runtime archive's members in by name
  // (ADDLIB), which plain `ar rcs` cannot; MRI cannot quote, so refuse paths
  // it would split.
  std::string archive = workDir + "/library.a", script = workDir + "/library.mri";
  std::string text = "CREATE " + archive + "\n";
  std::vector<std::string> inputs = objects;
  for (const std::string &path : objects)
    text += "ADDMOD " + path + "\n";
  std::string runtime = *libDir + "/libtmr_runtime.a";
  text += "ADDLIB " + runtime + "\nSAVE\nEND\n";
  inputs.push_back(runtime);
  inputs.push_back(workDir);
  for (const std::string &path : inputs)
    if (path.find_first_of(" \t\n,;*+()") != std::string::npos)
      return makeError("cannot archive '" + path +
                       "': ar scripts do not allow spaces or ,;*+() in paths");
  if (llvm::Error error = writeFileAtomically(script, text))
    return error;
  if (llvm::Error error = run({archiver(target), "-M"}, script))
    return error;
  // ar's own output may not be on the target's file system: copy it through
  // a sibling temporary file instead of renaming it.
  auto buffer = llvm::MemoryBuffer::getFile(archive, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read the archive ar wrote: " + buffer.getError().message());
  return writeFileAtomically(output, (*buffer)->getBuffer().str());
}

llvm::Expected<std::string> readRuntimeHeader() {
  std::string path = runtimeIncludeDir() + "/runtime/tmr.h";
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError("cannot read the runtime header '" + path +
                     "': " + buffer.getError().message() +
                     " (set TMC_RUNTIME_DIR to the runtime's installation)");
  return (*buffer)->getBuffer().str();
}

llvm::Error writeFileAtomically(const std::string &path, const std::string &contents) {
  // The runtime's writer: temp file + rename, or in place for a device.
  std::string error;
  std::unique_ptr<tmr::AtomicFile> file = tmr::AtomicFile::create(path, &error);
  if (file && file->write(contents.data(), contents.size(), &error) && file->commit(&error))
    return llvm::Error::success();
  return makeError(error);
}

llvm::Error checkNotAnInput(const std::string &outputRole, const std::string &output,
                            const std::vector<tmr::InputFile> &inputs) {
  std::string problem = tmr::overwrittenInput(outputRole, output, inputs);
  return problem.empty() ? llvm::Error::success() : makeUsageError(problem);
}

} // namespace tmc
