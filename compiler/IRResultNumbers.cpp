//===- IRResultNumbers.cpp - Result numbers MLIR's parser cannot take -----===//

#include "compiler/IRResultNumbers.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tmc {

namespace {

/// The characters of an SSA name after `%` (MLIR's suffix-id: digits, or a
/// letter or one of `$._-` followed by those and digits).
bool isNameChar(char c) {
  return llvm::isAlnum(c) || c == '$' || c == '.' || c == '_' || c == '-';
}

} // namespace

bool checkResultNumbers(const llvm::SourceMgr &sourceMgr, unsigned bufferId) {
  llvm::StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  const size_t size = text.size();
  for (size_t i = 0; i < size; ++i) {
    const char c = text[i];
    if (c == '"') { // a string: to its closing quote, past escapes
      for (++i; i < size && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < size && text[i + 1] == '/') { // a comment: to the line's end
      while (i < size && text[i] != '\n')
        ++i;
      continue;
    }
    if (c != '%')
      continue;
    size_t end = i + 1;
    while (end < size && isNameChar(text[end]))
      ++end;
    if (end == i + 1 || end >= size || text[end] != '#') {
      i = end - 1;
      continue;
    }
    size_t digits = end + 1;
    while (digits < size && llvm::isDigit(text[digits]))
      ++digits;
    llvm::StringRef number = text.slice(end + 1, digits).ltrim('0');
    unsigned long long value = 0;
    const bool tooLarge = number.size() > 18 || (!number.getAsInteger(10, value) &&
                                                  value > kMaxResultNumber);
    if (tooLarge) {
      std::string message;
      llvm::raw_string_ostream os(message);
      os << "result number " << text.slice(end + 1, digits) << " of '"
         << text.slice(i, end) << "' is out of range: tmc reads ops of at most "
         << kMaxResultNumber << " results";
      sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(text.data() + i),
                             llvm::SourceMgr::DK_Error, os.str());
      return false;
    }
    i = digits - 1;
  }
  return true;
}

} // namespace tmc
