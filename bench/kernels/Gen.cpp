//===- Gen.cpp - AOT-compiles the GEMM kernels that bench/kernels times ---===//
//
// For every GEMM shape of GPT-2 small and BERT base (K x N; the token count is
// a run-time argument, so one kernel serves prefill and decode) and a few
// schedule variants, compiles the load-time pack kernel and the GEMM on packed
// weights exactly as `tmc compile` lowers them, then writes `kernels.inc`: the
// declarations and a table the harness (Bench.cpp) iterates over.
//
// It also compiles GPT-2 small's fused attention (default schedule and key
// block / query tile variants) and the three stages of an unfused attention
// (bench/kernels/UnfusedAttention.cpp) into `attention.inc`, which
// BenchAttention.cpp times.
//
// Usage: bench_kernels_gen --target host|x86-64-avx2|x86-64-avx512 --out DIR
//                          [--only gemm|attention] [--shapes gpt2|narrow]
// --shapes narrow: the small-model sweep (K 128-768 x N 384-50257) instead.
//
//===----------------------------------------------------------------------===//

#include "bench/kernels/UnfusedAttention.h"
#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/halide/AOT.h"
#include "compiler/halide/Lowering.h"
#include "compiler/tune/FmaPeak.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace tmc;

namespace {

struct Shape {
  int64_t K, N;
  bool operator==(const Shape &) const = default;
};

/// One row of the harness's table: a GEMM of T tokens through a K x N layer.
struct BenchCase {
  std::string label;
  int T;
  Shape shape;
};

// GPT-2 small and BERT base (d 768, ff 3072): attention projections
// (768 x 768), fused QKV (768 x 2304), FFN up (768 x 3072) and down (3072 x
// 768), and GPT-2's LM head (768 x 50257: its 154 MB weight streams from
// memory on every call, unlike the others', which stay in cache here).
std::vector<BenchCase> gpt2Cases() {
  return {{"GPT-2/BERT prefill attn out", 128, {768, 768}},
          {"GPT-2 prefill QKV", 128, {768, 2304}},
          {"GPT-2/BERT prefill FFN up", 128, {768, 3072}},
          {"GPT-2/BERT prefill FFN down", 128, {3072, 768}},
          {"GPT-2 prefill LM head", 128, {768, 50257}},
          {"GPT-2 decode QKV", 1, {768, 2304}},
          {"GPT-2 decode attn out", 1, {768, 768}},
          {"GPT-2 decode FFN up", 1, {768, 3072}},
          {"GPT-2 decode FFN down", 1, {3072, 768}},
          {"GPT-2 decode LM head", 1, {768, 50257}}};
}

// Small models' layers (#26): d_model 128-768 against the widths such models
// project to: a narrow output (384), fused q/k/v (960), a gated FFN's fused
// gate and up (1728), and two vocabularies (32000, 50257), prefill (128
// tokens) and one decoding row.
std::vector<BenchCase> narrowCases() {
  std::vector<BenchCase> cases;
  for (int T : {128, 1})
    for (int64_t K : {128, 256, 320, 384, 512, 768})
      for (int64_t N : {384, 960, 1728, 32000, 50257})
        cases.push_back({std::string(T == 1 ? "decode" : "prefill") + " K" + std::to_string(K) +
                             " N" + std::to_string(N),
                         T,
                         {K, N}});
  return cases;
}

/// A named change to the default schedule; the harness reports the default
/// and the best variant per shape (the tuner's search space in miniature).
/// Variants that leave the default unchanged are skipped.
struct Variant {
  const char *name;
  std::function<bool(Schedule &, const Shape &)> apply; ///< false: not for this shape
};

Variant blocked(const char *name, int kBlock) {
  return {name, [kBlock](Schedule &s, const Shape &sh) {
            s.kBlock = kBlock;
            return kBlock < sh.K;
          }};
}

/// A register tile of `vectors` vectors x `rows` rows, with K blocks of
/// `kBlock` (0: unblocked; -1: the default's); not for a layer whose K one
/// block covers.
Variant tiled(const char *name, int vectors, int rows, int kBlock = -1) {
  return {name, [=](Schedule &s, const Shape &sh) {
            s.tileCols = vectors * s.vectorWidth;
            s.tileRows = rows;
            if (kBlock >= 0)
              s.kBlock = kBlock;
            return kBlock <= 0 || kBlock < sh.K;
          }};
}

const Variant kVariants[] = {
    {"default", [](Schedule &, const Shape &) { return true; }},
    {"unroll2",
     [](Schedule &s, const Shape &) {
       s.unrollK = 2;
       return true;
     }},
    {"rowtasks",
     [](Schedule &s, const Shape &) {
       s.parallelRows = true;
       s.kBlock = 0;
       return true;
     }},
    {"rows4",
     [](Schedule &s, const Shape &) {
       s.tileRows = 4;
       return true;
     }},
    tiled("3x4tile", 3, 4),
    {"4x6kb128", // the AVX-512 default until 2026-11-25
     [](Schedule &s, const Shape &sh) {
       s.tileCols = 4 * s.vectorWidth;
       s.tileRows = 6;
       s.kBlock = sh.K > 1024 ? 0 : 128;
       return true;
     }},
    tiled("3x8kb128", 3, 8, 128),
    tiled("2x6tile", 2, 6),
    blocked("noblock", 0),
    blocked("kblock64", 64),
    blocked("kblock128", 128),
    blocked("kblock256", 256),
    blocked("kblock384", 384),
    blocked("kblock768", 768),
};

// The sweep's variants: the register tiles the defaults choose between,
// with and without K blocks, and row-tile tasks for layers too narrow to
// give each thread a few panels.
const Variant kNarrowVariants[] = {
    {"default", [](Schedule &, const Shape &) { return true; }},
    tiled("3x8", 3, 8, 0),
    tiled("4x6", 4, 6, 0),
    tiled("4x6kb128", 4, 6, 128),
    tiled("2x12", 2, 12, 0),
    {"rowtasks",
     [](Schedule &s, const Shape &) {
       s.parallelRows = true;
       return true;
     }},
};

bool compile(const halide::LoweredKernel &kernel, const std::string &name,
             const TargetInfo &target, const std::string &dir) {
  if (llvm::Error error =
          halide::compileKernel(kernel, name, target, {dir + "/" + name + ".o", "", ""})) {
    std::cerr << "bench_kernels_gen: " << name << ": " << llvm::toString(std::move(error)) << "\n";
    return false;
  }
  return true;
}

/// GPT-2 small's attention: 12 heads of 64, causal, scale 1/8.
KernelDesc gpt2Attention() {
  KernelDesc desc;
  desc.kind = KernelKind::attention;
  desc.heads = desc.kvHeads = 12;
  desc.headDim = 64;
  desc.width = 768;
  desc.scale = 0.125;
  desc.mask.causal = desc.mask.decoder = true;
  desc.mask.maxSeq = 1024;
  return desc;
}

/// The fused attention kernel under the default schedule and a few key
/// block / query tile variants, and the three unfused stages; writes
/// `attention.inc` for BenchAttention.cpp.
bool generateAttention(const TargetInfo &target, const std::string &outDir) {
  KernelDesc desc = gpt2Attention();
  std::ostringstream decls, table;
  struct AttnVariant {
    const char *name;
    int keyBlock, queryTile; ///< -1: the default's
    int keysAt = -1;         ///< -1: the default's
  };
  const AttnVariant variants[] = {{"default", -1, -1}, {"onepass", 0, 16},   {"kblock32", 32, 16},
                                  {"kblock64", 64, 16}, {"kblock128", 128, 16},
                                  {"onepass_q32", 0, 32}, {"kblock64_q32", 64, 32},
                                  {"kblock128_q32", 128, 32}, {"kblock32_q32", 32, 32},
                                  {"kblock64_q64", 64, 64}, {"kblock32_q64", 32, 64},
                                  {"keys_per_block", -1, -1, 1}};
  const std::string defaultStr = defaultSchedule(desc, target).str();
  for (const AttnVariant &variant : variants) {
    Schedule schedule = defaultSchedule(desc, target);
    if (variant.keyBlock >= 0)
      schedule.keyBlock = variant.keyBlock;
    if (variant.queryTile > 0)
      schedule.queryTile = variant.queryTile;
    if (variant.keysAt >= 0)
      schedule.keysAt = variant.keysAt;
    if (schedule.str() == defaultStr && std::string(variant.name) != "default")
      continue;
    std::string fn = std::string("tmb_attn_") + variant.name;
    std::cout << "  attention " << variant.name << ": " << schedule.str() << std::endl;
    try {
      if (!compile(halide::lowerAttention(desc, schedule), fn, target, outDir))
        return false;
    } catch (const std::exception &e) {
      std::cerr << "bench_kernels_gen: lowering attention " << variant.name << ": " << e.what()
                << "\n";
      return false;
    }
    decls << "extern \"C\" int " << fn
          << "(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);\n";
    table << "    {\"" << variant.name << "\", \"" << schedule.str() << "\", " << fn << "},\n";
  }
  const int heads = static_cast<int>(desc.heads), headDim = static_cast<int>(desc.headDim);
  const int vw = target.vectorWidth;
  try {
    if (!compile(bench::lowerScores(heads, headDim, static_cast<float>(desc.scale), vw),
                 "tmb_unfused_scores", target, outDir) ||
        !compile(bench::lowerCausalSoftmax(heads, vw), "tmb_unfused_softmax", target, outDir) ||
        !compile(bench::lowerWeightedSum(heads, headDim, vw), "tmb_unfused_pv", target, outDir))
      return false;
  } catch (const std::exception &e) {
    std::cerr << "bench_kernels_gen: lowering the unfused attention: " << e.what() << "\n";
    return false;
  }
  std::ofstream inc(outDir + "/attention.inc");
  inc << "// Generated by bench_kernels_gen for " << target.halideTarget << "\n"
      << "static const char *kAttnTarget = \"" << target.name << " (" << target.halideTarget
      << ")\";\n"
      << decls.str()
      << "extern \"C\" int tmb_unfused_scores(halide_buffer_t *, halide_buffer_t *, "
         "halide_buffer_t *);\n"
      << "extern \"C\" int tmb_unfused_softmax(halide_buffer_t *, halide_buffer_t *);\n"
      << "extern \"C\" int tmb_unfused_pv(halide_buffer_t *, halide_buffer_t *, "
         "halide_buffer_t *);\n"
      << "static const AttentionVariant kAttnVariants[] = {\n"
      << table.str() << "};\n";
  return static_cast<bool>(inc);
}

} // namespace

int main(int argc, char **argv) {
  std::string targetName = "host", outDir, only, shapes = "gpt2";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--target")
      targetName = argv[i + 1];
    else if (flag == "--out")
      outDir = argv[i + 1];
    else if (flag == "--only")
      only = argv[i + 1];
    else if (flag == "--shapes")
      shapes = argv[i + 1];
  }
  if (outDir.empty() || (only != "" && only != "gemm" && only != "attention") ||
      (shapes != "gpt2" && shapes != "narrow")) {
    std::cerr << "usage: bench_kernels_gen --target TARGET --out DIR [--only gemm|attention] "
                 "[--shapes gpt2|narrow]\n";
    return 2;
  }
  llvm::Expected<TargetInfo> target = resolveTarget(targetName);
  if (!target) {
    std::cerr << "bench_kernels_gen: " << llvm::toString(target.takeError()) << "\n";
    return 2;
  }
  // host: the variant of the multi-ISA target this CPU runs.
  target = runnableVariant(*target);

  if (only != "gemm" && !generateAttention(*target, outDir))
    return 1;
  const std::vector<BenchCase> cases = only == "attention"
                                           ? std::vector<BenchCase>{}
                                           : (shapes == "narrow" ? narrowCases() : gpt2Cases());
  std::vector<Shape> layers; // each K x N once: one kernel serves every T
  for (const BenchCase &c : cases)
    if (std::find(layers.begin(), layers.end(), c.shape) == layers.end())
      layers.push_back(c.shape);
  const Variant *variants =
      shapes == "narrow" ? std::begin(kNarrowVariants) : std::begin(kVariants);
  const Variant *variantsEnd = shapes == "narrow" ? std::end(kNarrowVariants) : std::end(kVariants);
  std::ostringstream decls, table, caseTable;
  for (const BenchCase &c : cases)
    caseTable << "    {\"" << c.label << "\", " << c.T << ", " << c.shape.K << ", " << c.shape.N
              << "},\n";
  for (const Shape &shape : layers) {
    KernelDesc desc;
    desc.kind = KernelKind::linear;
    desc.inWidth = shape.K;
    desc.width = shape.N;
    desc.activation = "none"; // oneDNN's sgemm has no epilogue
    const std::string defaultStr = defaultSchedule(desc, *target).str();
    for (const Variant *variant = variants; variant != variantsEnd; ++variant) {
      Schedule schedule = defaultSchedule(desc, *target);
      if (!variant->apply(schedule, shape) ||
          (schedule.str() == defaultStr && std::string(variant->name) != "default"))
        continue;
      std::string suffix =
          "k" + std::to_string(shape.K) + "_n" + std::to_string(shape.N) + "_" + variant->name;
      std::string gemm = "tmb_gemm_" + suffix, pack = "tmb_pack_" + suffix;
      std::cout << "  " << suffix << ": " << schedule.str() << std::endl;
      try {
        if (!compile(halide::lowerPackWeight(desc, schedule), pack, *target, outDir) ||
            !compile(halide::lowerPackedLinear(desc, schedule), gemm, *target, outDir))
          return 1;
      } catch (const std::exception &e) {
        std::cerr << "bench_kernels_gen: lowering " << suffix << ": " << e.what() << "\n";
        return 1;
      }
      BufferShape packed = halide::packedWeightShape(desc, schedule);
      decls << "extern \"C\" int " << pack << "(halide_buffer_t *, halide_buffer_t *);\n"
            << "extern \"C\" int " << gemm
            << "(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);\n";
      table << "    {" << shape.K << ", " << shape.N << ", \"" << variant->name << "\", \""
            << schedule.str() << "\", {" << packed.extents[0] << ", " << packed.extents[1] << ", "
            << packed.extents[2] << "}, " << pack << ", " << gemm << "},\n";
    }
  }
  if (llvm::Error error = halide::compileRuntime(*target, outDir + "/halide_runtime.o")) {
    std::cerr << "bench_kernels_gen: Halide runtime: " << llvm::toString(std::move(error))
              << "\n";
    return 1;
  }
  // The limit the rates are read against, measured here as `tmc tune` does
  // (a VM's clock and neighbours move it; a data sheet's number would not).
  double peak[2] = {0, 0};
  for (int threads : {1, 2}) {
    llvm::Expected<double> measured = tune::measureFmaPeak(*target, threads);
    if (!measured) {
      std::cerr << "bench_kernels_gen: FMA peak: " << llvm::toString(measured.takeError()) << "\n";
      return 1;
    }
    peak[threads - 1] = *measured;
  }
  std::ofstream inc(outDir + "/kernels.inc");
  inc << "// Generated by bench_kernels_gen for " << target->halideTarget << "\n"
      << "static const char *kTarget = \"" << target->name << " (" << target->halideTarget
      << ")\";\n"
      << "static const double kFmaPeak[2] = {" << peak[0] << ", " << peak[1] << "};\n"
      << decls.str() << "static const GemmVariant kVariants[] = {\n"
      << table.str() << "};\n"
      << "static const BenchShape kShapes[] = {\n"
      << caseTable.str() << "};\n";
  return inc ? 0 : 1;
}
