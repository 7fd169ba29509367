//===- safetensors_writer.cpp - Writing .safetensors weight files ---------===//
//
// The header is padded with spaces (allowed by the spec) so that the data
// section starts TMR_BUFFER_ALIGNMENT-aligned (and with it every tensor whose
// predecessors' byte sizes are multiples of that)
// and can be used in place after mmap.
//
//===----------------------------------------------------------------------===//
#include "runtime/atomic_file.h"
#include "runtime/safetensors.h"

#include <nlohmann/json.hpp>

#include <set>

namespace tmr {

bool writeSafetensors(const std::string &path, const std::vector<TensorToWrite> &tensors,
                      std::string *error,
                      const std::function<bool(std::string *error)> &beforeCommit) {
  auto fail = [&](const std::string &message) {
    if (error)
      *error = path + ": " + message;
    return false;
  };

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::set<std::string> names;
  std::vector<uint64_t> sizes;
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorToWrite &t = tensors[i];
    std::string what = "tensor '" + t.name + "'";
    if (t.name.empty())
      return fail("tensor #" + std::to_string(i) + " has an empty name");
    if (t.name == "__metadata__")
      return fail("'__metadata__' is reserved and cannot name a tensor");
    if (!names.insert(t.name).second)
      return fail(what + " is given more than once");
    size_t elementSize = dtypeSize(t.dtype);
    if (elementSize == 0)
      return fail(what + " has an invalid dtype (" + std::to_string(int(t.dtype)) + ")");
    uint64_t bytes = elementSize;
    for (int64_t dim : t.shape) {
      if (dim < 0)
        return fail(what + " has negative dimension " + std::to_string(dim));
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
        return fail(what + " has shape " + formatShape(t.shape) + " whose byte size overflows");
    }
    if (bytes > 0 && !t.data)
      return fail(what + " has no data");
    uint64_t end = 0;
    if (__builtin_add_overflow(offset, bytes, &end))
      return fail("the tensors' total byte size overflows");
    header[t.name] = {
        {"dtype", dtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, end}}};
    offset = end;
    sizes.push_back(bytes);
  }

  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception &) {
    return fail("a tensor name is not valid UTF-8");
  }
  // 8-byte length + header, padded so that the data section (and so every
  // tensor whose predecessors' sizes are multiples of it) is aligned for
  // the kernels' vector loads, and can be used from the mmap without a copy.
  text.append((TMR_BUFFER_ALIGNMENT - (8 + text.size()) % TMR_BUFFER_ALIGNMENT) %
                  TMR_BUFFER_ALIGNMENT,
              ' ');
  unsigned char lengthBytes[8];
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));

  std::unique_ptr<AtomicFile> out = AtomicFile::create(path, error);
  if (!out)
    return false;
  if (!out->write(lengthBytes, sizeof lengthBytes, error) ||
      !out->write(text.data(), text.size(), error))
    return false;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (sizes[i] > 0 && !out->write(tensors[i].data, sizes[i], error))
      return false;
  if (beforeCommit && !beforeCommit(error))
    return false; // the uncommitted file is removed
  return out->commit(error);
}

} // namespace tmr
