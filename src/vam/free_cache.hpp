// free_cache.hpp — the block segments of this thread's heap that free has
// verified, so that its fast path reads neither the segment map nor a
// segment header (api.hpp, free_cached_segment).
#pragma once

#include <cstdint>

#include "vam/segment.hpp"

namespace alloclab::vam {

// A direct-mapped cache of the block segments of this thread's heap that
// free has found by the full check. Invariant: a slot holds kNoFreeSeg or a
// mapped small/medium segment whose owner is this thread's heap; only this
// thread unmaps those, forgetting them first (release_empty_segments), and
// thread exit empties every slot. Up to 32 of a heap's segments, mapped
// next to each other, land in different slots, whatever mix of block sizes
// it frees; the block shift beside each spares the fast path the segment
// header; two arrays, not pairs, make each read one load at the thread
// pointer (docs/vam.md, "Block sizes"). kNoFreeSeg is all ones, which is no
// segment address nor null: free's fast path masks p itself (api.hpp).
inline constexpr unsigned kFreeSegSlots = 32;
inline constexpr std::uintptr_t kNoFreeSeg = ~std::uintptr_t{0};
struct FreeSegs {
  std::uintptr_t seg[kFreeSegSlots];  // a Segment's address, or kNoFreeSeg
  std::uint8_t shift[kFreeSegSlots];  // its block_shift
};
inline constexpr FreeSegs kNoFreeSegs = [] {
  FreeSegs f{};
  for (auto &s : f.seg) s = kNoFreeSeg;
  return f;
}();
extern __thread FreeSegs t_free_seg __attribute__((tls_model("initial-exec")));
inline unsigned free_seg_slot(const void *s) noexcept {
  return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(s) >> kSegmentShift) % kFreeSegSlots;
}
inline bool free_seg_has(const Segment *s) noexcept {
  return t_free_seg.seg[free_seg_slot(s)] == reinterpret_cast<std::uintptr_t>(s);
}
inline void free_seg_set(Segment *s, std::uint32_t shift) noexcept {
  const unsigned i = free_seg_slot(s);
  t_free_seg.seg[i] = reinterpret_cast<std::uintptr_t>(s);
  t_free_seg.shift[i] = static_cast<std::uint8_t>(shift);
}
inline void free_seg_forget(const Segment *s) noexcept {
  std::uintptr_t &slot = t_free_seg.seg[free_seg_slot(s)];
  if (slot == reinterpret_cast<std::uintptr_t>(s)) slot = kNoFreeSeg;
}

}  // namespace alloclab::vam
