//===- memory.cpp - How much memory this machine and process may use ------===//

#include "runtime/memory.h"

#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

namespace tmr {

uint64_t physicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

uint64_t addressSpaceLimitBytes() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 0;
  return static_cast<uint64_t>(limit.rlim_cur);
}

std::string formatBytes(uint64_t bytes) {
  static const char *units[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000)
    return std::to_string(bytes) + " bytes";
  double scaled = static_cast<double>(bytes);
  int unit = -1;
  while (scaled >= 1000 && unit + 1 < 6) {
    scaled /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", scaled, units[unit]);
  return text;
}

} // namespace tmr
