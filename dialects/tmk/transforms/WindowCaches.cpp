//===- WindowCaches.cpp - Caches of windowed attention bounded by the window ===//
//
// A decoder layer whose attention has a sliding window of w keys reads, at
// any run, only the w - 1 positions before the run's first token and the
// run's own: every older key is dead. A cache of max_seq rows would keep them
// all (GPT-2 small's twelve layers at 16k tokens: 1.2 GB per sequence, where
// a window of 256 needs 19 MB). So a cache that only such attention reads
// gets `keep = w - 1` and a capacity of keep + C rows; the runtime moves the
// kept rows to its front when a run would not fit after them
// (executor_support.h, appendRingRows), and feeds a run longer than C tokens
// in chunks of C (runInChunks). Chunks are exact only when nothing in the run
// mixes its rows except attention through caches, so a module with pooling,
// a Linformer projection, attention over the run's own rows or padded
// self-attention keeps its caches whole.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

namespace tmc::tmk {
#define GEN_PASS_DEF_TMKWINDOWCACHES
#include "dialects/tmk/Passes.h.inc"
} // namespace tmc::tmk

using namespace mlir;
using namespace tmc;

namespace {

// `tm::` would also find C's struct ::tm through `using namespace tmc`, which
// clang (it builds tests/fuzz) reports as ambiguous.
namespace tm = tmc::tm;

/// The most tokens a chunk carries at least, where max_seq allows: GEMMs of
/// fewer rows run well below the FMA peak.
constexpr int64_t kMinChunk = 256;

/// Chunks grow to 2 windows, up to kLongChunk tokens (where max_seq allows):
/// each chunk costs a pass of every kernel's calls and a move of the kept
/// rows. The long-context decoder of bench/e2e/long_context.py (window 256,
/// d_model 256, 4 layers) prefilled 4096 tokens in 125.9 ms in chunks of
/// 1024 against 130.3 in chunks of 256 (medians of 8 interleaved rounds, 2
/// threads, Zen 5, 2026-12-01), and in chunks of 512 about as fast as in
/// 1024 (146 and 145 ms against 157 for 256, 6 rounds in a slower hour).
/// Chunks of 2 windows keep that for caches of keep + 2W rows (767 for a
/// window of 256, 1.5x the 511 of chunks of 256; 4 windows took 2.5x),
/// which a server holds per sequence. Windows up to 128 keep chunks of 256.
constexpr int64_t kLongChunk = 1024;

/// Positions before a query that `mask` lets it see at most, when that is
/// bounded: a decoder's sliding or dilated window with nothing that reaches
/// further back (global or random keys) or reads the sequence's length.
std::optional<int64_t> windowKeep(std::optional<tm::MaskAttr> mask) {
  if (!mask || !mask->getDecoder() || !mask->getCausal() || mask->getPadding() ||
      !mask->getGlobals().empty() || mask->getRandomPerRow())
    return std::nullopt;
  int64_t window = std::max(mask->getWindow().value_or(0), mask->getDilated().value_or(0));
  if (window < 1)
    return std::nullopt;
  return window - 1;
}

/// The kernel `call` calls (the module's symbol table: CallOp::getKernelOp
/// scans the module for each call, and a deep stack has thousands).
tmk::KernelOp kernelOf(tmk::CallOp call, SymbolTable &symbols) {
  return symbols.lookup<tmk::KernelOp>(call.getKernelAttr().getAttr());
}

/// Whether running `func` over a sequence's tokens in consecutive chunks
/// computes what one run over all of them does: every kernel's rows depend
/// on their own rows, their positions, and keys and values read through
/// caches alone.
bool chunkable(func::FuncOp func, SymbolTable &symbols) {
  auto walked = func.walk([&](tmk::CallOp call) {
    tmk::KernelOp kernel = kernelOf(call, symbols);
    if (!kernel)
      return WalkResult::interrupt();
    switch (kernel.getKind()) {
    case tmk::KernelKind::pool:
    case tmk::KernelKind::seq_project:
      return WalkResult::interrupt();
    case tmk::KernelKind::attention: {
      Value keys = call.getArgs()[1];
      bool cached =
          keys.getDefiningOp<tmk::CacheAppendOp>() || keys.getDefiningOp<tmk::CacheReadOp>();
      bool selfPadded = keys.getDefiningOp<tmk::CacheAppendOp>() && kernel.getMask() &&
                        kernel.getMask()->getPadding();
      return cached && !selfPadded ? WalkResult::advance() : WalkResult::interrupt();
    }
    default:
      return WalkResult::advance();
    }
  });
  return !walked.wasInterrupted();
}

/// The positions before a run that every reader of `append` sees at most,
/// when all of them are windowed attention reading it as keys or values
/// (operands 1 and 2), never as queries.
std::optional<int64_t> readersKeep(tmk::CacheAppendOp append, SymbolTable &symbols) {
  int64_t keep = 0;
  for (OpOperand &use : append->getUses()) {
    auto call = dyn_cast<tmk::CallOp>(use.getOwner());
    tmk::KernelOp kernel = call ? kernelOf(call, symbols) : tmk::KernelOp();
    std::optional<int64_t> seen;
    if (kernel && kernel.getKind() == tmk::KernelKind::attention &&
        (use.getOperandNumber() == 1 || use.getOperandNumber() == 2))
      seen = windowKeep(kernel.getMask());
    if (!seen)
      return std::nullopt;
    keep = std::max(keep, *seen);
  }
  return keep;
}

/// The caches some function reads whole (tmk.cache_read: an
/// encoder-decoder's cross caches). One walk: a stack of 4096 layers has
/// 16k caches.
llvm::StringSet<> readWhole(ModuleOp module) {
  llvm::StringSet<> names;
  module.walk([&](tmk::CacheReadOp read) { names.insert(read.getName()); });
  return names;
}

struct WindowCaches : tmc::tmk::impl::TMKWindowCachesBase<WindowCaches> {
  using TMKWindowCachesBase::TMKWindowCachesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module->hasAttr("tmk.run_chunk")) // already bounded (a module resumed from IR)
      return;
    SymbolTable symbols(module);
    const llvm::StringSet<> whole = readWhole(module);

    struct Candidate {
      tmk::CacheAppendOp append;
      int64_t keep;
    };
    std::vector<Candidate> candidates;
    for (auto func : module.getOps<func::FuncOp>()) {
      std::vector<Candidate> found;
      func.walk([&](tmk::CacheAppendOp append) {
        // A cache some function reads whole (an encoder-decoder's cross
        // caches) keeps every row.
        if (append->use_empty() || whole.contains(append.getName()))
          return;
        if (std::optional<int64_t> keep = readersKeep(append, symbols))
          found.push_back({append, *keep});
      });
      if (!found.empty() && chunkable(func, symbols))
        candidates.insert(candidates.end(), found.begin(), found.end());
    }
    if (candidates.empty())
      return;
    int64_t maxKeep = 0, maxCapacity = 0;
    for (Candidate &c : candidates) {
      maxKeep = std::max(maxKeep, c.keep);
      maxCapacity = std::max(maxCapacity, static_cast<int64_t>(c.append.getCapacity()));
    }
    const int64_t window = maxKeep + 1;
    const int64_t chunk =
        std::max(window, std::min({std::max(kMinChunk, 2 * window), kLongChunk, maxCapacity / 4}));
    bool bounded = false;
    for (Candidate &c : candidates) {
      const int64_t capacity = c.keep + chunk;
      if (capacity >= static_cast<int64_t>(c.append.getCapacity()))
        continue;
      Builder b(c.append);
      c.append.setKeepAttr(b.getI64IntegerAttr(c.keep));
      c.append.setCapacityAttr(b.getI64IntegerAttr(capacity));
      // Its readers' keys start at the cache's first position. (A kernel
      // also called with whole caches reads those from position 0.)
      for (Operation *user : c.append->getUsers())
        kernelOf(cast<tmk::CallOp>(user), symbols).setWindowKeys(true);
      bounded = true;
      if (explain)
        emitRemark(c.append.getLoc())
            << tm::originPrefix(c.append.getLoc()) << "cache '" << c.append.getName() << "' holds "
            << capacity << " rows: the " << c.keep
            << " positions its window reads before a run, and a run of up to " << chunk;
    }
    if (bounded)
      module->setAttr("tmk.run_chunk", Builder(module).getI64IntegerAttr(chunk));
  }
};

} // namespace

static LogicalResult verifyWindowCache(tmk::CacheAppendOp append, int64_t runChunk,
                                       SymbolTable &symbols, const llvm::StringSet<> &whole,
                                       bool chunked);

LogicalResult tmc::tmk::verifyWindowCaches(ModuleOp module) {
  auto chunk = module->getAttrOfType<IntegerAttr>("tmk.run_chunk");
  const int64_t runChunk = chunk ? chunk.getInt() : 0;
  SymbolTable symbols(module);
  const llvm::StringSet<> whole = readWhole(module);
  llvm::DenseMap<Operation *, bool> chunks; // per function: chunkable
  auto walked = module.walk([&](tmk::CacheAppendOp append) {
    if (!append.getKeep())
      return WalkResult::advance();
    auto func = append->getParentOfType<func::FuncOp>();
    auto [it, fresh] = chunks.try_emplace(func, false);
    if (fresh)
      it->second = func && chunkable(func, symbols);
    return failed(verifyWindowCache(append, runChunk, symbols, whole, it->second))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

/// One bounded cache of verifyWindowCaches: `chunked` says whether its
/// function runs exactly in chunks.
static LogicalResult verifyWindowCache(tmk::CacheAppendOp append, int64_t runChunk,
                                       SymbolTable &symbols, const llvm::StringSet<> &whole,
                                       bool chunked) {
  const int64_t keep = *append.getKeep();
  std::optional<int64_t> seen = readersKeep(append, symbols);
  if (append->use_empty() || !seen || whole.contains(append.getName()))
    return append.emitOpError("keeps ")
           << keep << " rows before a run, but not only sliding-window attention reads it";
  if (*seen > keep)
    return append.emitOpError("keeps ")
           << keep << " rows before a run; the attention reading it sees " << *seen;
  for (Operation *user : append->getUsers())
    if (!kernelOf(cast<tmk::CallOp>(user), symbols).getWindowKeys())
      return append.emitOpError("keeps ")
             << keep << " rows before a run, but the attention reading it lacks window_keys";
  if (!chunked)
    return append.emitOpError("keeps ")
           << keep << " rows before a run, but its function does not run exactly in chunks";
  if (runChunk < 1 || static_cast<int64_t>(append.getCapacity()) != keep + runChunk)
    return append.emitOpError("has capacity ")
           << append.getCapacity() << "; keeping " << keep << " rows before runs of up to "
           << runChunk << " tokens (tmk.run_chunk), it holds " << keep + runChunk;
  return success();
}
