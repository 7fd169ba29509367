//===- mapping_guard.cpp - Surviving a weights file truncated under us ----===//
//
// The SIGBUS handler may run on any thread at any point, also while another
// thread registers or unregisters a mapping, so it reads only lock-free
// atomics in a fixed array of slots and calls only mmap (a plain system
// call on Linux, as async-signal-safe as the listed ones), sigaction and
// raise. Each slot is a seqlock: a writer makes its version odd, writes the
// range, makes it even again; the handler skips a slot whose version is odd
// or changed while it read the range (a range being registered or
// unregistered is not being read by a run). Everything else (paths, the
// owners behind lostWeightsError) sits under a mutex the handler never takes.
//
//===----------------------------------------------------------------------===//
#include "runtime/mapping_guard.h"

#include "runtime/memory.h"

#include <array>
#include <atomic>
#include <csignal>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tmr {
namespace {

/// Weight files open at once in one process; more are simply unguarded.
constexpr int kSlots = 64;

struct Slot {
  std::atomic<uint64_t> version{0}; ///< odd while a writer changes the range
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<bool> lost{false};
};
static_assert(std::atomic<uintptr_t>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the SIGBUS handler may only touch lock-free atomics");

std::array<Slot, kSlots> slots;
/// Mappings ever lost: lets a run's check cost one load when it is 0.
std::atomic<int> lostMappings{0};
uintptr_t pageBytes = 4096;
/// The SIGBUS disposition before ours, for faults outside every slot.
struct sigaction previousAction;

/// Under registryMutex: who holds each slot (null: free).
std::mutex registryMutex;
std::array<const MappingGuard *, kSlots> owners{};
bool handlerInstalled = false;

void writeRange(Slot &slot, uintptr_t begin, uintptr_t end) {
  slot.version.fetch_add(1); // odd: the handler skips the slot
  slot.begin.store(begin);
  slot.end.store(end);
  slot.version.fetch_add(1);
}

/// What would have happened without us: the previous handler, or the
/// default action (the process ends with SIGBUS).
void forward(int signal, siginfo_t *info, void *context) {
  if (previousAction.sa_flags & SA_SIGINFO) {
    previousAction.sa_sigaction(signal, info, context);
    return;
  }
  if (previousAction.sa_handler == SIG_IGN && info->si_code <= 0)
    return; // a SIGBUS sent by kill(), which the program ignores
  if (previousAction.sa_handler == SIG_DFL || previousAction.sa_handler == SIG_IGN) {
    // A fault cannot be ignored; restore the default and let it take effect
    // when this handler returns (SIGBUS is blocked until then).
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, nullptr);
    raise(signal);
    return;
  }
  previousAction.sa_handler(signal);
}

void onSigbus(int signal, siginfo_t *info, void *context) {
  // BUS_ADRERR: a page with no file behind it any more. Hardware memory
  // errors (BUS_MCEERR_*) and signals sent by kill() are not ours to absorb.
  if (info->si_code == BUS_ADRERR) {
    auto address = reinterpret_cast<uintptr_t>(info->si_addr);
    for (Slot &slot : slots) {
      uint64_t version = slot.version.load();
      if (version & 1)
        continue;
      uintptr_t begin = slot.begin.load(), end = slot.end.load();
      if (slot.version.load() != version || address < begin || address >= end)
        continue;
      // Zero pages from the faulting one to the end of the mapping: the file
      // is gone from here on, and one signal covers every later read of it.
      uintptr_t from = address & ~(pageBytes - 1);
      uintptr_t to = (end + pageBytes - 1) & ~(pageBytes - 1);
      void *zeros = mmap(reinterpret_cast<void *>(from), to - from, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (zeros == MAP_FAILED)
        break; // cannot absorb it: end as without the guard
      if (!slot.lost.exchange(true))
        lostMappings.fetch_add(1);
      return; // the faulting load runs again and reads 0
    }
  }
  forward(signal, info, context);
}

/// Once per process, under registryMutex.
void installHandler() {
  if (handlerInstalled)
    return;
  pageBytes = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // The previous action is saved before ours can run: a foreign fault on
  // another thread right after the switch must find it.
  if (sigaction(SIGBUS, nullptr, &previousAction) != 0)
    return;
  struct sigaction action {};
  action.sa_sigaction = onSigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  handlerInstalled = sigaction(SIGBUS, &action, nullptr) == 0;
}

} // namespace

MappingGuard::MappingGuard(const void *begin, size_t bytes, std::string path, uint64_t fileBytes)
    : path_(std::move(path)), fileBytes_(fileBytes) {
  std::lock_guard<std::mutex> lock(registryMutex);
  installHandler();
  if (!handlerInstalled)
    return;
  for (int i = 0; i < kSlots; ++i)
    if (!owners[i]) {
      slot_ = i;
      owners[i] = this;
      slots[i].lost.store(false);
      auto from = reinterpret_cast<uintptr_t>(begin);
      writeRange(slots[i], from, from + bytes);
      return;
    }
}

MappingGuard::~MappingGuard() {
  if (slot_ < 0)
    return;
  std::lock_guard<std::mutex> lock(registryMutex);
  writeRange(slots[slot_], 0, 0);
  if (slots[slot_].lost.exchange(false))
    lostMappings.fetch_sub(1);
  owners[slot_] = nullptr;
}

bool MappingGuard::lost() const { return slot_ >= 0 && slots[slot_].lost.load(); }

std::string MappingGuard::lostMessage() const {
  std::string sizes = "it had " + formatBytes(fileBytes_) + " when opened";
  struct stat info;
  if (::stat(path_.c_str(), &info) == 0)
    sizes += ", " + formatBytes(static_cast<uint64_t>(info.st_size)) + " now";
  return path_ + ": the file was truncated while the model was reading it (" + sizes +
         "); its weights are incomplete and the results would be wrong: run again with an "
         "intact file";
}

std::string lostWeightsError(const std::vector<const void *> &pointers) {
  if (lostMappings.load() == 0)
    return "";
  std::lock_guard<std::mutex> lock(registryMutex);
  for (int i = 0; i < kSlots; ++i) {
    if (!owners[i] || !slots[i].lost.load())
      continue;
    uintptr_t begin = slots[i].begin.load(), end = slots[i].end.load();
    for (const void *pointer : pointers) {
      auto address = reinterpret_cast<uintptr_t>(pointer);
      if (pointer && address >= begin && address < end)
        return owners[i]->lostMessage();
    }
  }
  return "";
}

} // namespace tmr
