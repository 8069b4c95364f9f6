// heap.hpp — one thread's heap: page blocks per size class, kept in Vam's
// order (paper §3.5), with reap allocation inside each block (§3.4).
//
//   Heap::slots[cls]  per class, the front block (segment.hpp, Block: bump,
//   Heap::wait[cls]   then free list) and the hot list, and the blocks
//                     behind the front, in Vam's order (heap.cpp,
//                     make_front)
//                                                         classes 8..VAM_PAGE_MAX
//   Heap::large       LargeHeap: shared regions, best fit, coalescing
//                     (large_region.hpp)                  VAM_PAGE_MAX..VAM_LARGE_MAX
//   Heap::remote      objects other threads freed here
// (docs/vam.md, "How the paper maps to the code", has the whole listing.)
//
// A heap is used by one thread at a time and needs no lock. Other threads
// free into it by pushing onto `remote` (a lock-free stack); the owner drains
// it in its slow paths. When a thread exits, its heap is abandoned whole and
// the next new thread adopts it; heaps are never destroyed, so the owner
// pointer in each segment stays valid forever.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/free_cache.hpp"
#include "vam/free_list.hpp"
#include "vam/heap_segments.hpp"
#include "vam/heap_hooks.hpp"
#include "vam/large_region.hpp"
#include "vam/layout.hpp"
#include "vam/segment.hpp"
#include "vam/size_classes.hpp"


namespace alloclab::vam {

// One entry per class, at slots[cls]: malloc's inline path finds a request
// of 9..kSmallMax bytes at byte offset (n + 15) & ~15, which is 16 * class
// (two instructions), and one of 0..8 bytes at slots[0], the 8-byte class
// (api.hpp, malloc_inline). The page classes above 1 KiB follow the fine
// ones; the other geometries (VAM_CLASSES=coarse, VAM_HEADERS=on) use the
// same entries by their own class numbers.
//
// Before, the entries were per request granule ((n + 7) >> 3, which tells
// 1..8 from 9..16 without a test), two per class, and every change of a
// class's hot list wrote both: six instructions of each malloc that popped
// it and four of each free that pushed it, on the path a table churned at
// random takes on every step. The test of n <= 8 now rides on the inline
// path's range check (api.hpp).
inline constexpr unsigned kFrontSlots = kNumClasses;
inline constexpr std::size_t kTinyMax = 8;  // requests of 0..8 bytes: class 0
constexpr unsigned front_slot(unsigned cls) noexcept { return cls; }
constexpr bool front_slots_match() noexcept {
  for (std::size_t n = 0; n <= kSmallMax; ++n) {
    const std::size_t off = n <= kTinyMax ? 0 : (n + 15) & ~std::size_t{15};
    if (off != 16 * front_slot(size_class(n))) return false;
  }
  return front_slot(kNumClasses - 1) < kFrontSlots;
}
static_assert(front_slots_match());

// Each request granule's entry in the heap: its class's front block, and the
// class's hot list. The hot list holds the last objects (up to kHotMax, below)
// that frees gave back to full blocks, held here rather than pushed on those
// blocks: the next mallocs of the class hand them out from this slot, last
// in first out, without touching a block at all. Random replacement in a
// class whose live objects fill their blocks (free one, allocate one) is that
// pattern on every step. Through the block, the free regained the block (it
// became the front) and the malloc read the front the free had just written,
// then the block's list head it had just written, then the link in the object
// it had just written: three loads in a row, each waiting on the store before
// it. From here it is one (freelist_micro; docs/vam.md, "The hot list"). One
// object was enough for that; a table churned at random (slot_churn) frees
// into full blocks of a class several times between two of its mallocs, and
// each free after the first regained a block for one object, which the
// malloc after next then left again through the slow path.
//
// The blocks keep counting their hot objects as live and stay full, in no
// list, so nothing but free can reach them: a free into such a block first
// returns its objects on the list to the block's list (heap.cpp, make_front,
// hot_reclaim), and a second free of a hot object finds it on the list
// (hot_push) or just pushed (hot_reclaim): a double free either way. Only
// free's own fast path fills a list, for its thread's heap, and only in the
// geometry whose mallocs read it (inline_fine != 0);
// the lists go back to their blocks at thread exit and at vam_collect
// (hot_return_all), and statistics do not count them as live.
//
// g_no_front: a class's front when it has none, a record with nothing to
// give (no list, bump == end == null): malloc reads it and misses, as for a
// used-up block, with no test for null (two instructions of every malloc).
// Never written; class_front reads it as null.
extern Block g_no_front VAM_HIDDEN;
struct FrontSlot {
  Block *front = &g_no_front;
  std::uintptr_t hot = 0;  // the hot list: its head | its length - 1, or 0 (below)
};
static_assert(sizeof(FrontSlot) == 16);  // malloc_impl addresses an entry as 16 bytes a class

struct Heap {
  // Each class's front block, the one new objects come from, and its hot
  // list (above); the rest of its available blocks are in `wait` (below).
  FrontSlot slots[kFrontSlots] = {};
  HeapSegments segments;                    // its segments, discards and statistics (heap_segments.hpp)
  alignas(64) std::atomic<FreeObj *> remote{nullptr};
  std::atomic<std::uint32_t> orphan_frees{0};  // remote frees into it while `orphan`
  // Abandoned (its thread exited) or the shared exit heap: nobody drains
  // `remote` in a slow path, so remote frees go to it one by one, count
  // themselves, and every kOrphanBatch-th one has the freeing thread apply
  // them (threads.cpp). Every remote free reads it: it has a line of its
  // own with fields written as rarely, not the line the frees' CAS writes.
  alignas(64) std::atomic<std::uint32_t> orphan{0};
  Heap *all_next = nullptr;                 // every heap ever made (global list)
  Heap *abandoned_next = nullptr;
  // Per block kind (size_classes.hpp: kPage << kind bytes):
  Segment *carve[kBlockKinds] = {};         // segment handing out fresh blocks
  Block *empty_dirty[kBlockKinds] = {};     // empty blocks, pages still resident
  Block *empty_clean[kBlockKinds] = {};     // empty blocks, pages discarded
  std::atomic<Segment *> block_segs{nullptr};  // every small/medium segment (statistics walk them)
  std::int64_t dirty_pages = 0;             // pages of the empty_dirty blocks (large: large.dirty_pages())
  std::int64_t dirty_since_ms = 0;          // it went from no empty pages to some (or was aged)
  std::int64_t dirtied_ms = 0;              // pages last became empty
  std::int64_t swept_ms = 0;                // last sweep maybe_sweep made
  std::uint32_t budget_shift = 0;           // discard threshold doublings (heap.cpp)
  std::int64_t kept_pages = 0;              // abandoned: empty pages it kept (vam.cpp)
  std::int64_t exit_kept = 0;               // abandoned: ... of them, those empty at its thread's exit
  LargeHeap large;
  // Each class's waiting list, the block displaced last first (heap.cpp,
  // make_front). Read only in slow paths: last, so as not to move the
  // fields above.
  Block *wait[kNumClasses] = {};
  Block *wait_tail[kNumClasses] = {};       // its last block (VAM_REGAIN=back appends there)
};

// Empty pages the heap holds resident: empty blocks not yet discarded, and
// the dirty pages of free large chunks. Both shrink again when the memory is
// handed out anew, so a heap that frees and allocates at the same pace stays
// under its threshold and keeps its pages instead of discarding and
// faulting them back in again and again.
inline std::int64_t dirty_total(Heap *h) noexcept { return h->dirty_pages + h->large.dirty_pages(); }

Heap *heap_create() noexcept;
void *small_alloc_slow(Heap *h, unsigned cls) noexcept;
void small_free_slow(Heap *h, Block *b) noexcept;
void large_free_local(Heap *h, void *p) noexcept;
void *large_alloc(Heap *h, std::size_t n, std::size_t align) noexcept;
void drain_remote(Heap *h) noexcept;
// Pages were just added to the heap's dirty ones; `was_clean`: it held none
// before, so the delay starts now (discard.cpp).
void note_dirty(Heap *h, bool was_clean) noexcept;
// Discard every empty page now; unmap the segments found empty twice in a
// row (once, and the carving ones too, for a heap no thread owns: `orphan`).
void heap_collect(Heap *h, bool orphan = false) noexcept;
// Discard the empty pages that have stayed empty since the last such call;
// the rest wait for the next (heap.cpp). `now`: now_ms().
void heap_age(Heap *h, std::int64_t now) noexcept;
// The owning thread is gone. Empty pages up to `room` may stay (heap.cpp);
// returns the pages kept.
std::int64_t heap_abandon(Heap *h, std::int64_t room) noexcept;
// A heap no thread owns: collect it if its empty pages exceed `room` or are
// due (the delay, the largest budget). Returns the empty pages it keeps.
std::int64_t heap_sweep_idle(Heap *h, std::int64_t room) noexcept;
std::int64_t idle_limit() noexcept;    // the pages all abandoned heaps may keep
bool heap_holds_nothing(Heap *h) noexcept;  // no live object: every block empty, no large object
void heap_sweep_idle(Heap *h) noexcept;  // collect a heap no thread owns, if its pages are due

// h is a real heap, never g_empty_heap (api.hpp): only malloc's inline path
// meets that one, and it goes to malloc_miss.
inline Block *class_front(const Heap *h, unsigned cls) noexcept {
  Block *f = h->slots[front_slot(cls)].front;
  return f == &g_no_front ? nullptr : f;
}
inline void set_class_front(Heap *h, unsigned cls, Block *b) noexcept {
  h->slots[front_slot(cls)].front = b != nullptr ? b : &g_no_front;
}
inline void *small_alloc(Heap *h, unsigned cls) noexcept {
  if (void *p = small_alloc_front(class_front(h, cls))) return p;
  return small_alloc_slow(h, cls);
}

// b was full and an object was just pushed on its list: b becomes the front
// of its class in h, its heap (heap.cpp). A tail call of the fast path, like
// the two above.
void small_free_regained(Heap *h, Block *b) noexcept;

}  // namespace alloclab::vam
