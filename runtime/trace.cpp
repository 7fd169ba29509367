//===- trace.cpp - Writing and reading kernel-output traces ---------------===//

#include "runtime/trace.h"

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <memory>

namespace {

struct FileCloser {
  void operator()(std::FILE *file) const { std::fclose(file); }
};

/// Opened on first use; the records of one process go to one file.
std::FILE *traceFile() {
  static std::unique_ptr<std::FILE, FileCloser> file([] {
    const char *path = std::getenv("TMR_TRACE_FILE");
    return path && *path ? std::fopen(path, "wb") : nullptr;
  }());
  return file.get();
}

} // namespace

extern "C" void tmr_trace_call(int32_t call, const float *data, int64_t rows, int64_t width) {
  std::FILE *file = traceFile();
  if (!file || rows < 0 || width < 0)
    return;
  int32_t header[2] = {call, 0};
  int64_t shape[2] = {rows, width};
  std::fwrite(header, sizeof header, 1, file);
  std::fwrite(shape, sizeof shape, 1, file);
  std::fwrite(data, sizeof(float), static_cast<size_t>(rows * width), file);
  // The reader runs after this process exits, however it exits.
  std::fflush(file);
}

bool tmr::readTrace(const std::string &path, std::vector<TraceRecord> *records,
                    std::string *error) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    *error = "cannot open the trace '" + path + "'";
    return false;
  }
  records->clear();
  for (;;) {
    int32_t header[2];
    int64_t shape[2];
    size_t got = std::fread(header, sizeof header, 1, file.get());
    if (got == 0 && std::feof(file.get()))
      return true;
    if (got != 1 || std::fread(shape, sizeof shape, 1, file.get()) != 1 || shape[0] < 0 ||
        shape[1] < 0 || shape[0] > (int64_t(1) << 32) / std::max<int64_t>(shape[1], 1)) {
      *error = "the trace '" + path + "' is malformed";
      return false;
    }
    TraceRecord record{header[0], shape[0], shape[1], {}};
    record.values.resize(static_cast<size_t>(shape[0] * shape[1]));
    if (std::fread(record.values.data(), sizeof(float), record.values.size(), file.get()) !=
        record.values.size()) {
      *error = "the trace '" + path + "' is truncated";
      return false;
    }
    records->push_back(std::move(record));
  }
}
