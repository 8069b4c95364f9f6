// block_lists.hpp — the lists a heap keeps its page blocks on: each class's
// front and waiting list, and the empty lists; a block joins its class
// (get_block) and leaves it (retire) here (block_lists.cpp).
#pragma once

#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// A class's available blocks (paper §3.5) are the front (class_front,
// heap.hpp), the block allocation takes objects from, in no list; and
// behind it the waiting list, h->wait[cls], linked both ways, the block
// displaced last first. Full blocks are in neither. The front is null only
// when the waiting list is empty too.
//
// The head of the waiting list is the block the last regain displaced
// (make_front). It keeps state `front`, so frees into it still take the free
// fast path onto its LIFO list, and allocation goes back to it when the
// front is used up; the blocks behind it wait (their frees set pending
// bits, heap.hpp).
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

// VAM_ORDER=fifo: b, a full block that regained space, joins the end of
// the waiting list in state `front`, its frees still pushed on its list:
// allocation reaches it after every block ahead of it, by which time more
// of its objects may have been freed.
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

// Block b off its class's lists; when it is the front, the head of the
// waiting list takes its place.
void avail_remove(Heap *h, Block *b) noexcept;
// An empty block of the right size for `cls`, set up for it (null: out of
// memory); the caller makes it the front.
Block *get_block(Heap *h, unsigned cls) noexcept;
// A block with no live objects leaves its class for the empty lists.
void retire(Heap *h, Block *b) noexcept;

}  // namespace alloclab::vam
