// huge.cpp — one mapping per huge object, and a small cache of freed ones.
//
// Mapping, first-touch faults and unmapping a 256 KiB..MiB object cost far
// more than using it when a program allocates and frees such buffers in a
// loop (interpreters growing strings and lists, compilers' obstacks). A few
// freed mappings (at most VAM_HUGE_CACHE bytes, pages left resident) are
// kept and handed out again for a request of nearly the same size.
#include "vam/huge.hpp"

#include "layers/os.hpp"
#include "layers/spin_lock.hpp"
#include "vam/check.hpp"
#include "vam/options.hpp"
#include "vam/segment_map.hpp"

namespace alloclab::vam {

namespace {

constexpr int kCacheSlots = 16;

struct Cache {
  SpinLock lock;
  Segment *slot[kCacheSlots] = {};
  // Written under the lock; read without it (a peek) by cache_take: atomic,
  // so the peek is a relaxed load rather than a data race.
  std::atomic<std::size_t> bytes{0};
};

Cache g_cache;  // constant-initialised

// A cached mapping of at least `bytes`, wasting at most a quarter, or nullptr.
Segment *cache_take(std::size_t bytes) noexcept {
  if (g_cache.bytes.load(std::memory_order_relaxed) == 0) return nullptr;  // a peek; the lock decides
  Segment *best = nullptr;
  int best_i = -1;
  g_cache.lock.lock();
  for (int i = 0; i < kCacheSlots; ++i) {
    Segment *s = g_cache.slot[i];
    if (s && s->map_bytes >= bytes && s->map_bytes - bytes <= bytes / 4 &&
        (!best || s->map_bytes < best->map_bytes)) {
      best = s;
      best_i = i;
    }
  }
  if (best) {
    g_cache.slot[best_i] = nullptr;
    g_cache.bytes.store(g_cache.bytes.load(std::memory_order_relaxed) - best->map_bytes,
                        std::memory_order_relaxed);
  }
  g_cache.lock.unlock();
  return best;
}

bool cache_put(Segment *s) noexcept {
  const auto limit = static_cast<std::size_t>(options().huge_cache);
  if (s->map_bytes > limit / 2) return false;
  bool kept = false;
  g_cache.lock.lock();
  const std::size_t cached = g_cache.bytes.load(std::memory_order_relaxed);
  if (cached + s->map_bytes <= limit) {
    for (int i = 0; i < kCacheSlots; ++i) {
      if (!g_cache.slot[i]) {
        g_cache.slot[i] = s;
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
    void *mem = align > kSegmentBytes ? os::map_aligned(bytes, align, kSegmentBytes)
                                      : os::map_aligned(bytes, kSegmentBytes);
    if (!mem) return nullptr;
    s = static_cast<Segment *>(mem);
    if (!segment_map_set(s, true)) {
      os::unmap(mem, bytes);
      return nullptr;
    }
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
  // unmapped faults on the header read instead: a crash, never a corruption.
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
  if (cache_put(s)) return;
  c.cached_pages.fetch_sub(pages, std::memory_order_relaxed);
  segment_map_set(s, false);
  os::unmap(s, bytes);
}

void *huge_resize(Segment *s, void *p, std::size_t n) noexcept {
  const auto offset = static_cast<std::size_t>(static_cast<char *>(p) - reinterpret_cast<char *>(s));
  if (n > (PTRDIFF_MAX >> 1)) return nullptr;
  const std::size_t bytes = os::align_up(offset + n, kPage);
  const std::size_t old_bytes = s->map_bytes;
  if (bytes != old_bytes) {
    // The old range may be released inside the remap and mapped again by
    // another thread at once: forget it first, record where it ends up.
    segment_map_set(s, false);
    void *mem = os::remap(s, old_bytes, bytes, kSegmentBytes);
    if (!mem) {
      segment_map_set(s, true);  // its leaf exists: cannot fail
      return nullptr;
    }
    if (!segment_map_set(static_cast<Segment *>(mem), true))
      corruption("no memory to record a moved huge object", p);
    s = static_cast<Segment *>(mem);
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
