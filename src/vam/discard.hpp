// discard.hpp — what the files that fill and empty a heap's empty lists
// share with the discard policy (discard.cpp): the clock (clock.hpp), the lists' push,
// and the budget's limit.
#pragma once

#include <cstdint>

#include "vam/clock.hpp"
#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// b onto an empty list (Heap::empty_dirty, empty_clean), linked through
// `next` only.
inline void push(Block *&list, Block *b) noexcept {
  b->prev = nullptr;
  b->next = list;
  list = b;
}

// The threshold is a per-heap budget that adapts: a heap that reaches it
// again within VAM_DISCARD_DELAY_MS of its last sweep is reusing what it
// discards (the pages would come straight back as faults), so its budget
// doubles, up to kMaxBudgetShift doublings; a sweep forced by the delay
// that finds pages unused for a whole delay halves it again. A heap never
// holds more than its largest budget of empty pages.
constexpr std::uint32_t kMaxBudgetShift = 3;

}  // namespace alloclab::vam
