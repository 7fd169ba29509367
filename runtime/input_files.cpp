//===- input_files.cpp - No output written over an input ------------------===//

#include "runtime/input_files.h"

#include <cstring>
#include <dirent.h>
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
  for (const InputFile &input : inputs) {
    if (isSameFile(output, input.path))
      return outputRole + " " + output + " is " + input.role + " (" + input.path +
             "): refusing to write over an input";
    // A folder input (a Hugging Face checkpoint) is read file by file: each
    // of its files is an input.
    if (DIR *folder = input.path.empty() ? nullptr : ::opendir(input.path.c_str())) {
      std::string found;
      while (const dirent *entry = ::readdir(folder)) {
        // What a checkpoint is read from: weights, configs and indexes,
        // tokenizer files; an earlier run's output is none of them.
        std::string name = entry->d_name;
        bool read = false;
        for (const char *extension : {".safetensors", ".json", ".txt", ".bpe", ".model"})
          read |=
              name.size() > std::strlen(extension) &&
              name.compare(name.size() - std::strlen(extension), std::string::npos, extension) == 0;
        if (!read)
          continue;
        std::string path = input.path + "/" + name;
        if (isSameFile(output, path)) {
          found = path;
          break;
        }
      }
      ::closedir(folder);
      if (!found.empty())
        return outputRole + " " + output + " is a file of " + input.role + " (" + found +
               "): refusing to write over an input";
    }
  }
  return "";
}

} // namespace tmr
