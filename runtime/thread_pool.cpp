//===- thread_pool.cpp - The threads Halide's parallel loops run on -------===//
//
// One loop at a time: the caller publishes it (a generation count the
// workers watch), takes iterations itself like any worker, and waits for the
// last. Each thread owns a contiguous share of the iterations (the same
// share of the same rows in consecutive loops, whose data then stays in its
// core's caches) and claims it from the front in runs that shrink as the
// share empties; a thread whose share is done claims from the back of
// another's, so that the threads end together. Not one at a time as
// Halide's pool hands them out: each claim is a compare-and-swap on a cache
// line another core may have to fetch back. A loop that another thread's
// loop is using the pool for, or that a loop's task starts (nested), runs
// serially on its caller.
//
//===----------------------------------------------------------------------===//

#include "runtime/thread_pool.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tmr {

namespace {

/// How long a worker spins after its last loop before it sleeps: a forward
/// pass's kernels, and a decoding loop's steps, follow each other well
/// within it; an idle server's workers sleep.
constexpr auto kSpin = std::chrono::microseconds(2000);

/// One step of a spin-wait (`spins`: the steps so far). Every 64th yields
/// the CPU, so that a thread the waiter waits for (or another process) gets
/// it when the machine has more runnable threads than cores (a parallel test
/// suite): a pure spin would hold the core for its whole time slice.
void relax(int spins) {
  if (spins % 64 == 63) {
    std::this_thread::yield();
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// Inside a loop's task (a worker, or a caller taking iterations): a loop
/// started there runs serially.
thread_local bool inLoop = false;

/// A thread claims 1 / kClaimShare of what is left of its own share, at least
/// one; from another's share, half that (the owner is still working through
/// it). At two threads the first claim is a quarter of the loop, as when
/// every thread claimed 1 / (kClaimShare x threads) of the iterations left
/// from one counter, before the shares. Claimed one at a time, a decoding
/// step's int8 GEMVs (tasks of one 24 KB weight panel, ~1 us each) ran no
/// faster at two threads than at one on the Zen 4: 1571 claims of the GPT-2
/// head's panels, each a round trip of the counter's cache line between the
/// cores. Each claim also starts a new stream through memory: first claims of
/// a quarter of the loop (two threads) made GPT-2 small's q4 steps 7% faster
/// than an eighth (8 interleaved rounds: 3.03 against 3.27 ms median; int8
/// 4.65 against 4.76, f32 prefill and rope320's the same). The last claims
/// are still single iterations, so the threads end together.
constexpr int kClaimShare = 2;

/// One thread's share of a loop: iterations [front, back), packed in one
/// word so that a claim from either end is one compare-and-swap.
struct alignas(64) Share {
  std::atomic<uint64_t> range{0};
  static uint64_t pack(uint32_t front, uint32_t back) { return uint64_t(front) << 32 | back; }
  static uint32_t front(uint64_t r) { return static_cast<uint32_t>(r >> 32); }
  static uint32_t back(uint64_t r) { return static_cast<uint32_t>(r); }
};

constexpr int kMaxShares = 64;

struct Loop {
  halide_task_t task = nullptr;
  void *userContext = nullptr;
  uint8_t *closure = nullptr;
  int min = 0, size = 0, threads = 1;
  /// Thread i (the caller 0, worker w w + 1) owns iterations [i x size /
  /// threads, (i + 1) x size / threads): consecutive loops over the same
  /// rows (a GEMM's row tiles, then a norm's rows) give each thread the
  /// rows it wrote, which stay in its core's caches. On a 2-vCPU VM whose
  /// vCPUs sat on different CCDs of an AMD EPYC Zen 5 (a cache line's round
  /// trip between them ~440 ns), a norm reading rows the other core wrote
  /// ran 3x its one-thread time at 2 threads. A thread whose share is done
  /// takes iterations from the back of another's, so the threads still end
  /// together.
  Share shares[kMaxShares];
  alignas(64) std::atomic<int> finished{0};
  std::atomic<int> result{0};

  void share() {
    for (int i = 0; i < threads; ++i)
      shares[i].range.store(Share::pack(static_cast<uint32_t>(int64_t(size) * i / threads),
                                        static_cast<uint32_t>(int64_t(size) * (i + 1) / threads)),
                            std::memory_order_relaxed);
  }

  void run(uint32_t first, uint32_t count) {
    for (uint32_t i = first; i < first + count; ++i)
      if (int rc = task(userContext, min + static_cast<int>(i), closure))
        result.store(rc);
    finished.fetch_add(static_cast<int>(count), std::memory_order_release);
  }

  /// Runs iterations until none is left: its own share's from the front,
  /// then others' from the back.
  void work(int self) {
    if (self < threads)
      drain(shares[self], /*fromFront=*/true);
    for (int step = 1; step <= threads; ++step)
      drain(shares[(self + step) % threads], /*fromFront=*/false);
  }

  /// Claims runs of `share` and runs them until it is empty: from its front
  /// (its owner: 1 / kClaimShare of what is left) or back (another thread:
  /// half that). A failed compare-and-swap reloads `r`.
  void drain(Share &share, bool fromFront) {
    const uint32_t divisor = fromFront ? kClaimShare : 2 * kClaimShare;
    for (uint64_t r = share.range.load(std::memory_order_acquire);;) {
      uint32_t front = Share::front(r), back = Share::back(r);
      if (front >= back)
        return;
      uint32_t count = std::max<uint32_t>(1, (back - front) / divisor);
      uint32_t first = fromFront ? front : back - count;
      uint64_t rest = fromFront ? Share::pack(front + count, back) : Share::pack(front, first);
      if (share.range.compare_exchange_weak(r, rest)) {
        run(first, count);
        r = share.range.load(std::memory_order_acquire);
      }
    }
  }
};

int serially(void *userContext, halide_task_t task, int min, int size, uint8_t *closure) {
  int result = 0;
  for (int i = 0; i < size; ++i)
    if (int rc = task(userContext, min + i, closure))
      result = rc;
  return result;
}

class Pool {
public:
  void setThreads(int threads) {
    threads = std::max(1, threads);
    wanted.store(threads);
    std::lock_guard<std::mutex> lock(growing);
    while (static_cast<int>(workers) + 1 < threads) {
      // The loops it must see are those published from now on, even
      // before the thread has started.
      std::thread(&Pool::worker, this, static_cast<int>(workers), generation.load()).detach();
      ++workers;
    }
  }

  int threads() const { return wanted.load(); }

  int parFor(void *userContext, halide_task_t task, int min, int size, uint8_t *closure) {
    if (size <= 1 || wanted.load() <= 1 || inLoop)
      return serially(userContext, task, min, size, closure);
    std::unique_lock<std::mutex> mine(dispatch, std::try_to_lock);
    if (!mine.owns_lock()) // another thread's loop has the workers
      return serially(userContext, task, min, size, closure);
    Loop loop;
    loop.task = task;
    loop.userContext = userContext;
    loop.closure = closure;
    loop.min = min;
    loop.size = size;
    // Threads past kMaxShares own no share; they take from the others'.
    loop.threads = std::min(wanted.load(), kMaxShares);
    loop.share();
    current.store(&loop);
    generation.fetch_add(1);
    if (sleepers.load() > 0) {
      std::lock_guard<std::mutex> lock(sleep);
      wake.notify_all();
    }
    inLoop = true;
    loop.work(0);
    inLoop = false;
    for (int spins = 0; loop.finished.load(std::memory_order_acquire) < size; ++spins)
      relax(spins);
    // A worker that joins from here on finds no loop; one that joined
    // before is counted in `working` and leaves once it finds no iteration.
    current.store(nullptr);
    for (int spins = 0; working.load() != 0; ++spins)
      relax(spins);
    return loop.result.load();
  }

private:
  void worker(int index, uint64_t seen) {
    inLoop = true;
    for (;;) {
      auto idleSince = std::chrono::steady_clock::now();
      uint64_t now = generation.load();
      for (int spins = 0; now == seen; now = generation.load()) {
        relax(spins);
        if (++spins % 1024 == 0 && std::chrono::steady_clock::now() - idleSince > kSpin) {
          std::unique_lock<std::mutex> lock(sleep);
          sleepers.fetch_add(1);
          wake.wait(lock, [&] { return generation.load() != seen; });
          sleepers.fetch_sub(1);
          idleSince = std::chrono::steady_clock::now();
        }
      }
      seen = now;
      if (index + 1 >= wanted.load()) // not one of this loop's threads
        continue;
      working.fetch_add(1);
      if (Loop *loop = current.load())
        loop->work(index + 1);
      working.fetch_sub(1);
    }
  }

  std::atomic<int> wanted{1};
  std::mutex growing;
  size_t workers = 0;
  std::mutex dispatch; ///< held by the loop being run
  std::atomic<uint64_t> generation{0};
  std::atomic<Loop *> current{nullptr};
  std::atomic<int> working{0};
  std::mutex sleep;
  std::condition_variable wake;
  std::atomic<int> sleepers{0};
};

/// Never destroyed: its detached workers may still be spinning at exit.
Pool &pool() {
  static Pool *instance = new Pool;
  return *instance;
}

} // namespace

void setPoolThreads(int threads) { pool().setThreads(threads); }

int poolThreads() { return pool().threads(); }

int poolParallelFor(void *userContext, halide_task_t task, int min, int size, uint8_t *closure) {
  return pool().parFor(userContext, task, min, size, closure);
}

} // namespace tmr
