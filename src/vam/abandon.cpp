// abandon.cpp — a heap whose thread has exited, until another adopts it.
// threads.cpp calls these at the thread's exit, before the heap is listed as
// abandoned, or with the global lock held, which adoption needs too: the
// caller is the heap's only user. Under the delayed policy an abandoned heap
// keeps its empty pages within `room`, the rest of what all abandoned heaps
// may keep (idle_limit), for a program that hands heaps from thread to
// thread; it gives them back at a heap's largest budget or after
// VAM_DISCARD_DELAY_MS, and collected it keeps nothing.
#include "vam/block_lists.hpp"
#include "vam/discard.hpp"
#include "vam/heap.hpp"
#include "vam/hot_list.hpp"
#include "vam/options.hpp"

namespace alloclab::vam {

// What all abandoned heaps together may keep: what one lone thread's heap
// may (VAM_DISCARD_THRESHOLD_ALONE).
std::int64_t idle_limit() noexcept { return options().discard_threshold_alone; }

// A segment backed by transparent huge pages from its first touch holds, at
// its carving point, the rest of a 2 MiB page the kernel filled in whole:
// pages no block has been carved from, resident all the same, and counted
// nowhere. A running heap carves into them soon; a heap whose thread is gone
// may never (docs/vam.md, "Huge pages"). So when such a heap is collected,
// that rest goes too, once per segment: the discard withdraws the segment's
// advice, so the pages it faults in later are small ones.
static void discard_carve_tails(Heap *h) noexcept {
  constexpr std::uintptr_t kHugePageBytes = std::uintptr_t{2} << 20;
  for (Segment *s : h->carve) {
    if (!s || s->thp_tail != 1 || s->next_block >= s->nblocks) continue;
    const auto from = reinterpret_cast<std::uintptr_t>(s->block_start(s->next_block));
    const std::uintptr_t to = (from + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    if (to == from) continue;  // at a boundary: no page begun yet
    s->thp_tail = 2;
    h->segments.discard(s, reinterpret_cast<void *>(from), to - from);
  }
}

bool heap_holds_nothing(Heap *h) noexcept {
  if (h->segments.stats.large_live_objects() != h->large.reclaimed().large_objects.get()) return false;
  for (unsigned c = 0; c < kNumClasses; ++c) {
    const std::int64_t n = h->segments.stats.class_blocks(c);
    if (n == 0) continue;
    const Block *b = class_front(h, c);
    if (n > 1 || b == nullptr || b->used != 0) return false;  // the sole empty block a class keeps (the front)
  }
  return true;
}

std::int64_t heap_sweep_idle(Heap *h, std::int64_t room) noexcept {
  const Options &o = options();
  if (o.discard == int(DiscardPolicy::off)) return 0;  // not counted: nothing ever goes back
  if (o.discard == int(DiscardPolicy::delayed)) {
    const std::int64_t dirty = dirty_total(h);
    if (dirty <= 0) return 0;
    if (dirty <= room && dirty < (o.discard_threshold << kMaxBudgetShift)) {
      // Nothing emptied for a whole delay: every empty page has been idle
      // that long, and all go (below). Else those that were empty at the
      // last aging sweep go, and the others wait for the next.
      const std::int64_t now = now_ms();
      if (now - h->dirty_since_ms < o.discard_delay_ms) return dirty;
      if (now - h->dirtied_ms < o.discard_delay_ms) {
        heap_age(h, now);
        return dirty_total(h);
      }
    }
  }
  // A class's sole block stays when it empties (small_free_slow), for the
  // next allocation; none comes to a heap no thread owns.
  for (unsigned c = 0; c < kNumClasses; ++c) {
    Block *b = class_front(h, c);
    if (b && b->used == 0 && sole_block(h, b)) retire(h, b);
  }
  heap_collect(h, true);
  discard_carve_tails(h);
  return 0;
}

std::int64_t heap_abandon(Heap *h, std::int64_t room) noexcept {
  hot_return_all(h);
  drain_remote(h);
  {
    OwnerGuard lock(h->large.lock());
    h->large.quick_flush();  // its pages become dirty ones, which the idle sweeps count
  }
  // A front block left empty would sit idle until the heap is adopted.
  for (unsigned c = 0; c < kNumClasses; ++c) {
    Block *b = class_front(h, c);
    if (b && b->used == 0) retire(h, b);
  }
  return heap_sweep_idle(h, room);
}

}  // namespace alloclab::vam
