// threads.cpp — thread heaps: a thread's heap is made or adopted on its first
// malloc (thread_heap_slow), abandoned whole at its exit (thread_done), and
// the frees other threads make into abandoned ("orphan") heaps are applied
// in batches or once due (orphan_freed, orphan_tick_slow), so their pages go
// back with no thread left to own them. Also the global state itself (g),
// the thread's heap pointer and the shared empty heap (api.hpp).
#include <pthread.h>
#include <time.h>

#include <atomic>

#include "layers/os.hpp"
#include "vam/api.hpp"
#include "vam/free_cache.hpp"
#include "vam/global.hpp"
#include "vam/heap.hpp"
#include "vam/options.hpp"
#include "vam/remote.hpp"

namespace alloclab::vam {

Global g;  // constant-initialised: usable before any constructor runs

// heap.hpp, FrontSlot: every class entry's front when it has no block.
constinit Block g_no_front{};

// api.hpp. Its address is in every new thread's TLS image, so a thread's
// first malloc needs no constructor to have run.
constinit Heap g_empty_heap;
__thread Heap *t_heap __attribute__((tls_model("initial-exec"))) = &g_empty_heap;
// Set once vam's thread-exit destructor has abandoned this thread's heap: a
// heap adopted after that would never be abandoned again (destructor rounds
// are bounded), so the thread owns none from then on.
__thread bool t_exited __attribute__((tls_model("initial-exec"))) = false;

namespace {

std::int64_t clock_ms() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Work waiting on orphans: frees not applied yet, or empty pages kept. Set
// (from 0) by an orphan free and by a thread exit that kept pages; cleared
// when a reclaim begins, and set again at its end if pages are still kept.
void note_orphan_work() noexcept {
  if (g_orphan_work_ms.load(std::memory_order_relaxed) == 0)
    g_orphan_work_ms.store(clock_ms() | 1, std::memory_order_relaxed);
}

}  // namespace

void thread_done(void *arg) noexcept {
  Heap *h = static_cast<Heap *>(arg);
  // Its batched remote frees first: after this, every free is pushed alone.
  remote_flush_all();
  t_remote.on = false;
  t_remote.decided = true;
  if (t_heap != h || h == &g_empty_heap) return;  // no heap: registered only for the batches
  t_heap = &g_empty_heap;
  t_free_seg = kNoFreeSegs;  // a later TLS destructor's free of its objects is a remote one
  t_exited = true;
  g.live.fetch_sub(1, std::memory_order_relaxed);
  const std::int64_t kept =
      heap_abandon(h, idle_limit() - g.abandoned_pages.load(std::memory_order_relaxed));
  h->orphan_frees.store(0, std::memory_order_relaxed);
  h->orphan.store(1, std::memory_order_relaxed);
  h->tid.store(0, std::memory_order_relaxed);
  g.lock.lock();
  h->kept_pages = kept;
  h->exit_kept = kept;
  g.abandoned_pages.store(g.abandoned_pages.load(std::memory_order_relaxed) + kept, std::memory_order_relaxed);
  h->abandoned_next = g.abandoned.load(std::memory_order_relaxed);
  g.abandoned.store(h, std::memory_order_relaxed);
  ++g.abandoned_count;
  g.lock.unlock();
  if (kept > 0) note_orphan_work();
}

// A thread that only frees has no heap, so nothing would send its batches at
// its exit: the thread-exit key gets the empty heap as its value, which
// thread_done takes for "batches only". One try per thread.
bool remote_batching_start() noexcept {
  t_remote.decided = true;
  if (t_exited || t_heap != &g_empty_heap || g.hooks.load(std::memory_order_acquire) != 2) return false;
  t_remote.on = pthread_setspecific(g.key, &g_empty_heap) == 0;
  return t_remote.on;
}

int live_heaps() noexcept { return g.live.load(std::memory_order_relaxed); }

// Objects freed into the heaps of exited threads wait on those heaps' remote
// lists until a new thread adopts them. Before mapping fresh memory, and
// before reporting statistics, apply those frees: holding the global lock
// makes us the heaps' only user (adoption needs the lock too). Emptied
// blocks and large chunks are then discarded per VAM_DISCARD.
//
// The frees themselves also see to it (orphan_freed), for a program whose
// threads exit after allocating while main frees everything and maps
// nothing more.
namespace {

// With g.lock held. The pages the heap kept at its abandonment go back too,
// once due (heap_sweep_idle). Pages the frees emptied are not kept for a
// next thread the way those are: beyond the ones it kept at its thread's
// exit, an orphan keeps at most VAM_DISCARD_THRESHOLD pages, not a lone
// thread's budget (docs/vam.md, "Threads"), and none once frees into it have
// emptied it: they are over, and it is collected at once. (A heap that was
// empty at its thread's exit keeps its pages for the next thread.)
void apply_orphan_frees(Heap *h) noexcept {
  h->orphan_frees.store(0, std::memory_order_relaxed);
  const bool freed = h->remote.load(std::memory_order_relaxed) != nullptr;
  if (freed) drain_remote(h);
  const std::int64_t others = g.abandoned_pages.load(std::memory_order_relaxed) - h->kept_pages;
  std::int64_t room = idle_limit() - others;
  if (room > h->exit_kept + options().discard_threshold) room = h->exit_kept + options().discard_threshold;
  if (freed && heap_holds_nothing(h)) room = 0;
  h->kept_pages = heap_sweep_idle(h, room);
  g.abandoned_pages.store(others + h->kept_pages, std::memory_order_relaxed);
}

// With g.lock held.
void reclaim_locked() noexcept {
  g_orphan_work_ms.store(0, std::memory_order_relaxed);
  for (Heap *h = g.abandoned.load(std::memory_order_relaxed); h; h = h->abandoned_next)
    apply_orphan_frees(h);
  // The exit heap, unless an exiting thread is allocating from it right now.
  Heap *x = g.exit_heap.load(std::memory_order_acquire);
  if (x && x->remote.load(std::memory_order_relaxed) != nullptr && g.exit_lock.try_lock()) {
    apply_orphan_frees(x);
    g.exit_lock.unlock();
  }
  if (g.abandoned_pages.load(std::memory_order_relaxed) > 0) note_orphan_work();
}

}  // namespace

void reclaim_abandoned() noexcept {
  if (g.abandoned.load(std::memory_order_relaxed) == nullptr &&
      g.exit_heap.load(std::memory_order_relaxed) == nullptr)
    return;
  g.lock.lock();
  reclaim_locked();
  g.lock.unlock();
}

// Every kOrphanBatch-th free into an orphan heap applies the frees waiting
// on all of them, so their pages go back (and their segments, once empty)
// within that many frees, whatever the other threads do. If another thread
// holds the lock, the count stays up and the next such free tries again.
constexpr std::uint32_t kOrphanBatch = 256;

void orphan_freed(Heap *h) noexcept {
  if (h->orphan_frees.fetch_add(1, std::memory_order_relaxed) + 1 < kOrphanBatch) {
    note_orphan_work();
    return;
  }
  if (!g.lock.try_lock()) return;
  reclaim_locked();
  g.lock.unlock();
}

// The last frees of a batch (fewer than kOrphanBatch) and the pages the
// orphans keep would wait for the next orphan free, which may never come:
// any heap's slow path (a block used up, a block emptied) also applies them
// once they have waited VAM_DISCARD_DELAY_MS. One relaxed load when nothing
// waits.
std::atomic<std::int64_t> g_orphan_work_ms{0};

void orphan_tick_slow(std::int64_t since) noexcept {
  if (clock_ms() - since < options().discard_delay_ms) return;
  if (!g.lock.try_lock()) return;
  reclaim_locked();
  g.lock.unlock();
}

void segment_walk_lock() noexcept { g.walk_lock.lock(); }
void segment_walk_unlock() noexcept { g.walk_lock.unlock(); }

Heap *new_listed_heap() noexcept {
  Heap *h = heap_create();
  if (!h) return nullptr;
  g.lock.lock();
  h->all_next = g.all;
  g.all = h;
  ++g.heaps;
  g.lock.unlock();
  return h;
}

// nullptr: out of memory, or the thread is exiting (t_exited).
[[gnu::noinline]] Heap *thread_heap_slow() noexcept {
  if (t_exited) return nullptr;
  init_options();
  g.lock.lock();
  Heap *h = g.abandoned.load(std::memory_order_relaxed);
  if (h) {
    g.abandoned.store(h->abandoned_next, std::memory_order_relaxed);
    h->abandoned_next = nullptr;
    --g.abandoned_count;
    g.abandoned_pages.store(g.abandoned_pages.load(std::memory_order_relaxed) - h->kept_pages,
                            std::memory_order_relaxed);
    h->kept_pages = 0;
    h->orphan.store(0, std::memory_order_relaxed);
  }
  g.lock.unlock();
  if (!h) {
    h = new_listed_heap();
    if (!h) return nullptr;
  }
  t_heap = h;
  h->tid.store(os::thread_id(), std::memory_order_relaxed);
  g.live.fetch_add(1, std::memory_order_relaxed);
  drain_remote(h);
  // The frees just drained were sent to the thread before: this one has not
  // worked yet, and a reclaim need not wait for it (remote_reclaim.cpp).
  h->drained_ms.store(0, std::memory_order_relaxed);
  install_hooks();
  t_remote.on = g.hooks.load(std::memory_order_acquire) == 2 && pthread_setspecific(g.key, h) == 0;
  t_remote.decided = true;
  return h;
}

}  // namespace alloclab::vam
