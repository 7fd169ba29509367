//===- npy.h - NumPy .npy files of f32 arrays --------------------*- C++ -*-===//
//
// The model's output interchange format (ARCHITECTURE.md: `--output` writes a
// f32 .npy of shape [batch, tokens, width]) that any reference, numpy or
// PyTorch included, can read and compare against.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tmr {

/// Writes `data` (product(shape) floats, C order) as an NPY 1.0 file with
/// dtype '<f4'. Atomic: temp file + rename, nothing left behind on failure.
bool writeNpyF32(const std::string &path, const std::vector<int64_t> &shape, const float *data,
                 std::string *error);

/// Reads a little-endian f32, C-order .npy file (format version 1.0 or 2.0, as
/// writeNpyF32 and numpy.save write it). Any other dtype, byte order, Fortran
/// order or a truncated file is an error naming the path.
bool readNpyF32(const std::string &path, std::vector<int64_t> *shape, std::vector<float> *data,
                std::string *error);

} // namespace tmr
