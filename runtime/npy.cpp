//===- npy.cpp - NumPy .npy files of f32 arrays ---------------------------===//
//
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
// The header is a Python dict literal; the reader parses just the subset that
// numpy.save emits ('descr', 'fortran_order', 'shape') instead of trusting a
// fixed layout, so files written by any numpy version are accepted.
//
//===----------------------------------------------------------------------===//
#include "runtime/npy.h"

#include "runtime/atomic_file.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace tmr {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer assume a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// One value of the header dict: a string, a bool, an int or a tuple of ints.
struct HeaderValue {
  enum Kind { String, Bool, Int, Tuple } kind = String;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

/// Parses the Python literal subset of an .npy header; false + *error on
/// anything else.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  bool parse(std::map<std::string, HeaderValue> *dict, std::string *error) {
    if (!expect('{', error))
      return false;
    while (true) {
      skipSpace();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      HeaderValue key;
      if (!parseString(&key, error))
        return false;
      if (!expect(':', error))
        return false;
      HeaderValue value;
      if (!parseValue(&value, error))
        return false;
      if (!dict->emplace(key.text, std::move(value)).second)
        return fail("key '" + key.text + "' appears twice", error);
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (!expect('}', error))
        return false;
      break;
    }
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the closing '}'", error);
    return true;
  }

private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool fail(const std::string &message, std::string *error) {
    *error = "malformed header: " + message;
    return false;
  }
  bool expect(char c, std::string *error) {
    skipSpace();
    if (peek() != c)
      return fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_), error);
    ++pos_;
    return true;
  }
  bool parseString(HeaderValue *out, std::string *error) {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return fail("expected a quoted string at offset " + std::to_string(pos_), error);
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos)
      return fail("unterminated string", error);
    out->kind = HeaderValue::String;
    out->text = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return true;
  }
  bool parseInt(int64_t *out, std::string *error) {
    skipSpace();
    size_t start = pos_;
    uint64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, uint64_t(text_[pos_] - '0'), &value) ||
          value > uint64_t(std::numeric_limits<int64_t>::max()))
        return fail("integer too large at offset " + std::to_string(start), error);
      ++pos_;
    }
    if (pos_ == start)
      return fail("expected a non-negative integer at offset " + std::to_string(start), error);
    // Python 2 era numpy wrote dimensions as longs: "3L".
    if (peek() == 'L')
      ++pos_;
    *out = static_cast<int64_t>(value);
    return true;
  }
  bool parseValue(HeaderValue *out, std::string *error) {
    skipSpace();
    char c = peek();
    if (c == '\'' || c == '"')
      return parseString(out, error);
    for (auto [word, flag] : {std::pair{"True", true}, std::pair{"False", false}})
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        out->kind = HeaderValue::Bool;
        out->flag = flag;
        return true;
      }
    if (c == '(') {
      ++pos_;
      out->kind = HeaderValue::Tuple;
      while (true) {
        skipSpace();
        if (peek() == ')') {
          ++pos_;
          return true;
        }
        int64_t value = 0;
        if (!parseInt(&value, error))
          return false;
        out->ints.push_back(value);
        skipSpace();
        if (peek() == ',')
          ++pos_;
        else if (peek() != ')')
          return fail("expected ',' or ')' in a tuple at offset " + std::to_string(pos_), error);
      }
    }
    out->kind = HeaderValue::Int;
    out->ints.resize(1);
    return parseInt(&out->ints[0], error);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool readAll(int fd, std::string *out) {
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    if (n == 0)
      return true;
    out->append(buffer, static_cast<size_t>(n));
  }
}

} // namespace

bool writeNpyF32(const std::string &path, const std::vector<int64_t> &shape, const float *data,
                 std::string *error) {
  auto fail = [&](const std::string &message) {
    if (error)
      *error = path + ": " + message;
    return false;
  };
  uint64_t count = 1;
  std::string dims;
  for (int64_t dim : shape) {
    if (dim < 0)
      return fail("negative dimension " + std::to_string(dim) + " in the shape");
    if (__builtin_mul_overflow(count, uint64_t(dim), &count) || count > SIZE_MAX / sizeof(float))
      return fail("the array is too large");
    dims += std::to_string(dim) + ", ";
  }
  if (count > 0 && !data)
    return fail("no data to write");
  // numpy spells a 1-d shape "(5,)" and a scalar "()".
  if (shape.size() > 1)
    dims.resize(dims.size() - 2);
  else if (shape.size() == 1)
    dims.resize(dims.size() - 1);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";

  // Version 1.0 stores the header length in 2 bytes; longer headers (only for
  // absurd ranks) need 2.0's 4 bytes. Pad so the data starts 64-byte aligned.
  bool v2 = header.size() + 1 + 10 > 65535;
  size_t prefix = v2 ? 12 : 10;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string head(kMagic, kMagicSize);
  head += static_cast<char>(v2 ? 2 : 1);
  head += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    head += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  head += header;

  std::unique_ptr<AtomicFile> out = AtomicFile::create(path, error);
  if (!out || !out->write(head.data(), head.size(), error))
    return false;
  if (count > 0 && !out->write(data, count * sizeof(float), error))
    return false;
  return out->commit(error);
}

bool readNpyF32(const std::string &path, std::vector<int64_t> *shape, std::vector<float> *data,
                std::string *error) {
  auto fail = [&](const std::string &message) {
    if (error)
      *error = path + ": " + message;
    return false;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  std::string bytes;
  bool ok = readAll(fd, &bytes);
  int readErrno = errno;
  ::close(fd);
  if (!ok)
    return fail(std::string("cannot read: ") + std::strerror(readErrno));

  if (bytes.size() < kMagicSize + 2 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0)
    return fail("not a .npy file (bad magic)");
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2) || minor != 0)
    return fail("unsupported .npy format version " + std::to_string(major) + "." +
                std::to_string(minor) + " (supported: 1.0, 2.0)");
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes)
    return fail("file is truncated in its header");
  uint64_t headerSize = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerSize |= uint64_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerSize;
  if (dataStart > bytes.size())
    return fail("file is truncated in its header");

  std::map<std::string, HeaderValue> dict;
  std::string message;
  HeaderParser parser(std::string_view(bytes).substr(8 + lengthBytes, headerSize));
  if (!parser.parse(&dict, &message))
    return fail(message);
  for (const char *key : {"descr", "fortran_order", "shape"})
    if (!dict.count(key))
      return fail(std::string("header has no '") + key + "'");
  if (dict.size() != 3)
    return fail("header has keys other than 'descr', 'fortran_order' and 'shape'");
  const HeaderValue &descr = dict["descr"];
  if (descr.kind != HeaderValue::String)
    return fail("header 'descr' is not a string");
  if (descr.text == ">f4")
    return fail("big-endian float32 ('>f4') is not supported; expected little-endian '<f4'");
  if (descr.text != "<f4")
    return fail("dtype '" + descr.text + "' is not supported; expected float32 '<f4'");
  const HeaderValue &fortran = dict["fortran_order"];
  if (fortran.kind != HeaderValue::Bool)
    return fail("header 'fortran_order' is not True or False");
  if (fortran.flag)
    return fail("Fortran-order arrays are not supported; expected fortran_order False");
  const HeaderValue &dims = dict["shape"];
  if (dims.kind != HeaderValue::Tuple)
    return fail("header 'shape' is not a tuple");

  uint64_t count = 1;
  for (int64_t dim : dims.ints)
    if (__builtin_mul_overflow(count, uint64_t(dim), &count) || count > SIZE_MAX / sizeof(float))
      return fail("shape (" + std::to_string(dims.ints.size()) + "-d) is too large");
  uint64_t payload = bytes.size() - dataStart;
  if (payload != count * sizeof(float))
    return fail("data section has " + std::to_string(payload) + " bytes, but the shape needs " +
                std::to_string(count * sizeof(float)));
  *shape = dims.ints;
  data->resize(count);
  if (count > 0)
    std::memcpy(data->data(), bytes.data() + dataStart, count * sizeof(float));
  return true;
}

} // namespace tmr
