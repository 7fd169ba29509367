//===- ScheduleFields.h - The fields of a Schedule, as one table -*- C++ -*-===//
//
// Every field of `Schedule` once: its key in `Schedule::str()`, its member,
// the range parsing and validation accept, the kernels whose lowering reads
// it, the schedules (CPU, GPU) it belongs to, the rule it must meet beyond
// its range, and how `tmc tune` varies it. Printing, parsing and validation
// (Schedule.cpp) and the tuner's search operators (tune/Search.cpp) iterate
// this table and name no field themselves: a field added here is printed,
// parsed, checked and searched at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace tmc {

struct TargetInfo;

/// The schedules a field belongs to.
enum class FieldTarget {
  Cpu,  ///< CPU schedules; GPU schedules print it too, at the value they keep
  Gpu,  ///< GPU schedules only: printed only where `Schedule::gpu` is set
  Both, ///< read by the lowerings of both
};

/// How `tmc tune` varies a field (tune/Search.cpp). A field that no kernel's
/// search varies is set by the kernel or the target, and the tuner keeps the
/// default's value.
struct FieldSearch {
  uint32_t kinds = 0; ///< the kernels whose search varies it: bits of KernelKind
  /// The values a mutation picks from for `kernel` on `target`, the rest of
  /// the schedule being `current`. nullptr: a flag ([0, 1]), toggled.
  std::vector<int> (*values)(const KernelDesc &kernel, const TargetInfo &target,
                             const Schedule &current) = nullptr;
  /// The default's neighbours that seed the search: `base` with this field
  /// changed (and any field that has to change with it). nullptr: none.
  std::vector<Schedule> (*seeds)(const KernelDesc &kernel, const Schedule &base) = nullptr;
  /// Of the values that behave alike, the one canonical() keeps (`s` has the
  /// fields before this one canonical already). nullptr: every value differs.
  int (*canonical)(const KernelDesc &kernel, const Schedule &s, const Schedule &base) = nullptr;
};

struct ScheduleField {
  const char *key;                    ///< `key=value` in Schedule::str()
  int Schedule::*intMember = nullptr; ///< exactly one of the two members is set
  bool Schedule::*boolMember = nullptr;
  int min = 0, max = 1; ///< what parsing and validation accept
  /// Non-null: 0 is accepted besides [min, max] and means this ("one pass").
  const char *zeroMeans = nullptr;
  uint32_t kinds = 0; ///< the kernels whose lowering reads it: bits of KernelKind
  FieldTarget target = FieldTarget::Cpu;
  bool printed = true; ///< part of str(), and so a key parseSchedule accepts
  /// A multiple of vector_width: a mutation of the vector width keeps its
  /// count of vectors, and crossover takes it with the vector width.
  bool inVectors = false;
  /// What validSchedule checks beyond the range, for kernels that read the
  /// field (the fields before it in the table are in range). nullptr: nothing.
  llvm::Error (*check)(const KernelDesc &kernel, const TargetInfo &target,
                       const Schedule &s) = nullptr;
  FieldSearch search;
  const char *doc = "";

  int get(const Schedule &s) const { return intMember ? s.*intMember : (s.*boolMember ? 1 : 0); }
  void set(Schedule &s, int value) const {
    if (intMember)
      s.*intMember = value;
    else
      s.*boolMember = value != 0;
  }
  bool inRange(int64_t value) const {
    return (zeroMeans && value == 0) || (value >= min && value <= max);
  }
  /// "KEY=WRITTEN is out of range [MIN, MAX]" (or "must be 0 (...) or in
  /// [MIN, MAX]"), for a value written as `written` that is not in range.
  llvm::Error outOfRange(llvm::StringRef written) const;
  /// Whether `s.str()` shows it.
  bool printedIn(const Schedule &s) const {
    return printed && (target != FieldTarget::Gpu || s.gpu);
  }
  bool readBy(const KernelDesc &kernel) const { return kinds & kindBit(kernel.kind); }
  bool searchedFor(const KernelDesc &kernel) const { return search.kinds & kindBit(kernel.kind); }
  /// Whether the tuner varies it for some kernel (else it keeps the default's).
  bool tuned() const { return search.kinds != 0; }

  static constexpr uint32_t kindBit(KernelKind kind) {
    return uint32_t(1) << static_cast<uint32_t>(kind);
  }
};

/// Kernels that run one row per parallel task (LowerElementwise.cpp's
/// scheduleRows and rope): the ones parallel_min_rows applies to.
bool rowTasks(const KernelDesc &kernel);

/// Every field, in the order str() prints them.
llvm::ArrayRef<ScheduleField> scheduleFields();

/// The field whose key is `key`, printed or not; nullptr if none.
const ScheduleField *findScheduleField(llvm::StringRef key);

} // namespace tmc
