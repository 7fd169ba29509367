//===- atomic_file.cpp - Output files that appear whole or not at all -----===//
//
// Temp file + fsync + rename: rename(2) within one directory is atomic, so a
// reader sees either the old file, or the complete new one.
//
//===----------------------------------------------------------------------===//
#include "runtime/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tmr {
namespace {

bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

std::string describeErrno(const std::string &what, const std::string &path, int err) {
  return what + " '" + path + "': " + std::strerror(err);
}

} // namespace

std::unique_ptr<AtomicFile> AtomicFile::create(const std::string &path, std::string *error,
                                               unsigned mode) {
  if (path.empty()) {
    fail(error, "cannot create a file with an empty name");
    return nullptr;
  }
  if (path.back() == '/') {
    fail(error, "cannot create '" + path + "': the name is a directory");
    return nullptr;
  }
  // A device or FIFO (`--output /dev/null`, `-o /dev/stdout`) is written in
  // place: renaming a file over it would replace the device node itself.
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      fail(error, describeErrno("cannot write", path, errno));
      return nullptr;
    }
    return std::unique_ptr<AtomicFile>(new AtomicFile(path, "", fd));
  }
  // The temporary file must live in the target's directory: rename(2) is only
  // atomic (and only possible) within one file system.
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  // O_EXCL with a name unique to this process and call; open(2) applies the
  // umask to `mode` exactly as for a plain create.
  static std::atomic<unsigned> counter{0};
  std::string tempPath;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tempPath = dir + "." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
               std::to_string(counter.fetch_add(1));
    fd = ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                static_cast<mode_t>(mode));
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    fail(error, describeErrno("cannot create", path, errno));
    return nullptr;
  }
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, tempPath, fd));
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    if (!tempPath_.empty())
      ::unlink(tempPath_.c_str());
  }
}

bool AtomicFile::write(const void *data, size_t size, std::string *error) {
  if (fd_ < 0 || failed_)
    return fail(error, "cannot write '" + path_ + "': the file is already closed");
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    // Large tensors exceed what one write(2) transfers; loop over short writes.
    ssize_t n = ::write(fd_, bytes, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      failed_ = true;
      return fail(error, describeErrno("cannot write", path_, errno));
    }
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool AtomicFile::commit(std::string *error) {
  if (fd_ < 0 || failed_) {
    discard();
    return fail(error, "cannot write '" + path_ + "': an earlier write failed");
  }
  // Written in place (a device): nothing to sync or rename.
  bool inPlace = tempPath_.empty();
  if (!inPlace && ::fsync(fd_) != 0) {
    int err = errno;
    discard();
    return fail(error, describeErrno("cannot write", path_, err));
  }
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int err = errno;
    if (!inPlace)
      ::unlink(tempPath_.c_str());
    return fail(error, describeErrno("cannot write", path_, err));
  }
  if (inPlace)
    return true;
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tempPath_.c_str());
    return fail(error, describeErrno("cannot create", path_, err));
  }
  return true;
}

} // namespace tmr
