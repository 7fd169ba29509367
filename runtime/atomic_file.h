//===- atomic_file.h - Output files that appear whole or not at all -*- C++ -*-===//
//
// Every file the runtime and the tools write goes through a temporary file in
// the target's directory that is renamed into place only once it is complete,
// so an interrupted or failed write never leaves a truncated file under the
// final name (ARCHITECTURE.md, "Output files are written atomically"). An
// existing device or FIFO (/dev/null, /dev/stdout) is written in place instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace tmr {

/// A file being written under a temporary name next to `path`. commit() makes
/// it appear as `path`; destroying an uncommitted AtomicFile removes it.
class AtomicFile {
public:
  /// Creates the temporary file; nullptr + *error when that is impossible
  /// (e.g. the directory does not exist). `mode` is the final permission set
  /// before the umask, as for open(2): 0755 for an executable.
  static std::unique_ptr<AtomicFile> create(const std::string &path, std::string *error,
                                            unsigned mode = 0644);
  ~AtomicFile();
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  /// Appends `size` bytes; false + *error on an I/O error (e.g. disk full).
  bool write(const void *data, size_t size, std::string *error);
  /// Flushes, closes and renames the file into place. After a failure the
  /// temporary file is gone and nothing exists under the final name.
  bool commit(std::string *error);

  const std::string &path() const { return path_; }

private:
  /// An empty `tempPath` writes `path` in place (a device or FIFO).
  AtomicFile(std::string path, std::string tempPath, int fd)
      : path_(std::move(path)), tempPath_(std::move(tempPath)), fd_(fd) {}
  void discard();

  std::string path_;
  std::string tempPath_;
  int fd_ = -1;
  bool failed_ = false;
};

} // namespace tmr
