// discard.hpp — what the discard policy's files share (discard.cpp).
#pragma once

#include <time.h>

#include <cstdint>

#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

inline std::int64_t now_ms() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

inline void push(Block *&list, Block *b) noexcept {
  b->prev = nullptr;
  b->next = list;
  list = b;
}

// The threshold is a per-heap budget that adapts: a heap that reaches it
// again within VAM_DISCARD_DELAY_MS of its last sweep is reusing what it
// discards (the pages come straight back as faults), so its budget doubles,
// up to kMaxBudgetShift doublings; a sweep forced by the delay that finds
// pages unused for a whole delay halves it again. The delay's sweeps age
// the pages (heap_age): a page goes back once it has stayed empty from one
// such sweep to the next, so within two delays; and a heap never holds more
// than its largest budget of empty pages.
constexpr std::uint32_t kMaxBudgetShift = 3;

void discard_block(Heap *h, Block *b, int kind) noexcept;

}  // namespace alloclab::vam
