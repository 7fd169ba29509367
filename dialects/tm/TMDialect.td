//===- TMDialect.td - The tm dialect ----------------------*- tablegen -*-===//
//
// `tm` models a transformer at the level a user thinks of it: embeddings,
// linear layers, attention, norms. Values are tensors whose leading dimension is
// the (dynamic) sequence length; weights are named tensors of static shape.
//
//===----------------------------------------------------------------------===//
#ifndef TM_DIALECT_TD
#define TM_DIALECT_TD

include "mlir/IR/OpBase.td"

def TM_Dialect : Dialect {
  let name = "tm";
  let cppNamespace = "::tmc::tm";
  let summary = "Transformer model operations of the tmc compiler";
  let description = [{
    The `tm` dialect is what a `.tm` spec turns into: one op per model-level
    computation, each carrying the spec location it came from. Fusion passes
    rewrite it into fused ops that map one-to-one onto Halide kernels.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class TM_Op<string mnemonic, list<Trait> traits = []>
    : Op<TM_Dialect, mnemonic, traits>;

// Activations: [tokens, width] with a dynamic token count.
def TM_Activations : 2DTensorOf<[F32]>;
def TM_Tokens : 1DTensorOf<[I32]>;
def TM_Weight : TensorOf<[F32]>;

#endif // TM_DIALECT_TD
