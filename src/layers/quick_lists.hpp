// quick_lists.hpp — QuickListHeap<Parent>: exact-size LIFO lists of freed
// small blocks, with coalescing deferred (dlmalloc's "fastbins", Heap
// Layers' per-size FreelistHeap). A free of a small block is two stores; a
// request of the same size is two loads and a store. Blocks on these lists
// still look in use to their neighbours; consolidate() hands them all to
// the coalescing heap, which the owner does before it would otherwise take
// new memory — so deferral never grows the footprint.
//
// Parent is a CoalescingHeap. Quick lists are for plain operation only:
// under checked mode or a memory checker the owner frees through
// Parent::release directly (immediate coalescing, headers kept exact).
#pragma once

#include <cstddef>

#include "layers/boundary_tag.hpp"

namespace alloclab {

template <class Parent, std::size_t kMaxQuick = 512>
class QuickListHeap : public Parent {
  using Block = tag::Block;
  static_assert(kMaxQuick % tag::kGrain == 0, "quick sizes are whole grains");

 public:
  static constexpr std::size_t kQuickMax = kMaxQuick;

  // Pop a block of exactly s bytes (s <= kQuickMax), or nullptr.
  [[gnu::always_inline]] Block *quick_take(std::size_t s) noexcept {
    Block *&head = quick_[s / tag::kGrain];
    Block *b = head;
    if (b) {
      head = link(b);
      --quick_count_;
    }
    return b;
  }

  // Push a freed block of s bytes (s <= kQuickMax). Its header is untouched.
  [[gnu::always_inline]] void quick_put(Block *b, std::size_t s) noexcept {
    Block *&head = quick_[s / tag::kGrain];
    link(b) = head;
    head = b;
    ++quick_count_;
  }

  bool quick_empty() const noexcept { return quick_count_ == 0; }

  // Free every quick block for real (merge with neighbours, bins or top).
  void consolidate() noexcept {
    for (Block *&head : quick_) {
      while (Block *b = head) {
        head = link(b);
        Parent::release(b);
      }
    }
    quick_count_ = 0;
  }

  void forget_quick_blocks() noexcept {
    for (Block *&head : quick_) head = nullptr;
    quick_count_ = 0;
  }

 private:
  static Block *&link(Block *b) noexcept { return *reinterpret_cast<Block **>(b + tag::kHeader); }

  Block *quick_[kMaxQuick / tag::kGrain + 1] = {};
  std::size_t quick_count_ = 0;
};

}  // namespace alloclab
