// huge.hpp — objects above VAM_LARGE_MAX, each mapped on its own (paper §3.1
// "extremely large"); freed mappings are cached for reuse (a MappingCache
// over SegmentSource, huge.cpp) or unmapped. The mapping is segment-aligned and
// its Segment header comes first, so free() finds it with the same mask as
// every other object; the object starts within the first segment, which is
// why alignments are limited to half a segment (2 MiB).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "vam/segment.hpp"

namespace alloclab::vam {

inline constexpr std::size_t kHugeOffset = 128;  // object start with no alignment request
static_assert(sizeof(Segment) <= kHugeOffset, "the huge object must not overlap its header");
inline constexpr std::size_t kMaxAlignment = std::size_t{1} << 46;  // beyond: ENOMEM

struct HugeCounters {
  std::atomic<std::int64_t> live_bytes{0};
  std::atomic<std::int64_t> live_objects{0};
  std::atomic<std::int64_t> pages{0};         // pages of live huge objects
  std::atomic<std::int64_t> resizes{0};       // reallocs done by remapping (cumulative)
};
HugeCounters &huge_counters() noexcept;
// Pages of the freed mappings the cache holds. The cache counts its bytes
// itself; this reads them rather than keeping a second count that every
// take, put and expiry would have to mirror.
std::int64_t huge_cached_pages() noexcept;
// Allocations served from the cache, and of them those that resized a cached
// mapping in place (cumulative).
std::uint64_t huge_cache_hits() noexcept;
std::uint64_t huge_cache_resizes() noexcept;

// nullptr: out of memory. The segment's `zeroed` says whether the memory
// comes straight from the OS (calloc need not clear it).
void *huge_alloc(std::size_t n, std::size_t align) noexcept;
// Free the huge object p of segment s. A p that is not the object's start,
// or an object already freed (its mapping sitting in the cache), aborts.
void huge_free(Segment *s, void *p) noexcept;
// realloc's test that p is a live huge object of segment s (its mapping not
// in the cache, p its start); aborts if it is not.
void huge_check_live(Segment *s, const void *p) noexcept;
// Resize the huge object p (of segment s) to n bytes by remapping its pages:
// no copy, in place when the address space allows. Returns the object's
// (possibly new) address, or nullptr when the kernel refused (p is intact).
void *huge_resize(Segment *s, void *p, std::size_t n) noexcept;
// Unmap the cached mappings freed VAM_DISCARD_DELAY_MS ago or more (all:
// every one). Called as huge objects are freed and as heaps collect.
void huge_cache_expire(bool all) noexcept;
void huge_fork_prepare() noexcept;
void huge_fork_parent() noexcept;
void huge_fork_child() noexcept;
inline std::size_t huge_usable(Segment *s, const void *p) noexcept {
  return s->map_bytes - static_cast<std::size_t>(static_cast<const char *>(p) - reinterpret_cast<char *>(s));
}

}  // namespace alloclab::vam
