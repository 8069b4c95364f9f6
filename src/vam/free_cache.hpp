// free_cache.hpp — the block segments of this thread's heap that free has
// verified, so that its fast path reads neither the segment map nor a
// segment header (api.hpp, free_cached_segment).
#pragma once

#include <cstdint>

#include "vam/segment.hpp"

namespace alloclab::vam {

// The block segments of this thread's heap that `free` found by the full
// check (the segment map, then the owner), one per slot of a small
// direct-mapped cache indexed by the segment number's low bits: a later free
// into one of them skips both, since only this thread can unmap it
// (heap.cpp, release_empty_segments, forgets it first). Each slot is empty
// (kNoFreeSeg, below) or holds a mapped small/medium segment whose owner is
// this thread's heap; thread exit empties them (threads.cpp). One slot was not enough once each block
// size had its own segments: a program freeing objects of mixed sizes
// alternated between them, and the fast path's test went whichever way the
// object's size did (larson: 6.8 M mispredicted branches against 1.2 M).
// Segments are mapped next to each other, so up to 32 of a heap's (128 MiB)
// are in different slots; eight were too few for a 50 MiB heap of mixed
// sizes (slot_churn: a fifth of its frees went to free_checked; docs/vam.md,
// "Block sizes"). Each slot keeps the segment's block shift too, so the fast path
// reads no segment header at all: with a segment per block size, the
// headers' free-path lines (all in one L1 set, segment.hpp) were several
// where there had been one (sqlite3: +3% D1 misses, most of them in free).
// The segments and the shifts are two arrays, not one of pairs, so that
// each is one load at the thread pointer plus the slot (a pair's address
// has to be computed first: 4% of larson's time).
// A slot with no segment holds kNoFreeSeg, all ones, which no segment
// address is (its low bits are zero), nor null: free's fast path can then
// mask p itself rather than p - 1 (api.hpp).
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
