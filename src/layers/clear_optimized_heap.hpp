// clear_optimized_heap.hpp — ClearOptimizedHeap<Parent> (reaps §5.1): while
// nothing has been freed, allocate by bumping a pointer and writing the one
// header word — region speed. Once objects are freed, allocation takes from
// the heap while it has a fit and falls back to bumping otherwise; when the
// heap empties, the fast path is pure bumping again.
//
// Parent is a CoalescingHeap over a BumpHeap. alloc_block returns a block
// of exactly s bytes (s = tag::block_size(n)) with its header written, or
// nullptr when the system is out of memory.
#pragma once

#include <cstddef>

#include "layers/boundary_tag.hpp"
#include "layers/tool_hooks.hpp"

namespace alloclab {

template <class Parent>
class ClearOptimizedHeap : public Parent {
  using Block = tag::Block;

 public:
  [[gnu::always_inline]] Block *alloc_block(std::size_t s) noexcept {
    if (__builtin_expect(this->heap_empty(), 1)) {
      if (Block *b = this->bump(s)) return stamp(b, s);
    }
    return alloc_block_slow(s);
  }

 private:
  [[gnu::always_inline]] static Block *stamp(Block *b, std::size_t s) noexcept {
    if (tools::active()) tools::reveal(b, tag::kHeader);
    tag::word(b) = s | tag::INUSE | tag::PREV_INUSE;
    return b;
  }

  [[gnu::noinline]] Block *alloc_block_slow(std::size_t s) noexcept {
    if (!this->heap_empty())
      if (Block *b = this->take_free(s)) return b;
    if (Block *b = this->bump(s)) return stamp(b, s);
    this->retire_tail();
    if (!this->refill(s)) return nullptr;
    Block *b = this->bump(s);
    return b ? stamp(b, s) : nullptr;
  }
};

}  // namespace alloclab
