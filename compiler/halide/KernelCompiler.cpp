//===- KernelCompiler.cpp - Kernel plan to objects ------------------------===//
//
// Every object (each kernel, its decoding and packing variants, the Halide
// runtime) is lowered and compiled in a child process of its own, up to
// `jobs` at once. Two reasons. The CPUs: LLVM writing the objects is most of
// a compile, and the objects are independent. The kernel cache: Halide names
// what it makes from counters shared by the process (a Func named `out` is
// `out$4` if an `out` was made before), so a kernel lowered after others
// would differ from the same kernel lowered first, in its metadata and its
// messages, and miss the cache. Each child starts from the parent's state,
// in which nothing was lowered: every kernel is lowered the same way in
// every compile, whatever comes before it.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/KernelCompiler.h"

#include "compiler/Error.h"
#include "compiler/halide/AOT.h"
#include "compiler/halide/Lowering.h"
#include "compiler/halide/ObjectCache.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sched.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace tmc {

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

bool fileExists(const std::string &path) { return ::access(path.c_str(), F_OK) == 0; }

using Lower = halide::LoweredKernel (*)(const KernelDesc &, const Schedule &);

/// One object to write: a kernel (or one of its variants) lowered with
/// `lower` under `schedule` as the function `name`, or the Halide runtime.
struct KernelJob {
  std::string name;
  const KernelDesc *kernel = nullptr; ///< null: the Halide runtime
  Schedule schedule;
  TargetInfo variant;
  Lower lower = nullptr;
  const char *lowering = ""; ///< which `lower` (the job key names it)
};

/// The jobs of one concrete target: jobs[previous section's end, end).
struct TargetSection {
  std::string header; ///< its line in the `halide` stage
  size_t end = 0;
};

/// The jobs of a plan, in the order the executor and the stages list them.
std::vector<KernelJob> planJobs(const KernelPlan &plan, const TargetInfo &target,
                                std::vector<TargetSection> *sections) {
  std::vector<KernelJob> jobs;
  // A multi-ISA target compiles every kernel once per variant, each under
  // its own names (tmk_<kernel>_<isa>): the variants' schedules, and so their
  // packed weight layouts, differ, and each variant's executor calls its own.
  const bool multi = !target.variants.empty();
  for (const TargetInfo &variant : target.concreteTargets()) {
    std::string suffix = multi ? std::string("_") + variant.isaName() : "";
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      const KernelDesc &kernel = plan.kernels[k];
      const Schedule &schedule = plan.schedule(k, variant);
      std::string name = "tmk_" + kernel.symbol() + suffix;
      // The GEMM reads weights packed once, at load, by its pack kernel (the
      // contract is in LowerPack.cpp); both share the schedule.
      const bool linear = kernel.kind == KernelKind::linear;
      const TargetInfo kernelVariant =
          kernel.usesDotProducts() ? variant : withoutDotProducts(variant);
      jobs.push_back({name, &kernel, schedule, kernelVariant,
                      linear ? halide::lowerPackedLinear : halide::lowerKernel,
                      linear ? "packed_linear" : "kernel"});
      // The decoding step's own variant (T == 1), where the kernel has one.
      if (std::string decode = decodeKernelSuffix(kernel, schedule); !decode.empty())
        jobs.push_back({name + decode, &kernel, decodeKernelSchedule(kernel, schedule),
                        kernelVariant, jobs.back().lower, jobs.back().lowering});
      // A batched decoding step's, one sequence per task (ExecutorGen.cpp).
      if (std::string rows = decodeRowsKernelSuffix(kernel, schedule); !rows.empty())
        jobs.push_back({name + rows, &kernel, decodeRowsAttentionSchedule(schedule), kernelVariant,
                        jobs.back().lower, jobs.back().lowering});
      if (linear)
        jobs.push_back({"tmk_pack_" + kernel.symbol() + suffix, &kernel, schedule,
                        withoutDotProducts(variant), halide::lowerPackWeight, "pack_weight"});
      // int8 and q4 weights may come pre-quantized (`tmc quantize`).
      if (linear && kernel.quantized())
        jobs.push_back({"tmk_pack_" + kernel.symbol() + suffix + "_quantized", &kernel, schedule,
                        withoutDotProducts(variant), halide::lowerPackQuantizedWeight,
                        "pack_quantized_weight"});
    }
    sections->push_back(
        {std::string(multi ? "\n" : "") + "// target: " + variant.halideTarget + "\n",
         jobs.size()});
  }
  return jobs;
}

/// What a job leaves in the work directory: DIR/NAME.o, and beside it the
/// `halide` stage text, the stmt and asm if asked, the device code, a file
/// saying the object came from the cache, or the error message.
struct JobFiles {
  explicit JobFiles(const std::string &base)
      : object(base + ".o"), halide(base + ".halide"), stmt(base + ".stmt"), assembly(base + ".s"),
        device(base + ".ptx"), cached(base + ".cached"), error(base + ".error") {}
  std::string object, halide, stmt, assembly, device, cached, error;
};

/// Everything a kernel job's lowering and object depend on in a given tmc
/// process (the rest is jobKey's): its function name, which lowering, the
/// concrete target, and every field of its kernel and schedule.
std::string describeJob(const KernelJob &job) {
  const TargetInfo &t = job.variant;
  std::ostringstream os;
  os << "function " << job.name << "\nlowering " << job.lowering << "\ntarget " << t.name << " "
     << t.halideTarget << " isa " << static_cast<int>(t.isa) << " vector " << t.vectorWidth
     << " registers " << t.vectorRegisters << " cross " << t.crossTriple << " dot " << t.dotProducts
     << " split_zmm " << t.splitsZmm << " native " << t.native << " gpu " << t.gpu << " cuda "
     << t.cudaCapability << "\nkernel\n"
     << job.kernel->fingerprint() << "schedule\n"
     << job.schedule.fingerprint();
  return os.str();
}

/// The kernel cache's key of `job` before lowering (ObjectCache.h, jobKey);
/// empty where the job's outputs are not a lone cached object.
std::string jobCacheKey(const KernelJob &job, const KernelBuildRequest &request) {
  if (!job.kernel || request.kernelCache.empty() || request.wantStmt || request.wantAssembly ||
      request.wantDevice)
    return "";
  return halide::jobKey(describeJob(job));
}

/// Lowers a kernel job to its Halide pipeline; what the lowering threw is
/// the error, naming the job.
llvm::Expected<halide::LoweredKernel> lowerJob(const KernelJob &job) {
  try {
    return job.lower(*job.kernel, job.schedule);
  } catch (const std::exception &e) {
    return makeError("lowering kernel " + job.name + " to Halide failed: " + e.what());
  }
}

/// Runs one job (in its child). An error is written to files.error, except
/// Halide's failed writes, which HalideWriteGuard (AOT.cpp) reports itself.
llvm::Error runJob(const KernelJob &job, const KernelBuildRequest &request,
                   const TargetInfo &target, const JobFiles &files) {
  bool cacheHit = false;
  if (!job.kernel) {
    if (llvm::Error error =
            halide::compileRuntime(target, files.object, request.kernelCache, &cacheHit))
      return withContext(std::move(error), "Halide failed to compile its runtime");
  } else {
    llvm::Expected<halide::LoweredKernel> lowered = lowerJob(job);
    if (!lowered)
      return lowered.takeError();
    std::string halideText = halide::describeKernel(job.name, *lowered, job.schedule);
    std::ofstream(files.halide) << halideText;
    halide::KernelOutputs outputs;
    outputs.object = files.object;
    if (request.wantStmt)
      outputs.stmt = files.stmt;
    if (request.wantAssembly)
      outputs.assembly = files.assembly;
    std::string deviceCode;
    if (request.wantDevice)
      outputs.deviceCode = &deviceCode;
    outputs.cacheDir = request.kernelCache;
    outputs.cacheHit = &cacheHit;
    std::string objectKey;
    outputs.objectKey = &objectKey;
    if (llvm::Error error = halide::compileKernel(*lowered, job.name, job.variant, outputs))
      return withContext(std::move(error), "Halide failed to compile kernel " + job.name);
    // The next compile of this job finds its object without lowering.
    if (std::string key = jobCacheKey(job, request); !key.empty() && !objectKey.empty())
      halide::ObjectCache(request.kernelCache).storeJob(key, objectKey, halideText);
    if (!deviceCode.empty())
      std::ofstream(files.device) << deviceCode;
  }
  if (cacheHit)
    std::ofstream(files.cached) << "hit\n";
  return llvm::Error::success();
}

/// Finishes `job` from the kernel cache without lowering it, where its job
/// key has an entry whose object is still there: the object, its `halide`
/// text and the mark that it was cached, as its child would have left them.
bool reuseJob(const KernelJob &job, const KernelBuildRequest &request, const JobFiles &files) {
  std::string key = jobCacheKey(job, request);
  if (key.empty())
    return false;
  for (const std::string &path : {files.object, files.cached, files.error})
    std::remove(path.c_str());
  halide::ObjectCache cache(request.kernelCache);
  std::string objectKey, halideText;
  if (!cache.fetchJob(key, objectKey, halideText) || !cache.fetch(objectKey, files.object))
    return false;
  std::ofstream(files.halide) << halideText;
  std::ofstream(files.cached) << "hit\n";
  return true;
}

pid_t startJob(const KernelJob &job, const KernelBuildRequest &request, const TargetInfo &target,
               const JobFiles &files) {
  for (const std::string &path : {files.object, files.cached, files.error})
    std::remove(path.c_str());
  std::fflush(nullptr);
  llvm::outs().flush();
  pid_t pid = ::fork();
  if (pid != 0)
    return pid;
  // Halide's failed writes end this child with their reason in the error
  // file: the parent prints one error, not one per child that hit it.
  int errorFd = ::open(files.error.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  halide::reportWriteFailuresTo(errorFd);
  // Nothing may leave this function in the child but _exit: an exception
  // unwinding into the caller would run the rest of the parent's compile.
  std::string message;
  try {
    if (llvm::Error error = runJob(job, request, target, files))
      message = llvm::toString(std::move(error));
  } catch (const std::exception &e) {
    message = "compiling " + job.name + ": " + e.what();
  } catch (...) {
    message = "compiling " + job.name + ": an unknown exception";
  }
  int status = message.empty() ? 0 : 1;
  if (status) {
    ssize_t ignored = ::write(errorFd, message.data(), message.size());
    (void)ignored;
  }
  ::close(errorFd);
  if (status == 0)
    std::remove(files.error.c_str());
  std::fflush(nullptr);
  ::_exit(status);
}

/// The error of a job that did not succeed.
llvm::Error jobError(const KernelJob &job, const JobFiles &files, int status) {
  if (std::string message = readFile(files.error); !message.empty())
    return makeError(message);
  if (WIFSIGNALED(status))
    return makeError("compiling " + job.name + ": its process was killed by signal " +
                     std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")");
  return makeError("compiling " + job.name + ": its process " +
                   (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                      : std::string("ended")) +
                   " without saying why");
}

/// Runs every job, at most `parallel` at once. After the first failure no
/// job starts and the running ones are stopped; the error is that of the
/// first job, in job order, that failed by itself.
llvm::Error runJobs(const std::vector<KernelJob> &jobs, const KernelBuildRequest &request,
                    const TargetInfo &target, int parallel, int *reused) {
  std::vector<JobFiles> files;
  for (const KernelJob &job : jobs)
    files.emplace_back(request.workDir + "/" + job.name);
  std::map<pid_t, size_t> running;
  std::vector<int> statuses(jobs.size(), 0);
  std::vector<bool> failedAlone(jobs.size(), false), stopped(jobs.size(), false);
  size_t next = 0;
  bool failed = false;
  while ((!failed && next < jobs.size()) || !running.empty()) {
    while (!failed && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      if (reuseJob(jobs[next], request, files[next])) {
        ++*reused;
        ++next;
        continue;
      }
      pid_t pid = startJob(jobs[next], request, target, files[next]);
      if (pid < 0) {
        if (running.empty())
          return makeError(std::string("cannot start a process to compile kernels: ") +
                           std::strerror(errno));
        break; // again once one has finished
      }
      running[pid] = next++;
    }
    if (running.empty())
      continue; // every job left was reused
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      return makeError(std::string("waiting for a kernel compile: ") + std::strerror(errno));
    }
    auto it = running.find(pid);
    if (it == running.end())
      continue;
    size_t job = it->second;
    running.erase(it);
    statuses[job] = status;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      continue;
    if (stopped[job])
      continue;
    failedAlone[job] = true;
    if (!failed) {
      failed = true;
      for (auto &[other, index] : running) {
        stopped[index] = true;
        ::kill(other, SIGKILL);
      }
    }
  }
  for (size_t j = 0; j < jobs.size(); ++j)
    if (failedAlone[j])
      return jobError(jobs[j], files[j], statuses[j]);
  return llvm::Error::success();
}

} // namespace

int availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
}

llvm::Expected<KernelBuildResult> buildKernels(const KernelPlan &plan, const TargetInfo &target,
                                               const KernelBuildRequest &request) {
  KernelBuildResult result;
  std::vector<TargetSection> sections;
  std::vector<KernelJob> jobs = planJobs(plan, target, &sections);
  std::ostringstream halideText;
  if (!request.compileObjects) {
    // The `halide` stage alone: lowering, no objects, in this process.
    size_t job = 0;
    for (const TargetSection &section : sections) {
      halideText << section.header;
      for (; job < section.end; ++job) {
        llvm::Expected<halide::LoweredKernel> lowered = lowerJob(jobs[job]);
        if (!lowered)
          return lowered.takeError();
        halideText << "\n" << halide::describeKernel(jobs[job].name, *lowered, jobs[job].schedule);
      }
    }
    result.halideText = halideText.str();
    return std::move(result);
  }

  // One Halide runtime serves every variant: the multi-ISA target names its
  // baseline (AVX2) here, so the runtime runs wherever a variant can.
  jobs.push_back({"halide_runtime", nullptr, {}, target, nullptr});
  int parallel = request.jobs > 0 ? request.jobs : availableCpus();
  // A cache that cannot be written warns here once, not in every child.
  KernelBuildRequest jobRequest = request;
  if (!jobRequest.kernelCache.empty() && !halide::ObjectCache(jobRequest.kernelCache).writable())
    jobRequest.kernelCache.clear();
  if (llvm::Error error = runJobs(jobs, jobRequest, target, parallel, &result.unloweredObjects))
    return std::move(error);

  size_t job = 0;
  for (const TargetSection &section : sections) {
    halideText << section.header;
    for (; job < section.end; ++job) {
      JobFiles files(request.workDir + "/" + jobs[job].name);
      halideText << "\n" << readFile(files.halide);
      if (request.wantStmt)
        result.stmtText += "// kernel " + jobs[job].name + "\n" + readFile(files.stmt) + "\n";
      if (request.wantAssembly)
        result.assemblyText +=
            "# kernel " + jobs[job].name + "\n" + readFile(files.assembly) + "\n";
      if (request.wantDevice && fileExists(files.device))
        result.deviceCode.emplace_back(jobs[job].name, readFile(files.device));
    }
  }
  result.halideText = halideText.str();
  for (const KernelJob &each : jobs) {
    JobFiles files(request.workDir + "/" + each.name);
    result.objects.push_back(files.object);
    ++(fileExists(files.cached) ? result.cachedObjects : result.compiledObjects);
  }
  return std::move(result);
}

} // namespace tmc
