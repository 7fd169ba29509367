//===- ThreadPoolTest.cpp - The pool Halide's parallel loops run on -------===//

#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

/// Counts each iteration's runs, and which threads ran any.
struct Counts {
  std::vector<std::atomic<int>> runs;
  explicit Counts(int size) : runs(static_cast<size_t>(size)) {}
};

int countIteration(void *, int i, uint8_t *closure) {
  reinterpret_cast<Counts *>(closure)->runs[static_cast<size_t>(i - 5)].fetch_add(1);
  return 0;
}

void expectEachOnce(int size) {
  Counts counts(size);
  EXPECT_EQ(
      tmr::poolParallelFor(nullptr, countIteration, 5, size, reinterpret_cast<uint8_t *>(&counts)),
      0);
  for (int i = 0; i < size; ++i)
    EXPECT_EQ(counts.runs[static_cast<size_t>(i)].load(), 1) << "iteration " << i << " of " << size;
}

TEST(ThreadPool, RunsEveryIterationOnceAtEachThreadCount) {
  for (int threads : {1, 2, 3, 1, 4, 2}) {
    tmr::setPoolThreads(threads);
    EXPECT_EQ(tmr::poolThreads(), threads);
    for (int size : {0, 1, 2, 3, 17, 1000})
      expectEachOnce(size);
  }
  tmr::setPoolThreads(0); // at least one
  EXPECT_EQ(tmr::poolThreads(), 1);
  expectEachOnce(9);
}

int failAtSeven(void *, int i, uint8_t *) { return i == 7 ? -3 : 0; }

TEST(ThreadPool, GivesANonzeroResultOfATask) {
  tmr::setPoolThreads(2);
  EXPECT_EQ(tmr::poolParallelFor(nullptr, failAtSeven, 0, 64, nullptr), -3);
  EXPECT_EQ(tmr::poolParallelFor(nullptr, failAtSeven, 8, 64, nullptr), 0);
}

/// Each outer iteration runs an inner loop of 10 (serially, inside the pool).
int nestedLoop(void *, int i, uint8_t *closure) {
  auto *inner = reinterpret_cast<std::vector<Counts> *>(closure);
  return tmr::poolParallelFor(nullptr, countIteration, 5, 10,
                              reinterpret_cast<uint8_t *>(&(*inner)[static_cast<size_t>(i)]));
}

TEST(ThreadPool, RunsALoopStartedInsideATask) {
  tmr::setPoolThreads(3);
  std::vector<Counts> inner;
  inner.reserve(6);
  for (int i = 0; i < 6; ++i)
    inner.emplace_back(10);
  EXPECT_EQ(tmr::poolParallelFor(nullptr, nestedLoop, 0, 6, reinterpret_cast<uint8_t *>(&inner)),
            0);
  for (const Counts &counts : inner)
    for (const std::atomic<int> &runs : counts.runs)
      EXPECT_EQ(runs.load(), 1);
}

TEST(ThreadPool, RunsLoopsOfSeveralCallersAtOnce) {
  tmr::setPoolThreads(2);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        Counts counts(33);
        tmr::poolParallelFor(nullptr, countIteration, 5, 33, reinterpret_cast<uint8_t *>(&counts));
        for (const std::atomic<int> &runs : counts.runs)
          wrong += runs.load() != 1;
      }
    });
  for (std::thread &caller : callers)
    caller.join();
  EXPECT_EQ(wrong.load(), 0);
}

/// Two iterations that each wait (up to 10 s) for the other to start: with
/// two threads both run at once, on different threads.
struct Meeting {
  std::atomic<int> started{0};
  std::thread::id ran[2];
  bool met[2] = {false, false};
};

int meet(void *, int i, uint8_t *closure) {
  auto *m = reinterpret_cast<Meeting *>(closure);
  m->ran[i] = std::this_thread::get_id();
  m->started.fetch_add(1);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (m->started.load() < 2 && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  m->met[i] = m->started.load() == 2;
  return 0;
}

TEST(ThreadPool, RunsIterationsOnTwoThreadsAtOnce) {
  tmr::setPoolThreads(2);
  for (int round = 0; round < 3; ++round) {
    Meeting m;
    EXPECT_EQ(tmr::poolParallelFor(nullptr, meet, 0, 2, reinterpret_cast<uint8_t *>(&m)), 0);
    EXPECT_TRUE(m.met[0] && m.met[1]);
    EXPECT_NE(m.ran[0], m.ran[1]);
    // The second round finds the worker asleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(round == 0 ? 20 : 0));
  }
}

/// Which thread ran each iteration, and in which order they started; each
/// takes ~50 us, so that both threads take part (a loop of 1000 keeps a
/// thread busy for 25 ms or more, longer than a worker takes to wake).
struct Runners {
  std::vector<std::thread::id> ran;
  std::vector<int> started;
  std::atomic<int> next{0};
  explicit Runners(int size) : ran(static_cast<size_t>(size)), started(static_cast<size_t>(size)) {}
};

int recordRunner(void *, int i, uint8_t *closure) {
  auto *runners = reinterpret_cast<Runners *>(closure);
  runners->started[static_cast<size_t>(i)] = runners->next.fetch_add(1);
  runners->ran[static_cast<size_t>(i)] = std::this_thread::get_id();
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  while (std::chrono::steady_clock::now() < until) {
  }
  return 0;
}

TEST(ThreadPool, ClaimsIterationsInShrinkingRuns) {
  // Each thread claims half of what is left of its own share (500
  // iterations: 10 claims), then a quarter of what is left of the other's,
  // at least one. The thread running the iterations changes only where a
  // share ends or where a run taken from another's share begins and ends.
  // Claimed one at a time, two threads alternate hundreds of times.
  tmr::setPoolThreads(2);
  Runners runners(1000);
  ASSERT_EQ(
      tmr::poolParallelFor(nullptr, recordRunner, 0, 1000, reinterpret_cast<uint8_t *>(&runners)),
      0);
  int changes = 0;
  for (size_t i = 1; i < runners.ran.size(); ++i)
    changes += runners.ran[i] != runners.ran[i - 1];
  EXPECT_LE(changes, 24);
}

TEST(ThreadPool, GivesEachThreadItsShareFirst) {
  // Two threads: the caller starts at the front of the first half, the
  // worker at the front of the second (rows a thread wrote in one loop are
  // the rows it reads in the next); either takes the other's last
  // iterations once its own are done. Each half takes ~25 ms: the worker
  // starts long before the caller could reach its first iteration.
  tmr::setPoolThreads(2);
  Runners order(1000);
  ASSERT_EQ(
      tmr::poolParallelFor(nullptr, recordRunner, 0, 1000, reinterpret_cast<uint8_t *>(&order)), 0);
  const std::thread::id caller = std::this_thread::get_id();
  EXPECT_EQ(order.ran[0], caller);
  EXPECT_NE(order.ran[500], caller);
  int workerFirst = -1;
  for (int i = 0; i < 1000; ++i)
    if (order.ran[static_cast<size_t>(i)] != caller &&
        (workerFirst < 0 ||
         order.started[static_cast<size_t>(i)] < order.started[static_cast<size_t>(workerFirst)]))
      workerFirst = i;
  EXPECT_EQ(workerFirst, 500);
  // Each thread's own iterations run in order, front to back.
  for (int i = 1; i < 500; ++i)
    if (order.ran[static_cast<size_t>(i)] == caller &&
        order.ran[static_cast<size_t>(i - 1)] == caller)
      EXPECT_LT(order.started[static_cast<size_t>(i - 1)], order.started[static_cast<size_t>(i)]);
}

TEST(ThreadPool, WakesWorkersThatWentToSleep) {
  tmr::setPoolThreads(2);
  expectEachOnce(100);
  // Past the spin time (2 ms): the worker sleeps, and the next loop wakes it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  expectEachOnce(100);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  expectEachOnce(3);
}

} // namespace
