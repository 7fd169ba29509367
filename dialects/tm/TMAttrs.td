//===- TMAttrs.td - Attributes of the tm dialect ----------*- tablegen -*-===//

#ifndef TM_ATTRS_TD
#define TM_ATTRS_TD

include "dialects/tm/TMDialect.td"
include "mlir/IR/AttrTypeBase.td"

// A list of integers printed and parsed in square brackets, so that it can sit
// among other parameters of a struct-format attribute.
def TM_IntListParameter : OptionalArrayRefParameter<"int64_t"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
    ::llvm::SmallVector<int64_t> values;
    if ($_parser.parseCommaSeparatedList(::mlir::AsmParser::Delimiter::Square, [&]() {
          return $_parser.parseInteger(values.emplace_back());
        }))
      return ::mlir::failure();
    return values;
  }() }];
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }];
}

def TM_MaskAttr : AttrDef<TM_Dialect, "Mask"> {
  let mnemonic = "mask";
  let summary = "Which keys each query may attend to, as a rule rather than a tensor";
  let description = [{
    The spec's `mask = a + b + ...` (docs/spec-language.md): the union of
    what `window` (|i - j| <= window / 2; decoder: i - window < j <= i),
    `dilated` (the same window with `dilation`), `globals` and `random_per_row`
    (seeded keys per row) allow, or every key when none is set; restricted by
    `causal` (j <= i) and `padding` (j < length). Positions are absolute:
    with Tq queries over Tk keys, query i sits at Tk - Tq + i.

    ```mlir
    #tm.mask<causal = true, window = 128, globals = [0]>
    ```
  }];
  // The sizes of the optional terms are absent, not 0, when the term is not
  // there: the spec has no window of size 0 or random term of 0 keys per
  // row, so a hand-edited `window = 0` is an error (verifyMask), not a
  // silent "no window".
  let parameters = (ins
    DefaultValuedParameter<"bool", "false">:$causal,
    DefaultValuedParameter<"bool", "false">:$padding,
    DefaultValuedParameter<"bool", "false">:$decoder,
    OptionalParameter<"std::optional<int64_t>">:$window,
    OptionalParameter<"std::optional<int64_t>">:$dilated,
    DefaultValuedParameter<"int64_t", "1">:$dilation,
    TM_IntListParameter:$globals,
    OptionalParameter<"std::optional<int64_t>">:$random_per_row,
    DefaultValuedParameter<"uint64_t", "0">:$random_seed,
    DefaultValuedParameter<"int64_t", "0">:$max_seq
  );
  let assemblyFormat = "`<` struct(params) `>`";
  // No attribute verifier: the parser would report its errors at the line of
  // the .mlir file, where an op verifier (verifyMask, called by tm.attention
  // and tmk.kernel) reports them at the spec line the attention came from.
  // Besides the default builder (the parser's, absent terms as nullopt), one
  // that takes 0 for an absent term, as the spec's MaskSpec has it (MLIRGen).
  let builders = [
    AttrBuilder<(ins "bool":$causal, "bool":$padding, "bool":$decoder, "int64_t":$window,
                     "int64_t":$dilated, "int64_t":$dilation,
                     "::llvm::ArrayRef<int64_t>":$globals, "int64_t":$random_per_row,
                     "uint64_t":$random_seed, "int64_t":$max_seq), [{
      auto term = [](int64_t size) {
        return size ? std::optional<int64_t>(size) : std::nullopt;
      };
      return $_get($_ctxt, causal, padding, decoder, term(window), term(dilated), dilation,
                   globals, term(random_per_row), random_seed, max_seq);
    }]>
  ];
  let extraClassDeclaration = [{
    /// True when some term limits keys beyond causal/padding.
    bool isRestricted() const {
      return getWindow() || getDilated() || !getGlobals().empty() || getRandomPerRow();
    }
  }];
}

#endif // TM_ATTRS_TD
