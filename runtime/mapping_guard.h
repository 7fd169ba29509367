//===- mapping_guard.h - Surviving a weights file truncated under us -*- C++ -*-===//
//
// The weights are mmapped, and runs keep reading some of them in place (f32
// tensors no kernel packs: norm gains, biases, embedding tables). If the file
// shrinks while the model runs (another program truncates or rewrites it),
// the next read of a page past the new end raises SIGBUS, which by default
// kills the process without a word -- or kills a program embedding tmr.h.
//
// A guarded mapping registers its address range with a process-wide SIGBUS
// handler. A fault inside the range is absorbed where it happens, on any
// thread (Halide's workers read weights too): the handler maps zero pages
// over the rest of the range, marks the mapping lost and returns, so the
// faulting load reads 0 and the run finishes with meaningless values. Whoever
// started the load or the run then asks lost() (or lostWeightsError()) and
// fails with a message naming the file instead of returning those values. A
// lost mapping stays lost: every later run fails the same way.
//
// A SIGBUS anywhere else goes to the handler that was installed before ours
// (or the default action, which ends the process with SIGBUS), so a program
// embedding the runtime keeps its own handling. The handler is installed on
// the first registration and stays for the life of the process; a program
// that installs its own SIGBUS handler later must chain to the previous one
// for the runtime's faults to be absorbed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tmr {

/// One registered read-only file mapping (RAII: unregisters on destruction,
/// which must come before the munmap).
class MappingGuard {
public:
  /// Guards [begin, begin + bytes), a mapping of `path`, which had `fileBytes`
  /// bytes when mapped. With every slot taken (more open weight files than
  /// the registry holds) the mapping is unguarded: a truncation then ends the
  /// process as it would without the guard.
  MappingGuard(const void *begin, size_t bytes, std::string path, uint64_t fileBytes);
  ~MappingGuard();
  MappingGuard(const MappingGuard &) = delete;
  MappingGuard &operator=(const MappingGuard &) = delete;

  /// Whether pages of the mapping vanished (the file shrank) since it was
  /// registered; once true, reads from the range return zeros.
  bool lost() const;
  /// "PATH: the file was truncated while the model was reading it (it had N
  /// bytes when opened, M now); ...": the message for a lost mapping.
  std::string lostMessage() const;

private:
  int slot_ = -1;
  std::string path_;
  uint64_t fileBytes_ = 0;
};

/// The message of lostMessage() for the first lost guarded mapping holding
/// any of `pointers` (a model's weights as runs read them); "" when none is
/// lost. One atomic load when no mapping was ever lost.
std::string lostWeightsError(const std::vector<const void *> &pointers);

} // namespace tmr
