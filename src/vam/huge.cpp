// huge.cpp — one mapping per huge object, and a cache of freed ones.
//
// Mapping, first-touch faults and unmapping a 256 KiB..MiB object cost far
// more than using it when a program allocates and frees such buffers in a
// loop (interpreters growing strings and lists, compilers' obstacks, server
// threads' request buffers). Freed mappings (pages left resident) are kept,
// VAM_HUGE_CACHE bytes for each thread that owns a heap, and handed out
// again for a request of any size they can be resized to in place. Those
// that wait longer than VAM_DISCARD_DELAY_MS are unmapped; so is the whole
// cache when the address space runs out.
#include "vam/huge.hpp"

#include <time.h>

#include "layers/os.hpp"
#include "layers/spin_lock.hpp"
#include "vam/check.hpp"
#include "vam/heap_hooks.hpp"
#include "vam/options.hpp"
#include "vam/segment_source.hpp"

namespace alloclab::vam {

namespace {

constexpr int kCacheSlots = 64;
constexpr int kBudgetHeaps = 8;

struct Cache {
  SpinLock lock;
  Segment *slot[kCacheSlots] = {};
  std::int64_t freed_ms[kCacheSlots] = {};  // when each slot's mapping was freed
  // Written under the lock; read without it (a peek) by cache_take: atomic,
  // so the peek is a relaxed load rather than a data race.
  std::atomic<std::size_t> bytes{0};
};

Cache g_cache;  // constant-initialised

std::int64_t now_ms() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void cache_remove_locked(int i) noexcept {
  g_cache.bytes.store(g_cache.bytes.load(std::memory_order_relaxed) - g_cache.slot[i]->map_bytes,
                      std::memory_order_relaxed);
  g_cache.slot[i] = nullptr;
}

// Unmap a mapping that left the cache (its pages were counted as cached).
void release(Segment *s) noexcept {
  const std::size_t bytes = s->map_bytes;
  huge_counters().cached_pages.fetch_sub(static_cast<std::int64_t>(bytes / kPage), std::memory_order_relaxed);
  g_segment_source.put_segment(s, bytes);
}

// Mappings that sat in the cache for VAM_DISCARD_DELAY_MS or more (all of
// them when `all`) leave it; they are unmapped outside the lock.
bool cache_put(Segment *s) noexcept;

// The cache holds up to VAM_HUGE_CACHE bytes for each thread that owns a heap
// (for up to kBudgetHeaps threads): threads free huge objects at the same
// time, and one thread's share would be taken by the others' frees.
std::size_t cache_limit() noexcept {
  const int heaps = live_heaps();
  const std::size_t n = heaps < 1 ? 1 : heaps > kBudgetHeaps ? kBudgetHeaps : static_cast<std::size_t>(heaps);
  return static_cast<std::size_t>(options().huge_cache) * n;
}

void cache_expire(bool all) noexcept {
  if (g_cache.bytes.load(std::memory_order_relaxed) == 0) return;
  const std::int64_t now = all ? 0 : now_ms();
  const std::int64_t delay = options().discard_delay_ms;
  Segment *old[kCacheSlots];
  int n = 0;
  g_cache.lock.lock();
  for (int i = 0; i < kCacheSlots; ++i) {
    if (g_cache.slot[i] && (all || now - g_cache.freed_ms[i] >= delay)) {
      old[n++] = g_cache.slot[i];
      cache_remove_locked(i);
    }
  }
  g_cache.lock.unlock();
  for (int i = 0; i < n; ++i) release(old[i]);
}

// A cached mapping for `bytes`, or nullptr. Mappings freed by one request
// size rarely match the next one exactly, so the cache does not ask for a
// near match: the smallest mapping that holds `bytes` is handed out as it
// is when it is at most twice the request, and is otherwise shrunk in
// place (its tail goes back); failing any big enough, the largest smaller
// one is grown in place when the address space after it is free. Either is
// one mremap against an mmap (plus the trimming munmaps of an aligned
// mapping), first-touch faults on every page and an munmap later.
//
// Why twice and not less: a shrink gives back pages the last user touched,
// and the next request a little bigger grows the mapping again onto fresh
// pages that fault in. With mstress' sizes (256 KiB..1 MiB) and an as-is
// limit of 1.5 times the request, half of the 2,400 mremaps of a run were
// such shrinks and the other half the grows after them. Pages of the
// mapping past the request that the last user never touched cost nothing.
Segment *cache_take(std::size_t bytes) noexcept {
  if (g_cache.bytes.load(std::memory_order_relaxed) == 0) return nullptr;  // a peek; the lock decides
  int fit = -1, below = -1;
  // Grown only to a size the cache would keep.
  const bool grow_ok = bytes <= static_cast<std::size_t>(options().huge_cache) / 2;
  g_cache.lock.lock();
  for (int i = 0; i < kCacheSlots; ++i) {
    Segment *s = g_cache.slot[i];
    if (!s) continue;
    if (s->map_bytes >= bytes) {
      if (fit < 0 || s->map_bytes < g_cache.slot[fit]->map_bytes) fit = i;
    } else if (grow_ok && (below < 0 || s->map_bytes > g_cache.slot[below]->map_bytes)) {
      below = i;
    }
  }
  const int pick = fit >= 0 ? fit : below;
  Segment *s = pick >= 0 ? g_cache.slot[pick] : nullptr;
  if (s) cache_remove_locked(pick);
  g_cache.lock.unlock();
  if (!s) return nullptr;
  HugeCounters &c = huge_counters();
  c.cache_hits.fetch_add(1, std::memory_order_relaxed);
  if (s->map_bytes >= bytes && s->map_bytes - bytes <= bytes) return s;
  // Resize in place (no MREMAP_MAYMOVE: the mapping keeps its aligned start).
  const std::size_t old_bytes = s->map_bytes;
  if (!g_segment_source.resize_segment(s, old_bytes, bytes)) {
    // Only growing can fail: back into the cache, or unmapped if it is full.
    c.cache_hits.fetch_sub(1, std::memory_order_relaxed);
    if (!cache_put(s)) release(s);
    return nullptr;
  }
  s->map_bytes = bytes;
  c.cached_pages.fetch_add((static_cast<std::int64_t>(bytes) - static_cast<std::int64_t>(old_bytes)) /
                               static_cast<std::int64_t>(kPage),
                           std::memory_order_relaxed);
  c.cache_resizes.fetch_add(1, std::memory_order_relaxed);
  return s;
}

bool cache_put(Segment *s) noexcept {
  if (s->map_bytes > static_cast<std::size_t>(options().huge_cache) / 2) return false;
  const std::size_t limit = cache_limit();
  bool kept = false;
  const std::int64_t now = now_ms();
  g_cache.lock.lock();
  const std::size_t cached = g_cache.bytes.load(std::memory_order_relaxed);
  if (cached + s->map_bytes <= limit) {
    for (int i = 0; i < kCacheSlots; ++i) {
      if (!g_cache.slot[i]) {
        g_cache.slot[i] = s;
        g_cache.freed_ms[i] = now;
        g_cache.bytes.store(cached + s->map_bytes, std::memory_order_relaxed);
        kept = true;
        break;
      }
    }
  }
  g_cache.lock.unlock();
  return kept;
}

}  // namespace

void huge_cache_expire(bool all) noexcept { cache_expire(all); }

HugeCounters &huge_counters() noexcept {
  static HugeCounters c;
  return c;
}

void huge_fork_prepare() noexcept { g_cache.lock.lock(); }
void huge_fork_parent() noexcept { g_cache.lock.unlock(); }
void huge_fork_child() noexcept { g_cache.lock.reset(); }

void *huge_alloc(std::size_t n, std::size_t align) noexcept {
  // Alignments of a segment or more: the object one segment past the header.
  const bool over = align >= kSegmentBytes;
  const std::size_t offset = over ? kSegmentBytes : align > kHugeOffset ? align : kHugeOffset;
  if (align > kMaxAlignment || n > (PTRDIFF_MAX >> 1)) return nullptr;
  const std::size_t bytes = os::align_up(offset + n, kPage);
  if (bytes == 0) return nullptr;
  HugeCounters &c = huge_counters();
  // Cached mappings are only known to be segment-aligned.
  Segment *s = align <= kSegmentBytes ? cache_take(bytes) : nullptr;
  if (s) {
    s->zeroed = 0;
    c.cached_pages.fetch_sub(static_cast<std::int64_t>(s->map_bytes / kPage), std::memory_order_relaxed);
  } else {
    auto map = [&] {
      return align > kSegmentBytes ? g_segment_source.get_segment_at(bytes, align, kSegmentBytes)
                                   : g_segment_source.get_segment(bytes);
    };
    s = map();
    if (!s && g_cache.bytes.load(std::memory_order_relaxed) != 0) {
      cache_expire(true);  // out of address space (ulimit -v): the cache's goes first
      s = map();
    }
    if (!s) return nullptr;
    s->zeroed = 1;
    s->magic = kSegmentMagic;
    s->kind = SegKind::huge;
    s->owner = nullptr;
    s->map_bytes = bytes;
  }
  s->usable = s->map_bytes - offset;
  c.live_bytes.fetch_add(static_cast<std::int64_t>(s->usable), std::memory_order_relaxed);
  c.live_objects.fetch_add(1, std::memory_order_relaxed);
  c.pages.fetch_add(static_cast<std::int64_t>(s->map_bytes / kPage), std::memory_order_relaxed);
  return reinterpret_cast<char *>(s) + offset;
}

void huge_free(Segment *s, void *p) noexcept {
  // A live huge object has usable > 0 and starts map_bytes - usable past its
  // header; a freed one (cached) has usable == 0. A freed mapping that was
  // unmapped left the segment map first, so free_impl stopped before here.
  const std::size_t usable = s->usable;
  if (VAM_UNLIKELY(usable == 0)) corruption("free(): double free detected (huge object)", p);
  if (VAM_UNLIKELY(static_cast<char *>(p) != reinterpret_cast<char *>(s) + (s->map_bytes - usable)))
    corruption("free(): invalid pointer (inside a huge object)", p);
  s->usable = 0;
  // Read before cache_put: once in the cache, another thread may take the
  // mapping, resize, move or unmap it.
  const std::size_t bytes = s->map_bytes;
  const auto pages = static_cast<std::int64_t>(bytes / kPage);
  HugeCounters &c = huge_counters();
  c.live_bytes.fetch_sub(static_cast<std::int64_t>(usable), std::memory_order_relaxed);
  c.live_objects.fetch_sub(1, std::memory_order_relaxed);
  c.pages.fetch_sub(pages, std::memory_order_relaxed);
  c.cached_pages.fetch_add(pages, std::memory_order_relaxed);  // before another thread's take subtracts it
  if (!cache_put(s)) {
    c.cached_pages.fetch_sub(pages, std::memory_order_relaxed);
    g_segment_source.put_segment(s, bytes);
  }
  cache_expire(false);
}

void *huge_resize(Segment *s, void *p, std::size_t n) noexcept {
  const auto offset = static_cast<std::size_t>(static_cast<char *>(p) - reinterpret_cast<char *>(s));
  if (n > (PTRDIFF_MAX >> 1)) return nullptr;
  const std::size_t bytes = os::align_up(offset + n, kPage);
  const std::size_t old_bytes = s->map_bytes;
  if (bytes != old_bytes) {
    Segment *moved = g_segment_source.move_segment(s, old_bytes, bytes);
    if (!moved) return nullptr;
    s = moved;
    s->map_bytes = bytes;
  }
  const std::size_t old_usable = s->usable;
  s->usable = bytes - offset;
  HugeCounters &c = huge_counters();
  c.live_bytes.fetch_add(static_cast<std::int64_t>(s->usable) - static_cast<std::int64_t>(old_usable),
                         std::memory_order_relaxed);
  c.pages.fetch_add((static_cast<std::int64_t>(bytes) - static_cast<std::int64_t>(old_bytes)) /
                        static_cast<std::int64_t>(kPage),
                    std::memory_order_relaxed);
  c.resizes.fetch_add(1, std::memory_order_relaxed);
  return reinterpret_cast<char *>(s) + offset;
}

}  // namespace alloclab::vam
