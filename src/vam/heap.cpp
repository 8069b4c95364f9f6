// heap.cpp — a thread heap's record, mapped (heap.hpp), and the heap's door
// to its large objects (LargeHeap, large_region.hpp).
#include "vam/heap.hpp"

#include <new>

#include "layers/os.hpp"

namespace alloclab::vam {

// A heap starts kHeapColour bytes into its mapping, not at the page: its
// first lines are `slots`, which every small malloc reads, and a page's first
// line falls in L1 set 0 with every segment header, block start and
// page-aligned object, so that `slots` would be evicted between mallocs
// (docs/vam.md, "Cache sets").
constexpr std::size_t kHeapColour = 17 * 64;

Heap *heap_create() noexcept {
  void *mem = os::map(os::align_up(kHeapColour + sizeof(Heap), kPage));
  if (!mem) return nullptr;
  Heap *h = new (static_cast<char *>(mem) + kHeapColour) Heap();
  h->large.init(h, &h->segments);
  return h;
}

// The pages the free makes dirty count towards the heap's discard budget.
void large_free_local(Heap *h, void *p) noexcept {
  if (VAM_UNLIKELY(large_freed_remotely(p)))
    corruption("free(): double free detected (large object, freed by another thread already)", p);
  const int policy = static_cast<int>(g_layout.discard);
  const std::int64_t before = dirty_total(h);
  {
    OwnerGuard lock(h->large.lock());
    h->large.free(p, policy);
  }
  if (dirty_total(h) > before) note_dirty(h, before <= 0);
}

// A quick list's chunk first: remote frees are applied only when the lists
// have none, so that a malloc they serve reads no line another thread
// writes. They wait at most as long as the lists last (a few chunks a size,
// refilled by this thread's frees), and once applied the lists are tried
// again, since they may have put a chunk there.
// Each call under the large lock, the drain between them without it (its
// large frees take it).
void *large_alloc(Heap *h, std::size_t n, std::size_t align) noexcept {
  LargeHeap &l = h->large;
  if (align > 16) {
    if (h->remote.load(std::memory_order_relaxed) != nullptr) drain_remote(h);
    OwnerGuard lock(l.lock());
    return l.alloc_aligned(n, align);
  }
  {
    OwnerGuard lock(l.lock());
    if (void *p = l.alloc_quick(n)) return p;
    if (h->remote.load(std::memory_order_relaxed) == nullptr) return l.alloc_carved(n);
  }
  drain_remote(h);
  OwnerGuard lock(l.lock());
  if (void *p = l.alloc_quick(n)) return p;
  return l.alloc_carved(n);
}

}  // namespace alloclab::vam
