//===- ModelStats.cpp - Size and cost of a checked model ------------------===//

#include "frontend/ModelStats.h"

#include "frontend/Manifest.h"
#include "frontend/MaskAnalysis.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <map>
#include <set>
#include <utility>

using llvm::StringRef;

namespace tmc {

int64_t bytesPerElement(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

namespace {

/// Checked int64 arithmetic: the first overflow sticks.
struct Checked {
  bool overflowed = false;

  int64_t mul(int64_t a, int64_t b) {
    int64_t r = 0;
    overflowed |= llvm::MulOverflow(a, b, r);
    return r;
  }
  void add(int64_t &sum, int64_t value) {
    int64_t r = 0;
    overflowed |= llvm::AddOverflow(sum, value, r);
    sum = r;
  }
};

int64_t &partOf(ModelSizes &sizes, StringRef name) {
  for (auto [prefix, part] :
       {std::pair{StringRef("encoder.layers."), &sizes.encoderParameters},
        std::pair{StringRef("encoder.final_norm."), &sizes.encoderParameters},
        std::pair{StringRef("decoder.layers."), &sizes.decoderParameters},
        std::pair{StringRef("decoder.final_norm."), &sizes.decoderParameters},
        std::pair{StringRef("output."), &sizes.headParameters},
        std::pair{StringRef("classifier."), &sizes.headParameters}})
    if (name.starts_with(prefix))
      return *part;
  return sizes.embeddingParameters;
}

bool gated(Activation ffn) { return ffn == Activation::SwiGLU || ffn == Activation::GeGLU; }

/// The weight matrices (not biases) of the linears that compute in one
/// precision: their elements; their rows (output channels), which int8
/// gives a scale and a correction each; and their q4 blocks, each row's K
/// cut into ceil(K/32) blocks of 32 (the last padded with zeros).
struct LinearMatrices {
  int64_t elements = 0, channels = 0, q4Blocks = 0;

  /// Counts one [out, in] matrix.
  void add(int64_t out, int64_t in, Checked &checked) {
    checked.add(elements, checked.mul(out, in));
    checked.add(channels, out);
    checked.add(q4Blocks, checked.mul(out, in / 32 + (in % 32 != 0)));
  }
};

/// The matrices of the linears `precision` applies to: each layer's
/// projections and FFN, the head's. Mirrors the shapes buildManifest gives
/// them.
LinearMatrices linearMatrices(const ModelSpec &spec, Precision precision, Checked &checked) {
  LinearMatrices matrices;
  int64_t d = spec.dModel;
  for (const StackSpec *stack : {&spec.encoder, &spec.decoder}) {
    if (!stack->present)
      continue;
    for (int64_t i = 0; i < stack->layers; ++i) {
      const LayerSpec &layer =
          stack->layerSpecs.empty() ? static_cast<const LayerSpec &>(*stack) : stack->layer(i);
      if (layer.precision != precision)
        continue;
      int64_t qWidth = checked.mul(layer.heads, layer.headDim);
      int64_t kvWidth = checked.mul(layer.kvHeads, layer.headDim);
      auto addAttention = [&] {
        matrices.add(qWidth, d, checked);  // q
        matrices.add(kvWidth, d, checked); // k
        matrices.add(kvWidth, d, checked); // v
        matrices.add(d, qWidth, checked);  // o
      };
      addAttention();
      if (stack->crossAttention)
        addAttention();
      if (gated(layer.ffn))
        matrices.add(layer.dFF, d, checked); // gate
      matrices.add(layer.dFF, d, checked);   // up
      matrices.add(d, layer.dFF, checked);   // down
    }
  }
  if (spec.precision == precision) {
    // A tied head's matrix is the token table, which the lookup then reads
    // in the head's precision too (tmk-tied-table-precision).
    if (spec.output == OutputKind::LMHead)
      matrices.add(spec.vocab, d, checked);
    else if (spec.output == OutputKind::Classifier)
      matrices.add(spec.classes, d, checked);
  }
  return matrices;
}

/// FLOPs of one stack, counted layer by layer.
class StackFlops {
public:
  /// `maskBudget`: the steps each distinct mask may take to count its keys.
  StackFlops(const ModelSpec &spec, const StackSpec &stack, bool decoder, int64_t maskBudget)
      : spec(spec), stack(stack), decoder(decoder), maskBudget(maskBudget),
        n(static_cast<double>(spec.maxSeq)) {}

  /// All of the stack's work for max_seq positions.
  double prefill(bool &exact) {
    double total = 0;
    for (int64_t i = 0; i < stack.layers; ++i) {
      const LayerSpec &layer = layerAt(i);
      double qWidth = width(layer.heads, layer), kvWidth = width(layer.kvHeads, layer);
      total += n * perToken(layer);
      if (layer.attention == AttentionKind::Linformer)
        total += n * 4 * qWidth * static_cast<double>(layer.linformerK);
      else
        total += 4 * qWidth * keysOverRows(layer, exact);
      // Cross-attention: keys and values of the max_seq source positions are
      // projected once; every target position then reads all of them.
      if (stack.crossAttention)
        total += n * 4 * d() * kvWidth + n * 4 * qWidth * n;
    }
    return total;
  }

  /// The stack's work for one new token at position max_seq - 1.
  double decodeStep() {
    double total = 0;
    for (int64_t i = 0; i < stack.layers; ++i) {
      const LayerSpec &layer = layerAt(i);
      double qWidth = width(layer.heads, layer);
      total += perToken(layer);
      if (layer.attention == AttentionKind::Linformer)
        total += 4 * qWidth * static_cast<double>(layer.linformerK);
      else
        total += 4 * qWidth *
                 static_cast<double>(MaskRows(layer.mask, decoder, spec.maxSeq)
                                         .allowedKeys(spec.maxSeq - 1));
      if (stack.crossAttention)
        total += 4 * qWidth * n;
    }
    return total;
  }

private:
  double d() const { return static_cast<double>(spec.dModel); }
  static double width(int64_t heads, const LayerSpec &layer) {
    return static_cast<double>(heads) * static_cast<double>(layer.headDim);
  }
  const LayerSpec &layerAt(int64_t i) const {
    return stack.layerSpecs.empty() ? static_cast<const LayerSpec &>(stack) : stack.layer(i);
  }

  /// Work per position that does not depend on where it is: the projections,
  /// the feed-forward block, linformer's sequence projections.
  double perToken(const LayerSpec &layer) const {
    double qWidth = width(layer.heads, layer), kvWidth = width(layer.kvHeads, layer);
    double flops = 2 * (d() * qWidth + 2 * d() * kvWidth + qWidth * d());
    flops += 2 * d() * static_cast<double>(layer.dFF) * (gated(layer.ffn) ? 3 : 2);
    if (layer.attention == AttentionKind::Linformer)
      flops += 4 * static_cast<double>(layer.linformerK) * kvWidth;
    if (stack.crossAttention)
      flops += 2 * (d() * qWidth + qWidth * d());
    return flops;
  }

  /// Keys attended to, summed over every query row; layers that share a mask
  /// share the count.
  double keysOverRows(const LayerSpec &layer, bool &exact) {
    std::string key = formatMask(layer.mask);
    auto it = cache.find(key);
    if (it == cache.end()) {
      bool maskExact = true;
      double keys =
          MaskRows(layer.mask, decoder, spec.maxSeq).totalAllowedKeys(maskExact, maskBudget);
      it = cache.emplace(key, std::pair{keys, maskExact}).first;
    }
    exact &= it->second.second;
    return it->second.first;
  }

  const ModelSpec &spec;
  const StackSpec &stack;
  bool decoder;
  int64_t maskBudget;
  double n;
  std::map<std::string, std::pair<double, bool>> cache;
};

} // namespace

std::optional<ModelSizes> computeSizes(const ModelSpec &spec, std::string *overflow) {
  ModelSizes sizes;
  Checked checked, bytes;
  for (const TensorSpec &tensor : buildManifest(spec)) {
    int64_t elements = 1;
    for (int64_t dim : tensor.shape)
      elements = checked.mul(elements, dim);
    checked.add(sizes.parameters, elements);
    checked.add(partOf(sizes, tensor.name), elements);
    bytes.add(sizes.weightBytes, bytes.mul(elements, bytesPerElement(tensor.dtype)));
  }
  if (checked.overflowed || bytes.overflowed) {
    if (overflow)
      *overflow = checked.overflowed ? "the parameter count" : "the weight size in bytes";
    return std::nullopt;
  }
  // No more than the parameters, so the element counts cannot overflow; the
  // f32 bytes can where an f16/bf16 file's size did not, and saturate rather
  // than refuse a spec that fits in 64 bits as stored.
  Checked split;
  LinearMatrices bf16 = linearMatrices(spec, Precision::BF16, split);
  LinearMatrices int8 = linearMatrices(spec, Precision::Int8, split);
  LinearMatrices q4 = linearMatrices(spec, Precision::Q4, split);
  sizes.bf16WeightBytes = split.mul(bf16.elements, 2);
  // A byte an element, and per output channel an f32 scale and the int32
  // sum of its row (the zero-point correction of the unsigned activations).
  sizes.int8WeightBytes = int8.elements;
  split.add(sizes.int8WeightBytes, split.mul(int8.channels, 8));
  // ggml's block_q4_0: 32 four-bit values (16 bytes) and an f16 scale.
  sizes.q4WeightBytes = split.mul(q4.q4Blocks, 18);
  sizes.f32WeightBytes =
      split.mul(sizes.parameters - bf16.elements - int8.elements - q4.elements, 4);
  if (split.overflowed)
    sizes.bf16WeightBytes = sizes.int8WeightBytes = sizes.q4WeightBytes = sizes.f32WeightBytes =
        std::numeric_limits<int64_t>::max();
  if (spec.decoder.present) {
    const StackSpec &stack = spec.decoder;
    for (int64_t i = 0; i < stack.layers; ++i) {
      const LayerSpec &layer =
          stack.layerSpecs.empty() ? static_cast<const LayerSpec &>(stack) : stack.layer(i);
      // Keys and values, max_seq rows of kv_heads * head_dim each, at 4
      // bytes an element (f32) or 2 (kv_cache = f16 | bf16).
      int64_t elementBytes = layer.kvCache == CachePrecision::F32 ? 4 : 2;
      int64_t perAttention = checked.mul(
          checked.mul(checked.mul(2 * elementBytes, spec.maxSeq), layer.kvHeads), layer.headDim);
      checked.add(sizes.kvCacheBytes, perAttention);
      if (stack.crossAttention)
        checked.add(sizes.kvCacheBytes, perAttention);
    }
  }
  if (checked.overflowed) {
    if (overflow)
      *overflow = "the KV-cache size";
    return std::nullopt;
  }
  return sizes;
}

/// Distinct masks of the layers of both stacks: they share one work budget,
/// so that a spec with many different masks stays as quick to count.
static int64_t distinctMasks(const ModelSpec &spec) {
  std::set<std::string> masks;
  for (const StackSpec *stack : {&spec.encoder, &spec.decoder})
    for (const LayerSpec &layer : stack->layerSpecs)
      masks.insert(formatMask(layer.mask));
  return std::max<int64_t>(1, static_cast<int64_t>(masks.size()));
}

FlopCounts countFlops(const ModelSpec &spec) {
  FlopCounts flops;
  double n = static_cast<double>(spec.maxSeq), d = static_cast<double>(spec.dModel);
  int64_t maskBudget = (int64_t(1) << 24) / distinctMasks(spec);
  if (spec.encoder.present)
    flops.encoderPrefill =
        StackFlops(spec, spec.encoder, false, maskBudget).prefill(flops.exact) / n;
  if (spec.decoder.present)
    flops.decoderPrefill =
        StackFlops(spec, spec.decoder, true, maskBudget).prefill(flops.exact) / n;
  // The LM head scores every position; a classifier reads one pooled vector
  // per sequence.
  double headStep = 0;
  if (spec.output == OutputKind::LMHead) {
    headStep = 2 * d * static_cast<double>(spec.vocab);
    flops.headPrefill = headStep;
  } else if (spec.output == OutputKind::Classifier) {
    headStep = 2 * d * static_cast<double>(spec.classes);
    flops.headPrefill = headStep / n;
  }
  flops.prefill = flops.encoderPrefill + flops.decoderPrefill + flops.headPrefill;
  if (spec.decoder.present)
    flops.decode = StackFlops(spec, spec.decoder, true, maskBudget).decodeStep() + headStep;
  return flops;
}

} // namespace tmc
