//===- input_files.cpp - No output written over an input ------------------===//

#include "runtime/input_files.h"

#include <sys/stat.h>

namespace tmr {

bool isSameFile(const std::string &a, const std::string &b) {
  struct stat first, second;
  if (a.empty() || b.empty() || ::stat(a.c_str(), &first) != 0 ||
      ::stat(b.c_str(), &second) != 0)
    return false;
  // Writing a device or a FIFO replaces nothing (AtomicFile writes them in
  // place): `--emit=tm -o /dev/stdout` reading /dev/stdin from the same
  // terminal is no overwrite.
  return S_ISREG(first.st_mode) && first.st_dev == second.st_dev &&
         first.st_ino == second.st_ino;
}

std::string overwrittenInput(const std::string &outputRole, const std::string &output,
                             const std::vector<InputFile> &inputs) {
  for (const InputFile &input : inputs)
    if (isSameFile(output, input.path))
      return outputRole + " " + output + " is " + input.role + " (" + input.path +
             "): refusing to write over an input";
  return "";
}

} // namespace tmr
