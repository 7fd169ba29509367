//===- input_files.h - No output written over an input ----------*- C++ -*-===//
//
// A command must never write a file over one it reads: `model --weights
// w.safetensors --output w.safetensors` would replace the weights with an
// .npy, `tmc compile M.tm -o M.tm` the spec with an executable. Every command
// that writes names its inputs with their roles and, before doing any work,
// refuses an output path that is one of them (a usage error, exit 2;
// docs/architecture.md, "Non-negotiables"). tmc and the executables share
// this one comparison: device and inode after resolving symlinks, so another
// spelling of a path, a symlink or a hard link is caught too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace tmr {

/// A file a command reads and what it is to the command ("the spec", "the
/// weights"), for the message.
struct InputFile {
  std::string role;
  std::string path;
};

/// True when both paths name one existing regular file: the same device and
/// inode once symlinks are resolved. A path that does not exist yet is no
/// input, and a device or FIFO is never overwritten.
bool isSameFile(const std::string &a, const std::string &b);

/// Empty when writing `output` (the value of `outputRole`, e.g. "-o") leaves
/// every input intact; else the message naming the input it would destroy:
/// "-o M.tm is the spec (M.tm): refusing to write over an input".
std::string overwrittenInput(const std::string &outputRole, const std::string &output,
                             const std::vector<InputFile> &inputs);

} // namespace tmr
