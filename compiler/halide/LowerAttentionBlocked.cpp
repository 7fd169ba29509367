//===- LowerAttentionBlocked.cpp - Attention with an online softmax -------===//
//
// The key-blocked form of lowerAttention (Schedule::keyBlock > 0), in the
// manner of flash attention: one parallel task per (head, query tile of
// `queryTile` queries) walks the keys in blocks of `keyBlock` (transposed
// once for all heads before the tasks start). Per block it computes the tile's
// scores, the block's own row maximum, exp(score - block max), their sum and
// their weighted sum of values; the running state (weighted sum, sum, maximum)
// of each query then absorbs the block by rescaling whichever side has the
// smaller maximum. Only one block of scores is ever live, whatever the
// sequence length.
//
// Blocks no query of the tile can see are never visited: the loop over
// blocks is bounded by the tile's causal/padding/window interval. Inside a
// visited block the mask decides per (query, key) as in the one-pass form.
// Up to 8 global tokens are not walked: their keys are gathered per query
// like random ones (below), and their query rows, which see every key, are
// computed apart before the tasks, in a softmax of two passes over one row
// of scores per token and head. With more, a block outside the window
// interval is visited if it holds a global key or the tile holds a global
// query. Random keys in blocks the walk skips are gathered one by one per
// query, their scores, weights and values absorbed as one more block:
// visiting every block one of a tile's queries drew a key in made
// BigBird-style attention nearly dense past a few thousand keys (2.4 s at
// 16k tokens against 0.8 s for a Longformer mask; now linear,
// bench/e2e/long_context.py).
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/AttentionMask.h"
#include "compiler/halide/Lowering.h"

#include <algorithm>
#include <functional>
#include <utility>

using namespace Halide;

namespace tmc::halide {

LoweredKernel lowerAttentionBlocked(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  const MaskDesc &mask = kernel.mask;
  const int headDim = static_cast<int>(kernel.headDim);
  const int group = static_cast<int>(kernel.heads / kernel.kvHeads);
  const int block = std::max(1, schedule.keyBlock);
  const int tileSize = std::max(1, schedule.queryTile);
  ImageParam q = makeInput(sig[0], "query"); // (d, h, i)
  ImageParam k = makeInput(sig[1], "key");   // (d, g, j)
  ImageParam v = makeInput(sig[2], "value"); // (d, g, j)
  Param<int32_t> length("length");           // padding: valid keys
  // Key and value rows are addressed by position, [stored, keys)
  // (LowerAttention.cpp).
  if (kernel.windowKeys) {
    k.dim(2).set_min(Expr());
    v.dim(2).set_min(k.dim(2).min());
  }
  Expr queries = q.dim(2).extent(), stored = k.dim(2).min(), keys = stored + k.dim(2).extent();
  Expr blocks = (keys + block - 1) / block, firstBlock = stored / block;
  // Query tiles shrink to the queries there are: a decoding step (one
  // query) computes one row, not a tile of copies.
  Expr tile = min(tileSize, queries);

  // kb: key block, jj: key within the block; i: query; c: feature of head_dim.
  Var c("c"), d("d"), h("h"), i("i"), jj("jj"), kb("kb"), ii("ii"), io("io");
  Expr key = kb * block + jj;
  Expr pos = keys - queries + i;

  // The block's keys, transposed so that scores vectorize over keys; keys
  // past the end read the last one and are masked below. key_rows is the
  // keys as stored, staged per square tile of the transpose.
  Func keyRows("key_rows"), keysT("keys_t");
  // Per key/value head (g): the query heads of a group read the same copy.
  Var g("g");
  keyRows(d, jj, g, kb) = keyValueElement(k(d, g, clamp(key, stored, keys - 1)), kernel);
  keysT(jj, d, g, kb) = keyRows(d, jj, g, kb);
  RDom rd(0, headDim, "rd");
  // The tile's queries, copied once per task: the score loop then
  // broadcasts from one dense block (read in place, each broadcast's address
  // was computed from the clamped row).
  Func queryRows("query_rows");
  queryRows(d, i, h) = q(d, h, min(i, queries - 1));
  Func score("score");
  score(jj, i, h, kb) = 0.0f;
  score(jj, i, h, kb) += queryRows(rd, i, h) * keysT(jj, rd, h / group, kb);

  Expr logit = score(jj, i, h, kb) * static_cast<float>(kernel.scale);
  if (mask.alibi)
    logit = logit + alibiBias(mask, kernel.heads, h, pos, key);
  // The mask's terms of the key alone (in range, not padding, global) are
  // computed once per block below, not per query and key: a Longformer
  // mask's four global keys cost four compares per vector of every row.
  Func keyValid("key_valid"), keyGlobal("key_global"), visible("visible");
  keyValid(jj, kb) = key < keys && beforePadding(mask, key, length);
  keyGlobal(jj, kb) = isGlobal(mask, key);
  visible(jj, i, kb) =
      allowedWith(mask, pos, key, keyValid(jj, kb), isGlobal(mask, pos), keyGlobal(jj, kb));
  Func masked("masked_logit");
  masked(jj, i, h, kb) = select(visible(jj, i, kb), logit, Float(32).min());

  RDom rj(0, block, "rj");
  Func blockMax("block_max");
  blockMax(i, h, kb) = Float(32).min();
  blockMax(i, h, kb) = max(blockMax(i, h, kb), masked(rj, i, h, kb));
  Func weight("weight");
  weight(jj, i, h, kb) =
      select(visible(jj, i, kb), exp(masked(jj, i, h, kb) - blockMax(i, h, kb)), 0.0f);
  Func blockSum("block_sum");
  blockSum(i, h, kb) = 0.0f;
  blockSum(i, h, kb) += weight(rj, i, h, kb);
  Func blockAcc("block_acc");
  Expr rKey = clamp(kb * block + rj, stored, keys - 1);
  blockAcc(c, i, h, kb) = 0.0f;
  blockAcc(c, i, h, kb) += weight(rj, i, h, kb) * keyValueElement(v(c, h / group, rKey), kernel);

  // A few global tokens are not walked: their keys are gathered per query
  // with the random ones (below), their query rows computed apart over every
  // key (globalRows). Walked, every tile visited the block of a global key
  // for its few keys, and the tile of a global query every block: the
  // long-context Longformer (window 256, 4 globals, 4096 tokens) spent 1.3x
  // the attention time of the same window without globals. Many global
  // tokens (past kSeparateGlobals) are cheaper visited as blocks than
  // gathered one by one.
  constexpr size_t kSeparateGlobals = 8;
  const size_t globalCount = mask.globals.size();
  const bool separateGlobals = globalCount > 0 && globalCount <= kSeparateGlobals;
  auto globalAt = [&mask](size_t t) { return static_cast<int>(mask.globals[t]); };

  // Which blocks the tile `io` visits. Causal, padding and window bounds
  // are monotone in the position: the tile's first and last queries bound it.
  Expr firstPos = keys - queries + io * tile;
  Expr lastPos = keys - queries + min(io * tile + tile - 1, queries - 1);
  // The state walks the blocks (ru.y) and, per block, the features (ru.x).
  // The features are a reduction variable rather than a pure one because
  // Halide lets only a reduction variable read the state at another
  // feature: every feature reads the running maximum of the last one.
  RDom ru(0, headDim, firstBlock, blocks - firstBlock, "ru");
  RVar rc = ru.x, rb = ru.y;
  Expr firstKey = visibleKeys(mask, firstPos, length, stored, keys).first;
  Expr lastKey = visibleKeys(mask, lastPos, length, stored, keys).second;
  Expr inRange = rb >= firstKey / block && rb <= lastKey / block;
  // Whether the walk of the tile whose queries sit at [tileFirst, tileLast]
  // visits block `kb`, with globals or random keys in the mask.
  std::function<Expr(Expr, Expr, Expr)> walkVisits;
  if (mask.restricted() && (!mask.globals.empty() || mask.randomPerRow > 0)) {
    // The causal/padding interval still bounds everything; inside it a block
    // is seen through the window or a global key or query. Random keys do
    // not make a block visited: each query gathers its own below (a tile's
    // 32 queries drawing 3 keys each would otherwise visit up to 96 blocks,
    // nearly all of them past a few thousand keys).
    walkVisits = [&mask, &length, &stored, &keys, block, separateGlobals](Expr kb, Expr tileFirst,
                                                                          Expr tileLast) {
      MaskDesc bounds = mask;
      bounds.window = bounds.dilated = 0;
      bounds.globals.clear();
      bounds.randomPerRow = 0;
      Expr boundLast = visibleKeys(bounds, tileLast, length, stored, keys).second;
      Expr seen = Internal::const_false();
      if (mask.window > 0 || mask.dilated > 0) {
        MaskDesc windows = mask;
        windows.globals.clear();
        windows.randomPerRow = 0;
        Expr wFirst = visibleKeys(windows, tileFirst, length, stored, keys).first;
        Expr wLast = visibleKeys(windows, tileLast, length, stored, keys).second;
        seen = seen || (kb >= wFirst / block && kb <= wLast / block);
      }
      if (!separateGlobals)
        for (int64_t token : mask.globals) {
          int g = static_cast<int>(token);
          seen = seen || (tileFirst <= g && g <= tileLast) || kb == g / block;
        }
      return kb <= boundLast / block && seen;
    };
    inRange = walkVisits(rb, firstPos, lastPos);
  }
  ru.where(inRange);

  // The running state of query ii of tile io, per feature c: the weighted
  // sum, the sum of weights and the maximum logit (the last two the same for
  // every c: a copy per lane keeps their update a vector op).
  Expr qi = io * tile + ii;
  Func state("state");
  state(c, ii, h, io) = {0.0f, 0.0f, Float(32).min()};
  // Absorbs a block whose weights sum to `sum` and weight `acc` of the
  // values at feature `f`, under maximum logit `bMax`: one exp per query and
  // block, on the last feature's maximum (the same in every lane); the side
  // with the smaller maximum is scaled down. The features run in ascending
  // order and the last one is stored last, so every feature reads the
  // maximum from before this block; LLVM then computes the exp once for all
  // of a row's vectors (per lane it cost as much as the block's weights).
  auto absorb = [&](Expr f, Expr acc, Expr sum, Expr bMax) {
    Expr oldAcc = state(f, ii, h, io)[0], oldSum = state(f, ii, h, io)[1],
         oldMax = state(headDim - 1, ii, h, io)[2];
    Expr grows = bMax > oldMax;
    Expr e = exp(-abs(oldMax - bMax));
    Expr keepOld = select(grows, e, 1.0f), keepNew = select(grows, 1.0f, e);
    return Tuple(oldAcc * keepOld + acc * keepNew, oldSum * keepOld + sum * keepNew,
                 max(oldMax, bMax));
  };
  state(rc, ii, h, io) =
      absorb(rc, blockAcc(rc, qi, h, rb), blockSum(qi, h, rb), blockMax(qi, h, rb));

  // Random keys outside the blocks a query's tile walks, gathered one by
  // one and absorbed as one more block: draw r of query i counts when the
  // mask lets it through, no earlier draw of i is the same key, and the walk
  // (which decides random keys inside its blocks with the rest of the mask)
  // skips its block.
  Var r("r");
  Func drawnKey("random_key"), drawnValid("random_valid"), drawnScore("random_score");
  Func drawnLogit("random_logit"), drawnMax("random_max"), drawnWeight("random_weight");
  Func drawnSum("random_sum"), drawnAcc("random_acc");
  // Draws 0..G-1 are the separate global keys, the rest the random ones.
  const int globalDraws = separateGlobals ? static_cast<int>(globalCount) : 0;
  const int draws = globalDraws + static_cast<int>(mask.randomPerRow);
  const bool gathers = draws > 0;
  RDom rf(0, headDim, "r_feature");
  if (gathers) {
    // Rows past the last query (a tile rounded up) compute the last one's,
    // never consumed.
    Expr iq = min(i, queries - 1);
    Expr posI = keys - queries + iq;
    auto drawAt = [&](int t) {
      return t < globalDraws ? Expr(globalAt(t)) : randomKey(mask, posI, t - globalDraws);
    };
    Expr drawn = drawAt(0);
    for (int t = 1; t < draws; ++t)
      drawn = select(r == t, drawAt(t), drawn);
    drawnKey(r, i) = drawn;
    Expr key = drawnKey(r, i);
    Expr repeated = Internal::const_false();
    for (int t = 0; t + 1 < draws; ++t)
      repeated = repeated || (t < r && drawnKey(t, i) == key);
    Expr tileFirst = keys - queries + (iq / tile) * tile;
    Expr tileLast = keys - queries + min((iq / tile) * tile + tile - 1, queries - 1);
    drawnValid(r, i) = key < keys && allowed(mask, posI, key, length) && !repeated &&
                       !walkVisits(key / block, tileFirst, tileLast);
    Expr row = clamp(key, stored, keys - 1);
    drawnScore(r, i, h) = 0.0f;
    drawnScore(r, i, h) += q(rd, h, iq) * keyValueElement(k(rd, h / group, row), kernel);
    Expr logitR = drawnScore(r, i, h) * static_cast<float>(kernel.scale);
    if (mask.alibi)
      logitR = logitR + alibiBias(mask, kernel.heads, h, posI, key);
    drawnLogit(r, i, h) = select(drawnValid(r, i), logitR, Float(32).min());
    RDom rDraw(0, draws, "r_draw");
    drawnMax(i, h) = Float(32).min();
    drawnMax(i, h) = max(drawnMax(i, h), drawnLogit(rDraw, i, h));
    drawnWeight(r, i, h) =
        select(drawnValid(r, i), exp(drawnLogit(r, i, h) - drawnMax(i, h)), 0.0f);
    drawnSum(i, h) = 0.0f;
    drawnSum(i, h) += drawnWeight(rDraw, i, h);
    Expr drawnRow = clamp(drawnKey(rDraw, i), stored, keys - 1);
    drawnAcc(c, i, h) = 0.0f;
    drawnAcc(c, i, h) +=
        drawnWeight(rDraw, i, h) * keyValueElement(v(c, h / group, drawnRow), kernel);
    // Absorbed as a block, per feature (a reduction variable, as above).
    state(rf, ii, h, io) = absorb(rf, drawnAcc(rf, qi, h), drawnSum(qi, h), drawnMax(qi, h));
  }

  // The rows of the separate global queries: each sees every key the
  // causal and padding terms allow, in a softmax of two passes over one
  // row of scores per global token and head (linear in the keys). They read
  // the keys transposed for the walk when those are transposed once for
  // every tile (keys_at=0), the stored rows otherwise.
  const bool squareTiles = attentionTransposeTiles(block, headDim, schedule.vectorWidth);
  const bool keysOnce = !(schedule.keysAt == 1 && squareTiles);
  Var s("s");
  Func globalScore("global_score"), globalVisible("global_visible"), globalMasked("global_logit");
  Func globalMax("global_max");
  Func globalWeight("global_weight"), globalSum("global_sum"), globalAcc("global_acc");
  Func globalRows("global_rows");
  RDom rk(0, block, firstBlock, blocks - firstBlock, "rk");
  if (separateGlobals) {
    Expr gPos = globalAt(0);
    for (size_t t = 1; t < globalCount; ++t)
      gPos = select(s == static_cast<int>(t), globalAt(t), gPos);
    // A global token past the queries computes the last one's row, never read.
    Expr gQuery = clamp(gPos - (keys - queries), 0, queries - 1);
    Expr gKeyAt = keysOnce
                      ? keysT(jj, rd, h / group, kb)
                      : keyValueElement(k(rd, h / group, clamp(key, stored, keys - 1)), kernel);
    globalScore(jj, kb, s, h) = 0.0f;
    globalScore(jj, kb, s, h) += q(rd, h, gQuery) * gKeyAt;
    Expr gLogit = globalScore(jj, kb, s, h) * static_cast<float>(kernel.scale);
    if (mask.alibi)
      gLogit = gLogit + alibiBias(mask, kernel.heads, h, gPos, key);
    globalVisible(jj, kb, s) = key >= stored && key < keys && allowed(mask, gPos, key, length);
    globalMasked(jj, kb, s, h) = select(globalVisible(jj, kb, s), gLogit, Float(32).min());
    globalMax(s, h) = Float(32).min();
    globalMax(s, h) = max(globalMax(s, h), globalMasked(rk.x, rk.y, s, h));
    globalWeight(jj, kb, s, h) =
        select(globalVisible(jj, kb, s), exp(globalMasked(jj, kb, s, h) - globalMax(s, h)), 0.0f);
    globalSum(s, h) = 0.0f;
    globalSum(s, h) += globalWeight(rk.x, rk.y, s, h);
    Expr rowOf = clamp(rk.y * block + rk.x, stored, keys - 1);
    globalAcc(c, s, h) = 0.0f;
    globalAcc(c, s, h) +=
        globalWeight(rk.x, rk.y, s, h) * keyValueElement(v(c, h / group, rowOf), kernel);
    globalRows(c, s, h) =
        select(globalSum(s, h) > 0.0f, globalAcc(c, s, h) / globalSum(s, h), 0.0f);
  }

  Func out("attention");
  Expr sum = state(d, i % tile, h, i / tile)[1];
  // A query that may see no key yields zeros, never NaN.
  Expr walked = select(sum > 0.0f, state(d, i % tile, h, i / tile)[0] / sum, 0.0f);
  if (separateGlobals) {
    Expr slot = 0;
    for (size_t t = 1; t < globalCount; ++t)
      slot = select(pos == globalAt(t), static_cast<int>(t), slot);
    out(d, h, i) = select(isGlobal(mask, pos), globalRows(d, slot, h), walked);
  } else {
    out(d, h, i) = walked;
  }
  constrainOutput(out, sig.back());

  const int vw = schedule.vectorWidth;
  const int dw = vectorWidthFor(headDim, vw);
  const int jw = vectorWidthFor(block, vw);
  const TailStrategy dTail = vectorTail(headDim, dw);
  // One parallel task per (head, query tile). Each task walks the tile's key
  // blocks; the keys it reads are transposed once for every head before the
  // walk (keys_at=0) or per query tile and visited block (keys_at=1), so no
  // task depends on another. One task per head walking its tiles in turn
  // (keys transposed per head, inside the task) split a prompt of 5 heads
  // 3 to 2 on 2 threads: d-160 decoder of 5 heads (bench/e2e/small/extra/
  // s160.tm), attention 0.349-0.475 ms (min-median) a 128-token prompt
  // against 0.410-0.537 (8 interleaved rounds, Zen 4, 2 threads, in-model
  // profiles); gqa384 (6 heads) 0.838-1.159 against 0.909-1.313; with 2, 4
  // or 12 heads (t128v16384, GPT-2 small at 128 tokens, the long-context
  // encoders at 4096) within the noise.
  // Causal tiles of unequal work (a late tile visits more blocks) balance
  // over the pool's claims.
  Var ti("ti"), to("to"), task("task");
  out.split(i, to, ti, tileSize, TailStrategy::GuardWithIf)
      .reorder(d, ti, to, h)
      .vectorize(d, dw, headDim % dw == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf)
      .fuse(to, h, task);
  if (schedule.parallel)
    out.parallel(task);
  state.compute_at(out, task).vectorize(c, dw, dTail);
  queryRows.compute_at(out, task).vectorize(d, dw, dTail);
  // Halide sees a race in the read of another feature; features split into
  // vectors visited in ascending order (unrolled, never parallel) make it
  // none, as the state's definition explains.
  RVar rco("rco"), rci("rci");
  state.update()
      .allow_race_conditions()
      .reorder(rc, ii, rb)
      .split(rc, rco, rci, dw, TailStrategy::GuardWithIf)
      .vectorize(rci)
      .unroll(rco);

  // A dot product over head_dim per (query, key) pair that no register
  // tile shares (gathered keys, global rows): vector-wide partial sums of
  // the features, then the lanes added once (scalar, it took 64 dependent
  // FMAs; vectorized over keys, as many gathers of the keys: either made the
  // rows of 4 global tokens cost as much as the rest of the attention).
  auto dotInLanes = [&](Func f, const Var &at) {
    if (dw <= 1 || headDim % dw != 0)
      return;
    RVar ro("rd_vector"), ri("rd_lane");
    Var lane("lane");
    Func lanes = f.update().split(rd, ro, ri, dw).rfactor(ri, lane);
    lanes.compute_at(f, at).reorder_storage(lane, at).vectorize(lane);
    lanes.update().vectorize(lane);
    f.update().atomic().vectorize(ri);
  };

  if (gathers) {
    // Per query tile, after its walk: a dot product per query and key.
    for (Func f : {drawnKey, drawnValid, drawnScore, drawnLogit, drawnMax, drawnWeight, drawnSum})
      f.compute_at(out, task);
    dotInLanes(drawnScore, r);
    drawnAcc.compute_at(out, task).vectorize(c, dw, dTail);
    drawnAcc.update().reorder(c, i).vectorize(c, dw, dTail);
    RVar fo("fo"), fi("fi");
    state.update(1)
        .allow_race_conditions()
        .split(rf.x, fo, fi, dw, TailStrategy::GuardWithIf)
        .vectorize(fi)
        .unroll(fo);
  }

  const TailStrategy round = TailStrategy::RoundUp;
  if (separateGlobals) {
    // Before the tasks, in parallel over heads: the scores of every global
    // token against every key, their maxima and sums, then the weighted
    // sums of values (vectors of features).
    globalRows.compute_root().reorder(c, s, h).vectorize(c, dw, dTail);
    if (schedule.parallel)
      globalRows.parallel(h);
    globalRows.bound(s, 0, static_cast<int>(globalCount));
    globalScore.compute_at(globalRows, h).vectorize(jj, jw, round);
    if (keysOnce && block % jw == 0) {
      // Per vector of keys, every global token's scores in registers.
      Var jo("jo"), ji("ji");
      globalScore.update().split(jj, jo, ji, jw).reorder(ji, s, rd, jo, kb).vectorize(ji).unroll(s);
    } else {
      dotInLanes(globalScore, jj);
    }
    for (Func f : {globalVisible, globalMasked, globalWeight})
      f.compute_at(globalRows, h).vectorize(jj, jw, round);
    globalMax.compute_at(globalRows, h);
    globalSum.compute_at(globalRows, h);
    globalAcc.compute_at(globalRows, h).vectorize(c, dw, dTail);
    globalAcc.update().reorder(c, s, rk.x, rk.y).vectorize(c, dw, dTail);
  }
  Func maxLanes, sumLanes; // blockMax's and blockSum's per-lane halves, if split
  // Keys are transposed once, for all heads and query tiles (in parallel
  // over key blocks, before the tasks), or (keys_at=1) per query tile and
  // visited block, into a block-sized buffer that is still in L1 when the
  // block's scores read it. In square tiles of
  // jw x jw: jw dense loads of stored rows, then jw vectors of keys that
  // LLVM assembles by shuffles (a gather per vector instead cost 7% of the
  // kernel at 512 tokens). keys_at=1 needs the square tiles
  // (attentionTransposeTiles, checked by validSchedule): with gathers per block it
  // would only be slower, and Halide 14 mis-sized its buffers under window
  // masks (out-of-bounds writes under valgrind).
  if (schedule.keysAt == 1 && squareTiles) {
    keysT.compute_at(score, kb);
  } else {
    keysT.compute_root();
    if (schedule.parallel)
      keysT.parallel(kb);
  }
  if (squareTiles) {
    Var jt("jt"), dt("dt");
    keysT.tile(jj, d, jt, dt, jw, jw).vectorize(jt).unroll(dt);
    keyRows.compute_at(keysT, jj).vectorize(d).unroll(jj);
  } else {
    keysT.vectorize(jj, jw, round);
  }
  // Both block products run in register tiles of `rows` queries x a few
  // vectors: each key (or value) vector loaded is used `rows` times, each
  // broadcast query element (or weight) for every vector (AVX-512: 4 x 4 of
  // the 32 zmm; AVX2: 2 x 4 of the 16 ymm). Rows past the tile's last query
  // (rounded up) read the last query and are never consumed.
  const int rows = 4;
  const int vectors = vw >= 16 ? 4 : 2;
  Var jo("jo"), jv("jv"), jl("jl"), iO("iO"), iI("iI"), co("co"), cv("cv"), cl("cl");
  score.compute_at(state, rb).vectorize(jj, jw, round);
  if (block % (jw * vectors) == 0) {
    score.update()
        .split(jj, jo, jl, jw * vectors)
        .split(jl, jv, jl, jw)
        .split(i, iO, iI, rows, TailStrategy::RoundUp)
        .reorder(jl, jv, iI, rd, jo, iO)
        .vectorize(jl)
        .unroll(jv)
        .unroll(iI);
  } else {
    score.update().reorder(jj, rd, i).vectorize(jj, jw, round);
  }
  visible.compute_at(state, rb).vectorize(jj, jw, round);
  masked.compute_at(state, rb).vectorize(jj, jw, round);
  keyValid.compute_at(state, rb).vectorize(jj, jw, round);
  if (mask.globals.empty())
    keyGlobal.compute_inline();
  else
    keyGlobal.compute_at(state, rb).vectorize(jj, jw, round);
  // The block's max and sum: vector-wide partial results, then across the
  // lanes (a scalar chain of `block` dependent ops would cost as much as the
  // block's products).
  blockMax.compute_at(state, rb);
  weight.compute_at(state, rb).vectorize(jj, jw, round);
  blockSum.compute_at(state, rb);
  if (block % jw == 0) {
    // A row's vectors are combined lane by lane, then its lanes once, not
    // each vector across its lanes (four shuffle trees a row per block of
    // 64 keys). With the key terms above: the long-context Longformer's and
    // BigBird's attention 1-6% faster at 4k tokens (in-model profiles, 3 rounds).
    for (auto [total, lanes] : {std::pair{blockMax, &maxLanes}, std::pair{blockSum, &sumLanes}}) {
      RVar vectorOf("rjv"), laneOf("rjl");
      Var lane("lane");
      *lanes = total.update().split(rj, vectorOf, laneOf, jw).rfactor(laneOf, lane);
      // rfactor appends `lane` to the pure dimensions: stored first, so
      // that a row's lanes are one dense vector.
      lanes->compute_at(state, rb).reorder_storage(lane, i).vectorize(lane);
      lanes->update().vectorize(lane);
      total.update().atomic().vectorize(laneOf);
    }
  }
  blockAcc.compute_at(state, rb).vectorize(c, dw, dTail);
  const int cVectors = std::min(vectors, std::max(1, headDim / dw));
  if (headDim % (dw * cVectors) == 0) {
    blockAcc.update()
        .split(c, co, cl, dw * cVectors)
        .split(cl, cv, cl, dw)
        .split(i, iO, iI, rows, TailStrategy::RoundUp)
        .reorder(cl, cv, iI, rj, co, iO)
        .vectorize(cl)
        .unroll(cv)
        .unroll(iI);
  } else {
    blockAcc.update().reorder(c, rj, i).vectorize(c, dw, dTail);
  }

  q.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.heads)}, {0, 128}});
  k.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.kvHeads)}, {0, 128}});
  v.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.kvHeads)}, {0, 128}});
  out.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.heads)}, {0, 128}});
  std::vector<Argument> args = {q, k, v};
  if (mask.padding)
    args.push_back(length);
  std::vector<Func> stages;
  for (Func f : {keyRows, keysT, queryRows, score, keyValid, keyGlobal, visible, masked, maxLanes,
                 blockMax, weight, sumLanes, blockSum, blockAcc, state, out})
    if (f.defined())
      stages.push_back(f);
  if (gathers)
    for (Func f :
         {drawnKey, drawnValid, drawnScore, drawnLogit, drawnMax, drawnWeight, drawnSum, drawnAcc})
      stages.push_back(f);
  if (separateGlobals)
    for (Func f : {globalScore, globalVisible, globalMasked, globalMax, globalWeight, globalSum,
                   globalAcc, globalRows})
      stages.push_back(f);
  return {out, args, stages};
}

} // namespace tmc::halide
