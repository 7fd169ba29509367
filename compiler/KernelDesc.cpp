//===- KernelDesc.cpp - Kernel names and signatures -----------------------===//
//
// What identifies a kernel (its name) and how its buffers are laid out (its
// signature): shared by the plan, the Halide lowering and the executor
// generator, and free of MLIR and Halide so that every side can link it.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelDesc.h"

#include "compiler/Schedule.h"

#include "llvm/Support/FormatVariadic.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tmc {

namespace {

/// The shortest text that reads back as exactly `value`, as a person writes
/// it: `1e-06`, `0.125`, `10000` (integers in full, never `1e+04`), so that
/// kernels differing in any constant never share a name.
std::string readableDouble(double value) {
  char buffer[40];
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

/// The text tmc before the readable names wrote (exact, identifier-safe and
/// unreadable: `9p9999999999999995em07`); kept to recognise old tuning
/// database entries.
std::string legacyDouble(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  for (char &c : text)
    if (c == '.' || c == '-' || c == '+')
      c = c == '.' ? 'p' : (c == '-' ? 'm' : 'x');
  return text;
}

/// FNV-1a over a list, to name kernels by long attribute lists.
uint64_t hashList(const std::vector<int64_t> &values) {
  uint64_t hash = 1469598103934665603ull;
  for (int64_t v : values)
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= static_cast<uint64_t>(v >> (8 * byte)) & 0xff;
      hash *= 1099511628211ull;
    }
  return hash;
}

std::string maskName(const MaskDesc &m) {
  std::string name;
  if (m.causal) name += "c";
  if (m.padding) name += "p";
  if (m.alibi) name += "a";
  if (m.window) name += llvm::formatv("w{0}", m.window).str();
  if (m.dilated) name += llvm::formatv("l{0}x{1}", m.dilated, m.dilation).str();
  if (!m.globals.empty())
    name += llvm::formatv("g{0}h{1:x}", m.globals.size(), hashList(m.globals) & 0xffffffff).str();
  if (m.randomPerRow) name += llvm::formatv("r{0}s{1}", m.randomPerRow, m.randomSeed).str();
  if (m.restricted()) name += (m.decoder ? "d" : "e") + std::to_string(m.maxSeq);
  return name.empty() ? "full" : name;
}

} // namespace

std::string KernelDesc::name() const { return formatName(/*legacy=*/false); }

std::string KernelDesc::legacyName() const { return formatName(/*legacy=*/true); }

std::string KernelDesc::fingerprint() const {
  // A field added to KernelDesc or MaskDesc must be printed below: the
  // kernel cache would otherwise reuse one kernel's object for another.
  static_assert(sizeof(KernelDesc) == 368 && sizeof(MaskDesc) == 80,
                "a KernelDesc or MaskDesc field was added: print it in fingerprint()");
  std::string out;
  auto put = [&](const char *key, const std::string &value) {
    out.append(key).append("=").append(value).append("\n");
  };
  auto exact = [](double value) {
    return llvm::formatv("{0:x}", std::bit_cast<uint64_t>(value)).str();
  };
  put("kind", std::to_string(static_cast<int>(kind)));
  put("width", std::to_string(width));
  put("in_width", std::to_string(inWidth));
  put("table_rows", std::to_string(tableRows));
  put("position_rows", std::to_string(positionRows));
  put("heads", std::to_string(heads));
  put("kv_heads", std::to_string(kvHeads));
  put("head_dim", std::to_string(headDim));
  put("scale", exact(scale));
  put("eps", exact(eps));
  put("theta", exact(theta));
  put("position", position);
  put("activation", activation);
  put("variant", variant);
  put("has_bias", std::to_string(hasBias));
  put("has_residual", std::to_string(hasResidual));
  put("rope_columns", std::to_string(ropeColumns));
  put("has_length", std::to_string(hasLength));
  put("precision", precision);
  put("kv_precision", kvPrecision);
  put("window_keys", std::to_string(windowKeys));
  put("decode_variant", std::to_string(decodeVariant));
  put("mask.causal", std::to_string(mask.causal));
  put("mask.padding", std::to_string(mask.padding));
  put("mask.decoder", std::to_string(mask.decoder));
  put("mask.alibi", std::to_string(mask.alibi));
  put("mask.window", std::to_string(mask.window));
  put("mask.dilated", std::to_string(mask.dilated));
  put("mask.dilation", std::to_string(mask.dilation));
  std::string globals;
  for (int64_t g : mask.globals)
    globals += std::to_string(g) + ",";
  put("mask.globals", globals);
  put("mask.random_per_row", std::to_string(mask.randomPerRow));
  put("mask.random_seed", std::to_string(mask.randomSeed));
  put("mask.max_seq", std::to_string(mask.maxSeq));
  return out;
}

std::string KernelDesc::symbol() const {
  std::string text = name();
  for (char &c : text)
    if (c == '.' || c == '-' || c == '+')
      c = c == '.' ? 'p' : (c == '-' ? 'm' : 'x');
  return text;
}

std::string KernelDesc::formatName(bool legacy) const {
  auto number = [&](double value) { return legacy ? legacyDouble(value) : readableDouble(value); };
  switch (kind) {
  case KernelKind::embed: {
    // The embedding scale is left out at its default of 1 (sqrt(d_model)
    // when the spec scales the embedding).
    std::string scaleText = legacy          ? "_s" + number(scale)
                            : scale == 1.0 ? std::string()
                                            : "_scale" + number(scale);
    return llvm::formatv("embed_v{0}_d{1}{2}_{3}{4}{5}", tableRows, width, scaleText, position,
                         positionRows ? "_r" + std::to_string(positionRows) : std::string(),
                         precision == "f32" ? std::string() : "_" + precision)
        .str();
  }
  case KernelKind::positions:
    return llvm::formatv("positions_d{0}_{1}{2}", width, position,
                         positionRows ? "_r" + std::to_string(positionRows) : std::string()).str();
  case KernelKind::segments:
    return llvm::formatv("segments_d{0}_r{1}", width, positionRows).str();
  case KernelKind::linear:
    return llvm::formatv("linear_k{0}_n{1}{2}_{3}{4}{5}{6}", inWidth, width, hasBias ? "_b" : "",
                         activation, hasResidual ? "_res" : "",
                         precision == "f32" ? std::string() : "_" + precision,
                         ropeColumns ? llvm::formatv("_rope{0}_d{1}", ropeColumns, headDim).str()
                                     : std::string())
        .str();
  case KernelKind::attention: {
    // The score scale is left out at its default, 1/sqrt(head_dim) (what
    // the frontend computes, bit for bit).
    const bool defaultScale = scale == 1.0 / std::sqrt(static_cast<double>(headDim));
    std::string scaleText = legacy         ? "_s" + number(scale)
                            : defaultScale ? std::string()
                                           : "_scale" + number(scale);
    return llvm::formatv("attention_h{0}_kv{1}_d{2}{3}_{4}{5}{6}", heads, kvHeads, headDim,
                         scaleText, maskName(mask),
                         kvPrecision == "f32" ? std::string() : "_kv" + kvPrecision,
                         windowKeys ? "_windowcache" : "")
        .str();
  }
  case KernelKind::add:
    return llvm::formatv("add_d{0}", width).str();
  case KernelKind::activation:
    return llvm::formatv("activation_d{0}_{1}", width, activation).str();
  case KernelKind::gated_activation:
    return llvm::formatv("gated_d{0}_{1}", width, activation).str();
  case KernelKind::norm:
  case KernelKind::add_norm:
    return llvm::formatv("{0}{1}_d{2}_{3}{4}{5}", kind == KernelKind::add_norm ? "add_" : "",
                         variant, width, legacy ? "e" : "eps", number(eps),
                         hasBias ? "_b" : "").str();
  case KernelKind::rope:
    // Named rope_h_d_theta while each rope computed its own table: a tuning
    // database's entry under that name matches no kernel now.
    return llvm::formatv("rope_h{0}_d{1}", heads, headDim).str();
  case KernelKind::rope_table:
    return llvm::formatv("rope_table_d{0}_theta{1}", headDim, number(theta)).str();
  case KernelKind::pool:
    return llvm::formatv("pool_d{0}_{1}", width, variant).str();
  case KernelKind::seq_project:
    return llvm::formatv("seq_project_d{0}_k{1}_s{2}{3}", width, tableRows, positionRows,
                         hasLength ? "_p" : "").str();
  }
  return "unknown";
}

namespace {

/// An embedding's table: f32 rows, or its tied head's packed weight (the
/// GEMM of N = vocab, K = width) in panels of kTablePanelWidth.
BufferShape packedTable(const KernelDesc &k) {
  if (k.precision == "f32")
    return {false, false, {k.width, k.tableRows}};
  KernelDesc head{KernelKind::linear};
  head.inWidth = k.width;
  head.width = k.tableRows;
  head.precision = k.precision;
  Schedule panels;
  panels.vectorWidth = panels.tileCols = kTablePanelWidth;
  return gemmLayout(head, panels).packedShape();
}

} // namespace

std::vector<BufferShape> kernelSignature(const KernelDesc &k) {
  const int64_t T = BufferShape::kTokens;
  BufferShape rows{false, false, {k.width, T}};
  BufferShape vec{false, false, {k.width}};
  BufferShape offset{true, true, {}};
  switch (k.kind) {
  case KernelKind::embed: {
    std::vector<BufferShape> sig = {{true, false, {T}}, offset, packedTable(k)};
    if (k.position == "learned")
      sig.push_back({false, false, {k.width, k.positionRows}});
    sig.push_back(rows);
    return sig;
  }
  case KernelKind::positions:
    if (k.position == "learned")
      return {rows, offset, {false, false, {k.width, k.positionRows}}, rows};
    return {rows, offset, rows};
  case KernelKind::segments:
    return {rows, {true, false, {T}}, {false, false, {k.width, k.positionRows}}, rows};
  case KernelKind::linear: {
    std::vector<BufferShape> sig = {{false, false, {k.inWidth, T}},
                                    {false, false, {k.inWidth, k.width}}};
    if (k.hasBias)
      sig.push_back(vec);
    if (k.hasResidual)
      sig.push_back(rows);
    if (k.ropeColumns)
      sig.push_back({false, false, {k.headDim, T}}); // rope_table rows
    sig.push_back(rows);
    return sig;
  }
  case KernelKind::attention: {
    BufferShape q{false, false, {k.headDim, k.heads, T}}, kv{false, false, {k.headDim, k.kvHeads, T}};
    kv.isUInt16 = k.kvPrecision != "f32"; // a cache's f16 or bf16 words
    if (k.mask.padding)
      return {q, kv, kv, offset, q}; // the scalar is the valid length
    return {q, kv, kv, q};
  }
  case KernelKind::rope:
    // The rows, their rope_table rows (cos, then sin), the turned rows.
    return {{false, false, {k.headDim, k.heads, T}},
            {false, false, {k.headDim, T}},
            {false, false, {k.headDim, k.heads, T}}};
  case KernelKind::rope_table:
    return {offset, {false, false, {k.headDim, T}}};
  case KernelKind::add:
  case KernelKind::gated_activation:
    return {rows, rows, rows};
  case KernelKind::activation:
    return {rows, rows};
  case KernelKind::norm:
  case KernelKind::add_norm: {
    std::vector<BufferShape> sig = {rows};
    if (k.kind == KernelKind::add_norm)
      sig.push_back(rows);
    sig.push_back(vec);
    if (k.hasBias)
      sig.push_back(vec);
    sig.push_back(rows);
    return sig;
  }
  case KernelKind::seq_project: {
    std::vector<BufferShape> sig = {rows, {false, false, {k.positionRows, k.tableRows}}};
    if (k.hasLength)
      sig.push_back(offset); // the valid length
    sig.push_back(rows);     // a call binds its rows to k
    return sig;
  }
  case KernelKind::pool:
    if (k.variant == "mean")
      return {rows, offset, {false, false, {k.width, 1}}}; // the scalar is the valid length
    return {rows, {false, false, {k.width, 1}}};
  }
  return {};
}

} // namespace tmc
