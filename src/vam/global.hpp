// global.hpp — the process-wide state of libvam's top level, shared by its
// four files: vam.cpp (the entry points), startup.cpp (options, hooks, fork),
// threads.cpp (thread heaps: adoption, abandonment, orphans) and stats.cpp
// (vam_stats). One small lock guards the heap lists only; the heaps
// themselves have none (heap.hpp).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloclab/vam.h"
#include "layers/spin_lock.hpp"
#include "vam/api.hpp"
#include "vam/heap.hpp"

namespace alloclab::vam {

struct Global {
  SpinLock lock;
  Heap *all = nullptr;         // every heap, newest first (append-only)
  std::atomic<Heap *> abandoned{nullptr};  // heaps of exited threads (written under the lock)
  std::size_t heaps = 0;
  std::size_t abandoned_count = 0;
  // Empty pages the abandoned heaps kept (heap_abandon), at most idle_limit().
  // Written under the lock; read without it by exiting threads (a budget).
  std::atomic<std::int64_t> abandoned_pages{0};
  std::atomic<int> live{0};    // heaps owned by a running thread
  std::atomic<int> ready{0};   // options read
  bool env_seen = false;       // the environment existed when they were read
  std::atomic<int> hooks{0};   // 0: none, 1: being installed, 2: installed
  pthread_key_t key{};
  // Threads past their heap's abandonment (TLS destructors that run after
  // vam's) allocate from this one heap, one call at a time under its lock.
  SpinLock exit_lock;
  std::atomic<Heap *> exit_heap{nullptr};  // written under exit_lock
  // Held by a statistics walk of the heaps' segment lists and by whoever
  // unlinks a segment to unmap it; taken after `lock`, never before.
  SpinLock walk_lock;
};


extern Global g;  // threads.cpp; constant-initialised: usable before any constructor runs

// threads.cpp
extern __thread bool t_exited __attribute__((tls_model("initial-exec")));
void thread_done(void *arg) noexcept;   // vam's thread-exit key destructor: abandon the heap
Heap *new_listed_heap() noexcept;       // a new heap, on the list of all heaps
Heap *thread_heap_slow() noexcept;      // adopt an abandoned heap or make one

// This thread's heap, made or adopted on first use; nullptr: out of memory,
// or the thread is exiting (t_exited).
inline Heap *thread_heap() noexcept {
  Heap *h = t_heap;
  return VAM_LIKELY(h != &g_empty_heap) ? h : thread_heap_slow();
}

// startup.cpp
void init_options() noexcept;   // read the options once, before the first heap
void install_hooks() noexcept;  // the thread-exit key and the fork handlers, once

// stats.cpp
void collect_stats(vam_stats_t *out) noexcept;
void print_stats(int fd) noexcept;
// VAM_STATS at exit: to stderr, or appended to VAM_STATS=FILE.
void print_stats_at_exit() noexcept;

}  // namespace alloclab::vam
