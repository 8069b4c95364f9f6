// segment_map.hpp — one bit per 4 MiB of address space: set while libvam has
// a segment header there.
//
// free() masks a pointer to find its header (segment.hpp) and reads it. For a
// pointer libvam never handed out (the stack, a static, another allocator's
// mapping) that read hits unmapped memory or someone else's bytes. Asking
// this map first turns such a free into a clear abort. Two loads: a leaf
// pointer from a 16 KiB table (one entry covers 128 GiB, so a program uses
// one or two) and a word of that leaf — both in cache in a loop that frees.
// Leaves are one page each, mapped on first use and never returned.
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

struct SegmentMap {
  std::atomic<std::uint64_t *> top[kMapTopEntries];
};
inline SegmentMap g_segment_map{};  // constant-initialised, zero

// Does libvam have a segment header at s (a segment-aligned address)?
inline bool segment_known(const Segment *s) noexcept {
  const std::uintptr_t i = reinterpret_cast<std::uintptr_t>(s) >> kSegmentShift;
  if (VAM_UNLIKELY(i >> (kMapAddressBits - kSegmentShift))) return false;
  std::uint64_t *leaf = g_segment_map.top[i >> kMapLeafShift].load(std::memory_order_acquire);
  if (VAM_UNLIKELY(leaf == nullptr)) return false;
  const std::uint64_t w = std::atomic_ref<std::uint64_t>(leaf[(i & ((1u << kMapLeafShift) - 1)) >> 6])
                              .load(std::memory_order_relaxed);
  return (w >> (i & 63)) & 1;
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
  if (on) word.fetch_or(bit, std::memory_order_relaxed);
  else word.fetch_and(~bit, std::memory_order_relaxed);
  return true;
}

}  // namespace alloclab::vam
