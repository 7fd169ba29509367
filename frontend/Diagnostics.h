//===- Diagnostics.h - Located errors, warnings and notes ---------*- C++
//-*-===//
//
// Every stage of the frontend reports through one engine so that a file's
// diagnostics come out in a single format (llvm::SourceMgr's: `file:line:col:
// error: message`, the source line, a caret) and so that the driver can ask how
// many errors there were. Nothing here aborts: callers keep going after an
// error so that one run shows every problem in the file.
//
// Diagnostics are held until flush() and then printed in source order: Sema
// checks keys in the order of their meaning, not of the file, and a reader
// works down the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tmc {

/// Prints located diagnostics for the buffers of one SourceMgr and counts them.
class DiagnosticEngine {
public:
  DiagnosticEngine(const llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os)
      : sourceMgr(sourceMgr), os(os) {}
  ~DiagnosticEngine() { flush(); }
  DiagnosticEngine(const DiagnosticEngine &) = delete;
  DiagnosticEngine &operator=(const DiagnosticEngine &) = delete;

  /// An error at `loc`, underlining the token that starts there. A non-empty
  /// `hint` follows as an unlocated `note:` line (e.g. "did you mean
  /// 'd_model'?").
  void error(llvm::SMLoc loc, const llvm::Twine &message,
             const llvm::Twine &hint = llvm::Twine());
  /// Same, with the suggested replacement for the underlined token shown under
  /// the caret line (used for did-you-mean corrections).
  void errorWithFix(llvm::SMLoc loc, const llvm::Twine &message,
                    llvm::StringRef replacement, const llvm::Twine &hint);
  void warning(llvm::SMLoc loc, const llvm::Twine &message,
               const llvm::Twine &hint = llvm::Twine());
  /// A located note that belongs to the error or warning reported just before
  /// it.
  void note(llvm::SMLoc loc, const llvm::Twine &message);

  /// Prints what was reported so far, ordered by location (a diagnostic keeps
  /// its notes; equal locations keep the order they were reported in).
  void flush();

  unsigned errorCount() const { return errors; }
  unsigned warningCount() const { return warnings; }
  /// Errors and warnings reported without a location. Every diagnostic about
  /// a spec has one, so anything but 0 is a bug (the fuzzer checks it).
  unsigned unlocatedCount() const { return unlocated; }

  /// The range of the token that starts at `loc`, for underlining.
  llvm::SMRange tokenRange(llvm::SMLoc loc) const;

private:
  /// Renders one diagnostic (and its hint) into a new pending entry, or onto
  /// the last one for a note.
  void report(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
              const llvm::Twine &message, llvm::ArrayRef<llvm::SMFixIt> fixIts,
              const llvm::Twine &hint);

  struct Pending {
    llvm::SMLoc loc;
    std::string text;
  };

  const llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  std::vector<Pending> pending;
  /// Errors past the first kMaxShownErrors are counted but not printed (nor
  /// their notes): a garbage file should not bury the terminal.
  unsigned hidden = 0;
  bool hidingNotes = false;
  unsigned errors = 0;
  unsigned warnings = 0;
  unsigned unlocated = 0;
};

/// The shortest decimal form of `value` that reads back as the same double,
/// always recognisable as a float (`1e-05`, `0.5`, `2.0`).
std::string formatFloat(double value);

/// The candidate closest to `name` by edit distance, or "" if none is close
/// enough to be a plausible typo.
llvm::StringRef closestMatch(llvm::StringRef name,
                             llvm::ArrayRef<llvm::StringRef> candidates);

} // namespace tmc
