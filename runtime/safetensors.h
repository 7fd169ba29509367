//===- safetensors.h - Reading and writing .safetensors weight files -*- C++ -*-===//
//
// The weight interchange format (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length N, N bytes of JSON mapping each tensor
// name to {dtype, shape, data_offsets}, then the raw data. Reading mmaps the
// file and validates every header entry up front, so the model never sees a
// tensor whose bytes are not all inside the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/tmr_abi.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tmr {

class MappingGuard;

/// "F32", "F16" or "BF16": the safetensors spelling of a dtype.
const char *dtypeName(tmr_dtype dtype);
/// Bytes per element of `dtype` (0 for a value outside the enum).
size_t dtypeSize(tmr_dtype dtype);
/// "[64, 32]"; "[]" for a scalar.
std::string formatShape(const std::vector<int64_t> &shape);

/// One tensor of an open SafetensorsFile.
struct TensorView {
  std::string name;
  tmr_dtype dtype = TMR_F32;
  std::vector<int64_t> shape;
  /// Aligned for the dtype; valid while the file is open. Misaligned data in the
  /// file is copied into storage the file owns.
  const void *data = nullptr;
  size_t bytes = 0;
};

/// A tensor of a dtype that no kernel of ours reads (I64, BOOL, F64, ...),
/// which SafetensorsFile::open keeps aside when asked to: Hugging Face
/// checkpoints carry such buffers (BERT's `position_ids`), and a loader that
/// skips them must still see them to name the ones it cannot skip.
struct OtherTensor {
  std::string name;
  std::string dtype; ///< the file's spelling, e.g. "I64"
  std::vector<int64_t> shape;
};

/// A validated, memory-mapped safetensors file.
class SafetensorsFile {
public:
  /// mmaps and validates `path`; nullptr + *error (naming the path) on any
  /// problem: truncated file, bad header, unsupported dtype, inconsistent or
  /// overlapping data offsets. With `guardTruncation`, a read of a page the
  /// file lost to a later truncation returns zeros instead of raising SIGBUS
  /// (mapping_guard.h), and whoever reads must check lost() afterwards;
  /// without it, such a read ends the process.
  /// With `keepOtherDtypes`, a tensor of a known dtype that no kernel reads
  /// is listed in otherTensors() instead of failing the open.
  static std::unique_ptr<SafetensorsFile> open(const std::string &path, std::string *error,
                                               bool guardTruncation = false,
                                               bool keepOtherDtypes = false);
  /// A file of other files' tensors under new names: a Hugging Face
  /// checkpoint read under tmc's canonical names (hf_checkpoint.h). `views`
  /// point into the `sources`' data or into `storage`, which it keeps.
  static std::unique_ptr<SafetensorsFile>
  assemble(std::string displayName, std::vector<std::unique_ptr<SafetensorsFile>> sources,
           std::vector<TensorView> views, std::vector<AlignedVector<unsigned char>> storage);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;

  /// The tensor called `name`, or nullptr.
  const TensorView *find(std::string_view name) const;
  /// All tensors, in the order of the file's header.
  const std::vector<TensorView> &tensors() const { return tensors_; }
  /// The tensors of dtypes no kernel reads, when opened with keepOtherDtypes.
  const std::vector<OtherTensor> &otherTensors() const { return others_; }
  const std::string &path() const { return path_; }
  /// Whether the file shrank under the mapping since it was opened, so that
  /// reads from it returned zeros (mapping_guard.h); the message says so.
  bool lost() const;
  std::string lostMessage() const;
  /// Whether `data` lies in the file's mapping (not in an aligned copy), so
  /// that its pages may be dropped (madvise) and read back from the file.
  bool isMapped(const void *data) const;
  /// Frees the private copy that holds exactly the tensor at [data, data +
  /// bytes) (a misaligned tensor's, or a converted one of an assembled file),
  /// once nothing reads it; false if no copy is exactly that tensor.
  bool releaseCopy(const void *data, size_t bytes);

private:
  SafetensorsFile() = default;

  std::string path_;
  void *map_ = nullptr;
  size_t mapSize_ = 0;
  std::vector<TensorView> tensors_;
  std::vector<OtherTensor> others_;
  /// An assembled file's shards, whose mappings its views read.
  std::vector<std::unique_ptr<SafetensorsFile>> sources_;
  std::map<std::string, size_t, std::less<>> byName_;
  /// Aligned copies of tensors whose bytes are misaligned in the file.
  std::vector<AlignedVector<unsigned char>> copies_;
  /// Absorbs SIGBUS from the mapping if the file is truncated under it.
  std::unique_ptr<MappingGuard> guard_;
};

/// Checks the file against the model's expected tensors: every expected tensor
/// present with the same dtype and shape, and no tensor in the file that the
/// model does not expect. On failure returns false and sets *error to one line
/// per problem (at most 20), each starting with `displayName`, naming the
/// tensor and giving expected vs actual, e.g.
///   "w.safetensors: tensor 'x' has shape [64, 32], expected [128, 32]"
///   "w.safetensors: missing tensor 'embed.tokens' (expected F32 [100, 32])"
bool checkTensors(const SafetensorsFile &file, const std::string &displayName,
                  const tmr_tensor_desc *expected, int32_t count, std::string *error);

/// NaN and infinite elements of one tensor.
struct NonFinite {
  int64_t count = 0;
  int64_t first = -1;      ///< flat index of the first, -1 if none
  bool firstIsNaN = false; ///< else it is +-infinity
};
/// Scans a tensor's elements for NaN and infinities (about as fast as reading
/// the memory once).
NonFinite findNonFinite(const TensorView &tensor);
/// Element `flat` of a row-major tensor of `shape` as its index, e.g. [3, 17].
std::vector<int64_t> elementIndex(int64_t flat, const std::vector<int64_t> &shape);
/// One line per tensor holding NaN or infinities, naming it, the count and the
/// first one's index; e.g. "w.safetensors: tensor 'x' has 2 non-finite values
/// (the first, at [3, 17], is NaN)". Such weights load (a model may mean them),
/// but every output they reach will be NaN, so the user hears about it.
std::vector<std::string> nonFiniteWarnings(const SafetensorsFile &file,
                                           const std::string &displayName);

/// One line per weight that the model quantizes to q4 at load (`expected`:
/// its manifest, tmr_quantized) holding finite values of magnitude 524160 or
/// more: their blocks' scales (the largest magnitude / 8) round to an
/// infinite f16, and every output such a block reaches is infinite or NaN.
/// E.g. "w.safetensors: tensor 'x' has 1 value of magnitude 524160 or more
/// (the first, at [3, 17]): ...". Such weights load, as non-finite ones do.
std::vector<std::string> q4OverflowWarnings(const SafetensorsFile &file,
                                            const std::string &displayName,
                                            const tmr_tensor_desc *expected, int32_t count);

/// One tensor for writeSafetensors; `data` holds product(shape) elements.
struct TensorToWrite {
  std::string name;
  tmr_dtype dtype = TMR_F32;
  std::vector<int64_t> shape;
  const void *data;
};

/// Writes a safetensors file atomically (temp file in the same directory +
/// rename; nothing is left behind on failure). Tensors are stored in the given
/// order, the data section starting 8-byte aligned. `beforeCommit`, when
/// given, runs once every byte is written and before the file appears under
/// `path`: returning false (with *error set) abandons it, e.g. when the
/// tensors were read from a mapping that a truncation emptied meanwhile.
bool writeSafetensors(const std::string &path, const std::vector<TensorToWrite> &tensors,
                      std::string *error,
                      const std::function<bool(std::string *error)> &beforeCommit = {});

} // namespace tmr
