//===- safetensors.cpp - Opening, validating and checking weight files ----===//
//
// Everything in the header is untrusted: a malformed or hostile file must end
// in a message naming the file and the tensor, never in a read outside the
// mapping. All offset arithmetic is therefore done in uint64_t with explicit
// overflow checks before any pointer is formed.
//
//===----------------------------------------------------------------------===//
#include "runtime/safetensors.h"

#include "runtime/half.h"
#include "runtime/mapping_guard.h"
#include "runtime/memory.h"
#include "runtime/message_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tmr {
namespace {

using Json = nlohmann::ordered_json;

/// The reference implementation's limit; a larger header is a corrupt file.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

/// Safetensors dtypes that exist but that no model of ours consumes, with
/// their bits per element.
struct OtherDtype {
  const char *name;
  uint64_t bits;
};
constexpr OtherDtype kOtherDtypes[] = {
    {"F64", 64},    {"I64", 64},    {"I32", 32},    {"I16", 16},    {"U64", 64},
    {"U32", 32},    {"U16", 16},    {"BOOL", 8},    {"F8_E4M3", 8}, {"F8_E5M2", 8},
    {"F8_E8M0", 8}, {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"F4", 4}};

bool parseDtype(const std::string &text, tmr_dtype *dtype) {
  for (tmr_dtype d : {TMR_F32, TMR_F16, TMR_BF16, TMR_I8, TMR_U8})
    if (text == dtypeName(d)) {
      *dtype = d;
      return true;
    }
  return false;
}

/// A name from the header, quoted, escaped and cut short (message_text.h).
std::string inQuotes(std::string_view name) { return quoted(name); }

/// Reads a JSON integer into a uint64_t; false for any other JSON value or a
/// negative number (which *negative then holds, for the message).
bool getUnsigned(const Json &value, uint64_t *out, int64_t *negative) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v >= 0) {
      *out = static_cast<uint64_t>(v);
      return true;
    }
    *negative = v;
  }
  return false;
}

} // namespace

const char *dtypeName(tmr_dtype dtype) {
  switch (dtype) {
  case TMR_F32:
    return "F32";
  case TMR_F16:
    return "F16";
  case TMR_BF16:
    return "BF16";
  case TMR_I8:
    return "I8";
  case TMR_U8:
    return "U8";
  }
  return "invalid-dtype";
}

size_t dtypeSize(tmr_dtype dtype) {
  switch (dtype) {
  case TMR_F32:
    return 4;
  case TMR_F16:
  case TMR_BF16:
    return 2;
  case TMR_I8:
  case TMR_U8:
    return 1;
  }
  return 0;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

SafetensorsFile::~SafetensorsFile() {
  guard_.reset(); // before the range can be mapped again by someone else
  if (map_)
    ::munmap(map_, mapSize_);
}

bool SafetensorsFile::lost() const {
  return (guard_ && guard_->lost()) ||
         std::any_of(sources_.begin(), sources_.end(), [](const auto &s) { return s->lost(); });
}

std::string SafetensorsFile::lostMessage() const {
  if (guard_ && guard_->lost())
    return guard_->lostMessage();
  for (const auto &source : sources_)
    if (source->lost())
      return source->lostMessage();
  return "";
}

bool SafetensorsFile::isMapped(const void *data) const {
  auto *p = static_cast<const unsigned char *>(data);
  auto *base = static_cast<const unsigned char *>(map_);
  return (map_ && p >= base && p < base + mapSize_) ||
         std::any_of(sources_.begin(), sources_.end(),
                     [&](const auto &s) { return s->isMapped(data); });
}

bool SafetensorsFile::releaseCopy(const void *data, size_t bytes) {
  for (AlignedVector<unsigned char> &copy : copies_)
    if (copy.data() == data && copy.size() == bytes && bytes > 0) {
      AlignedVector<unsigned char>().swap(copy);
      return true;
    }
  return std::any_of(sources_.begin(), sources_.end(),
                     [&](const auto &s) { return s->releaseCopy(data, bytes); });
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::assemble(
    std::string displayName, std::vector<std::unique_ptr<SafetensorsFile>> sources,
    std::vector<TensorView> views, std::vector<AlignedVector<unsigned char>> storage) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = std::move(displayName);
  file->sources_ = std::move(sources);
  file->copies_ = std::move(storage);
  for (TensorView &view : views) {
    file->byName_.emplace(view.name, file->tensors_.size());
    file->tensors_.push_back(std::move(view));
  }
  return file;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string &path, std::string *error,
                                                       bool guardTruncation, bool keepOtherDtypes) {
  const SafetensorsFile *opened = nullptr;
  auto fail = [&](const std::string &message) {
    // Read while the file shrank: the bytes were zeros, not the file's.
    if (error)
      *error = opened && opened->lost() ? opened->lostMessage() : path + ": " + message;
    return nullptr;
  };

  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever; a
  // regular file ignores the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  if (fileSize < 8) {
    ::close(fd);
    return fail("file too short (" + std::to_string(fileSize) +
                " bytes) to be safetensors: it needs at least an 8-byte header length");
  }
  // Every weight is read on every run: a file larger than the machine's
  // memory would thrash, or get the process killed, long after loading began.
  if (uint64_t memory = physicalMemoryBytes(); memory > 0 && fileSize > memory) {
    ::close(fd);
    return fail("the file is " + formatBytes(fileSize) + ", more than this machine's memory (" +
                formatBytes(memory) + "); its weights cannot be held in memory");
  }
  void *map = ::mmap(nullptr, fileSize, PROT_READ, MAP_PRIVATE, fd, 0);
  int mapErrno = errno;
  ::close(fd);
  if (map == MAP_FAILED) {
    std::string message = "cannot map its " + formatBytes(fileSize) + " into memory (" +
                          std::strerror(mapErrno) + ")";
    if (uint64_t limit = addressSpaceLimitBytes())
      message += "; the process's address space is limited to " + formatBytes(limit) +
                 " (ulimit -v)";
    return fail(message);
  }

  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  file->map_ = map;
  file->mapSize_ = fileSize;
  if (guardTruncation)
    file->guard_ = std::make_unique<MappingGuard>(map, fileSize, path, fileSize);
  opened = file.get();
  const unsigned char *bytes = static_cast<const unsigned char *>(map);

  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > fileSize - 8)
    return fail("header length " + std::to_string(headerSize) +
                " is larger than the rest of the file (" + std::to_string(fileSize - 8) +
                " bytes); the file is truncated or not safetensors");
  if (headerSize > kMaxHeaderBytes)
    return fail("header length " + std::to_string(headerSize) + " exceeds the limit of " +
                std::to_string(kMaxHeaderBytes) + " bytes");

  // nlohmann keeps the last of duplicate keys silently; a duplicate tensor
  // name makes the file ambiguous, so catch it during parsing.
  std::set<std::string> seenKeys;
  std::string duplicate;
  auto noteKeys = [&](int depth, Json::parse_event_t event, Json &parsed) {
    if (event == Json::parse_event_t::key && depth == 1 &&
        !seenKeys.insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  const char *headerBegin = reinterpret_cast<const char *>(bytes + 8);
  Json header;
  try {
    header = Json::parse(headerBegin, headerBegin + headerSize, noteKeys);
  } catch (const Json::exception &e) {
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag.
    if (size_t close = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    return fail("header is not valid JSON: " + what);
  }
  if (!header.is_object())
    return fail("header is not a JSON object");
  if (!duplicate.empty())
    return fail("header lists tensor " + inQuotes(duplicate) + " more than once");

  const uint64_t dataSize = fileSize - 8 - headerSize;
  const unsigned char *data = bytes + 8 + headerSize;
  std::vector<std::pair<uint64_t, uint64_t>> ranges; // [begin, end) per tensor
  std::vector<std::string> rangeNames;               // whose range each is
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__")
      continue;
    std::string what = "tensor " + inQuotes(name);
    if (!entry.is_object())
      return fail(what + ": entry is not a JSON object");
    for (const char *field : {"dtype", "shape", "data_offsets"})
      if (!entry.contains(field))
        return fail(what + ": missing \"" + field + "\"");

    const Json &dtypeJson = entry["dtype"];
    if (!dtypeJson.is_string())
      return fail(what + ": \"dtype\" is not a string");
    std::string dtypeText = dtypeJson.get<std::string>();
    TensorView view;
    view.name = name;
    const OtherDtype *other = nullptr;
    if (!parseDtype(dtypeText, &view.dtype)) {
      auto known = std::find_if(std::begin(kOtherDtypes), std::end(kOtherDtypes),
                                [&](const OtherDtype &d) { return dtypeText == d.name; });
      if (known == std::end(kOtherDtypes))
        return fail(what + " has unknown dtype " + inQuotes(dtypeText));
      if (!keepOtherDtypes)
        return fail(what + " has unsupported dtype " + dtypeText +
                    " (supported: F32, F16, BF16, I8, U8)");
      other = known;
    }

    const Json &shapeJson = entry["shape"];
    if (!shapeJson.is_array())
      return fail(what + ": \"shape\" is not an array of integers");
    uint64_t elements = 1;
    bool overflow = false;
    for (const Json &dim : shapeJson) {
      uint64_t d = 0;
      int64_t negative = 0;
      if (!getUnsigned(dim, &d, &negative)) {
        if (negative < 0)
          return fail(what + " has negative dimension " + std::to_string(negative) +
                      " in \"shape\"");
        return fail(what + ": \"shape\" is not an array of integers");
      }
      if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return fail(what + " has dimension " + std::to_string(d) + " out of range");
      view.shape.push_back(static_cast<int64_t>(d));
      overflow |= __builtin_mul_overflow(elements, d, &elements);
    }
    uint64_t expectedBytes = 0;
    if (other) {
      uint64_t bits = 0;
      overflow |= __builtin_mul_overflow(elements, other->bits, &bits);
      expectedBytes = (bits + 7) / 8;
    } else {
      overflow |= __builtin_mul_overflow(elements, dtypeSize(view.dtype), &expectedBytes);
    }
    if (overflow)
      return fail(what + " has shape " + formatShape(view.shape) +
                  " whose byte size overflows 64 bits");

    const Json &offsets = entry["data_offsets"];
    uint64_t begin = 0, end = 0;
    int64_t negative = 0;
    if (!offsets.is_array() || offsets.size() != 2 || !getUnsigned(offsets[0], &begin, &negative) ||
        !getUnsigned(offsets[1], &end, &negative))
      return fail(what + ": \"data_offsets\" is not an array of two non-negative integers");
    std::string range = "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "]";
    if (begin > end)
      return fail(what + " has " + range + " with begin > end");
    if (end > dataSize)
      return fail(what + " has " + range + " beyond the end of the data section (" +
                  std::to_string(dataSize) + " bytes)");
    if (end - begin != expectedBytes)
      return fail(what + " has " + std::to_string(end - begin) + " bytes (" + range + ") but " +
                  (other ? other->name : dtypeName(view.dtype)) + " " + formatShape(view.shape) +
                  " needs " + std::to_string(expectedBytes));
    ranges.push_back({begin, end});
    if (other) {
      file->others_.push_back({name, other->name, view.shape});
      rangeNames.push_back(name);
      continue;
    }
    rangeNames.push_back(name);

    view.bytes = static_cast<size_t>(expectedBytes);
    const unsigned char *p = data + begin;
    if (!isAligned(p)) {
      // The format does not align tensors, but kernels load whole vectors:
      // keep an aligned private copy (files written by tmc need none).
      AlignedVector<unsigned char> copy(p, p + view.bytes);
      p = copy.data();
      file->copies_.push_back(std::move(copy));
    }
    view.data = p;
    file->byName_.emplace(view.name, file->tensors_.size());
    file->tensors_.push_back(std::move(view));
  }

  // Overlapping tensors would alias each other's weights.
  std::vector<size_t> order(ranges.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranges[a] < ranges[b]; });
  size_t previous = SIZE_MAX;
  for (size_t i : order) {
    if (ranges[i].first == ranges[i].second)
      continue; // an empty tensor occupies no bytes
    if (previous != SIZE_MAX && ranges[i].first < ranges[previous].second) {
      auto describe = [&](size_t k) {
        return inQuotes(rangeNames[k]) + " [" + std::to_string(ranges[k].first) + ", " +
               std::to_string(ranges[k].second) + ")";
      };
      return fail("tensors " + describe(previous) + " and " + describe(i) + " overlap");
    }
    previous = i;
  }
  if (file->lost())
    return fail("");
  return file;
}

const TensorView *SafetensorsFile::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

namespace {

/// Counts the elements of `count` words whose exponent bits are all ones
/// (NaN or infinity) and finds the first. Counting is branch-free; the search
/// for the first runs only when there is one.
template <typename Word>
NonFinite scanWords(const void *data, size_t count, Word exponentMask) {
  const Word *words = static_cast<const Word *>(data);
  NonFinite result;
  uint64_t bad = 0;
  // Fixed-size blocks with a counter as wide as a word: loops the compiler
  // turns into plain vector compares and adds even at -O2 (measured on
  // GPT-2 small's 498 MB of weights, which every load scans).
  constexpr size_t kBlock = 1024;
  size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    Word blockBad = 0;
    for (size_t j = 0; j < kBlock; ++j)
      blockBad += (words[i + j] & exponentMask) == exponentMask;
    bad += blockBad;
  }
  for (; i < count; ++i)
    bad += (words[i] & exponentMask) == exponentMask;
  result.count = static_cast<int64_t>(bad);
  if (bad == 0)
    return result;
  for (size_t i = 0; i < count; ++i)
    if ((words[i] & exponentMask) == exponentMask) {
      result.first = static_cast<int64_t>(i);
      // The mantissa (the bits below the exponent's lowest) tells NaN
      // (non-zero) from infinity (zero).
      Word mantissaMask = static_cast<Word>((exponentMask & (~exponentMask + 1u)) - 1u);
      result.firstIsNaN = (words[i] & mantissaMask) != 0;
      break;
    }
  return result;
}

} // namespace

NonFinite findNonFinite(const TensorView &tensor) {
  switch (tensor.dtype) {
  case TMR_F32:
    return scanWords<uint32_t>(tensor.data, tensor.bytes / 4, 0x7f800000u);
  case TMR_F16:
    return scanWords<uint16_t>(tensor.data, tensor.bytes / 2, 0x7c00u);
  case TMR_BF16:
    return scanWords<uint16_t>(tensor.data, tensor.bytes / 2, 0x7f80u);
  case TMR_I8:
  case TMR_U8:
    break; // integers are always finite
  }
  return {};
}

std::vector<int64_t> elementIndex(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = shape[d] > 0 ? shape[d] : 1;
    index[d] = flat % extent;
    flat /= extent;
  }
  return index;
}

std::vector<std::string> nonFiniteWarnings(const SafetensorsFile &file,
                                           const std::string &displayName) {
  std::vector<std::string> warnings;
  for (const TensorView &tensor : file.tensors()) {
    NonFinite found = findNonFinite(tensor);
    if (found.count == 0)
      continue;
    warnings.push_back(displayName + ": tensor " + inQuotes(tensor.name) + " has " +
                       std::to_string(found.count) + " non-finite value" +
                       (found.count == 1 ? "" : "s") + " (the first, at " +
                       formatShape(elementIndex(found.first, tensor.shape)) + ", is " +
                       (found.firstIsNaN ? "NaN" : "infinite") + ")");
  }
  return warnings;
}

namespace {

const char *quantizedName(tmr_quantized quantized) {
  switch (quantized) {
  case TMR_QUANT_INT8:
    return "int8";
  case TMR_QUANT_Q4:
    return "q4";
  case TMR_QUANT_BF16:
    return "bf16";
  case TMR_QUANT_NONE:
    break;
  }
  return "f32";
}

/// A weight held in another dtype than its manifest's: pre-quantized as the
/// model multiplies it (tmr_quantized: values, and scales named NAME.scale),
/// or a problem naming the tensor, what the file holds and what would do.
void checkQuantized(const SafetensorsFile &file, const tmr_tensor_desc &desc,
                    const TensorView &tensor, std::vector<std::string> *problems) {
  const std::string name = inQuotes(desc.name);
  std::vector<int64_t> shape(desc.shape, desc.shape + desc.rank);
  // What the dtype in the file says it was quantized for.
  const tmr_quantized held = tensor.dtype == TMR_I8     ? TMR_QUANT_INT8
                             : tensor.dtype == TMR_U8   ? TMR_QUANT_Q4
                             : tensor.dtype == TMR_BF16 ? TMR_QUANT_BF16
                                                        : TMR_QUANT_NONE;
  if (held != desc.quantized) {
    std::string want = std::string(dtypeName(desc.dtype)) + " values";
    if (desc.quantized != TMR_QUANT_NONE)
      want += std::string(" or ") + quantizedName(desc.quantized) + " (tmc quantize --precision " +
              quantizedName(desc.quantized) + ")";
    problems->push_back(
        "tensor " + name + " has dtype " + dtypeName(tensor.dtype) +
        (held != TMR_QUANT_NONE ? std::string(" (quantized for ") + quantizedName(held) + ")"
                                : std::string()) +
        ", but the model multiplies it in " + quantizedName(desc.quantized) + ": expected " + want);
    return;
  }
  if (desc.rank != 2) {
    problems->push_back("tensor " + name + " cannot be quantized (rank " +
                        std::to_string(desc.rank) + ")");
    return;
  }
  const int64_t N = desc.shape[0], K = desc.shape[1], blocks = (K + 31) / 32;
  std::vector<int64_t> values = shape;
  if (held == TMR_QUANT_Q4)
    values = {N, 16 * blocks};
  if (tensor.shape != values)
    problems->push_back("tensor " + name + " has shape " + formatShape(tensor.shape) +
                        ", expected " + formatShape(values) +
                        (held == TMR_QUANT_Q4 ? " (two 4-bit values a byte, K " +
                                                    std::to_string(K) + " in blocks of 32)"
                                              : std::string()));
  if (held == TMR_QUANT_BF16)
    return;
  const std::string scaleName = std::string(desc.name) + ".scale";
  const tmr_dtype scaleDtype = held == TMR_QUANT_Q4 ? TMR_F16 : TMR_F32;
  const std::vector<int64_t> scaleShape =
      held == TMR_QUANT_Q4 ? std::vector<int64_t>{N, blocks} : std::vector<int64_t>{N};
  const char *per =
      held == TMR_QUANT_Q4 ? "one per block of 32 of each row" : "one per output channel";
  const TensorView *scale = file.find(scaleName);
  if (!scale) {
    problems->push_back("missing tensor " + inQuotes(scaleName) + " (expected " +
                        dtypeName(scaleDtype) + " " + formatShape(scaleShape) + ", the scales of " +
                        name + ", " + per + ")");
    return;
  }
  if (scale->dtype != scaleDtype)
    problems->push_back("tensor " + inQuotes(scaleName) + " has dtype " + dtypeName(scale->dtype) +
                        ", expected " + dtypeName(scaleDtype));
  if (scale->shape != scaleShape)
    problems->push_back("tensor " + inQuotes(scaleName) + " has shape " +
                        formatShape(scale->shape) + ", expected " + formatShape(scaleShape) + " (" +
                        per + ")");
}

} // namespace

std::vector<std::string> q4OverflowWarnings(const SafetensorsFile &file,
                                            const std::string &displayName,
                                            const tmr_tensor_desc *expected, int32_t count) {
  // ggml's Q4_0 scale is the block's extreme / -8 in f16: 65520 and above
  // round to infinity.
  constexpr float kOverflow = 524160.0f;
  std::vector<std::string> warnings;
  for (int32_t i = 0; i < count; ++i) {
    const TensorView *tensor = expected[i].name ? file.find(expected[i].name) : nullptr;
    if (expected[i].quantized != TMR_QUANT_Q4 || !tensor ||
        (tensor->dtype != TMR_F32 && tensor->dtype != TMR_BF16))
      continue; // pre-quantized (its scales are scanned as weights), or f16: never that large
    const size_t elements = tensor->bytes / dtypeSize(tensor->dtype);
    int64_t found = 0, first = -1;
    for (size_t k = 0; k < elements; ++k) {
      const float value = tensor->dtype == TMR_F32
                              ? static_cast<const float *>(tensor->data)[k]
                              : bfloat16ToFloat(static_cast<const uint16_t *>(tensor->data)[k]);
      if (std::isfinite(value) && std::fabs(value) >= kOverflow && found++ == 0)
        first = static_cast<int64_t>(k);
    }
    if (found == 0)
      continue;
    warnings.push_back(
        displayName + ": tensor " + inQuotes(tensor->name) + " has " + std::to_string(found) +
        " value" + (found == 1 ? "" : "s") + " of magnitude 524160 or more (the first, at " +
        formatShape(elementIndex(first, tensor->shape)) +
        "): quantized to q4, its block's scale (the largest magnitude / 8) overflows f16 to "
        "infinity, and every output it reaches is infinite or NaN; keep this layer in f32, bf16 "
        "or int8");
  }
  return warnings;
}

bool checkTensors(const SafetensorsFile &file, const std::string &displayName,
                  const tmr_tensor_desc *expected, int32_t count, std::string *error) {
  std::vector<std::string> problems;
  if (count < 0 || (count > 0 && !expected)) {
    problems.push_back("the model's manifest is invalid (" + std::to_string(count) + " tensors)");
    count = 0;
  }
  std::set<std::string, std::less<>> expectedNames;
  for (int32_t i = 0; i < count; ++i) {
    const tmr_tensor_desc &desc = expected[i];
    if (!desc.name || desc.rank < 0 || desc.rank > TMR_MAX_RANK) {
      problems.push_back("the model's manifest entry " + std::to_string(i) + " is invalid");
      continue;
    }
    expectedNames.insert(desc.name);
    std::vector<int64_t> shape(desc.shape, desc.shape + desc.rank);
    const TensorView *tensor = file.find(desc.name);
    if (!tensor) {
      problems.push_back("missing tensor " + inQuotes(desc.name) + " (expected " +
                         dtypeName(desc.dtype) + " " + formatShape(shape) + ")");
      continue;
    }
    if (tensor->dtype != desc.dtype &&
        (tensor->dtype == TMR_I8 || tensor->dtype == TMR_U8 || desc.quantized != TMR_QUANT_NONE)) {
      checkQuantized(file, desc, *tensor, &problems);
      expectedNames.insert(std::string(desc.name) + ".scale");
      continue;
    }
    if (tensor->dtype != desc.dtype)
      problems.push_back("tensor " + inQuotes(desc.name) + " has dtype " +
                         dtypeName(tensor->dtype) + ", expected " + dtypeName(desc.dtype));
    if (tensor->shape != shape)
      problems.push_back("tensor " + inQuotes(desc.name) + " has shape " +
                         formatShape(tensor->shape) + ", expected " + formatShape(shape));
  }
  for (const TensorView &tensor : file.tensors())
    if (!expectedNames.count(tensor.name))
      problems.push_back("unexpected tensor " + inQuotes(tensor.name) +
                         " (not in the model's manifest)");
  if (problems.empty())
    return true;

  constexpr size_t kMaxLines = 20;
  std::string message;
  for (size_t i = 0; i < problems.size() && i < kMaxLines; ++i)
    message += (i ? "\n" : "") + displayName + ": " + problems[i];
  if (problems.size() > kMaxLines)
    message += "\n" + displayName + ": ... and " + std::to_string(problems.size() - kMaxLines) +
               " more problems";
  if (error)
    *error = std::move(message);
  return false;
}

} // namespace tmr
