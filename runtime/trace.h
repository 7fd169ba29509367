//===- trace.h - Every kernel's output, for `tmc verify` ---------*- C++ -*-===//
//
// An executor generated with tracing on (only `tmc verify` asks for one)
// reports each kernel call's output here; the runtime appends it to the file
// named by $TMR_TRACE_FILE. Normal executors never call this.
//
// File format, one record per call, native endianness:
//   int32 call index (into the kernel plan's calls), int32 0,
//   int64 rows, int64 width, rows * width f32 values (row-major).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

extern "C" void tmr_trace_call(int32_t call, const float *data, int64_t rows, int64_t width);

namespace tmr {

/// One record of a trace file.
struct TraceRecord {
  int32_t call = 0;
  int64_t rows = 0, width = 0;
  std::vector<float> values;
};

/// Reads a whole trace; false with *error on a malformed or truncated file.
bool readTrace(const std::string &path, std::vector<TraceRecord> *records, std::string *error);

} // namespace tmr
