// huge.cpp — one mapping per huge object, and a cache of freed ones.
//
// Mapping, first-touch faults and unmapping a 256 KiB..MiB object cost far
// more than using it when a program allocates and frees such buffers in a
// loop (interpreters growing strings and lists, compilers' obstacks, server
// threads' request buffers). Freed mappings (pages left resident) are kept,
// VAM_HUGE_CACHE bytes for each thread that owns a heap, and handed out
// again for a request of any size they can be split or grown to in place. Those
// that wait longer than VAM_DISCARD_DELAY_MS are unmapped; so is the whole
// cache when the address space runs out.
//
// The cache is the layer the reaps' large objects use too:
//
//   HugeCache = MappingCache<..., VamHugePolicy>   freed mappings, reused
//                                                  across sizes (mapping_cache.hpp)
//                └ SegmentSource                  recorded in the segment map,
//                                                  4 MiB aligned (segment_source.hpp)
//
// What is vam's own stays here: the Segment header at the start of each
// mapping, the object's offset behind it, the usable size, the checks that
// turn a double free or an interior pointer into an abort, and the
// statistics (HugeCounters); the policy reads the VAM_* options.
#include "vam/huge.hpp"

#include <errno.h>
#include <time.h>

#include <atomic>

#include "layers/mapping_cache.hpp"
#include "layers/os.hpp"
#include "vam/check.hpp"
#include "vam/clock.hpp"
#include "vam/heap.hpp"
#include "vam/heap_hooks.hpp"
#include "vam/options.hpp"
#include "vam/segment_source.hpp"

namespace alloclab::vam {

namespace {

// What the cache keeps, read from the options at each use (the options are
// read once, at start-up, before any huge object exists).
//
// The largest mapping kept follows the program's demand. It starts at half
// of VAM_HUGE_CACHE; a mapping freed above it is refused (unmapped) and
// noted, and when a huge request then misses the cache within
// VAM_DISCARD_DELAY_MS, the program is seen to free and map buffers of that
// size in a loop, where the refused mapping would have served: the largest
// kept grows to cover both (never above kKeepCeiling), and the byte budget
// to twice that. Buffers of 5..25 MiB replaced at random took an mmap, a
// fault per page and an munmap each (docs/vam.md, "Huge objects"). It never
// shrinks back, but what is kept still goes back after the delay.
struct VamHugePolicy {
  static constexpr int kSlots = 64;
  static constexpr int kBudgetHeaps = 8;
  static constexpr std::size_t kKeepCeiling = std::size_t{32} << 20;

  // The budget: base() (VAM_HUGE_CACHE for each thread that owns a heap),
  // at least twice the largest mapping kept, and at least twice the huge
  // bytes the program had live at their recent peak (recent: within
  // VAM_DISCARD_DELAY_MS). A program that replaces buffers of changing sizes
  // frees and maps the same bytes over and over; with only a few mappings
  // cached, the one that fits best is seldom within twice the request, and
  // each buffer cost a resize (random buffers of 0.25..8 MiB, four live:
  // 5,700 mremaps in 10,000 replacements; holding the recent peak, 4,600;
  // twice it, 250). The cost: for up to the delay after a peak, freed
  // mappings (and the pages their last users touched) stay resident up to
  // twice that peak, as peers keep freed spans until they purge them; they
  // go back once they have waited the delay.
  static std::size_t base() noexcept {
    const int heaps = live_heaps();
    const std::size_t n = heaps < 1 ? 1 : heaps > kBudgetHeaps ? kBudgetHeaps : static_cast<std::size_t>(heaps);
    return static_cast<std::size_t>(options().huge_cache) * n;
  }
  static std::size_t limit() noexcept {
    const std::size_t base = VamHugePolicy::base();
    const std::size_t grown = 2 * demand().keep.load(std::memory_order_relaxed);
    const std::size_t peak = recent_peak();
    const std::size_t most = base > grown ? base : grown;
    return most > 2 * peak ? most : 2 * peak;
  }
  // The end a shrinking realloc cut off is held up to the ceiling, within
  // the budget: its pages were the program's a moment ago, and the budget
  // (twice the huge bytes live at their recent peak, at least) bounds what
  // all of them hold. Held only to half of VAM_HUGE_CACHE, as a freed
  // mapping is kept, a buffer shrunk from 6 MiB and grown back faulted its
  // pages in again: bench/realloc_churn made 2.7 M faults in 5 s, 12 K in
  // 0.18 s when they were held.
  static std::size_t max_tail_bytes() noexcept { return options().huge_cache == 0 ? 0 : kKeepCeiling; }
  // A mapping is kept only if it is at most half of VAM_HUGE_CACHE, or of
  // the size demand has grown the cache to.
  static std::size_t max_bytes() noexcept {
    const std::size_t base = static_cast<std::size_t>(options().huge_cache) / 2;
    const std::size_t grown = demand().keep.load(std::memory_order_relaxed);
    return base > grown ? base : grown;
  }
  static std::int64_t delay_ms() noexcept { return options().discard_delay_ms; }
  static std::int64_t now_ms() noexcept { return alloclab::vam::now_ms(); }

  // huge_free: a mapping of `bytes` is about to go back for its size alone.
  static void refused(std::size_t bytes) noexcept {
    if (options().huge_cache == 0 || bytes > kKeepCeiling || bytes <= max_bytes()) return;
    Demand &d = demand();
    d.refused_ms.store(now_ms(), std::memory_order_relaxed);
    d.refused.store(bytes, std::memory_order_relaxed);
  }
  // huge_alloc: a request of `bytes` found nothing to take.
  static void missed(std::size_t bytes) noexcept {
    Demand &d = demand();
    const std::size_t r = d.refused.load(std::memory_order_relaxed);
    if (r == 0 || bytes > kKeepCeiling) return;
    d.refused.store(0, std::memory_order_relaxed);
    if (now_ms() - d.refused_ms.load(std::memory_order_relaxed) >= delay_ms()) return;
    const std::size_t want = r > bytes ? r : bytes;
    if (want > d.keep.load(std::memory_order_relaxed)) d.keep.store(want, std::memory_order_relaxed);
  }
  // huge_alloc: the huge bytes live now. The recent peak is the highest
  // live total since it was last set; one older than the delay starts over
  // from now.
  static void allocated(std::int64_t live) noexcept {
    if (options().huge_cache == 0) return;
    Demand &d = demand();
    const std::int64_t now = now_ms();
    if (live > d.peak_live.load(std::memory_order_relaxed) ||
        now - d.peak_ms.load(std::memory_order_relaxed) >= delay_ms()) {
      d.peak_live.store(live, std::memory_order_relaxed);
      d.peak_ms.store(now, std::memory_order_relaxed);
    }
  }
  static std::size_t recent_peak() noexcept {
    const Demand &d = demand();
    if (now_ms() - d.peak_ms.load(std::memory_order_relaxed) >= delay_ms()) return 0;
    const std::int64_t peak = d.peak_live.load(std::memory_order_relaxed);
    return peak > 0 ? static_cast<std::size_t>(peak) : 0;
  }
  // Relaxed atomics: several threads may free and map at once, and a lost
  // update only delays the growth by one refusal, or the peak by one call.
  struct Demand {
    std::atomic<std::size_t> keep{0};        // the largest mapping kept, as grown (0: not grown)
    std::atomic<std::size_t> refused{0};     // the last mapping refused for its size (0: none pending)
    std::atomic<std::int64_t> refused_ms{0};
    std::atomic<std::int64_t> peak_live{0};  // the huge bytes live at their recent peak
    std::atomic<std::int64_t> peak_ms{0};    // when that peak was set
  };
  static Demand &demand() noexcept {
    static Demand d;  // constant-initialised
    return d;
  }
};

using HugeCache = MappingCache<SegmentSource, VamHugePolicy>;

HugeCache g_cache;  // stateless itself (the cache's state is static): constant-initialised

}  // namespace

void huge_cache_expire(bool all) noexcept { g_cache.expire(all); }

HugeCounters &huge_counters() noexcept {
  static HugeCounters c;
  return c;
}

std::int64_t huge_cached_pages() noexcept { return static_cast<std::int64_t>(HugeCache::cached_bytes() / kPage); }
std::uint64_t huge_cache_hits() noexcept { return HugeCache::hits(); }
std::uint64_t huge_cache_resizes() noexcept { return HugeCache::resizes(); }

void huge_fork_prepare() noexcept { HugeCache::prepare_fork(); }
void huge_fork_parent() noexcept { HugeCache::parent_after_fork(); }
void huge_fork_child() noexcept { HugeCache::child_after_fork(); }

void *huge_alloc(std::size_t n, std::size_t align) noexcept {
  // Alignments of a segment or more: the object one segment past the header.
  const bool over = align >= kSegmentBytes;
  const std::size_t offset = over ? kSegmentBytes : align > kHugeOffset ? align : kHugeOffset;
  if (align > kMaxAlignment || n > (PTRDIFF_MAX >> 1)) return nullptr;
  const std::size_t bytes = os::align_up(offset + n, kPage);
  if (bytes == 0) return nullptr;
  HugeCounters &c = huge_counters();
  // Cached mappings are only known to be segment-aligned. One taken from the
  // cache still holds the header its last object left (magic, kind, owner).
  std::size_t got = bytes;
  auto *s = align <= kSegmentBytes ? static_cast<Segment *>(g_cache.take(bytes, &got)) : nullptr;
  if (s) {
    s->zeroed = 0;
  } else {
    if (align <= kSegmentBytes) VamHugePolicy::missed(bytes);
    auto fresh = [&] {
      return static_cast<Segment *>(align > kSegmentBytes ? g_cache.get_fresh_at(bytes, align, kSegmentBytes)
                                                          : g_cache.get_fresh(bytes));
    };
    s = fresh();
    if (!s) {
      // Out of address space (ulimit -v) or memory: what this thread holds
      // empty goes back, and one more try. After a spike of small objects
      // all freed, their segments would otherwise keep the address space a
      // big request needs (docs/vam.md, "Memory back").
      const int saved = errno;
      collect_thread(true);
      s = fresh();
      if (!s) return nullptr;
      errno = saved;
    }
    s->zeroed = 1;
    s->magic = kSegmentMagic;
    s->kind = SegKind::huge;
    s->owner = nullptr;
  }
  s->map_bytes = got;
  s->usable = got - offset;
  const std::int64_t live =
      c.live_bytes.fetch_add(static_cast<std::int64_t>(s->usable), std::memory_order_relaxed) +
      static_cast<std::int64_t>(s->usable);
  c.live_objects.fetch_add(1, std::memory_order_relaxed);
  c.pages.fetch_add(static_cast<std::int64_t>(got / kPage), std::memory_order_relaxed);
  VamHugePolicy::allocated(live);
  return reinterpret_cast<char *>(s) + offset;
}

void huge_free(Segment *s, void *p) noexcept {
  // A live huge object has usable > 0 and starts map_bytes - usable past its
  // header; a freed one (cached) has usable == 0. A freed mapping that was
  // unmapped left the segment map first, so free_impl stopped before here.
  // The test and the clearing are one exchange: two threads freeing the
  // object at once would both pass a read, and the mapping would go into
  // the cache twice, to be handed out twice.
  const std::size_t seen = load_relaxed(s->usable);
  if (VAM_UNLIKELY(seen != 0 && static_cast<char *>(p) != reinterpret_cast<char *>(s) + (s->map_bytes - seen)))
    corruption("free(): invalid pointer (inside a huge object)", p);
  const std::size_t usable = std::atomic_ref<std::size_t>(s->usable).exchange(0, std::memory_order_acq_rel);
  if (VAM_UNLIKELY(usable == 0)) corruption("free(): double free detected (huge object)", p);
  // Read before put_chunk: once in the cache, another thread may take the
  // mapping, resize, move or unmap it.
  const std::size_t bytes = s->map_bytes;
  HugeCounters &c = huge_counters();
  c.live_bytes.fetch_sub(static_cast<std::int64_t>(usable), std::memory_order_relaxed);
  c.live_objects.fetch_sub(1, std::memory_order_relaxed);
  c.pages.fetch_sub(static_cast<std::int64_t>(bytes / kPage), std::memory_order_relaxed);
  VamHugePolicy::refused(bytes);
  g_cache.put_chunk(s, bytes);  // kept or unmapped; then the cache's old mappings go back
}

void huge_check_live(Segment *s, const void *p) noexcept {
  const std::size_t usable = s->usable;
  if (VAM_UNLIKELY(usable == 0)) corruption("realloc(): double free / realloc of a freed object", p);
  if (VAM_UNLIKELY(static_cast<const char *>(p) != reinterpret_cast<char *>(s) + (s->map_bytes - usable)))
    corruption("realloc(): invalid pointer (inside a huge object)", p);
}

void *huge_resize(Segment *s, void *p, std::size_t n) noexcept {
  const auto offset = static_cast<std::size_t>(static_cast<char *>(p) - reinterpret_cast<char *>(s));
  if (n > (PTRDIFF_MAX >> 1)) return nullptr;
  const std::size_t bytes = os::align_up(offset + n, kPage);
  HugeCounters &c = huge_counters();
  // The tail the cache split off this mapping, if it still holds it, is in
  // the way of a grow in place: the object takes it first (its pages are
  // mapped), and the resize below covers both.
  if (const std::size_t tail = g_cache.claim_tail(reinterpret_cast<char *>(s) + s->map_bytes)) {
    s->map_bytes += tail;
    s->usable += tail;
    c.live_bytes.fetch_add(static_cast<std::int64_t>(tail), std::memory_order_relaxed);
    c.pages.fetch_add(static_cast<std::int64_t>(tail / kPage), std::memory_order_relaxed);
  }
  const std::size_t old_bytes = s->map_bytes;
  if (bytes < old_bytes && g_cache.hold_tail(reinterpret_cast<char *>(s) + bytes, old_bytes - bytes)) {
    // A shrink leaves its end in the cache, mapped, for a grow to take back:
    // a buffer shrunk and grown again in turn faulted its pages in anew each
    // time. It goes back after the delay if nothing takes it.
    s->map_bytes = bytes;
  } else if (bytes != old_bytes) {
    Segment *moved = g_segment_source.move_segment(s, old_bytes, bytes);
    if (!moved) return nullptr;
    s = moved;
    s->map_bytes = bytes;
  }
  const std::size_t old_usable = s->usable;
  s->usable = bytes - offset;
  const std::int64_t grown = static_cast<std::int64_t>(s->usable) - static_cast<std::int64_t>(old_usable);
  const std::int64_t live = c.live_bytes.fetch_add(grown, std::memory_order_relaxed) + grown;
  c.pages.fetch_add((static_cast<std::int64_t>(bytes) - static_cast<std::int64_t>(old_bytes)) /
                        static_cast<std::int64_t>(kPage),
                    std::memory_order_relaxed);
  c.resizes.fetch_add(1, std::memory_order_relaxed);
  // The budget follows the live peak that reallocs reach too: buffers grown
  // by realloc alone left it at their first mallocs' total, which the delay
  // then forgot.
  VamHugePolicy::allocated(live);
  return reinterpret_cast<char *>(s) + offset;
}

}  // namespace alloclab::vam
