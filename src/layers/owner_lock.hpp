// owner_lock.hpp — a lock whose owner takes it with no locked instruction,
// for state one thread works on all the time and another thread only now and
// then wants to take over (vam: a heap's large objects, which a reclaim frees
// for an owner that sleeps; remote_reclaim.cpp).
//
// The owner marks itself busy with a plain store and then reads whether it is
// claimed; the claimer marks the claim and then reads whether the owner is
// busy. Each side must see the other's store before its own load, which on
// the owner's side would take a full fence (a locked instruction, which also
// waits for every store before it to reach the cache: +22% time on a loop of
// large frees and mallocs). The claimer pays for both instead, with
// membarrier(2): MEMBARRIER_CMD_PRIVATE_EXPEDITED runs a full barrier on every
// CPU that runs one of the process's threads, so when it returns, an owner
// that read "not claimed" had made its busy mark visible first, and an owner
// that reads later sees the claim. Where the kernel has no membarrier (or the
// registration failed), try_claim always fails: the claimer does its work
// some other way.
//
// Rules: the owner brackets each piece of work with enter() / leave() (not
// nested); a claimer that got try_claim() calls release() when done, soon: the
// owner waits meanwhile (yielding). At most one claimer at a time; a second
// one fails.
#pragma once

#include <atomic>
#include <cstdint>

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace alloclab {

inline std::atomic<bool> g_owner_lock_ready{false};

// Register the process for expedited private membarrier; true if it may use
// it. Once at start-up and again in a fork's child (a new address space).
// System calls only: safe before malloc works.
inline bool owner_lock_setup() noexcept {
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  const bool ok = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
                  syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  g_owner_lock_ready.store(ok, std::memory_order_relaxed);
  return ok;
}
// The expedited barrier over the process's running threads; false if it
// failed (then a claim must not be trusted).
inline bool owner_lock_barrier() noexcept {
  return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

class OwnerLock {
 public:
  constexpr OwnerLock() noexcept = default;

  void enter() noexcept {
    busy_.store(1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the store, then the load (the hardware order: membarrier)
    if (__builtin_expect(claimed_.load(std::memory_order_acquire) != 0, 0)) wait_and_enter();
  }
  void leave() noexcept { busy_.store(0, std::memory_order_release); }

  bool try_claim() noexcept {
    if (!g_owner_lock_ready.load(std::memory_order_relaxed)) return false;
    if (claimed_.load(std::memory_order_relaxed) != 0 || claimed_.exchange(1, std::memory_order_acq_rel) != 0)
      return false;
    if (!owner_lock_barrier() || busy_.load(std::memory_order_acquire) != 0) {
      release();
      return false;
    }
    return true;
  }
  void release() noexcept { claimed_.store(0, std::memory_order_release); }

 private:
  // Out of line, so that the owner's path keeps no register for it.
  [[gnu::noinline, gnu::cold]] void wait_and_enter() noexcept {
    for (;;) {
      busy_.store(0, std::memory_order_release);
      while (claimed_.load(std::memory_order_acquire) != 0) sched_yield();
      busy_.store(1, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (claimed_.load(std::memory_order_acquire) == 0) return;
    }
  }

  std::atomic<std::uint32_t> busy_{0};     // written by the owner only
  std::atomic<std::uint32_t> claimed_{0};  // written by claimers only
};

class OwnerGuard {
 public:
  explicit OwnerGuard(OwnerLock &l) noexcept : l_(l) { l_.enter(); }
  ~OwnerGuard() { l_.leave(); }
  OwnerGuard(const OwnerGuard &) = delete;
  OwnerGuard &operator=(const OwnerGuard &) = delete;

 private:
  OwnerLock &l_;
};

}  // namespace alloclab
