// chunk_cache.hpp — ChunkCache<Parent>: a process-wide cache of recently
// released chunks, so that short-lived heaps (a reap per request, a region
// per function) do not pay an mmap/munmap pair each.
//
// Chunks are cached by exact power-of-two size between kMinCached and
// kMaxCached; anything else goes straight to Parent. The cache holds at most
// `limit()` bytes (set once, before use, by the owner of the stack) so it
// never hoards: past the limit a released chunk is returned to Parent.
// Cached chunks keep their old contents (kFreshIsZeroed is false).
//
// State is static: one cache per Parent type per process, guarded by a
// SpinLock. Call prepare_fork/parent_after_fork/child_after_fork from
// pthread_atfork handlers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/spin_lock.hpp"

namespace alloclab {

template <class Parent, std::size_t kMinCached = 16 * 1024,
          std::size_t kMaxCached = 1024 * 1024>
class ChunkCache : public Parent {
  static_assert((kMinCached & (kMinCached - 1)) == 0, "power of two");
  static_assert((kMaxCached & (kMaxCached - 1)) == 0, "power of two");

 public:
  static constexpr bool kFreshIsZeroed = false;

  void *get_chunk(std::size_t bytes) noexcept {
    const int c = class_of(bytes);
    if (c >= 0) {
      State &s = state();
      SpinGuard g(s.lock);
      if (Node *n = s.heads[c]) {
        s.heads[c] = n->next;
        s.cached_bytes -= bytes;
        return n;
      }
    }
    return Parent::get_chunk(bytes);
  }

  void put_chunk(void *p, std::size_t bytes) noexcept {
    const int c = class_of(bytes);
    if (c >= 0) {
      State &s = state();
      SpinGuard g(s.lock);
      if (s.cached_bytes + bytes <= s.limit) {
        Node *n = static_cast<Node *>(p);
        n->next = s.heads[c];
        s.heads[c] = n;
        s.cached_bytes += bytes;
        return;
      }
    }
    Parent::put_chunk(p, bytes);
  }

  static void set_limit(std::size_t bytes) noexcept { state().limit = bytes; }
  static std::size_t limit() noexcept { return state().limit; }
  static std::size_t cached_bytes() noexcept {
    SpinGuard g(state().lock);
    return state().cached_bytes;
  }
  // Give every cached chunk back to Parent (tests, memory pressure).
  void trim() noexcept {
    State &s = state();
    SpinGuard g(s.lock);
    for (int c = 0; c < kClasses; ++c) {
      while (Node *n = s.heads[c]) {
        s.heads[c] = n->next;
        Parent::put_chunk(n, kMinCached << c);
      }
    }
    s.cached_bytes = 0;
  }

  static void prepare_fork() noexcept { state().lock.lock(); }
  static void parent_after_fork() noexcept { state().lock.unlock(); }
  static void child_after_fork() noexcept { state().lock.reset(); }

 private:
  struct Node {
    Node *next;
  };
  static constexpr int kClasses = [] {
    int n = 0;
    for (std::size_t s = kMinCached; s <= kMaxCached; s <<= 1) ++n;
    return n;
  }();
  struct State {
    SpinLock lock;
    Node *heads[kClasses] = {};
    std::size_t cached_bytes = 0;
    std::size_t limit = 8 * kMaxCached;
  };
  static State &state() noexcept {
    static State s;  // constant-initialised: no guard, no allocation
    return s;
  }
  static int class_of(std::size_t bytes) noexcept {
    if (bytes < kMinCached || bytes > kMaxCached || (bytes & (bytes - 1))) return -1;
    return __builtin_ctzll(bytes) - __builtin_ctzll(kMinCached);
  }
};

}  // namespace alloclab
