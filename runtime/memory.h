//===- memory.h - How much memory this machine and process may use -*- C++ -*-===//
//
// The numbers behind "does this model fit?": `tmc check` compares a model's
// run-time footprint with them, and the executable refuses a weights file it
// could not map rather than being killed halfway through loading it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace tmr {

/// Physical memory of this machine in bytes (0 if unknown).
uint64_t physicalMemoryBytes();
/// The process's address-space limit (`ulimit -v`) in bytes; 0 if unlimited.
uint64_t addressSpaceLimitBytes();
/// "1.5 GB", "312 MB", "4 KB", "17 bytes" (decimal units, like `tmc check`).
std::string formatBytes(uint64_t bytes);

} // namespace tmr
