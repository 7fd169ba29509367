//===- LowerLinear.cpp - y = act(x W^T + b) as a Halide GEMM --------------===//
//
// The GEMM reads the weight packed in panels of P output features
// (LowerPack.cpp has the layout contract), so that one k step of a panel is
// P contiguous floats: the inner loop broadcasts one token value and
// multiplies it into P/vw vectors, for tileRows tokens at once. The
// P x tileRows accumulators live in a tile-local Func that LLVM keeps in
// registers (AVX-512: 48 x 8 or 64 x 6 = 24 zmm; Schedule.cpp says which).
//
// Loop nest (unblocked): panel p [parallel] > row tile > k > row > vector;
// with panel groups: group [parallel] > row tile > panel > k > row > vector.
// Blocked (kBlock < K): panel p [parallel] > k block > row tile > k > row >
// vector, the tile's partial sums added into a panel-sized accumulator in
// memory, so that a block of the panel stays in cache while every row tile
// passes over it. Bias, activation and a residual sum are applied when the
// tile is stored. A long run with token blocks (tokenBlock) puts a block of
// token rows [parallel] outside the panel loop: block > panel p > ...
//
// Tails: token rows past T compute on the clamped last row and are never
// stored; features past N multiply the panel's zero padding and are never
// stored; a K not divisible by the block shortens the last block through the
// reduction domain's predicate. T == 1 (decode) takes a one-row tile when the
// schedule asks for it (a run-time branch on T inside the same kernel).
//
// Reduced precision (never blocked): bf16 rounds the tokens to bf16 pairs
// once per call and sums each pair of products in f32; int8 quantizes each
// token row to u8 quads once per call, sums u8 x s8 quads in int32, and
// scales the sums by the row's and the channel's scales in the epilogue,
// before the bias; q4 quantizes the rows to s8, sums each block of 32 in an
// int32 register tile (u4 weights x s8 tokens), and adds the blocks, each
// times its f16 scale, into the f32 tile (docs/spec-language.md has the
// arithmetic).
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/GpuLoops.h"
#include "compiler/halide/HalfBits.h"
#include "compiler/halide/Lowering.h"

using namespace Halide;

namespace tmc::halide {

namespace {

/// Row tiles a call needs for its f32 tokens to be packed (pack_tokens=1).
constexpr int kPackTokensMinTiles = 8;

/// The loop variables shared by the stages of one GEMM.
struct GemmVars {
  Var n{"n"}, t{"t"}, j{"j"}, p{"p"}, kb{"kb"};
  Var to{"to"}, ti{"ti"}, tt{"tt"}, tl{"tl"}, nv{"nv"}, nl{"nl"}, tile{"tile"}, tb{"tb"};
  Var pg{"pg"}, pi{"pi"}; ///< panel groups (Schedule::panelGroup) and a group's panels
};

/// Splits a register tile: P features (vectors of vw, unrolled) by `rows`
/// tokens (unrolled), with `inner` (a reduction variable, or none) between the
/// rows and the row-tile loop, and `outer` loops after the row tiles. A bf16
/// or int8 GEMM's `pair` (the two or four products each lane sums) goes
/// innermost, `atomic().vectorize`d with the feature lanes: the VectorReduce
/// pattern LLVM lowers to vdpbf16ps or vpdpbusd (avx512_sapphirerapids;
/// elsewhere Halide widens the halves or bytes and multiplies lane by lane).
void tileStage(Stage s, const GemmVars &v, const GemmLayout &l, int rows,
               const std::vector<VarOrRVar> &inner, const std::vector<VarOrRVar> &outer,
               const RVar *pair = nullptr) {
  s.split(v.t, v.tt, v.tl, rows, TailStrategy::RoundUp)
      .split(v.j, v.nv, v.nl, l.vectorWidth, TailStrategy::RoundUp);
  std::vector<VarOrRVar> order = {v.nl, v.nv, v.tl};
  if (pair)
    order.insert(order.begin(), *pair);
  order.insert(order.end(), inner.begin(), inner.end());
  order.push_back(v.tt);
  order.insert(order.end(), outer.begin(), outer.end());
  s.reorder(order);
  if (pair)
    s.atomic().vectorize(*pair);
  s.vectorize(v.nl).unroll(v.nv).unroll(v.tl);
}

/// How a sum of `steps` steps unrolled by `unrollK` runs: its first
/// `leadSteps` steps (steps mod unrollK) as a stage of their own, the rest
/// in whole unrolls (buildGemm says why). A sum shorter than one unroll is
/// not unrolled.
struct UnrollSplit {
  int unrollK;
  int leadSteps;
};

UnrollSplit splitUnroll(int steps, int unrollK) {
  if (steps < unrollK || unrollK <= 1)
    return {1, 0};
  return {unrollK, steps % unrollK};
}

/// Schedules the lead stage of an UnrollSplit: its few steps unrolled in
/// the register tile, inside the loops `outer`.
void scheduleLeadStage(Stage lead, const GemmVars &v, const GemmLayout &l, int rows,
                       const RDom &steps, const std::vector<VarOrRVar> &outer) {
  tileStage(lead, v, l, rows, {steps.x}, outer);
  lead.unroll(steps.x);
}

/// `s`, or its specialization to `only` where that is defined (the one-row
/// decoding tile's T == 1).
Stage specializedTo(Stage s, const Expr &only) { return only.defined() ? s.specialize(only) : s; }

/// Applies the reduction unroll of the layout to an update stage over `r`.
std::vector<VarOrRVar> unrolledReduction(Stage s, const RVar &r, int unrollK) {
  if (unrollK <= 1)
    return {r};
  RVar ro(r.name() + "o"), ri(r.name() + "i");
  s.split(r, ro, ri, unrollK, TailStrategy::GuardWithIf).unroll(ri);
  return {ri, ro};
}

LoweredKernel buildGemm(const KernelDesc &kernel, const Schedule &schedule, bool prepacked) {
  const GemmLayout l = gemmLayout(kernel, schedule);
  const int K = static_cast<int>(l.K), N = static_cast<int>(l.N), P = l.panelWidth;
  const int kc = static_cast<int>(l.kBlock);
  const bool blocked = l.kBlocks > 1;
  const int estT = std::max(1, schedule.tokensEstimate);
  std::vector<BufferShape> sig = kernelSignature(kernel);
  GemmVars v;

  ImageParam x = makeInput(sig[0], "x"); // (k, t)
  x.set_estimates({{0, K}, {0, estT}});
  std::vector<Argument> args = {x};
  std::vector<Func> stages;
  Func packed;
  if (prepacked) {
    // (j, k, p); bf16: (e, j, k2, p); int8, q4: (e, j, row, p)
    const BufferShape shape = packedWeightShape(kernel, schedule);
    ImageParam pw = makeInput(shape, "packed_weight");
    pw.set_estimates(estimatesOf(shape));
    args.push_back(pw);
    packed = pw;
  } else {
    ImageParam w = makeInput(sig[1], "weight"); // (k, n)
    w.set_estimates({{0, K}, {0, N}});
    args.push_back(w);
    PackedWeightFuncs funcs = definePackedWeight(w, l);
    packed = funcs.packed;
    packed.compute_root();
    schedulePackedWeight(funcs, l, schedule);
    stages.insert(stages.end(), funcs.channelStats.begin(), funcs.channelStats.end());
    stages.push_back(packed);
  }
  ImageParam b, residual;
  if (kernel.hasBias) {
    b = makeInput(sig[2], "bias"); // (n)
    b.set_estimates({{0, N}});
    args.push_back(b);
  }
  if (kernel.hasResidual) {
    residual = makeInput(sig[2 + (kernel.hasBias ? 1 : 0)], "residual"); // (n, t)
    residual.set_estimates({{0, N}, {0, estT}});
    args.push_back(residual);
  }

  const Var &j = v.j, &t = v.t, &p = v.p, &kb = v.kb, &n = v.n;
  Expr T = x.dim(1).extent();
  Func xc("x_clamped");
  xc(v.n, t) = x(v.n, min(t, T - 1));
  // f32 tokens packed per row tile, k-major: xt(i, k, tile) is row
  // tile * R + i. The register tile's R broadcasts of a k step then load
  // from one pointer at fixed offsets; reading the rows where they lie, LLVM
  // computed each row's address with vector integer ops inside the k loop,
  // on the ports the FMAs need (the Intel Xeon of 2026-11-27: 13-16% of a
  // GPT-2 prefill).
  const int packRows = l.tileRows;
  const bool packTokens = schedule.packTokens && !schedule.gpu && !schedule.algorithmOnly &&
                          !kernel.quantized() && kernel.precision != "bf16" && packRows > 1;
  Func xt("x_tiles");
  Var xi("xi"), xk("xk"), xtile("xtile");
  if (packTokens)
    xt(xi, xk, xtile) = xc(xk, xtile * packRows + xi);
  // Calls of fewer than kPackTokensMinTiles row tiles read their rows in
  // place: a decoding step's one row, and a batched step's few (one per
  // sequence). Their weights stream from memory while the tile computes, and
  // packed, those steps ran 8-12% slower (GPT-2 small at 4-32 sequences,
  // Zen 4, 2026-11-28; 128-row prefills the same either way there). The
  // calls' specialization (below) simplifies the select away, and Halide
  // then skips the packing for them.
  const int packMinRows = kPackTokensMinTiles * packRows;
  auto token = [&](Expr k, Expr row) -> Expr {
    if (!packTokens)
      return xc(k, row);
    return select(T < packMinRows, xc(k, row), xt(row % packRows, k, row / packRows));
  };
  Expr init = kernel.hasBias ? b(min(p * P + j, N - 1)) : Expr(0.0f);

  Func acc("acc"), partial("partial"), xb("x_bf16"), xq(l.q4 ? "x_s8" : "x_u8"), xmax("x_absmax"),
      xsum("x_block_sum"), blockSum("block_sum");
  // A bias-less f32 GEMM starts its sums from the first product, computed
  // with strict_float, instead of from zero. Halide lets LLVM drop a zero
  // start (0 + x0 w0) and contract either product of x0 w0 + x1 w1 into the
  // FMA; where LLVM unrolled the whole k loop (a narrow head's one-row
  // decoding tile) it fused the k = 0 product onto the k = 1 one, and a
  // decoding step's logits then differed in the last bit from the same row
  // computed in a batch. A product that may not be contracted leaves one
  // order: fma(x1, w1, x0 w0), then fma over k = 2, 3, ...
  // CPUs only: the GPU schedule computes the tokens per reduction step, which
  // the first product's step (in the pure definition) would not see.
  const bool strictOrder = !schedule.gpu;
  const bool peelFirstProduct =
      strictOrder && !kernel.hasBias && !l.quantized() && !l.bf16 && !blocked && K > 1;
  const bool peelBlocks = strictOrder && kc > 1;
  // An f32 sum unrolled by u runs its first (steps mod u) steps as a stage
  // of their own, so that the unrolled loop covers whole unrolls. Split with
  // a guarded tail instead, LLVM compiled the tail's steps as separate
  // products and adds in some of the kernel's specializations (vmulps and
  // vaddps after the one-row decoding tile's loop) and as FMAs in others:
  // the decoding tile of a bias-less K 192 x N 8208 layer then differed in
  // the last bit from the same row in a many-row call (GemmKernelTest).
  // (The GPU schedule takes the sum's one update stage as it is.)
  const bool plainF32 = strictOrder && !l.quantized() && !l.bf16 && !blocked;
  const int firstStep = peelFirstProduct ? 1 : 0, steps = K - firstStep;
  const UnrollSplit sumSplit = plainF32 ? splitUnroll(steps, l.unrollK) : UnrollSplit{l.unrollK, 0};
  RDom rLead(firstStep, std::max(1, sumSplit.leadSteps), "r_lead");
  RDom r(firstStep + sumSplit.leadSteps, steps - sumSplit.leadSteps, "r");
  // The same within each K block (unrolled only where the blocks divide K).
  const int blockFirst = peelBlocks ? 1 : 0, blockSteps = kc - blockFirst;
  const UnrollSplit blockSplit = blocked ? splitUnroll(blockSteps, l.unrollK) : UnrollSplit{1, 0};
  RDom rkLead(blockFirst, std::max(1, blockSplit.leadSteps), "rk_lead");
  RDom rk(blockFirst + blockSplit.leadSteps, blockSteps - blockSplit.leadSteps, "rk"),
      rb(0, static_cast<int>(l.kBlocks), "rb");
  RDom rp(0, 2, 0, static_cast<int>(l.kPairs), "rp");
  RDom rq(0, 4, 0, static_cast<int>(l.kQuads), "rq");
  Var bq("bq");
  // q4: the blocks, and a block's 8 quads of 4.
  RDom rblock(0, static_cast<int>(l.q4Blocks), "rblock"), rqb(0, 4, 0, 8, "rqb");
  if (l.quantized()) {
    // Each token row quantized once per call, symmetric: int8 around the u8
    // zero point 128 (the weight's packed correction takes it back out), q4
    // as s8 (its weights are the u8 side). Products are summed exactly in
    // int32, a quad at a time (vpdpbusd's semantics).
    Var e("e"), k4("k4");
    Expr k = 4 * k4 + e;
    RDom rx(0, K, "rx");
    xmax(t) = 0.0f;
    xmax(t) = max(xmax(t), abs(xc(rx, t)));
    // strict_float keeps the contract's quotients (docs/spec-language.md):
    // Halide would otherwise use a rounded reciprocal of the constant.
    Expr inv = select(xmax(t) > 0.0f, strict_float(127.0f / xmax(t)), 0.0f);
    Expr value = select(k < K, xc(min(k, K - 1), t), 0.0f);
    Expr level = cast<int32_t>(clamp(round(strict_float(value * inv)), -127.0f, 127.0f));
    stages.push_back(xc);
    stages.push_back(xmax);
    stages.push_back(xq);
    if (l.int8) {
      xq(e, k4, t) = cast<uint8_t>(level + 128);
      acc(j, t, p) = 0;
      acc(j, t, p) += cast<int32_t>(xq(rq.x, rq.y, t)) * cast<int32_t>(packed(rq.x, j, rq.y, p));
    } else {
      // q4: the weights are stored u4 (q + 8), so a block's sum of
      // (q - 8) * x is its u4 x s8 sum less 8 times the row's block sum.
      // Each block's int32 sum is scaled by its f16 scale and summed in f32.
      xq(e, k4, t) = cast<int8_t>(level);
      xsum(bq, t) = 0;
      xsum(bq, t) += cast<int32_t>(xq(rqb.x, 8 * bq + rqb.y, t));
      // Quad 2 h + c of block b: row 9 (b / 2) + 4 (b % 2) + h, nibble c.
      // Halide's interval arithmetic cannot see that b / 2 and b % 2 stay
      // inside the packed rows: promised (true for every b < B).
      const int rows = static_cast<int>(l.quantRows());
      Expr quadRow = unsafe_promise_clamped(9 * (bq / 2) + 4 * (bq % 2) + rqb.y / 2, 0, rows - 1);
      Expr byte = reinterpret<uint8_t>(packed(rqb.x, j, quadRow, p));
      Expr nibble = (byte >> cast<uint8_t>(4 * (rqb.y % 2))) & cast<uint8_t>(15);
      blockSum(j, t, p, bq) = 0;
      blockSum(j, t, p, bq) += cast<int32_t>(nibble) * cast<int32_t>(xq(rqb.x, 8 * bq + rqb.y, t));
      // The block's f16 scale: bytes 2 q P + j (low) and 2 q P + P + j
      // (high) of the pair's last row, q = b % 2 (LowerPack.cpp). Halide
      // folds o % 4 + 4 (o / 4) back into o: two dense loads.
      Expr b = rblock.x, scaleRow = unsafe_promise_clamped(9 * (b / 2) + 8, 0, rows - 1);
      auto scaleByte = [&](Expr o) {
        return cast<uint32_t>(reinterpret<uint8_t>(packed(o % 4, o / 4, scaleRow, p)));
      };
      Expr low = 2 * P * (b % 2) + j;
      Expr scaleBits = scaleByte(low) | (scaleByte(low + P) << 8);
      Expr scale = floatOfHalfBits(scaleBits);
      acc(j, t, p) = 0.0f;
      acc(j, t, p) += cast<float>(blockSum(j, t, p, b) - 8 * xsum(b, t)) * scale;
      stages.push_back(xsum);
      stages.push_back(blockSum);
    }
  } else if (l.bf16) {
    // The tokens rounded to bf16 once per call, in the weight's pair layout;
    // each pair of products is summed in f32 (vdpbf16ps's semantics).
    Var e("e"), k2("k2");
    Expr k = 2 * k2 + e;
    Expr value = select(k < K, xc(min(k, K - 1), t), 0.0f);
    acc(j, t, p) = init;
    if (schedule.gpu) {
      // The same rounding through the bits (HalfBits.h: NVPTX and bf16).
      xb(e, k2, t) = bfloatBitsOf(value);
      Expr weight = reinterpret<uint16_t>(packed(rp.x, j, rp.y, p));
      acc(j, t, p) += floatOfBfloatBits(xb(rp.x, rp.y, t)) * floatOfBfloatBits(weight);
    } else {
      xb(e, k2, t) = cast(BFloat(16), value);
      acc(j, t, p) += cast<float>(xb(rp.x, rp.y, t)) * cast<float>(packed(rp.x, j, rp.y, p));
    }
    stages.push_back(xc);
    stages.push_back(xb);
  } else if (blocked) {
    Expr k = kb * kc + rk;
    if (l.K % kc != 0) {
      // The predicate shortens the last block's loop, but Halide's bounds of
      // the whole pipeline ignore it; the promise (true under the predicate)
      // keeps the buffer checks at [0, K).
      rk.where(rk < K - kb * kc);
      k = unsafe_promise_clamped(k, 0, K - 1);
    }
    // A block's first product starts its sum, as peelFirstProduct's does.
    Expr first = kb * kc;
    partial(j, t, p, kb) = peelBlocks ? strict_float(token(first, t) * packed(j, first, p)) : 0.0f;
    if (blockSplit.leadSteps > 0) {
      Expr lead = kb * kc + rkLead;
      partial(j, t, p, kb) += token(lead, t) * packed(j, lead, p);
    }
    partial(j, t, p, kb) += token(k, t) * packed(j, k, p);
    acc(j, t, p) = init;
    acc(j, t, p) += partial(j, t, p, rb);
    stages.push_back(xc);
    stages.push_back(partial);
  } else {
    acc(j, t, p) = peelFirstProduct ? strict_float(token(0, t) * packed(j, 0, p)) : init;
    if (sumSplit.leadSteps > 0)
      acc(j, t, p) += token(rLead, t) * packed(j, rLead, p);
    acc(j, t, p) += token(r, t) * packed(j, r, p);
    stages.push_back(xc);
  }
  if (packTokens)
    stages.push_back(xt);
  stages.push_back(acc);
  Func out("linear");
  // Feature j of panel pp as the tile stores it (before any activation).
  // `padded`: j may lie in the last panel's padding (whose bias is then
  // read clamped, and never stored).
  auto storedSum = [&](Expr j, Expr pp, bool padded) {
    Expr sum = acc(j, t, pp);
    Expr bias;
    if (kernel.hasBias)
      bias = padded ? b(min(pp * P + j, N - 1)) : b(pp * P + j);
    if (l.int8) {
      // The channel's scale and correction: the quad rows after the weights.
      auto word = [&](int row) {
        Expr bits = cast<uint32_t>(0);
        for (int e = 0; e < 4; ++e)
          bits = bits | (cast<uint32_t>(reinterpret<uint8_t>(packed(e, j, row, pp)))
                         << static_cast<uint32_t>(8 * e));
        return bits;
      };
      const int K4 = static_cast<int>(l.kQuads);
      Expr scale = reinterpret<float>(word(K4)), correction = reinterpret<int32_t>(word(K4 + 1));
      sum = cast<float>(sum - correction) * (strict_float(xmax(t) / 127.0f) * scale);
      if (kernel.hasBias)
        sum = sum + bias;
    }
    if (l.q4) {
      sum = sum * strict_float(xmax(t) / 127.0f);
      if (kernel.hasBias)
        sum = sum + bias;
    }
    return sum;
  };
  Expr sum = storedSum(n % P, n / P, /*padded=*/false);
  // The activation's arithmetic is strict: under Halide's fast-math flags
  // (reassociation and contraction allowed) LLVM rounded the GELU of a K = 19
  // GEMM differently in the one-row decoding tile than in a many-row tile,
  // the sums being identical (GemmKernelTest), so that a decoding step and
  // the same row in a batch differed in the last bit. Strict, the epilogue
  // costs a few multiplies and adds more per output than its FMA form: no
  // change measured end to end (GPT-2 small, gpt-mini, 128-token prefill).
  Expr value = applyActivation(sum, kernel.activation);
  if (strictOrder && kernel.activation != "none" && kernel.activation != "relu")
    value = strict_float(value);

  // Rotary positions (rope_columns, tmk-fuse-rope-epilogue): feature c of a
  // head in the first ropeColumns turns with its partner c +- head_dim/2 by
  // the angle of its row's position, read from the rope_table rows (cos,
  // then sin). Where a panel holds whole heads and each vector of the
  // stores lies in one half of a head, the tile turns its own sums as it
  // stores them (the partner is a register of the same tile); otherwise (and
  // on GPUs) the GEMM's output is turned by a second stage of this kernel.
  const bool rope = kernel.ropeColumns > 0;
  const int headDim = static_cast<int>(kernel.headDim), half = headDim / 2;
  const int ropeColumns = static_cast<int>(kernel.ropeColumns);
  // The widest vectors a half of a head is a whole number of.
  int halfWidth = l.vectorWidth;
  while (rope && halfWidth > 1 && half % halfWidth != 0)
    halfWidth /= 2;
  const bool ropeInTile =
      rope && !schedule.gpu && !schedule.algorithmOnly && P % headDim == 0 && halfWidth >= 4;
  // The vectors the tile is stored in: one half of a head each when it turns.
  const int storeWidth = ropeInTile ? halfWidth : l.vectorWidth;
  ImageParam table;
  if (rope) {
    table = makeInput(sig[sig.size() - 2], "rope_table"); // (c, t): cos, then sin
    table.set_estimates({{0, headDim}, {0, estT}});
    args.push_back(table);
  }
  // `x` turned with `partner` at feature `n`. Strict, so that the one-row
  // decoding tile and the tiled rows round alike (as the sums do).
  auto turned = [&](Expr x, Expr partner) {
    Expr c = n % headDim, f = c % half;
    return strict_float(x * table(f, t) + select(c < half, -partner, partner) * table(half + f, t));
  };
  // The partner's offset; it stays in the head (the verifier keeps the
  // width a whole number of heads), hence in a panel of whole heads.
  Expr partnerStep = select(n % headDim < half, half, -half);
  if (ropeInTile) {
    Expr partnerJ = unsafe_promise_clamped(n % P + partnerStep, 0, P - 1);
    value =
        select(n < ropeColumns, turned(value, storedSum(partnerJ, n / P, /*padded=*/true)), value);
  }
  out(n, t) = kernel.hasResidual ? value + residual(n, t) : value;
  Func output = out;
  if (rope && !ropeInTile) {
    output = Func("linear_rope");
    Expr partner = out(unsafe_promise_clamped(n + partnerStep, 0, N - 1), t);
    output(n, t) = select(n < ropeColumns, turned(out(n, t), partner), out(n, t));
  }
  constrainOutput(output, sig.back());
  output.set_estimates({{0, N}, {0, estT}});
  stages.push_back(out);
  if (output.name() != out.name())
    stages.push_back(output);
  // Halide's autoschedulers (seeds of tmc tune) schedule the bare algorithm.
  if (schedule.algorithmOnly)
    return {output, args, stages};
  if (schedule.gpu) {
    scheduleGemmGpu({out, acc, xc, packed, xmax, l.bf16 ? xb : xq, xsum, blockSum}, l, schedule);
    if (rope) {
      out.compute_root();
      gpuTileFunc(output, threadsFor(N, schedule.gpuThreads));
    }
    return {output, args, stages};
  }
  if (rope && !ropeInTile) {
    // The turning stage: head by head, its halves in turn (the partner and
    // the table index are then affine), as the rope kernel's.
    out.compute_root();
    Var head("head"), within("within");
    output.split(n, head, within, headDim);
    scheduleByHalves(output, within, t, half, schedule);
  }

  // The output: panels of P features, row tiles, vectors along the features.
  const int R = l.tileRows;
  const bool decode = schedule.decodeVariant && R > 1;
  const bool rowTasks = schedule.parallelRows && !blocked;
  // Token blocks (Schedule::tokenBlock): row tiles grouped into blocks of
  // tokenBlock rows, the panel loop inside the block loop. Over a long run
  // all T rows of tokens would otherwise stream from memory once per panel
  // (a Longformer's 16384 x 1024 tokens, 64 MB, four times per call for N =
  // 256), and the packed tokens (x_tiles) of all rows took a fresh mapping of
  // T x K floats per call; a block's packed rows stay in cache while the
  // panels pass over them, and the weights, read once per block, are small
  // enough to stay in cache too (the default sets tokenBlock only for such
  // weights: Schedule.cpp). A run of 8 blocks or more takes the blocks as
  // its parallel tasks (on 2 threads an odd block out costs at most about an
  // eighth of the call); shorter runs keep the panels as the tasks,
  // inside a serial loop over blocks (one block up to tokenBlock rows: the
  // loops of no blocks). The block size is a constant: a run-time one left
  // Halide unable to see that a row tile is one register tile.
  // With row tasks too: a block's (panel, row tile) pairs are the tasks, the
  // blocks in turn, and runs of 8 blocks or more take the blocks as tasks
  // as above.
  const int blockTiles = schedule.tokenBlock > 0 ? std::max(1, schedule.tokenBlock / R) : 0;
  const bool tokenBlocks = blockTiles > 0;
  // Panel groups (Schedule::panelGroup): each row tile passes through a
  // group of consecutive panels before the next row tile, the groups being
  // the outer (parallel) loop. Without them each panel passes over all row
  // tiles and writes its output as a column strip, P features wide and T
  // rows tall; a narrow-K vocabulary head (its output as many bytes as its
  // weights) then spent its time on those strips' lines, each row's strip
  // sharing its first and last line with the neighbouring panels' when
  // rows are off cache lines (Schedule.cpp has the measurements).
  const bool panelGroups = schedule.panelGroup > 1 && !rowTasks && !blocked;
  const Var &panels = panelGroups ? v.pg : p; // the outer loop over panels
  // Row tasks are (panel, row tile) pairs, fused in this order, inner first.
  // The pool gives each thread a contiguous share of the tasks first
  // (runtime/thread_pool.cpp): with rows outer, a share of the rows, the
  // rows that thread's row-wise kernels before and after touch; else a
  // share of the panels.
  const Var &taskInner = schedule.rowsOuter ? p : v.to;
  const Var &taskOuter = schedule.rowsOuter ? v.to : p;
  const TailStrategy guard = TailStrategy::GuardWithIf;
  out.split(n, p, j, P, guard).split(j, v.nv, v.nl, storeWidth, guard);
  auto scheduleOut = [&](Stage s, int rows, bool blockTasks) {
    s.split(t, v.to, v.ti, rows, guard);
    if (panelGroups)
      s.split(p, v.pg, v.pi, schedule.panelGroup, guard)
          .reorder(v.nl, v.nv, v.ti, v.pi, v.to, v.pg);
    else if (rowTasks)
      s.reorder(v.nl, v.nv, v.ti, taskInner, taskOuter);
    else
      s.reorder(v.nl, v.nv, v.ti, v.to, p);
    s.vectorize(v.nl).unroll(v.nv);
    if (rowTasks) {
      if (tokenBlocks)
        s.split(v.to, v.tb, v.to, blockTiles, guard).reorder(taskInner, taskOuter, v.tb);
      s.fuse(taskInner, taskOuter, v.tile);
      if (schedule.parallel)
        s.parallel(blockTasks ? v.tb : v.tile);
    } else if (tokenBlocks) {
      s.split(v.to, v.tb, v.to, blockTiles, guard).reorder(v.to, panels, v.tb);
      if (schedule.parallel)
        s.parallel(blockTasks ? v.tb : panels);
    } else if (schedule.parallel) {
      s.parallel(panels);
    }
  };
  if (decode)
    scheduleOut(out.specialize(T == 1), 1, false);
  if (packTokens)
    scheduleOut(out.specialize(T < packMinRows), R, false);
  if (tokenBlocks)
    scheduleOut(out.specialize(T >= 8 * blockTiles * R), R, true);
  scheduleOut(out, R, false);

  if (packTokens) {
    // Per token block where there are blocks: a block's rows packed by the
    // task that multiplies them (a nested parallel loop runs serially).
    if (tokenBlocks)
      xt.compute_at(out, v.tb);
    else
      xt.compute_root();
    xt.bound(xi, 0, packRows)
        .reorder(xi, xk, xtile)
        .unroll(xi)
        .vectorize(xk, l.vectorWidth, TailStrategy::GuardWithIf);
    // Over row tiles: done serially it was a tenth of a small layer's call
    // at 2 threads (K 512-768 x N 384-960, bench/kernels --shapes narrow:
    // 242-346 -> 369-404 GFLOP/s, 92-101% of oneDNN). From 4 tiles up: a
    // batched decoding step's few rows are not worth a second parallel
    // region per call.
    if (schedule.parallel)
      xt.specialize(T >= 4 * packRows).parallel(xtile);
  }
  if (l.quantized()) {
    // The tokens in u8 (q4: s8) quads, once per call (never blocked).
    Var e = xq.args()[0], k4 = xq.args()[1];
    xmax.compute_root();
    xq.compute_root().bound(e, 0, 4).reorder(e, k4, t).unroll(e).vectorize(
        k4, l.vectorWidth, TailStrategy::GuardWithIf);
    if (schedule.parallel) {
      xmax.parallel(t);
      xmax.update().parallel(t);
      xq.parallel(t);
    }
  }
  if (l.q4) {
    xsum.compute_root();
    if (schedule.parallel) {
      xsum.parallel(t);
      xsum.update().parallel(t);
    }
  }
  if (l.bf16) {
    // The tokens in bf16 pairs, once per call (a bf16 GEMM is never blocked).
    Var e = xb.args()[0], k2 = xb.args()[1];
    xb.compute_root().bound(e, 0, 2).reorder(e, k2, t).unroll(e).vectorize(
        k2, l.vectorWidth, TailStrategy::GuardWithIf);
    if (schedule.parallel)
      xb.parallel(t);
  }
  if (!blocked) {
    // The whole reduction in one register tile, computed per row tile. Its
    // storage is bounded to the tile's R rows: otherwise the last tile's
    // clamp makes the size a run-time value, and Halide then called malloc
    // and free for every row tile (GPT-2-sized heads: ~10^4 per call, 16% of
    // a small model's prefill in glibc's free-list walks).
    acc.compute_at(out, rowTasks ? v.tile : panelGroups ? v.pi : v.to).bound_storage(t, R);
    // `only`: the stages' specialization (the decoding tile's T == 1), if any.
    auto scheduleAcc = [&](const Expr &only, int rows) {
      auto stage = [&](Stage s) { return specializedTo(s, only); };
      Stage pure = stage(acc), update = stage(acc.update(sumSplit.leadSteps > 0 ? 1 : 0));
      tileStage(pure, v, l, rows, {}, {p});
      if (sumSplit.leadSteps > 0)
        scheduleLeadStage(stage(acc.update(0)), v, l, rows, rLead, {p});
      if (l.q4) {
        // Block by block; each block's int32 register tile (blockSum,
        // computed at this loop below) is scaled into the f32 one.
        tileStage(update, v, l, rows, {rblock.x}, {p});
        return;
      }
      // bf16 pairs and int8 quads: the group innermost, the steps outside it.
      const RDom &grouped = l.int8 ? rq : rp;
      const bool group = l.bf16 || l.int8;
      std::vector<VarOrRVar> inner =
          unrolledReduction(update, group ? grouped.y : r, sumSplit.unrollK);
      tileStage(update, v, l, rows, inner, {p}, group ? &grouped.x : nullptr);
    };
    if (decode)
      scheduleAcc(T == 1, 1);
    scheduleAcc(Expr(), R);
    if (l.q4) {
      // A block's 8 quads, each vpdpbusd into the block's int32 tile.
      blockSum.compute_at(acc, rblock.x).bound_storage(t, R);
      auto scheduleBlock = [&](Stage pure, Stage update, int rows) {
        tileStage(pure, v, l, rows, {}, {p, bq});
        tileStage(update, v, l, rows, {rqb.y}, {p, bq}, &rqb.x);
        update.unroll(rqb.y);
      };
      if (decode)
        scheduleBlock(blockSum.specialize(T == 1), blockSum.update().specialize(T == 1), 1);
      scheduleBlock(blockSum, blockSum.update(), R);
    }
  } else {
    // A panel-sized accumulator in memory; each (k block, row tile) sums its
    // partial products in a register tile first.
    acc.compute_at(out, p).vectorize(j, l.vectorWidth);
    partial.compute_at(acc, v.tt).bound_storage(t, R);
    auto scheduleBlocked = [&](const Expr &only, int rows) {
      auto stage = [&](Stage s) { return specializedTo(s, only); };
      tileStage(stage(acc.update()), v, l, rows, {}, {rb, p});
      tileStage(stage(partial), v, l, rows, {}, {p, kb});
      if (blockSplit.leadSteps > 0)
        scheduleLeadStage(stage(partial.update(0)), v, l, rows, rkLead, {p, kb});
      Stage update = stage(partial.update(blockSplit.leadSteps > 0 ? 1 : 0));
      std::vector<VarOrRVar> inner = unrolledReduction(update, rk, blockSplit.unrollK);
      tileStage(update, v, l, rows, inner, {p, kb});
    };
    if (decode)
      scheduleBlocked(T == 1, 1);
    scheduleBlocked(Expr(), R);
  }
  return {output, args, stages};
}

} // namespace

LoweredKernel lowerLinear(const KernelDesc &kernel, const Schedule &schedule) {
  return buildGemm(kernel, schedule, /*prepacked=*/false);
}

LoweredKernel lowerPackedLinear(const KernelDesc &kernel, const Schedule &schedule) {
  return buildGemm(kernel, schedule, /*prepacked=*/true);
}

} // namespace tmc::halide
