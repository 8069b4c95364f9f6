// block_lists.hpp — the lists a heap keeps its page blocks on
// (BlockState, segment.hpp): a class's front, in no list; its waiting list
// (Heap::wait), linked both ways, the block displaced last at its head;
// full blocks, in no list; and the empty lists per block kind, linked
// through `next` only. The front is null only when the waiting list is
// empty too. The waiting list's head keeps state `front`, so frees into it
// stay on free's fast path and allocation returns to it next; the blocks
// behind it are `waiting`. The waiting list's links are inline here for the
// reuse order; a block joins and leaves a class in block_lists.cpp.
#pragma once

#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// b, displaced from the front, heads the waiting list; the head it
// displaces goes from state `front` to `waiting`.
inline void wait_push(Heap *h, Block *b) noexcept {
  Block *&head = h->wait[b->cls];
  b->prev = nullptr;
  b->next = head;
  if (head) {
    head->prev = b;
    if (head->state == BlockState::front) store_relaxed(head->state, BlockState::waiting);
  } else {
    h->wait_tail[b->cls] = b;
  }
  head = b;
}

// VAM_ORDER=fifo or auto: b, a full block that regained space, joins the end of the
// waiting list in state `front`, so its frees still go onto its list.
inline void wait_append(Heap *h, Block *b) noexcept {
  Block *&tail = h->wait_tail[b->cls];
  b->next = nullptr;
  b->prev = tail;
  if (tail) tail->next = b;
  else h->wait[b->cls] = b;
  tail = b;
  store_relaxed(b->state, BlockState::front);
}

// The class's sole available block: the front, with none waiting.
inline bool sole_block(const Heap *h, const Block *b) noexcept {
  return class_front(h, b->cls) == b && h->wait[b->cls] == nullptr;
}

}  // namespace alloclab::vam
