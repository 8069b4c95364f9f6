// startup.cpp — start-up and fork safety: the options are read once, before
// the first heap and without allocating (init_options; options.cpp parses
// them), read again by the constructor once the C library has set up
// `environ`; the thread-exit key and the pthread_atfork handlers are
// installed once (install_hooks); and VAM_STATS prints at exit.
#include <pthread.h>
#include <unistd.h>

#include "layers/os.hpp"
#include "layers/owner_lock.hpp"
#include "vam/api.hpp"
#include "vam/global.hpp"
#include "vam/heap.hpp"
#include "vam/huge.hpp"
#include "vam/options.hpp"
#include "vam/remote.hpp"

namespace alloclab::vam {

namespace {

void fork_prepare() noexcept {
  reclaim_fork_prepare();  // first: a reclaim takes none of the locks below
  g.exit_lock.lock();  // before g.lock: an exiting allocation takes them in this order
  g.lock.lock();
  g.walk_lock.lock();
  huge_fork_prepare();
}
void fork_parent() noexcept {
  huge_fork_parent();
  g.walk_lock.unlock();
  g.lock.unlock();
  g.exit_lock.unlock();
  reclaim_fork_done();
}
void fork_child() noexcept {
  // Only the forking thread lives on; it held no heap's large lock (it was
  // in no large call, and no reclaim held one: prepare waited), and the
  // global lock is ours since prepare. Another thread's heap may keep its
  // large lock held, by a call the fork cut short: a reclaim only tries it.
  huge_fork_child();
  owner_lock_setup();  // the child's address space is a new one
  reclaim_fork_done();
  g.live.store(t_heap != &g_empty_heap ? 1 : 0, std::memory_order_relaxed);
  // The parent's other threads are not the child's: their heaps' thread ids
  // would name no thread here, or another one later.
  for (Heap *h = g.all; h; h = h->all_next) h->tid.store(0, std::memory_order_relaxed);
  if (t_heap != &g_empty_heap) t_heap->tid.store(os::thread_id(), std::memory_order_relaxed);
  g.lock.reset();
  g.exit_lock.reset();
  g.walk_lock.reset();
}

// The geometry options settle once; read again after blocks exist, they can
// no longer change it, and say so rather than be silently ignored.
void settle_layout() noexcept {
  if (layout_settle()) return;
  static const char msg[] =
      "vam: VAM_CLASSES, VAM_HEADERS, VAM_BLOCK_ALLOC and VAM_BLOCK_PAGES came too late (objects were "
      "allocated before the environment could be read); using the defaults\n";
  (void)!::write(2, msg, sizeof msg - 1);
}

}  // namespace

void init_options() noexcept {
  if (g.ready.load(std::memory_order_acquire)) return;
  g.lock.lock();
  if (!g.ready.load(std::memory_order_relaxed)) {
    free_key_init();  // before any heap, so before any free list
    g.env_seen = read_options();
    settle_layout();
    g.ready.store(1, std::memory_order_release);
  }
  g.lock.unlock();
}

// Thread-exit key and fork handlers. pthread_atfork may itself call malloc,
// so this runs after the options are ready, outside the lock, exactly once.
void install_hooks() noexcept {
  int expected = 0;
  if (!g.hooks.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return;
  pthread_key_create(&g.key, thread_done);
  g.hooks.store(2, std::memory_order_release);
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  owner_lock_setup();  // reclaims may claim a heap's large objects from here on
}

namespace {

[[gnu::constructor]] void vam_start() noexcept {
  init_options();
  // A malloc from the dynamic loader can come before the C library has set
  // up `environ`; read the options again now that it has.
  if (!g.env_seen) {
    g.lock.lock();
    g.env_seen = read_options();
    settle_layout();
    g.lock.unlock();
  }
  install_hooks();
}

[[gnu::destructor]] void vam_finish() noexcept {
  if (options().stats) print_stats_at_exit();
}

}  // namespace

}  // namespace alloclab::vam
