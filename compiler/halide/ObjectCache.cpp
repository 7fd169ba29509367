//===- ObjectCache.cpp - Compiled kernel objects reused by content --------===//

#include "compiler/halide/ObjectCache.h"

#include "compiler/Error.h"

#include "Halide.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <limits>
#include <link.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

extern char **environ;

namespace tmc::halide {

namespace {

/// A file's size and modification time, as the keys below identify a
/// library or an executable by them (with its path or inode).
std::string sizeAndTime(const struct stat &st) {
  return std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

/// Which Halide and LLVM wrote the objects: the loaded libraries' paths,
/// sizes and modification times (an upgraded package changes them), or
/// tmc's executable's if Halide is linked into it, and HL_LLVM_ARGS, which
/// Halide passes to LLVM's code generator.
const std::string &codeGeneratorIdentity() {
  static const std::string identity = [] {
    std::string text;
    ::dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
          std::string path = info->dlpi_name ? info->dlpi_name : "";
          if (path.find("libHalide") == std::string::npos &&
              path.find("libLLVM") == std::string::npos)
            return 0;
          struct stat st {};
          if (::stat(path.c_str(), &st) != 0)
            return 0;
          *static_cast<std::string *>(data) += path + " " + sizeAndTime(st) + "\n";
          return 0;
        },
        &text);
    // Halide linked into tmc itself (not as a shared library): tmc's own
    // executable is then what wrote the objects.
    if (text.find("libHalide") == std::string::npos) {
      struct stat st {};
      if (::stat("/proc/self/exe", &st) == 0)
        text += "executable " + std::to_string(st.st_ino) + " " + sizeAndTime(st) + "\n";
    }
    if (const char *args = std::getenv("HL_LLVM_ARGS"))
      text += std::string("HL_LLVM_ARGS=") + args + "\n";
    return text;
  }();
  return identity;
}

void describeExpr(std::ostream &os, const Halide::Expr &e) {
  if (e.defined())
    os << e;
  else
    os << "-";
}

/// Halide numbers the names it makes (`t6315`, `closure_arg$27`) from
/// counters shared by the whole process, so the same kernel lowered after a
/// different history (the kernels before it compiled or reused) prints other
/// numbers. Each such name is renamed by its first appearance (`t@0`,
/// `closure_arg$@1`), consistently: two modules print alike after renaming
/// only if they differ in those names alone, which the code does not depend on.
class NameCanonicalizer {
public:
  std::string apply(const std::string &text) {
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
      if (!isWordChar(text[i])) {
        out += text[i++];
        continue;
      }
      size_t end = i;
      while (end < text.size() && isWordChar(text[end]))
        ++end;
      std::string word = text.substr(i, end - i);
      out += numbered(word) ? rename(word) : word;
      i = end;
    }
    return out;
  }

private:
  static bool isWordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  }
  static bool allDigits(const std::string &s, size_t from) {
    return from < s.size() &&
           std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  }
  /// `t123` (unique_name(char)) or `name$123` (unique_name(string)).
  static bool numbered(const std::string &word) {
    if (word.size() >= 2 && std::islower(static_cast<unsigned char>(word[0])) && allDigits(word, 1))
      return true;
    size_t dollar = word.find('$');
    return dollar != std::string::npos && dollar > 0 && allDigits(word, dollar + 1);
  }
  std::string rename(const std::string &word) {
    auto [it, inserted] = names.try_emplace(word);
    if (inserted) {
      size_t dollar = word.find('$');
      std::string base =
          dollar == std::string::npos ? word.substr(0, 1) : word.substr(0, dollar + 1);
      it->second = base + "@" + std::to_string(names.size() - 1);
    }
    return it->second;
  }
  std::unordered_map<std::string, std::string> names;
};

void describeBuffer(std::ostream &os, const Halide::Buffer<void> &buffer,
                    NameCanonicalizer &canonical) {
  os << "buffer " << canonical.apply(buffer.name()) << " " << buffer.type() << " [";
  for (int d = 0; d < buffer.dimensions(); ++d)
    os << " " << buffer.dim(d).min() << "," << buffer.dim(d).extent() << ","
       << buffer.dim(d).stride();
  os << " ] ";
  // Every byte, as it is: a kernel's constant tables and a GPU target's
  // device code.
  const halide_buffer_t *raw = buffer.raw_buffer();
  const auto *begin = reinterpret_cast<const char *>(raw->begin());
  os << buffer.size_in_bytes() << ":";
  os.write(begin, static_cast<std::streamsize>(buffer.size_in_bytes()));
  os << "\n";
}

void describeFunction(std::ostream &os, const Halide::Internal::LoweredFunc &function) {
  os << "function " << function.name << " linkage " << static_cast<int>(function.linkage)
     << " mangling " << static_cast<int>(function.name_mangling) << "\n";
  for (const Halide::Internal::LoweredArgument &arg : function.args) {
    os << "  argument " << arg.name << " kind " << static_cast<int>(arg.kind) << " type "
       << arg.type << " dimensions " << static_cast<int>(arg.dimensions) << " alignment "
       << arg.alignment.modulus << "," << arg.alignment.remainder << " estimates ";
    const Halide::ArgumentEstimates &estimates = arg.argument_estimates;
    for (const Halide::Expr &e : {estimates.scalar_def, estimates.scalar_min, estimates.scalar_max,
                                  estimates.scalar_estimate}) {
      describeExpr(os, e);
      os << " ";
    }
    for (const Halide::Range &range : estimates.buffer_estimates) {
      describeExpr(os, range.min);
      os << ":";
      describeExpr(os, range.extent);
      os << " ";
    }
    os << "\n";
  }
  os << function.body << "\n";
}

void describeModule(std::ostream &os, const Halide::Module &module, NameCanonicalizer &canonical) {
  for (const Halide::Module &submodule : module.submodules())
    describeModule(os, submodule, canonical);
  os << "module " << canonical.apply(module.name()) << " target " << module.target().to_string()
     << " strict_float " << module.any_strict_float() << "\n";
  for (const Halide::Buffer<void> &buffer : module.buffers())
    describeBuffer(os, buffer, canonical);
  for (const Halide::ExternalCode &code : module.external_code()) {
    const std::vector<uint8_t> &contents = code.contents();
    os << "external " << code.name() << " " << code.is_c_plus_plus_source() << " "
       << code.is_for_cpu_target(module.target()) << " " << contents.size() << ":";
    os.write(reinterpret_cast<const char *>(contents.data()),
             static_cast<std::streamsize>(contents.size()));
    os << "\n";
  }
  for (const Halide::Internal::LoweredFunc &function : module.functions()) {
    std::ostringstream text;
    text.precision(os.precision());
    describeFunction(text, function);
    os << canonical.apply(text.str());
  }
}

std::string hashText(const std::string &what, const std::function<void(std::ostream &)> &write) {
  std::ostringstream os;
  // Halide prints float constants through the stream: at the default six
  // digits two kernels differing in a scale would print alike.
  os.precision(std::numeric_limits<double>::max_digits10);
  os << "tmc object cache 1: " << what << "\n" << codeGeneratorIdentity();
  write(os);
  std::string text = os.str();
  auto digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

void warnOnce(const std::string &message) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    reportWarning(message);
}

} // namespace

std::string objectKey(const Halide::Module &module) {
  NameCanonicalizer canonical;
  return hashText("object", [&](std::ostream &os) { describeModule(os, module, canonical); });
}

std::string runtimeKey(const Halide::Target &target) {
  return hashText("runtime", [&](std::ostream &os) { os << target.to_string() << "\n"; });
}

std::string jobKey(const std::string &description) {
  // Empty when this executable cannot be identified: no job keys then, since
  // another build of tmc could lower the same description differently.
  static const std::string process = []() -> std::string {
    struct stat st {};
    if (::stat("/proc/self/exe", &st) != 0)
      return "";
    std::string text = "lowered by " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) +
                       " " + sizeAndTime(st) + "\n";
    // Every TMC_ and HL_ variable (TMC_GPU_SCHEDULE_ON_HOST changes the
    // lowering itself; HL_ ones, Halide's), but the cache's own directory.
    std::vector<std::string> variables;
    for (char **each = environ; *each; ++each) {
      llvm::StringRef variable(*each);
      if ((variable.starts_with("TMC_") || variable.starts_with("HL_")) &&
          !variable.starts_with("TMC_KERNEL_CACHE="))
        variables.push_back(variable.str());
    }
    std::sort(variables.begin(), variables.end());
    for (const std::string &variable : variables)
      text += variable + "\n";
    return text;
  }();
  if (process.empty())
    return "";
  return hashText("job", [&](std::ostream &os) { os << process << description; });
}

bool ObjectCache::writable() const {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
    warnOnce("kernel cache '" + directory + "': cannot create it: " + ec.message() +
             " (compiling without it)");
    return false;
  }
  llvm::SmallString<256> probe;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(directory + "/.probe-%%%%%%%%", fd, probe)) {
    warnOnce("kernel cache '" + directory + "': cannot write in it: " + ec.message() +
             " (compiling without it)");
    return false;
  }
  ::close(fd);
  llvm::sys::fs::remove(probe);
  return true;
}

std::string ObjectCache::entryPath(const std::string &key, const char *suffix) const {
  // Two-digit subdirectories, as git's objects: no directory grows huge.
  return directory + "/" + key.substr(0, 2) + "/" + key.substr(2) + suffix;
}

bool ObjectCache::fetch(const std::string &key, const std::string &objectPath) const {
  if (!enabled())
    return false;
  std::string entry = entryPath(key);
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(entry, size) || size == 0)
    return false;
  if (llvm::sys::fs::copy_file(entry, objectPath)) {
    llvm::sys::fs::remove(objectPath);
    return false;
  }
  return true;
}

void ObjectCache::store(const std::string &key, const std::string &objectPath) const {
  storeWith(key, ".o",
            [&](const std::string &temp) { return llvm::sys::fs::copy_file(objectPath, temp); });
}

bool ObjectCache::fetchJob(const std::string &key, std::string &objectKey,
                           std::string &halideText) const {
  if (!enabled())
    return false;
  auto buffer = llvm::MemoryBuffer::getFile(entryPath(key, ".job"));
  if (!buffer)
    return false;
  auto [first, rest] = (*buffer)->getBuffer().split('\n');
  if (first.size() != 64 || !llvm::all_of(first, llvm::isHexDigit))
    return false;
  objectKey = first.str();
  halideText = rest.str();
  return true;
}

void ObjectCache::storeJob(const std::string &key, const std::string &objectKey,
                           const std::string &halideText) const {
  storeWith(key, ".job", [&](const std::string &temp) {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (!ec) {
      os << objectKey << "\n" << halideText;
      os.close();
      ec = os.error();
    }
    return ec;
  });
}

void ObjectCache::storeWith(
    const std::string &key, const char *suffix,
    const std::function<std::error_code(const std::string &)> &write) const {
  if (!enabled())
    return;
  std::string entry = entryPath(key, suffix);
  std::string parent = llvm::sys::path::parent_path(entry).str();
  auto fail = [&](const std::string &what, std::error_code ec) {
    warnOnce("kernel cache '" + directory + "': cannot " + what + ": " + ec.message() +
             " (compiling without it)");
  };
  if (std::error_code ec = llvm::sys::fs::create_directories(parent))
    return fail("create '" + parent + "'", ec);
  llvm::SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(entry + ".tmp-%%%%%%%%", fd, temp))
    return fail("write in '" + parent + "'", ec);
  ::close(fd);
  if (std::error_code ec = write(temp.str().str())) {
    llvm::sys::fs::remove(temp);
    return fail("write '" + temp.str().str() + "'", ec);
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, entry)) {
    llvm::sys::fs::remove(temp);
    return fail("write '" + entry + "'", ec);
  }
}

} // namespace tmc::halide
