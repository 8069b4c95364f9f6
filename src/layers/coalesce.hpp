// coalesce.hpp — coalesce(tags, b, s): the boundary-tag merge step shared by
// the heaps that keep "no two free blocks adjacent" (a reap's CoalescingHeap,
// vam's LargeHeap).
//
// A block b of s bytes has just been freed. Its successor starts at b + s; if
// that one is free it leaves its free list and joins b. Its predecessor is
// found through the boundary tags; if free, it leaves its list and b joins it.
// What is returned is the start of the merged block and s its size; the
// caller writes the merged block's tags and files it, because when and how
// differ (a reap files it at once; vam first decides whether the region
// went wholly free and what to discard).
//
// How the tags are read, and what a heap keeps per free block beyond its list
// links, is the Tags object's business:
//   Block                                      the block (header) type
//   Block *after(Block *b, std::size_t s)      the block following b
//   bool is_free(Block *n)
//   std::size_t size(Block *n)
//   void keep(Block *n)                        n stays in use behind a block
//                                              about to be free (reaps: clear
//                                              its PREV_INUSE bit)
//   Block *free_before(Block *b, std::size_t *ps)
//                                              the predecessor when it is free
//                                              (its size in *ps), else nullptr
//   void take(Block *x)                        x leaves the free index; the
//                                              hook for per-block accounting
//                                              (vam: dirty and discarded pages)
//   void bury(Block *h)                        h's header is now inside a free
//                                              block (reaps: hide it from
//                                              memory checkers)
// The calls are inline templates: with a stateless or local Tags they
// compile to the code each heap had written out by hand.
#pragma once

#include <cstddef>

namespace alloclab {

template <class Tags>
inline typename Tags::Block *coalesce(Tags &t, typename Tags::Block *b, std::size_t &s) noexcept {
  typename Tags::Block *n = t.after(b, s);
  if (t.is_free(n)) {
    t.take(n);
    s += t.size(n);
    t.bury(n);
  } else {
    t.keep(n);
  }
  std::size_t ps;
  if (typename Tags::Block *p = t.free_before(b, &ps)) {
    t.take(p);
    t.bury(b);
    b = p;
    s += ps;
  }
  return b;
}

}  // namespace alloclab
