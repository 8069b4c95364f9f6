// heap.cpp — a thread heap's record, mapped (heap.hpp).
#include "vam/heap.hpp"

#include <new>

#include "layers/os.hpp"

namespace alloclab::vam {

// A heap starts kHeapColour bytes into its mapping, not at the page: its
// first lines are `slots`, which every small malloc reads, and a page's first
// line falls in L1 set 0 with every segment header, block start and
// page-aligned object (docs/vam.md, "Cache sets"). At offset 0 the read of
// its front entry missed on 36% of sqlite3's mallocs; 17 lines in, on 0.1%.
constexpr std::size_t kHeapColour = 17 * 64;

Heap *heap_create() noexcept {
  void *mem = os::map(os::align_up(kHeapColour + sizeof(Heap), kPage));
  if (!mem) return nullptr;
  Heap *h = new (static_cast<char *>(mem) + kHeapColour) Heap();
  h->large.init(h, &h->segments);
  return h;
}


void large_free_local(Heap *h, void *p) noexcept {
  const int policy = static_cast<int>(g_layout.discard);
  const std::int64_t before = dirty_total(h);
  h->large.free(p, policy);
  if (dirty_total(h) > before) note_dirty(h, before <= 0);
}

// A quick list's chunk first: the heap's remote frees are looked at only when
// it has none, so that a malloc served from one reads no line but the quick
// lists' and the chunk's (the remote word's line is another thread's to
// write). They wait at most as long as the quick lists last: a few chunks a
// size, refilled only by this thread's own frees. Applied, they may have put
// a chunk of the size on a list: the lists are tried again then, not else.
void *large_alloc(Heap *h, std::size_t n, std::size_t align) noexcept {
  if (align > 16) {
    if (h->remote.load(std::memory_order_relaxed) != nullptr) drain_remote(h);
    return h->large.alloc_aligned(n, align);
  }
  if (void *p = h->large.alloc_quick(n)) return p;
  if (h->remote.load(std::memory_order_relaxed) != nullptr) {
    drain_remote(h);
    if (void *p = h->large.alloc_quick(n)) return p;
  }
  return h->large.alloc_carved(n);
}

}  // namespace alloclab::vam
