// coalescing_heap.hpp — CoalescingHeap<Parent>: the heap half of a reap.
// Freed blocks are merged at once with free neighbours (boundary tags, the
// merge step of coalesce.hpp that vam's large heap shares) and kept in
// SegregatedBins; a freed block that touches the bump pointer gives
// its space back to the region instead, so stack-like and sliding-window
// patterns keep bumping.
//
// Parent is a BumpHeap. Invariants kept here:
//   * no two free blocks are adjacent;
//   * the block just below top() is in use (or there is none);
//   * a free block's header is visible to checkers, its payload is hidden.
#pragma once

#include <cstddef>

#include "layers/boundary_tag.hpp"
#include "layers/coalesce.hpp"
#include "layers/segregated_bins.hpp"
#include "layers/tool_hooks.hpp"

namespace alloclab {

template <class Parent>
class CoalescingHeap : public Parent {
  using Block = tag::Block;

 public:
  bool heap_empty() const noexcept { return bins_.empty(); }

  // A free block of at least s bytes, marked in use; nullptr if none fits.
  Block *take_free(std::size_t s) noexcept {
    Block *b = bins_.take_fit(s);
    if (!b) return nullptr;
    const std::size_t bs = tag::size(b);
    if (bs - s >= tag::kMinBlock) {
      split_off_free(b + s, bs - s);
      tag::word(b) = s | tag::INUSE | tag::PREV_INUSE;
    } else {
      tag::word(b) = bs | tag::INUSE | tag::PREV_INUSE;
      tag::word(b + bs) |= tag::PREV_INUSE;
    }
    return b;
  }

  // Return an in-use block (payload already hidden by the caller).
  void release(Block *b) noexcept {
    tag::word(b) &= ~tag::INUSE;  // a stale header must never look live
    std::size_t s = tag::size(b);
    Block *n = b + s;
    if (n == this->top()) {  // back to the region
      if (!tag::prev_in_use(b)) {
        Block *p = b - tag::prev_size(b);
        bins_.remove(p);
        b = p;
      }
      this->lower_top(b);
      return;
    }
    Tags t{bins_};
    b = coalesce(t, b, s);
    tag::word(b) = s | tag::PREV_INUSE;
    tag::set_footer(b, s);
    bins_.insert(b, s);
  }

  // Grow an in-use block to new_s in place (into the region or a free
  // neighbour). The caller reveals the new payload bytes.
  bool grow_in_place(Block *b, std::size_t new_s) noexcept {
    const std::size_t s = tag::size(b);
    const std::size_t flags = tag::word(b) & tag::FLAGS;
    Block *n = b + s;
    if (n == this->top()) {
      if (static_cast<std::size_t>(this->limit() - b) < new_s) return false;
      this->raise_top(b + new_s);
      tag::word(b) = new_s | flags;
      return true;
    }
    if (tag::in_use(n)) return false;
    const std::size_t total = s + tag::size(n);
    if (total < new_s) return false;
    bins_.remove(n);
    if (total - new_s >= tag::kMinBlock) {
      split_off_free(b + new_s, total - new_s);
    } else {
      new_s = total;
      tag::word(b + total) |= tag::PREV_INUSE;
    }
    tag::word(b) = new_s | flags;
    return true;
  }

  // Cut an in-use block down to new_s (s - new_s >= kMinBlock) and free the
  // rest. The caller has hidden the dropped payload bytes.
  void shrink(Block *b, std::size_t new_s) noexcept {
    const std::size_t s = tag::size(b);
    tag::word(b) = new_s | (tag::word(b) & tag::FLAGS);
    Block *t = b + new_s;
    if (tools::active()) tools::reveal(t, tag::kHeader);
    tag::word(t) = (s - new_s) | tag::INUSE | tag::PREV_INUSE;
    release(t);
  }

  // Before the region moves to a new chunk: the old area's tail becomes a
  // free block, or a dead one when it is too small to be worth a place on
  // the heap (a sliver on the heap would keep region mode off for nothing).
  static constexpr std::size_t kMinUsefulTail = 256;
  void retire_tail() noexcept {
    Block *t;
    const std::size_t n = this->take_tail(&t);
    if (n == 0) return;
    if (tools::active()) tools::reveal(t, tag::kHeader);
    if (n >= kMinUsefulTail) {
      tag::word(t) = n | tag::PREV_INUSE;
      tag::set_footer(t, n);
      tag::word(t + n) &= ~tag::PREV_INUSE;
      bins_.insert(t, n);
    } else {
      tag::word(t) = n | tag::INUSE | tag::PREV_INUSE;
    }
  }

  void forget_free_blocks() noexcept { bins_.clear(); }

 private:
  // The boundary tags of boundary_tag.hpp as coalesce() reads them. A free
  // block's predecessor is known free from its own PREV_INUSE bit, and its
  // size from the footer; a header swallowed by a merge goes back to hidden.
  struct Tags {
    using Block = tag::Block;
    SegregatedBins &bins;
    static Block *after(Block *b, std::size_t s) noexcept { return b + s; }
    static bool is_free(Block *n) noexcept { return !tag::in_use(n); }
    static std::size_t size(Block *n) noexcept { return tag::size(n); }
    static void keep(Block *n) noexcept { tag::word(n) &= ~tag::PREV_INUSE; }
    static Block *free_before(Block *b, std::size_t *ps) noexcept {
      if (tag::prev_in_use(b)) return nullptr;
      *ps = tag::prev_size(b);
      return b - *ps;
    }
    void take(Block *x) noexcept { bins.remove(x); }
    static void bury(Block *h) noexcept {
      if (tools::active()) tools::hide(h, tag::kHeader);
    }
  };

  void split_off_free(Block *r, std::size_t rs) noexcept {
    if (tools::active()) tools::reveal(r, tag::kHeader);
    tag::word(r) = rs | tag::PREV_INUSE;
    tag::set_footer(r, rs);
    bins_.insert(r, rs);
  }

  SegregatedBins bins_;
};

}  // namespace alloclab
