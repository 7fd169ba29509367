//===- ObjectCache.h - Compiled kernel objects reused by content -*- C++ -*-===//
//
// `--kernel-cache DIR` (or TMC_KERNEL_CACHE): the objects Halide's code
// generator wrote, kept under the SHA-256 of everything it reads to write
// them, so that compiling the same kernel again (another spec with the same
// layer sizes, another precision of the same model, the next build of tmc)
// copies the object instead of running LLVM.
//
// The key is taken after Halide's lowering, from the lowered module itself:
// its functions' statements, arguments and linkage, its constant buffers'
// bytes, its target, and the identity (path, size, modification time) of the
// Halide and LLVM libraries loaded in this process. It does not depend on how
// tmc produced the module, so a rebuilt tmc whose kernels did not change
// still hits, and no field of a kernel's description can be forgotten in it.
// Floating-point constants are printed with every digit a double needs.
//
// Lowering is itself most of a compile whose objects are all cached, so each
// compile job also has a key taken before lowering (jobKey): everything
// lowering reads, in this process. Its entry names the object's key above.
//
// Entries are written to a temporary name in their directory and renamed, so
// that concurrent compiles share one directory and an entry is whole or
// absent. A cache that cannot be read or written is a warning, never a failed
// compile. Nothing is evicted: the directory is the user's to clear.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <string>
#include <system_error>

// Declared, not included: callers that only check the directory (the tuner)
// compile without Halide.h.
namespace Halide {
class Module;
struct Target;
} // namespace Halide

namespace tmc::halide {

/// The cache key of compiling `module` to an object: 64 hex digits.
std::string objectKey(const Halide::Module &module);

/// The cache key of the standalone Halide runtime for `target`.
std::string runtimeKey(const Halide::Target &target);

/// The key of a compile job before it is lowered: `description` (the job's
/// kernel, schedule, target and function name, every field: KernelCompiler.cpp)
/// in this process, i.e. with the identity (inode, size, modification time)
/// of the executable that lowers it, of the Halide and LLVM libraries it
/// loaded, and the TMC_ and HL_ environment variables. Lowering is a
/// function of exactly those, so one such key always lowers to the same
/// module: its entry holds that module's objectKey, and a compile that finds
/// it copies the object without lowering (most of a compile whose objects
/// are all cached). A rebuilt tmc has new keys and lowers once again. Empty
/// (no job key) where this process cannot identify its executable.
std::string jobKey(const std::string &description);

/// A directory of objects named by their keys. An empty directory is no cache:
/// fetch misses and store does nothing.
class ObjectCache {
public:
  explicit ObjectCache(std::string directory) : directory(std::move(directory)) {}

  bool enabled() const { return !directory.empty(); }
  /// Whether entries can be written: the directory made if missing and a
  /// file created and removed in it. If not, warns (as store would) and
  /// returns false: the caller goes on without a cache.
  bool writable() const;
  /// Copies the entry `key` to `objectPath`; false if there is none (or it
  /// cannot be copied: the caller then compiles, and reports that failure).
  bool fetch(const std::string &key, const std::string &objectPath) const;
  /// Keeps a copy of `objectPath` as the entry `key`. Failures warn once
  /// per process and are otherwise ignored.
  void store(const std::string &key, const std::string &objectPath) const;
  /// A job's entry (jobKey): the objectKey it lowered to and the `halide`
  /// stage text of its kernel. False if there is none or it is malformed.
  bool fetchJob(const std::string &key, std::string &objectKey, std::string &halideText) const;
  void storeJob(const std::string &key, const std::string &objectKey,
                const std::string &halideText) const;

private:
  std::string entryPath(const std::string &key, const char *suffix = ".o") const;
  /// Writes the entry `key` + `suffix` whole or not at all: `write` fills a
  /// temporary file beside it, which is then renamed.
  void storeWith(const std::string &key, const char *suffix,
                 const std::function<std::error_code(const std::string &)> &write) const;
  std::string directory;
};

} // namespace tmc::halide
