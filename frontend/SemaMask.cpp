//===- SemaMask.cpp - Reading and checking `mask = ...` -------------------===//

#include "frontend/SemaMask.h"

#include "frontend/MaskAnalysis.h"
#include "frontend/SemaValues.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace llvm;

namespace tmc::sema {

namespace {

/// Most random keys per row: each query's keys are drawn anew wherever the
/// mask is evaluated, and a "sparse" mask past this is no longer sparse.
constexpr int64_t kMaxRandomPerRow = 4096;

class MaskReader {
public:
  MaskReader(ValueReader &reader, int64_t maxSeq, bool decoder)
      : reader(reader), diags(reader.diagnostics()), maxSeq(maxSeq),
        decoder(decoder) {}

  std::optional<MaskSpec> read(const ast::Value &value);

private:
  bool readTerm(const ast::Value &value, const Chosen &chosen, MaskTerm &term);
  std::optional<int64_t> withinSequence(const ast::Value &value, StringRef what,
                                        StringRef owner, int64_t min);
  bool readTokens(const ast::Value &value, MaskTerm &term);

  ValueReader &reader;
  DiagnosticEngine &diags;
  int64_t maxSeq;
  bool decoder;
};

/// The names accepted as mask terms; the order matches the MaskKind cast in
/// read() after "none".
enum TermIndex { None, Causal, Padding, Sliding, Dilated, Global, Random, BlockSparse };

std::optional<int64_t> MaskReader::withinSequence(const ast::Value &value,
                                                  StringRef what, StringRef owner,
                                                  int64_t min) {
  std::optional<int64_t> n = reader.integer(value, what, min);
  if (n && maxSeq > 0 && *n > maxSeq) {
    diags.error(value.loc,
                owner + " " + what + " (" + Twine(*n) + ") is larger than max_seq (" +
                    Twine(maxSeq) + ")",
                "use " + Twine(what) + " = " + Twine(maxSeq) + " or less");
    return std::nullopt;
  }
  return n;
}

bool MaskReader::readTokens(const ast::Value &value, MaskTerm &term) {
  if (value.kind != ast::Value::Kind::List) {
    diags.error(value.loc,
                "expected a list of positions for 'tokens', found " +
                    Twine(describe(value.kind)),
                "write tokens = [0] or tokens = [0, 1]");
    return false;
  }
  if (value.elements.empty()) {
    diags.error(value.loc, "'global' needs at least one position in 'tokens'",
                "write tokens = [0] to make the first token global");
    return false;
  }
  bool ok = true;
  SmallVector<const ast::Value *, 8> seen;
  for (const ast::ValuePtr &element : value.elements) {
    std::optional<int64_t> token = reader.integer(*element, "tokens", 0);
    if (!token) {
      ok = false;
      continue;
    }
    if (maxSeq > 0 && *token >= maxSeq) {
      diags.error(element->loc,
                  "global token position " + Twine(*token) +
                      " is past the end of the sequence (max_seq = " + Twine(maxSeq) +
                      ": positions 0.." + Twine(maxSeq - 1) + ")");
      ok = false;
      continue;
    }
    auto first = std::find_if(seen.begin(), seen.end(), [&](const ast::Value *v) {
      return v->intValue == *token;
    });
    if (first != seen.end()) {
      diags.warning(element->loc,
                    "position " + Twine(*token) + " is listed twice in 'tokens'");
      diags.note((*first)->loc, "first listed here");
    } else {
      seen.push_back(element.get());
      term.tokens.push_back(*token);
    }
  }
  std::sort(term.tokens.begin(), term.tokens.end());
  return ok;
}

bool MaskReader::readTerm(const ast::Value &value, const Chosen &chosen,
                          MaskTerm &term) {
  bool ok = true;
  auto integerArg = [&](StringRef name, int64_t min, int64_t max, int64_t &out) {
    if (const ast::Value *arg = chosen.arg(name)) {
      std::optional<int64_t> n = reader.integer(*arg, name, min, max);
      ok &= n.has_value();
      out = n.value_or(out);
    }
  };
  switch (chosen.index) {
  case Causal:
  case Padding:
    break;
  case Sliding:
  case Dilated: {
    StringRef owner = chosen.index == Sliding ? "sliding_window" : "dilated_window";
    std::optional<int64_t> size = withinSequence(*chosen.arg("size"), "size", owner, 1);
    ok &= size.has_value();
    term.size = size.value_or(0);
    if (chosen.index == Dilated)
      integerArg("dilation", 1, kMaxDim, term.dilation);
    // A window that, once dilated, holds only the query is almost surely a
    // slip (a dilation meant for a larger window).
    int64_t reach = decoder ? term.size - 1 : term.size / 2;
    if (ok && chosen.index == Dilated && reach >= 1 && term.dilation > reach)
      diags.warning(value.loc,
                    "dilated_window(size = " + Twine(term.size) + ", dilation = " +
                        Twine(term.dilation) + ") lets each query see only itself",
                    "the dilation must be at most " + Twine(reach) +
                        " for the window to reach another key");
    break;
  }
  case Global:
    ok &= readTokens(*chosen.arg("tokens"), term);
    break;
  case Random: {
    const ast::Value &perRowValue = *chosen.arg("per_row");
    std::optional<int64_t> perRow = withinSequence(perRowValue, "per_row", "random", 1);
    if (perRow && *perRow > kMaxRandomPerRow) {
      diags.error(perRowValue.loc,
                  "random per_row (" + Twine(*perRow) + ") is larger than " +
                      Twine(kMaxRandomPerRow) + ", the most tmc supports",
                  "add a sliding_window or global term for dense parts of the pattern");
      perRow.reset();
    }
    ok &= perRow.has_value();
    term.perRow = perRow.value_or(0);
    int64_t seed = 0;
    integerArg("seed", 0, INT64_MAX, seed);
    term.seed = static_cast<uint64_t>(seed);
    break;
  }
  case BlockSparse:
    integerArg("block", 1, kMaxDim, term.size);
    if (ok)
      diags.error(value.loc, "mask = block_sparse" + Twine(kNotSupported),
                  "sliding_window, dilated_window, global and random are available");
    return false;
  }
  return ok;
}

std::optional<MaskSpec> MaskReader::read(const ast::Value &value) {
  static const StringRef size[] = {"size"};
  static const StringRef dilated[] = {"size", "dilation"};
  static const StringRef tokens[] = {"tokens"};
  static const StringRef random[] = {"per_row", "seed"};
  static const StringRef block[] = {"block"};
  const Choice choices[] = {{"none"},
                            {"causal"},
                            {"padding"},
                            {"sliding_window", size, size},
                            {"dilated_window", dilated, dilated},
                            {"global", tokens, tokens},
                            {"random", random, ArrayRef<StringRef>(random).take_front()},
                            {"block_sparse", block, block}};
  const MaskKind kinds[] = {MaskKind::Causal,        MaskKind::Causal,
                            MaskKind::Padding,       MaskKind::SlidingWindow,
                            MaskKind::DilatedWindow, MaskKind::Global,
                            MaskKind::Random,        MaskKind::Causal};
  SmallVector<const ast::Value *, 4> terms;
  if (value.kind == ast::Value::Kind::Sum)
    for (const ast::ValuePtr &term : value.elements)
      terms.push_back(term.get());
  else
    terms.push_back(&value);

  MaskSpec mask;
  mask.loc = value.loc;
  bool ok = true;
  const ast::Value *firstCausal = nullptr, *firstPadding = nullptr;
  const ast::Value *firstSliding = nullptr, *firstDilated = nullptr;
  const ast::Value *firstGlobal = nullptr, *firstRandom = nullptr;
  for (const ast::Value *term : terms) {
    std::optional<Chosen> chosen = reader.choose(*term, "mask", choices);
    if (!chosen) {
      ok = false;
      continue;
    }
    if (chosen->index == None) {
      if (terms.size() > 1) {
        diags.error(term->loc, "'none' cannot be combined with other masks",
                    "leave 'none' out: a sum of terms already says what is allowed");
        ok = false;
      }
      continue;
    }
    // causal and padding restrict, so a second one says nothing new.
    if (chosen->index == Causal || chosen->index == Padding) {
      const ast::Value *&first = chosen->index == Causal ? firstCausal : firstPadding;
      if (first) {
        diags.warning(term->loc, "'" + term->name + "' appears twice in the mask");
        diags.note(first->loc, "first given here");
        continue;
      }
      first = term;
    }
    // The union of two windows of a kind is just the wider one.
    if (chosen->index == Sliding || chosen->index == Dilated) {
      const ast::Value *&first = chosen->index == Sliding ? firstSliding : firstDilated;
      if (first) {
        diags.error(term->loc, "a mask takes one '" + term->name + "' term",
                    "the union of two windows is the wider one; keep that one");
        diags.note(first->loc, "first given here");
        ok = false;
        continue;
      }
      first = term;
    }
    // Meaningful (their keys add up), but the code generator takes one of
    // each; refused here so that `tmc check` never passes what cannot compile.
    if (chosen->index == Global || chosen->index == Random) {
      const ast::Value *&first = chosen->index == Global ? firstGlobal : firstRandom;
      if (first) {
        diags.error(term->loc, "a mask with two '" + term->name + "' terms" + Twine(kNotSupported),
                    chosen->index == Global
                        ? "list every token in one global term"
                        : "use one random term with a larger per_row");
        diags.note(first->loc, "first given here");
        ok = false;
        continue;
      }
      first = term;
    }
    MaskTerm parsed;
    parsed.kind = kinds[chosen->index];
    parsed.loc = term->loc;
    if (!readTerm(*term, *chosen, parsed)) {
      ok = false;
      continue;
    }
    mask.terms.push_back(std::move(parsed));
  }
  if (!ok)
    return std::nullopt;
  return mask;
}

} // namespace

std::optional<MaskSpec> readMask(ValueReader &reader, const ast::Value &value,
                                 int64_t maxSeq, bool decoder) {
  return MaskReader(reader, maxSeq, decoder).read(value);
}

void checkLayerMask(ValueReader &reader, const MaskSpec &mask, bool given, int64_t maxSeq,
                    bool decoder, bool linformer) {
  if (!given || maxSeq <= 0)
    return;
  DiagnosticEngine &diags = reader.diagnostics();
  if (std::optional<int64_t> row = MaskRows(mask, decoder, maxSeq).firstEmptyRow()) {
    diags.error(mask.loc,
                "this mask leaves position " + Twine(*row) +
                    " with no key to attend to",
                "causal hides every key after it, and no other term allows one "
                "at or before it; add a sliding_window term or "
                "global(tokens = [0])");
    return;
  }
  bool seesLater = mask.none() || mask.has(MaskKind::Global) ||
                   mask.has(MaskKind::Random) ||
                   llvm::all_of(mask.terms, [](const MaskTerm &term) {
                     return term.kind == MaskKind::Padding;
                   });
  if (decoder && !mask.has(MaskKind::Causal) && seesLater)
    diags.warning(mask.loc,
                  "without 'causal', this decoder's mask lets positions attend to "
                  "later ones",
                  linformer ? "generating token by token will not match a full forward pass "
                              "(linformer projects the whole sequence, so it takes no causal "
                              "term; use attention = full with causal for a generating decoder)"
                            : "generating token by token will not match a full forward pass; "
                              "add causal, e.g. mask = causal + padding");
}

} // namespace tmc::sema
