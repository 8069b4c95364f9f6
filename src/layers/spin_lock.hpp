// spin_lock.hpp — a tiny lock that needs no initialisation call and never
// allocates, for process-wide allocator state that is touched rarely (chunk
// caches, registries). Yields under contention; fork handlers take it so a
// child never inherits it held (see ChunkCache::prepare_fork).
#pragma once

#include <atomic>

#include <sched.h>

namespace alloclab {

class SpinLock {
 public:
  constexpr SpinLock() noexcept = default;
  void lock() noexcept {
    while (flag_.exchange(true, std::memory_order_acquire)) {
      while (flag_.load(std::memory_order_relaxed)) ::sched_yield();
    }
  }
  // Take it only if free now: for work that can just as well be done later.
  bool try_lock() noexcept {
    return !flag_.load(std::memory_order_relaxed) && !flag_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }
  // After fork() in the child: whoever held it no longer exists.
  void reset() noexcept { flag_.store(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> flag_{false};
};

class SpinGuard {
 public:
  explicit SpinGuard(SpinLock &l) noexcept : l_(l) { l_.lock(); }
  ~SpinGuard() { l_.unlock(); }
  SpinGuard(const SpinGuard &) = delete;
  SpinGuard &operator=(const SpinGuard &) = delete;

 private:
  SpinLock &l_;
};

}  // namespace alloclab
