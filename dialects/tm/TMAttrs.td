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
  let parameters = (ins
    DefaultValuedParameter<"bool", "false">:$causal,
    DefaultValuedParameter<"bool", "false">:$padding,
    DefaultValuedParameter<"bool", "false">:$decoder,
    DefaultValuedParameter<"int64_t", "0">:$window,
    DefaultValuedParameter<"int64_t", "0">:$dilated,
    DefaultValuedParameter<"int64_t", "1">:$dilation,
    TM_IntListParameter:$globals,
    DefaultValuedParameter<"int64_t", "0">:$random_per_row,
    DefaultValuedParameter<"uint64_t", "0">:$random_seed,
    DefaultValuedParameter<"int64_t", "0">:$max_seq
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when some term limits keys beyond causal/padding.
    bool isRestricted() const {
      return getWindow() > 0 || getDilated() > 0 || !getGlobals().empty() ||
             getRandomPerRow() > 0;
    }
  }];
}

#endif // TM_ATTRS_TD
