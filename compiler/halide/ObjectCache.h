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
// Entries are written to a temporary name in their directory and renamed, so
// that concurrent compiles share one directory and an entry is whole or
// absent. A cache that cannot be read or written is a warning, never a failed
// compile. Nothing is evicted: the directory is the user's to clear.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

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

private:
  std::string entryPath(const std::string &key) const;
  std::string directory;
};

} // namespace tmc::halide
