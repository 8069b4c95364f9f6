// clear_optimized_heap.hpp — ClearOptimizedHeap<Parent> (reaps §5.1): while
// nothing is on the heap, allocate by bumping a pointer and writing the one
// header word — region speed. Once objects are freed, allocation takes from
// the heap (quick lists, then coalesced bins) while it has a fit and falls
// back to bumping; when the heap empties, the fast path is pure bumping
// again (the paper's nothingOnHeap flag).
//
// Parent is a QuickListHeap over a CoalescingHeap over a BumpHeap.
// alloc_block returns a block of at least s bytes (s = tag::block_size(n))
// with its header written, or nullptr when the system is out of memory.
#pragma once

#include <cstddef>

#include "layers/boundary_tag.hpp"
#include "layers/tool_hooks.hpp"

namespace alloclab {

template <class Parent>
class ClearOptimizedHeap : public Parent {
  using Block = tag::Block;

 public:
  // The fast path alone: a block, or nullptr when the slow path is needed.
  // Makes no calls, so a caller that tail-calls its slow path stays a leaf.
  // Not for use while a memory checker is active (see alloc_block).
  [[gnu::always_inline]] Block *try_alloc_block(std::size_t s) noexcept {
    if (__builtin_expect(nothing_on_heap_, 1)) {
      if (Block *b = this->bump(s)) {
        tag::word(b) = s | tag::INUSE | tag::PREV_INUSE;
        return b;
      }
    } else if (s <= Parent::kQuickMax) {
      return this->quick_take(s);  // header still says s, in use
    }
    return nullptr;
  }

  Block *alloc_block(std::size_t s) noexcept {
    if (!tools::active())
      if (Block *b = try_alloc_block(s)) return b;
    return alloc_block_slow(s);
  }

  // Free a block, deferring coalescing for small ones. Plain operation only.
  [[gnu::always_inline]] void free_block(Block *b) noexcept {
    const std::size_t s = tag::size(b);
    if (s <= Parent::kQuickMax && b + s != this->top()) {
      this->quick_put(b, s);
      nothing_on_heap_ = false;
      return;
    }
    free_block_now(b);
  }

  // Free a block with immediate coalescing (checked mode, memory checkers).
  void free_block_now(Block *b) noexcept {
    this->release(b);
    nothing_on_heap_ = this->heap_empty() && this->quick_empty();
  }

  // Cut an in-use block down to new_s; the rest goes to the heap now.
  void shrink_block(Block *b, std::size_t new_s) noexcept {
    this->shrink(b, new_s);
    nothing_on_heap_ = this->heap_empty() && this->quick_empty();
  }

  // Forget every free block (the region is being cleared).
  void forget_heap() noexcept {
    this->forget_quick_blocks();
    this->forget_free_blocks();
    nothing_on_heap_ = true;
  }

 private:
  static Block *stamp(Block *b, std::size_t s) noexcept {
    if (tools::active()) tools::reveal(b, tag::kHeader);
    tag::word(b) = s | tag::INUSE | tag::PREV_INUSE;
    return b;
  }

  [[gnu::noinline]] Block *alloc_block_slow(std::size_t s) noexcept {
    if (!nothing_on_heap_) {
      if (!this->heap_empty())
        if (Block *b = this->take_free(s)) return b;
      if (this->heap_empty() && this->quick_empty()) nothing_on_heap_ = true;
    }
    if (Block *b = this->bump(s)) return stamp(b, s);
    if (!this->quick_empty()) {  // merge deferred frees before taking more memory
      this->consolidate();
      nothing_on_heap_ = this->heap_empty();
      if (Block *b = this->take_free(s)) return b;
      if (Block *b = this->bump(s)) return stamp(b, s);
    }
    this->retire_tail();
    nothing_on_heap_ = this->heap_empty() && this->quick_empty();
    if (!this->refill(s)) return nullptr;
    Block *b = this->bump(s);
    return b ? stamp(b, s) : nullptr;
  }

  bool nothing_on_heap_ = true;
};

}  // namespace alloclab
