//===- TuningDb.h - The tuning database of `tmc tune` -----------*- C++ -*-===//
//
// A JSON-lines file: a header line {"format": "tmc-tuning-db", "schema": 1},
// then one entry per tuned kernel, keyed by the kernel's name and signature
// (its buffers' shapes), the Halide target string and the tmc version. An
// entry whose key does not match the model and target being compiled is
// reported and ignored, never used: a schedule is only known to be correct
// and fast for the code it was measured with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace tmc {

/// The schema this tmc reads and writes.
constexpr int kTuningDbSchema = 1;

/// tmc's version, part of every entry's key (generated code changes with it).
const char *tmcVersion();

/// One kernel's tuning result.
struct TuningEntry {
  std::string kernel;     ///< KernelDesc::name()
  std::string signature;  ///< kernelSignatureText()
  std::string target;     ///< TargetInfo::halideTarget
  std::string tmcVersion;
  std::string model;      ///< the spec's model name (informational)
  std::string schedule;   ///< Schedule::str() of the best schedule
  std::string defaultSchedule; ///< what it was measured against
  std::string origin;     ///< where the best came from: default, an autoscheduler's seed, ...
  int tokens = 128;       ///< T of the measurement
  int threads = 0;        ///< threads of the measurement
  int calls = 1;          ///< calls per forward pass in the model
  double defaultMs = 0, bestMs = 0;          ///< at `tokens`
  double defaultDecodeMs = 0, bestDecodeMs = 0; ///< at T = 1 (optional in the file)
  /// The machine's FMA peak at `threads`, measured by the tuning run that
  /// wrote the entry (GFLOP/s; 0: not measured; optional in the file): the
  /// GEMM limit the report compares the kernels with.
  double fmaPeakGflops = 0;
  /// The time `threads` threads take to read and write the bytes one call
  /// of the kernel must move at `tokens` (tune/MemoryLimit.h), measured by
  /// the same run (0: not measured; optional in the file): the kernel's
  /// memory limit in the report.
  double memoryMs = 0;
  int trials = 0;         ///< candidates measured (the default included)
  bool confirmed = false; ///< the best beat the default in a final interleaved re-measurement
  std::vector<std::pair<int, double>> history; ///< (trial, best ms so far) at each improvement
  int line = 0;           ///< line in the file it was read from (0: new)
};

struct TuningDb {
  std::vector<TuningEntry> entries;
};

/// The kernel's identity beyond its name: kind-specific shape of every buffer
/// of its signature ("T" for the token count).
std::string kernelSignatureText(const KernelDesc &kernel);

/// Reads `path`. A missing file is an empty database when `allowMissing`.
/// An error (naming the file and line) for a file that cannot be read, is
/// not a tuning database, has another schema, or a malformed entry.
llvm::Expected<TuningDb> loadTuningDb(const std::string &path, bool allowMissing = false);

/// Writes `db` atomically (a temporary file renamed into place).
llvm::Error saveTuningDb(const std::string &path, const TuningDb &db);

/// Whether `entry` may be used for `kernel` on `target`; the reason if not.
bool entryUsable(const TuningEntry &entry, const KernelDesc &kernel, const TargetInfo &target,
                 std::string *why);

/// The concrete target of `target` (one of a multi-ISA target's variants)
/// that `entry` was tuned for; the first if none (`storage` holds the list).
const TargetInfo *variantFor(const TuningEntry &entry, const TargetInfo &target,
                             std::vector<TargetInfo> *storage);

/// The schedules of `db` for `plan`'s kernels on `target` (each variant of a
/// multi-ISA target its own): per kernel the
/// usable entry with the lowest best time. Every entry that cannot be used
/// (foreign target, other tmc version, a kernel the model lacks or whose
/// shapes changed, an invalid schedule) adds a warning. `found` gets the names
/// (with the ISA for a multi-ISA target) of the kernels that got a schedule
/// other than their default, `atDefault`
/// those whose tuning kept the default (they are not in the table).
ScheduleTable selectSchedules(const TuningDb &db, const KernelPlan &plan,
                              const TargetInfo &target, std::vector<std::string> *warnings,
                              std::vector<std::string> *found,
                              std::vector<std::string> *atDefault = nullptr);

} // namespace tmc
