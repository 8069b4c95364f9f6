// heap.hpp — one thread's heap: the record, and the operations on it that
// the heap's files call across one another.
//
//   slots[cls]   per class: the front block and the hot list    classes 8..VAM_PAGE_MAX
//   wait[cls]    the class's other available blocks, in Vam's order (§3.5)
//   empty_*      empty blocks per block kind, resident or discarded
//   large        LargeHeap (large_region.hpp)                     VAM_PAGE_MAX..VAM_LARGE_MAX
//   remote       objects other threads freed here (remote.hpp)
//
// One thread uses a heap at a time, with no lock; other threads reach it
// only through `remote` and the orphan flags. Heaps are never destroyed: a
// thread's exit abandons its heap whole and the next new thread adopts it,
// so a segment's owner pointer never dangles.
//
// The slow paths call one another in a circle (a malloc's slow path applies
// remote frees, which are frees, which regain or retire blocks), so every
// out-of-line function on a heap that another file calls is declared here,
// beneath all the files that define them. A concept's header holds its
// inline code and the out-of-line halves of that code.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/free_list.hpp"
#include "vam/heap_hooks.hpp"
#include "vam/heap_segments.hpp"
#include "vam/large_region.hpp"
#include "vam/layout.hpp"
#include "vam/segment.hpp"
#include "vam/size_classes.hpp"

namespace alloclab::vam {

// One entry per class, at slots[cls]: malloc's inline path finds a request
// of 9..kSmallMax bytes at byte offset (n + 15) & ~15 = 16 * class, and one
// of 0..8 bytes at slots[0] (api.hpp, malloc_inline). The other geometries
// use the entries by their own class numbers.
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

// A class's entry: its front block and its hot list (hot_list.hpp), read
// together by malloc's inline path. A class with no front holds g_no_front,
// a record with nothing to give (bump == end == null, no list), so malloc
// misses as on a used-up block and tests no pointer for null. g_no_front is
// never written; class_front reads it as null.
extern Block g_no_front VAM_HIDDEN;
struct FrontSlot {
  Block *front = &g_no_front;
  std::uintptr_t hot = 0;  // the hot list: its head | its length - 1, or 0
};
static_assert(sizeof(FrontSlot) == 16);  // malloc_impl addresses an entry as 16 bytes a class

struct Heap {
  // First: heap_create keeps these lines off the cache set of page starts
  // (heap.cpp, kHeapColour).
  FrontSlot slots[kFrontSlots] = {};
  HeapSegments segments;                    // its segments, discards and statistics (heap_segments.hpp)
  alignas(64) std::atomic<FreeObj *> remote{nullptr};
  std::atomic<std::uint32_t> orphan_frees{0};  // remote frees into it while `orphan`
  // Objects pushed in batches since the owner last drained, less those a
  // reclaim pushed back (remote_reclaim.cpp): on `remote`'s line, which the
  // push has just written.
  std::atomic<std::int64_t> remote_queued{0};
  // The owner's drains, counted (it alone writes it), and the count the
  // last reclaim threshold saw (the pusher past the threshold writes it):
  // an owner that drained between two thresholds is draining its stack
  // itself, and the reclaim is skipped (remote_reclaim.cpp). On the line
  // the drain and the pushes write anyway.
  std::atomic<std::uint32_t> drains{0};
  std::atomic<std::uint32_t> drains_seen{0};
  std::atomic<std::uint32_t> draining{0};  // 1 while the owner drains: it is working
  // When the owner last drained frees (now_ms; 0: never). An owner that
  // drained within kOwnerWorkingMs is working, whatever the pushes counted
  // since (remote_reclaim.cpp).
  std::atomic<std::int64_t> drained_ms{0};
  // The owner thread's kernel id (0: none, or not known), set when a thread
  // takes the heap: a reclaim asks the kernel whether it is waiting for a
  // CPU (remote_reclaim.cpp).
  std::atomic<std::int32_t> tid{0};
  // Set while no thread drains `remote` (abandoned, or the exit heap):
  // remote frees then go one by one and count themselves (threads.cpp).
  // Every remote free reads it: not on the line the frees' CAS writes.
  alignas(64) std::atomic<std::uint32_t> orphan{0};
  Heap *all_next = nullptr;                 // every heap ever made (global list)
  Heap *abandoned_next = nullptr;
  // Per block kind (size_classes.hpp: kPage << kind bytes):
  Segment *carve[kBlockKinds] = {};         // segment handing out fresh blocks
  Block *empty_dirty[kBlockKinds] = {};     // empty blocks, pages still resident
  Block *empty_clean[kBlockKinds] = {};     // empty blocks, pages discarded
  std::atomic<Segment *> block_segs{nullptr};  // every small/medium segment (statistics walk them)
  std::int64_t dirty_pages = 0;             // pages of the empty_dirty blocks (large: large.dirty_pages())
  std::int64_t dirty_since_ms = 0;          // when it last went from no empty pages to some, or was aged
  std::int64_t dirtied_ms = 0;              // when pages last became empty
  std::int64_t swept_ms = 0;                // when the budget last forced a sweep (discard.cpp)
  std::uint32_t budget_shift = 0;           // discard threshold doublings (discard.cpp)
  std::int64_t kept_pages = 0;              // abandoned: empty pages it keeps (threads.cpp)
  std::int64_t exit_kept = 0;               // abandoned: of those, the ones empty at its thread's exit
  LargeHeap large;
  // Each class's waiting list (block_lists.hpp). Slow paths only: last.
  Block *wait[kNumClasses] = {};
  Block *wait_tail[kNumClasses] = {};       // its last block (VAM_ORDER=fifo, auto append there)
};

// h is a real heap, never g_empty_heap (api.hpp): only malloc's inline path
// meets that one, and it goes to malloc_miss.
inline Block *class_front(const Heap *h, unsigned cls) noexcept {
  Block *f = h->slots[front_slot(cls)].front;
  return f == &g_no_front ? nullptr : f;
}
inline void set_class_front(Heap *h, unsigned cls, Block *b) noexcept {
  h->slots[front_slot(cls)].front = b != nullptr ? b : &g_no_front;
}

// Empty pages the heap holds resident: its empty blocks not yet discarded
// and its free large chunks' dirty pages. Both fall as the memory is handed
// out again, so a heap that frees and allocates at the same pace stays
// under its discard budget (discard.cpp).
inline std::int64_t dirty_total(Heap *h) noexcept { return h->dirty_pages + h->large.dirty_pages(); }

// ---- the heap's operations, by the file that defines them ------------------

// heap.cpp
Heap *heap_create() noexcept;
void *large_alloc(Heap *h, std::size_t n, std::size_t align) noexcept;
void large_free_local(Heap *h, void *p) noexcept;  // p is a large object of h, freed by h's owner

// reuse_order.cpp
void *small_alloc_slow(Heap *h, unsigned cls) noexcept;  // the front cannot serve; null: no memory
void small_free_slow(Heap *h, Block *b) noexcept;        // b was full (regain) or is empty (retire)
void small_free_regained(Heap *h, Block *b) noexcept;    // b was full and took a free (VAM_ORDER)

// block_lists.cpp
void avail_remove(Heap *h, Block *b) noexcept;     // off its class's lists (a front: the next takes over)
Block *get_block(Heap *h, unsigned cls) noexcept;  // an empty block set up for cls; null: no memory
void retire(Heap *h, Block *b) noexcept;           // no live object: onto the empty lists
// No live object, and its pages already given back (remote_reclaim.cpp):
// onto the clean list, whatever the discard policy.
void retire_discarded(Heap *h, Block *b) noexcept;

// small_free.cpp
// p, freed into full block b, onto the hot list `hot` (one object or more,
// with room) held in `entry`: out of line, so that free's fast path, which
// pushes onto an empty list, saves no registers for this one. The caller
// passes what it has read, so that nothing is read twice.
void hot_push(std::uintptr_t &entry, Block *b, void *p, std::uintptr_t hot) noexcept;
void drain_remote(Heap *h) noexcept;     // apply the frees on h's remote stack

// hot_list.cpp
void hot_return_all(Heap *h) noexcept;   // every hot object back to its block

// discard.cpp
void discard_block(Heap *h, Block *b, int kind) noexcept;  // b is empty, of block kind `kind`
// Pages were just added to the dirty ones; `was_clean`: there were none.
void note_dirty(Heap *h, bool was_clean) noexcept;
// Discard every empty page now; unmap the segments found empty twice in a
// row (once, and the carving ones too, for a heap no thread owns: `orphan`).
void heap_collect(Heap *h, bool orphan = false) noexcept;
// Everything the calling thread can give back, now (vam_collect): its frees
// batched for other heaps, its hot lists, its heap's empty pages and the
// shared huge cache. `everything`: also every wholly empty segment of its heap
// at once, the ones it carves from included (a mapping just failed: huge_alloc
// frees the address space and tries once more).
void collect_thread(bool everything) noexcept;
// Discard the pages that stayed empty since the last aging; `now`: now_ms().
void heap_age(Heap *h, std::int64_t now) noexcept;

// abandon.cpp: a heap no thread owns keeps up to `room` empty pages until
// they are due; each returns the pages kept.
std::int64_t heap_abandon(Heap *h, std::int64_t room) noexcept;     // h's thread has exited
std::int64_t heap_sweep_idle(Heap *h, std::int64_t room) noexcept;  // collect h if its pages are due
std::int64_t idle_limit() noexcept;         // the pages all abandoned heaps may keep
bool heap_holds_nothing(Heap *h) noexcept;  // no live object: every block empty, no large object

// A small object of class cls: the class's front block, else the slow path.
inline void *small_alloc(Heap *h, unsigned cls) noexcept {
  if (void *p = small_alloc_front(class_front(h, cls))) return p;
  return small_alloc_slow(h, cls);
}

}  // namespace alloclab::vam
