// bump_heap.hpp — BumpHeap<Chunks>: region allocation. Bumps a pointer
// through the current chunk's area; when the area is used up, asks Chunks
// for a new (geometrically larger) chunk. The area is laid out in blocks
// (boundary_tag.hpp), so what it hands out can later be managed by a heap.
//
// Its fast path is bump(): a compare and an add. Everything else is rare.
// Bytes beyond top() are hidden from memory checkers.
#pragma once

#include <cstddef>

#include "layers/boundary_tag.hpp"
#include "layers/chunk_list_heap.hpp"
#include "layers/tool_hooks.hpp"

namespace alloclab {

template <class Chunks>
class BumpHeap : public Chunks {
 public:
  // s bytes (a block size) at the top of the area, or nullptr when the area
  // is too small.
  [[gnu::always_inline]] tag::Block *bump(std::size_t s) noexcept {
    tag::Block *b = top_;
    if (__builtin_expect(static_cast<std::size_t>(limit_ - b) >= s, 1)) {
      if (b == nullptr) __builtin_unreachable();  // s > 0 and an area exists
      top_ = b + s;
      return b;
    }
    return nullptr;
  }

  // Make [lo, hi) the current area (its tail becomes the end sentinel).
  void set_area(char *lo, char *hi) noexcept {
    if (tools::active()) tools::reveal(lo, hi - lo);
    top_ = tag::carve_area(lo, hi, &limit_);
    if (tools::active()) tools::hide(top_, limit_ - top_);
  }

  // Move to a new chunk with room for a block of s bytes. The old area's
  // unused tail must have been taken with take_tail() first.
  bool refill(std::size_t s) noexcept {
    ChunkHeader *c = Chunks::new_chunk(s + 2 * tag::kGrain);
    if (!c) return false;
    set_area(c->begin(), c->end());
    return true;
  }

  // The unused rest of the current area [top, limit): handed to the caller,
  // which must account for it (as a free block, say). The area becomes empty.
  std::size_t take_tail(tag::Block **at) noexcept {
    *at = top_;
    const std::size_t n = static_cast<std::size_t>(limit_ - top_);
    top_ = limit_;
    return n;
  }

  tag::Block *top() const noexcept { return top_; }
  tag::Block *limit() const noexcept { return limit_; }
  // Give the tail of the area back: b is a block address at or below top.
  void lower_top(tag::Block *b) noexcept {
    if (tools::active()) tools::hide(b, top_ - b);
    top_ = b;
  }
  // Extend the block that ends at top by growing the area use to new_top.
  void raise_top(tag::Block *new_top) noexcept { top_ = new_top; }
  std::size_t room() const noexcept { return static_cast<std::size_t>(limit_ - top_); }

 private:
  tag::Block *top_ = nullptr;
  tag::Block *limit_ = nullptr;
};

}  // namespace alloclab
