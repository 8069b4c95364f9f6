// discard.cpp — empty pages back to the system (paper §3.6, VAM_DISCARD),
// and empty segments with them. Under the delayed policy a sweep runs when
// the heap's empty pages reach its budget (discard.hpp) or when
// VAM_DISCARD_DELAY_MS has passed; a sweep ages the pages (heap_age), and
// a budget sweep that leaves the heap above half its budget collects all
// (heap_collect). Each collection also unmaps the segments found wholly
// empty twice in a row (release_empty_segments): after 300 MB of small
// objects are freed, malloc(300 MB) must fit under the same ulimit -v (§4).
#include "vam/discard.hpp"

#include "vam/api.hpp"
#include "vam/free_cache.hpp"
#include "vam/huge.hpp"
#include "vam/options.hpp"
#include "vam/remote.hpp"

namespace alloclab::vam {

namespace {

void discard_run(Heap *h, char *start, std::size_t bytes) noexcept {
  const auto n = static_cast<std::int64_t>(bytes / kPage);
  h->segments.discard(segment_of(start), start, bytes);  // a run never crosses a segment
  h->segments.stats.pages_discarded(n);
}

// A singly linked list (through `next`) sorted by block address: a bottom-up
// merge sort with 64 bins on the stack, O(n log n), no allocation.
Block *merge_by_address(Block *a, Block *b) noexcept {
  Block *head = nullptr;
  Block **tail = &head;
  while (a && b) {
    Block *&lower = a->start < b->start ? a : b;
    *tail = lower;
    tail = &lower->next;
    lower = lower->next;
  }
  *tail = a ? a : b;
  return head;
}

Block *sort_by_address(Block *list) noexcept {
  Block *bins[64] = {};  // bins[i]: a sorted run of 2^i blocks, or null
  while (list) {
    Block *run = list;
    list = list->next;
    run->next = nullptr;
    unsigned i = 0;
    for (; bins[i]; ++i) {
      run = merge_by_address(bins[i], run);
      bins[i] = nullptr;
    }
    bins[i] = run;
  }
  Block *sorted = nullptr;
  for (Block *run : bins)
    if (run) sorted = merge_by_address(run, sorted);
  return sorted;
}

}  // namespace

void discard_block(Heap *h, Block *b, int kind) noexcept {
  const std::int64_t n = block_pages(kind);
  h->segments.discard(segment_of(b->start), block_base(b), static_cast<std::size_t>(n) * kPage);
  b->discarded = 1;
  h->segments.stats.pages_discarded(n);
}

namespace {

void maybe_sweep(Heap *h, std::int64_t now) noexcept {
  const Options &o = options();
  if (o.discard != int(DiscardPolicy::delayed)) return;
  const std::int64_t dirty = dirty_total(h);
  if (dirty <= 0) return;
  const std::int64_t base = live_heaps() > 1 ? o.discard_threshold : o.discard_threshold_alone;
  if (dirty >= base << h->budget_shift) {
    if (now - h->swept_ms < o.discard_delay_ms && h->budget_shift < kMaxBudgetShift) ++h->budget_shift;
    h->swept_ms = now;
    // The pages empty since before the last aging sweep go first; the rest
    // only if that leaves the heap above half its budget.
    heap_age(h, now);
    if (dirty_total(h) >= (base << h->budget_shift) / 2) heap_collect(h);
  } else if (now - h->dirty_since_ms >= o.discard_delay_ms) {
    h->swept_ms = now;
    heap_age(h, now);
    if (dirty_total(h) < dirty && h->budget_shift > 0) --h->budget_shift;
  }
}

}  // namespace

// Pages were just added to the heap's dirty ones; `was_clean`: it held none
// before, so the delay starts now.
void note_dirty(Heap *h, bool was_clean) noexcept {
  const std::int64_t now = now_ms();
  if (was_clean) h->dirty_since_ms = now;
  h->dirtied_ms = now;
  maybe_sweep(h, now);
  orphan_tick();
}

namespace {

constexpr std::uint32_t kDoomed = 2;

// Pages still counted for segment s once all its blocks are discarded: the
// header page and the block-table pages up to the last carved record.
std::int64_t table_pages(Segment *s) noexcept {
  if (s->next_block == s->first_block()) return 1;
  const auto last = reinterpret_cast<std::uintptr_t>(s->blocks() + (s->next_block - 1)) -
                    reinterpret_cast<std::uintptr_t>(s);
  return static_cast<std::int64_t>(last / kPage) + 1;
}

// A small or medium segment whose blocks are all on the empty lists at two
// collections in a row is unmapped, but for the segments the heap is
// carving from: they stay for a program that frees everything and
// allocates again at once. A heap no thread owns (`orphan`) has no program
// about to allocate again: its empty segments go at the first collection,
// the ones it was carving from included.
void release_empty_segments(Heap *h, bool orphan) noexcept {
  bool any = false;
  for (Segment *s = h->block_segs.load(std::memory_order_relaxed); s; s = s->next) {
    if (s->used_blocks != 0) continue;
    const unsigned kind = s->block_shift - 12;
    if (s == h->carve[kind]) {
      if (!orphan) continue;
      h->carve[kind] = nullptr;
    }
    s->idle = s->idle || orphan ? kDoomed : 1;
    any |= s->idle == kDoomed;
  }
  if (!any) return;
  // Their blocks leave the empty lists (every empty block is clean here:
  // heap_collect has just discarded the dirty ones).
  for (int kind = 0; kind < int(kBlockKinds); ++kind) {
    Block **link = &h->empty_clean[kind];
    while (Block *b = *link) {
      if (segment_of(b->start)->idle == kDoomed) *link = b->next;
      else link = &b->next;
    }
  }
  // Off the heap's list, under the lock a statistics walk holds.
  Segment *doomed = nullptr;
  Segment *kept = nullptr;
  Segment **tail = &kept;
  segment_walk_lock();
  for (Segment *s = h->block_segs.load(std::memory_order_relaxed), *next; s; s = next) {
    next = s->next;
    if (s->idle == kDoomed) {
      s->next = doomed;
      doomed = s;
    } else {
      *tail = s;
      tail = &s->next;
    }
  }
  *tail = nullptr;
  h->block_segs.store(kept, std::memory_order_release);
  segment_walk_unlock();
  while (Segment *s = doomed) {
    doomed = s->next;
    // Only the thread that owns h (or, for an abandoned heap, none) can hold
    // it as its verified segment.
    free_seg_forget(s);
    h->segments.unmap(s, table_pages(s));
  }
}

// Discard a list of empty blocks of one kind and move them to the clean list.
// Blocks empty out in the program's order, not the address order they were
// carved in: sort them, then discard each run of adjacent blocks with one call.
void discard_blocks(Heap *h, int kind, Block *list) noexcept {
  const std::size_t bytes = block_bytes(kind);
  char *run = nullptr;
  std::size_t run_bytes = 0;
  Block *b = sort_by_address(list);
  while (b) {
    Block *next = b->next;
    if (run && block_base(b) == run + run_bytes) {
      run_bytes += bytes;
    } else {
      if (run) discard_run(h, run, run_bytes);
      run = block_base(b);
      run_bytes = bytes;
    }
    b->discarded = 1;
    b->young = 0;
    push(h->empty_clean[kind], b);
    b = next;
  }
  if (run) discard_run(h, run, run_bytes);
}

}  // namespace

void heap_collect(Heap *h, bool orphan) noexcept {
  for (int kind = 0; kind < int(kBlockKinds); ++kind) {
    Block *list = h->empty_dirty[kind];
    h->empty_dirty[kind] = nullptr;
    discard_blocks(h, kind, list);
  }
  {
    OwnerGuard lock(h->large.lock());
    h->large.sweep();
  }
  h->dirty_pages = 0;
  release_empty_segments(h, orphan);
  huge_cache_expire(false);  // the shared huge cache's old mappings go back too
}

void collect_thread(bool everything) noexcept {
  remote_flush_all();  // the frees this thread holds for other heaps go to them
  if (Heap *h = t_heap; h != &g_empty_heap) {
    drain_remote(h);  // other threads' frees into this heap: blocks they empty go too
    hot_return_all(h);
    heap_collect(h, everything);
  }
  huge_cache_expire(true);
}

// The aging sweep: pages emptied since the previous one are young, survive
// this one and are old from then on; the old ones go. So a page goes back
// once it has stayed empty through a whole delay, within two, and a busy
// heap keeps the pages it is about to reuse (docs/vam.md, "Discarding").
// The budget still bounds the pages kept, whatever their age (maybe_sweep).
void heap_age(Heap *h, std::int64_t now) noexcept {
  std::int64_t kept = 0;
  for (int kind = 0; kind < int(kBlockKinds); ++kind) {
    // The young keep their order (the most recently emptied first, reused first).
    Block *young = nullptr;
    Block **tail = &young;
    Block *old = nullptr;
    for (Block *b = h->empty_dirty[kind], *next; b; b = next) {
      next = b->next;
      if (b->young) {
        b->young = 0;
        *tail = b;
        tail = &b->next;
        kept += block_pages(kind);
      } else {
        push(old, b);
      }
    }
    *tail = nullptr;
    h->empty_dirty[kind] = young;
    discard_blocks(h, kind, old);
  }
  h->dirty_pages = kept;
  {
    OwnerGuard lock(h->large.lock());
    h->large.sweep(true);
  }
  h->dirty_since_ms = now;  // what is left is due at the next aging sweep
  // Segments go back at collections that leave no block dirty (release_empty_segments
  // takes only clean blocks off the lists).
  bool dirty = false;
  for (const Block *b : h->empty_dirty) dirty |= b != nullptr;
  if (!dirty) release_empty_segments(h, false);
  huge_cache_expire(false);
}

}  // namespace alloclab::vam
