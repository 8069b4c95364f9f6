// vam.cpp — the allocator as a whole: thread heaps, start-up, fork safety,
// the entry points with their C contracts, and statistics.
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "alloclab/vam.h"
#include "layers/os.hpp"
#include "layers/spin_lock.hpp"
#include "vam/api.hpp"
#include "vam/check.hpp"
#include "vam/heap.hpp"
#include "vam/huge.hpp"
#include "vam/options.hpp"
#include "vam/segment_map.hpp"

namespace alloclab::vam {

namespace {

// ---- global state: one small lock guards the heap lists only ------------

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

Global g;  // constant-initialised: usable before any constructor runs

}  // namespace

// api.hpp. Its address is in every new thread's TLS image, so a thread's
// first malloc needs no constructor to have run.
constinit Heap g_empty_heap;
__thread Heap *t_heap __attribute__((tls_model("initial-exec"))) = &g_empty_heap;

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

// Set once vam's thread-exit destructor has abandoned this thread's heap: a
// heap adopted after that would never be abandoned again (destructor rounds
// are bounded), so the thread owns none from then on.
__thread bool t_exited __attribute__((tls_model("initial-exec"))) = false;

void fork_prepare() noexcept {
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
}
void fork_child() noexcept {
  // Only the forking thread lives on; it held no heap lock (heaps have
  // none), and the global lock is ours since prepare.
  huge_fork_child();
  g.live.store(t_heap != &g_empty_heap ? 1 : 0, std::memory_order_relaxed);
  g.lock.reset();
  g.exit_lock.reset();
  g.walk_lock.reset();
}

void thread_done(void *arg) noexcept {
  Heap *h = static_cast<Heap *>(arg);
  if (t_heap != h) return;
  t_heap = &g_empty_heap;
  t_free_seg = nullptr;  // a later TLS destructor's free of its objects is a remote one
  t_exited = true;
  g.live.fetch_sub(1, std::memory_order_relaxed);
  const std::int64_t kept =
      heap_abandon(h, idle_limit() - g.abandoned_pages.load(std::memory_order_relaxed));
  h->orphan_frees.store(0, std::memory_order_relaxed);
  h->orphan.store(1, std::memory_order_relaxed);
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

// The geometry options settle once; read again after blocks exist, they can
// no longer change it, and say so rather than be silently ignored.
void settle_layout() noexcept {
  if (layout_settle()) return;
  static const char msg[] =
      "vam: VAM_CLASSES, VAM_HEADERS, VAM_BLOCK_ALLOC and VAM_BLOCK_PAGES came too late (objects were "
      "allocated before the environment could be read); using the defaults\n";
  (void)!::write(2, msg, sizeof msg - 1);
}

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
}

}  // namespace

int live_heaps() noexcept { return g.live.load(std::memory_order_relaxed); }

// Objects freed into the heaps of exited threads wait on those heaps' remote
// lists until a new thread adopts them. Before mapping fresh memory, and
// before reporting statistics, apply those frees: holding the global lock
// makes us the heaps' only user (adoption needs the lock too). Emptied
// blocks and large chunks are then discarded per VAM_DISCARD.
//
// The frees themselves also see to it (orphan_freed): without that, a
// program whose threads exit after allocating while main frees everything
// kept it all resident until some thread next mapped a segment.
namespace {

// With g.lock held. The pages the heap kept at its abandonment go back too,
// once due (heap_sweep_idle). Pages the frees emptied are not kept for a
// next thread the way those are: beyond the ones it kept at its thread's
// exit, an orphan keeps at most VAM_DISCARD_THRESHOLD pages (a lone thread's
// budget let 16 exited threads' heaps hold 16 MiB after main freed their
// objects, where glibc kept under 3), and none once frees into it have
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

namespace {

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
  g.live.fetch_add(1, std::memory_order_relaxed);
  drain_remote(h);
  install_hooks();
  if (g.hooks.load(std::memory_order_acquire) == 2) pthread_setspecific(g.key, h);
  return h;
}

inline Heap *thread_heap() noexcept {
  Heap *h = t_heap;
  return VAM_LIKELY(h != &g_empty_heap) ? h : thread_heap_slow();
}

inline void *fail_nomem() noexcept {
  errno = ENOMEM;
  return nullptr;
}

inline bool is_pow2(std::size_t a) noexcept { return a != 0 && (a & (a - 1)) == 0; }

// A small object in a geometry malloc_impl's inline path does not serve
// (inline_limit 0): VAM_CLASSES=coarse (the class from the table), and
// VAM_HEADERS=on, with its header (the object's usable size, in the 16 bytes
// before it) written, as a DLmalloc-style allocator does. Out of line:
// malloc_impl's default path stays a leaf with no frame.
[[gnu::noinline]] void *small_alloc_header(Heap *h, std::size_t n) noexcept {
  const unsigned c = layout_class(n);
  void *p = small_alloc(h, c);
  if (VAM_LIKELY(p != nullptr) && g_layout.header) static_cast<std::size_t *>(p)[-2] = layout_usable(c);
  return p;
}

void *alloc_in(Heap *h, std::size_t n, std::size_t align) noexcept {
  void *p;
  if (n <= kSmallMax && align == 0) {
    p = g_layout.header ? small_alloc_header(h, n) : small_alloc(h, layout_class(n));
  } else if (n + align <= g_layout.large_max &&
             n + align <= LargeHeap::region_capacity()) {
    p = large_alloc(h, n, align);
  } else {
    p = huge_alloc(n, align);
  }
  return p ? p : fail_nomem();
}

// An allocation by a thread whose heap is already abandoned: from the shared
// exit heap, under its lock. Its frees go to the owners' remote lists, as
// from any thread that owns no heap.
[[gnu::noinline]] void *exiting_alloc(std::size_t n, std::size_t align) noexcept {
  g.exit_lock.lock();
  Heap *h = g.exit_heap.load(std::memory_order_relaxed);
  if (!h) {
    h = new_listed_heap();
    if (h) {
      h->orphan.store(1, std::memory_order_relaxed);  // no thread drains it in a slow path
      g.exit_heap.store(h, std::memory_order_release);
    }
  }
  void *p = h ? alloc_in(h, n, align) : fail_nomem();
  g.exit_lock.unlock();
  return p;
}

[[gnu::noinline]] void *malloc_slow(std::size_t n, std::size_t align) noexcept {
  Heap *h = thread_heap();
  if (VAM_UNLIKELY(!h)) return t_exited ? exiting_alloc(n, align) : fail_nomem();
  return alloc_in(h, n, align);
}

// Aligned allocation for a power-of-two alignment.
void *alloc_aligned(std::size_t align, std::size_t n) noexcept {
  if (align <= 8) return malloc_impl(n);
  if (align == 16) return malloc_impl(n <= 8 ? 16 : n);  // the 8-byte class is only 8-aligned
  if (align > kMaxAlignment) return fail_nomem();
  if (n > PTRDIFF_MAX) return fail_nomem();
  // A page-block class whose size is a multiple of `align`: every object of
  // it is aligned, since blocks start on page boundaries (not so with headers:
  // those objects go to the large heap).
  const std::size_t rounded = n == 0 ? align : (n + align - 1) & ~(align - 1);
  if (rounded <= kSmallMax && g_layout.slot[layout_class(rounded)] % align == 0 && !g_layout.header) {
    Heap *h = thread_heap();
    if (!h) return malloc_slow(n == 0 ? 1 : n, align);  // exiting, or out of memory
    void *p = small_alloc(h, layout_class(rounded));
    return p ? p : fail_nomem();
  }
  return malloc_slow(n == 0 ? 1 : n, align);
}

}  // namespace

// ---- entry points --------------------------------------------------------

void check_failed(const char *what, const char *file, int line) noexcept {
  char buf[512];
  std::size_t n = 0;
  auto put = [&](const char *t) {
    while (*t && n < sizeof buf - 1) buf[n++] = *t++;
  };
  char num[16];
  int k = 0;
  do { num[k++] = char('0' + line % 10); line /= 10; } while (line && k < 15);
  put("vam: internal check failed: ");
  put(what);
  put(" at ");
  put(file);
  put(":");
  while (k && n < sizeof buf - 1) buf[n++] = num[--k];
  put("\n");
  (void)!::write(2, buf, n);
  abort();
}

namespace {
void put_hex(char *buf, std::size_t &n, std::size_t cap, std::uintptr_t v) noexcept {
  char tmp[16];
  int k = 0;
  do { tmp[k++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v && k < 16);
  if (n + 2 < cap) { buf[n++] = '0'; buf[n++] = 'x'; }
  while (k && n < cap) buf[n++] = tmp[--k];
}
}  // namespace

void corruption(const char *what, const void *p) noexcept {
  char buf[256];
  std::size_t n = 0;
  auto put = [&](const char *t) {
    while (*t && n < sizeof buf - 1) buf[n++] = *t++;
  };
  put("vam: ");
  put(what);
  put(": ");
  put_hex(buf, n, sizeof buf - 1, reinterpret_cast<std::uintptr_t>(p));
  put("\n");
  (void)!::write(2, buf, n);
  abort();
}

// A small request in the default geometry that the front block of its class
// could not serve: that block is used up, or there is none, or the thread
// has no heap yet (t_heap is g_empty_heap, whose fronts are all null).
void *malloc_miss(std::size_t n) noexcept {
  Heap *h = t_heap;
  if (VAM_UNLIKELY(h == &g_empty_heap)) return malloc_slow(n, 0);
  return small_alloc_slow(h, size_class(n));
}

// Every request malloc_impl's inline path does not take: a geometry with
// headers or coarse classes (inline_limit 0), large, huge and impossible.
void *malloc_other(std::size_t n) noexcept {
  Heap *h = t_heap;
  if (h != &g_empty_heap && n <= kSmallMax) return small_alloc_header(h, n);
  if (VAM_UNLIKELY(n > PTRDIFF_MAX)) return fail_nomem();
  return malloc_slow(n, 0);
}

// Every free but one into the segment the thread last freed into: the
// segment map says whether vam has a segment at s, then its header says
// who owns it. A block segment of this thread's heap becomes t_free_seg.
// free_impl (api.hpp) jumps here: a remote free (most frees in a
// producer/consumer program) pays the fast path's compare and one jump, as
// when free was a wrapper over free_impl with this inline.
void free_checked(Segment *s, void *p) noexcept {
  if (p == nullptr) return;
  // A pointer libvam never handed out (stack, static, another mapping) has
  // no segment of ours around it: abort before its "header" is read. So
  // does a second free of a huge object whose mapping the first unmapped.
  if (VAM_UNLIKELY(!segment_known(s)))
    corruption("free(): invalid pointer (not from vam, or already freed and unmapped)", p);
  VAM_CHECK(s->magic == kSegmentMagic);
  // No segment's owner is g_empty_heap, so a thread with no heap (or an
  // exiting one) frees remotely.
  Heap *h = t_heap;
  if (VAM_LIKELY(s->kind <= SegKind::medium)) {
    if (VAM_LIKELY(s->owner == h)) {
      t_free_seg = s;
      small_free_local(s, p);
    } else {
      remote_free(s->owner, p);
    }
  } else if (s->kind == SegKind::large) {
    if (s->owner == h) large_free_local(h, p);
    else remote_free(s->owner, p);
  } else {
    huge_free(s, p);
  }
}

void *calloc_impl(std::size_t n, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(n, size, &total)) return fail_nomem();
  void *p = malloc_impl(total);
  if (p) {
    Segment *s = object_segment(p);
    if (s->kind != SegKind::huge || !s->zeroed) memset(p, 0, total);  // fresh mappings are zero
  }
  return p;
}

std::size_t usable_size_impl(const void *p) noexcept {
  if (!p) return 0;
  Segment *s = object_segment(p);
  switch (s->kind) {
    case SegKind::small:
    case SegKind::medium: return block_of(s, p)->size - g_layout.header;
    case SegKind::large: return LargeHeap::usable(p);
    default: return huge_usable(s, p);
  }
}

void *realloc_impl(void *p, std::size_t n) noexcept {
  if (!p) return malloc_impl(n);
  if (VAM_UNLIKELY(!segment_known(object_segment(p)))) corruption("realloc(): invalid pointer (not from vam, or already freed and unmapped)", p);
  if (n == 0) {  // glibc: realloc(p, 0) frees p and returns NULL
    free_impl(p);
    return nullptr;
  }
  const std::size_t have = usable_size_impl(p);
  // Keep the block when the new size fits and does not waste over half of it.
  if (n <= have && (n > have / 2 || have <= 16)) return p;
  // A large object of this thread's heap grows into a free neighbour, or
  // gives its tail back, in place.
  Segment *s = object_segment(p);
  if (s->kind == SegKind::large && s->owner == t_heap && n > kSmallMax &&
      n <= static_cast<std::size_t>(options().large_max) && t_heap->large.resize(p, n))
    return p;
  // A huge object that stays huge moves its pages, not its bytes.
  if (s->kind == SegKind::huge && n > static_cast<std::size_t>(options().large_max))
    if (void *q = huge_resize(s, p, n)) return q;
  void *q = malloc_impl(n);
  if (!q) return nullptr;  // errno is ENOMEM; p stays valid
  memcpy(q, p, n < have ? n : have);
  free_impl(p);
  return q;
}

void *reallocarray_impl(void *p, std::size_t n, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(n, size, &total)) return fail_nomem();
  return realloc_impl(p, total);
}

void *memalign_impl(std::size_t alignment, std::size_t n) noexcept {
  // glibc: a non-power-of-two alignment is rounded up to the next power.
  if (!is_pow2(alignment)) {
    if (alignment > (SIZE_MAX >> 1) + 1) return fail_nomem();
    std::size_t a = 1;
    while (a < alignment) a <<= 1;
    alignment = a;
  }
  return alloc_aligned(alignment, n);
}

void *aligned_alloc_impl(std::size_t alignment, std::size_t n) noexcept {
  // C17 (DR 460): any size; the alignment must be one we support — a power of two.
  if (!is_pow2(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return alloc_aligned(alignment, n);
}

int posix_memalign_impl(void **out, std::size_t alignment, std::size_t n) noexcept {
  if (!is_pow2(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
  const int saved = errno;
  void *p = alloc_aligned(alignment, n);
  errno = saved;
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void *valloc_impl(std::size_t n) noexcept { return alloc_aligned(kPage, n); }

void *pvalloc_impl(std::size_t n) noexcept {
  std::size_t rounded = os::align_up(n == 0 ? 1 : n, kPage);
  if (rounded == 0) return fail_nomem();
  return alloc_aligned(kPage, rounded);
}

void *aligned_or_null(std::size_t alignment, std::size_t n) noexcept {
  return is_pow2(alignment) ? alloc_aligned(alignment, n) : nullptr;
}

// ---- statistics ----------------------------------------------------------

namespace {

std::size_t pos(std::int64_t v) noexcept { return v > 0 ? static_cast<std::size_t>(v) : 0; }

// Live objects per class, from the block records: the fast paths keep only
// each block's count, and a per-class counter beside it would cost every
// malloc and free a dependent read-modify-write.
void count_block_objects(Heap *h, std::int64_t *class_live) noexcept {
  for (Segment *s = h->block_segs.load(std::memory_order_acquire); s; s = s->next) {
    const std::uint32_t carved = load_relaxed(s->next_block);
    Block *blocks = s->blocks();
    for (std::uint32_t i = s->first_block(); i < carved; ++i) {
      Block &b = blocks[i];
      const BlockState st = load_relaxed(b.state);
      if (st != BlockState::front && st != BlockState::waiting && st != BlockState::full) continue;
      const std::uint16_t cls = load_relaxed(b.cls);
      if (cls < kNumClasses) class_live[cls] += load_relaxed(b.used);
    }
  }
}

void collect_stats(vam_stats_t *out) noexcept {
  reclaim_abandoned();
  memset(out, 0, sizeof *out);
  std::int64_t class_live[kNumClasses] = {};
  std::int64_t class_blocks[kNumClasses] = {};
  std::int64_t large_bytes = 0, large_objs = 0, pages = 0, discarded = 0, calls = 0, segs = 0, hsegs = 0;
  g.lock.lock();
  g.walk_lock.lock();
  for (Heap *h = g.all; h; h = h->all_next) {
    const HeapCounters &c = h->counters;
    for (unsigned k = 0; k < kNumClasses; ++k) class_blocks[k] += c.class_blocks[k].get();
    count_block_objects(h, class_live);
    large_bytes += c.large_live_bytes.get();
    large_objs += c.large_live_objects.get();
    pages += c.pages_in_use.get();
    discarded += c.pages_discarded.get();
    calls += c.discard_calls.get();
    segs += c.segments.get();
    hsegs += c.hugepage_segments.get();
  }
  out->heaps = g.heaps;
  out->abandoned_heaps = g.abandoned_count;
  g.walk_lock.unlock();
  g.lock.unlock();
  const HugeCounters &hc = huge_counters();
  for (unsigned k = 0; k < kNumClasses; ++k) {
    out->class_size[k] = k < g_layout.classes ? layout_usable(k) : 0;
    out->class_live[k] = pos(class_live[k]);
    out->class_blocks[k] = pos(class_blocks[k]);
    out->small_live_bytes += out->class_live[k] * out->class_size[k];
    out->live_objects += out->class_live[k];
  }
  out->large_live_bytes = pos(large_bytes);
  out->huge_live_bytes = pos(hc.live_bytes.load(std::memory_order_relaxed));
  out->live_objects += pos(large_objs) + pos(hc.live_objects.load(std::memory_order_relaxed));
  out->live_bytes = out->small_live_bytes + out->large_live_bytes + out->huge_live_bytes;
  out->pages_in_use = pos(pages) + pos(hc.pages.load(std::memory_order_relaxed)) +
                      pos(hc.cached_pages.load(std::memory_order_relaxed));
  out->pages_discarded = pos(discarded);
  out->discard_calls = pos(calls);
  out->huge_remaps = pos(hc.resizes.load(std::memory_order_relaxed));
  out->segments = pos(segs);
  out->hugepage_segments = pos(hsegs);
  const std::size_t live_pages = (out->live_bytes + kPage - 1) / kPage;
  out->fragmentation = live_pages ? double(out->pages_in_use) / double(live_pages) : 0.0;
}

// A tiny writer: no stdio, no allocation.
struct Out {
  char buf[8192];
  std::size_t n = 0;
  void str(const char *s) noexcept {
    while (*s && n < sizeof buf) buf[n++] = *s++;
  }
  void num(std::size_t v) noexcept {
    char tmp[24];
    int i = 0;
    do { tmp[i++] = char('0' + v % 10); v /= 10; } while (v);
    while (i && n < sizeof buf) buf[n++] = tmp[--i];
  }
  void kv(const char *k, std::size_t v) noexcept { str(k); num(v); str("\n"); }
  void flush(int fd) noexcept {
    std::size_t off = 0;
    while (off < n) {
      ssize_t w = ::write(fd, buf + off, n - off);
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
    }
    n = 0;
  }
};

}  // namespace

void print_stats(int fd) noexcept {
  vam_stats_t s;
  collect_stats(&s);
  Out o;
  // Which process: several under one VAM_STATS=1 write to the same stderr.
  // program_invocation_short_name is set by the C library before main.
  o.str("vam: statistics pid ");
  o.num(static_cast<std::size_t>(::getpid()));
  o.str(" program ");
  o.str(program_invocation_short_name ? program_invocation_short_name : "?");
  o.str("\n");
  o.kv("  live bytes        ", s.live_bytes);
  o.kv("    small           ", s.small_live_bytes);
  o.kv("    large           ", s.large_live_bytes);
  o.kv("    huge            ", s.huge_live_bytes);
  o.kv("  live objects      ", s.live_objects);
  o.kv("  pages in use      ", s.pages_in_use);
  o.kv("  pages discarded   ", s.pages_discarded);
  o.kv("  discard calls     ", s.discard_calls);
  o.kv("  huge remaps       ", s.huge_remaps);
  o.kv("  segments          ", s.segments);
  o.kv("    huge pages      ", s.hugepage_segments);
  o.kv("  heaps             ", s.heaps);
  o.kv("  abandoned heaps   ", s.abandoned_heaps);
  const std::size_t f100 = static_cast<std::size_t>(s.fragmentation * 100.0 + 0.5);
  o.str("  fragmentation     ");
  o.num(f100 / 100);
  o.str(".");
  if (f100 % 100 < 10) o.str("0");
  o.num(f100 % 100);
  o.str("  (pages in use / live pages)\n  class  size  live  blocks\n");
  for (unsigned k = 0; k < kNumClasses; ++k) {
    if (!s.class_live[k] && !s.class_blocks[k]) continue;
    o.str("  ");
    o.num(k);
    o.str("  ");
    o.num(s.class_size[k]);
    o.str("  ");
    o.num(s.class_live[k]);
    o.str("  ");
    o.num(s.class_blocks[k]);
    o.str("\n");
  }
  o.flush(fd);
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
  if (options().stats) print_stats(2);
}

}  // namespace

}  // namespace alloclab::vam

// ---- the prefixed C API (every build) -------------------------------------

namespace v = alloclab::vam;

extern "C" {
void *vam_malloc(size_t n) { return v::malloc_impl(n); }
void vam_free(void *p) { v::free_impl(p); }
void *vam_calloc(size_t n, size_t size) { return v::calloc_impl(n, size); }
void *vam_realloc(void *p, size_t n) { return v::realloc_impl(p, n); }
void *vam_reallocarray(void *p, size_t n, size_t size) { return v::reallocarray_impl(p, n, size); }
void *vam_memalign(size_t a, size_t n) { return v::memalign_impl(a, n); }
void *vam_aligned_alloc(size_t a, size_t n) { return v::aligned_alloc_impl(a, n); }
int vam_posix_memalign(void **out, size_t a, size_t n) { return v::posix_memalign_impl(out, a, n); }
void *vam_valloc(size_t n) { return v::valloc_impl(n); }
void *vam_pvalloc(size_t n) { return v::pvalloc_impl(n); }
size_t vam_usable_size(const void *p) { return v::usable_size_impl(p); }
void vam_free_sized(void *p, size_t) { v::free_impl(p); }
void vam_free_aligned_sized(void *p, size_t, size_t) { v::free_impl(p); }
void vam_stats(struct vam_stats_t *out) { v::collect_stats(out); }
void vam_print_stats(int fd) { v::print_stats(fd); }
void vam_collect(void) {
  if (v::Heap *h = v::t_heap; h != &v::g_empty_heap) v::heap_collect(h);
  v::huge_cache_expire(true);
}
}
