// segment_map.hpp — one bit per 4 MiB of address space: set while libvam has
// a segment header there.
//
// free() masks a pointer to find its header (segment.hpp) and reads it. For a
// pointer libvam never handed out (the stack, a static, another allocator's
// mapping) that read hits unmapped memory or someone else's bytes. Asking
// this map first turns such a free into a clear abort.
//
// The map proper has two levels: a leaf pointer from a 16 KiB table (one
// entry covers 128 GiB, so a program uses one or two) and a word of that
// leaf; leaves are one page each, mapped on first use and never returned.
// In front of it, for free's fast path, a direct-mapped tag table answers
// with one load: entry (segment number mod 2^16) holds the rest of the
// segment number, plus one (0: empty). The segments of a process whose
// mappings span less than 256 GiB never share an entry; one that finds its
// entry taken is recorded only in the map proper, and lookups of it take
// the two-level path (segment_known_slow). The table is 128 KiB of .bss,
// of which the pages covering the program's mappings are touched.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "layers/os.hpp"
#include "vam/check.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

inline constexpr unsigned kMapAddressBits = 48;  // user space on x86-64 and AArch64
inline constexpr unsigned kMapLeafShift = 15;    // segments per leaf: 4 KiB of bits
inline constexpr std::size_t kMapTopEntries = std::size_t{1}
                                              << (kMapAddressBits - kSegmentShift - kMapLeafShift);

inline constexpr unsigned kTagShift = 16;  // tag table entries: 2^16
static_assert(kMapAddressBits - kSegmentShift - kTagShift < 16, "a tag plus one fits 16 bits");

struct SegmentMap {
  std::atomic<std::uint64_t *> top[kMapTopEntries];
  std::atomic<std::uint16_t> tag[std::size_t{1} << kTagShift];
};
inline SegmentMap g_segment_map{};  // constant-initialised, zero

// The tag entry of segment number i would hold, were it there.
inline std::uint64_t segment_tag(std::uintptr_t i) noexcept { return (i >> kTagShift) + 1; }

// The map proper (two loads).
inline bool segment_known_slow(const Segment *s) noexcept {
  const std::uintptr_t i = reinterpret_cast<std::uintptr_t>(s) >> kSegmentShift;
  if (VAM_UNLIKELY(i >> (kMapAddressBits - kSegmentShift))) return false;
  std::uint64_t *leaf = g_segment_map.top[i >> kMapLeafShift].load(std::memory_order_acquire);
  if (VAM_UNLIKELY(leaf == nullptr)) return false;
  const std::uint64_t w = std::atomic_ref<std::uint64_t>(leaf[(i & ((1u << kMapLeafShift) - 1)) >> 6])
                              .load(std::memory_order_relaxed);
  return (w >> (i & 63)) & 1;
}

// Does libvam have a segment header at s (a segment-aligned address)? One
// load when s holds its tag entry; a pointer far outside user space never
// matches a tag (the comparison is on the whole upper part of its number).
inline bool segment_known(const Segment *s) noexcept {
  const std::uintptr_t i = reinterpret_cast<std::uintptr_t>(s) >> kSegmentShift;
  const std::uint16_t t = g_segment_map.tag[i & ((std::uintptr_t{1} << kTagShift) - 1)].load(std::memory_order_relaxed);
  if (VAM_LIKELY(t == segment_tag(i))) return true;
  return segment_known_slow(s);
}

// Record (on) or forget (off) a segment header at s. False if the leaf for
// s could not be mapped (the segment must then be given back).
inline bool segment_map_set(const Segment *s, bool on) noexcept {
  const std::uintptr_t i = reinterpret_cast<std::uintptr_t>(s) >> kSegmentShift;
  if (i >> (kMapAddressBits - kSegmentShift)) return false;
  std::atomic<std::uint64_t *> &slot = g_segment_map.top[i >> kMapLeafShift];
  std::uint64_t *leaf = slot.load(std::memory_order_acquire);
  if (leaf == nullptr) {
    if (!on) return true;
    auto *fresh = static_cast<std::uint64_t *>(os::map(kPage));
    if (fresh == nullptr) return false;
    if (slot.compare_exchange_strong(leaf, fresh, std::memory_order_acq_rel)) leaf = fresh;
    else os::unmap(fresh, kPage);  // another thread made it first; `leaf` is theirs
  }
  std::atomic_ref<std::uint64_t> word(leaf[(i & ((1u << kMapLeafShift) - 1)) >> 6]);
  const std::uint64_t bit = std::uint64_t{1} << (i & 63);
  std::atomic<std::uint16_t> &tag = g_segment_map.tag[i & ((std::uintptr_t{1} << kTagShift) - 1)];
  const auto mine = static_cast<std::uint16_t>(segment_tag(i));
  if (on) {
    word.fetch_or(bit, std::memory_order_relaxed);
    std::uint16_t empty = 0;
    tag.compare_exchange_strong(empty, mine, std::memory_order_relaxed);  // taken: the map proper has it
  } else {
    std::uint16_t expect = mine;
    tag.compare_exchange_strong(expect, 0, std::memory_order_relaxed);
    word.fetch_and(~bit, std::memory_order_relaxed);
  }
  return true;
}

}  // namespace alloclab::vam
