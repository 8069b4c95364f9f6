// block_lists.cpp — blocks onto and off a heap's lists (block_lists.hpp).
#include "vam/block_lists.hpp"

#include "vam/discard.hpp"
#include "vam/options.hpp"

namespace alloclab::vam {

namespace {

void wait_unlink(Heap *h, Block *b) noexcept {
  if (b->prev) b->prev->next = b->next;
  else h->wait[b->cls] = b->next;
  if (b->next) b->next->prev = b->prev;
  else h->wait_tail[b->cls] = b->prev;
  b->next = b->prev = nullptr;
}

Segment *new_block_segment(Heap *h, int kind) noexcept {
  // Its header page is in use from the start.
  Segment *s = h->segments.map(h, kind ? SegKind::medium : SegKind::small,
                               12 + static_cast<std::uint32_t>(kind), 1);
  if (!s) return nullptr;
  s->next_block = s->first_block();
  s->nblocks = static_cast<std::uint32_t>(kSegmentBytes >> s->block_shift);
  s->next = h->block_segs.load(std::memory_order_relaxed);
  h->block_segs.store(s, std::memory_order_release);
  return s;
}

// VAM_BLOCK_ALLOC=lifo, the free-list-first alternative to reap allocation:
// a block's objects all go on its free list as it is made, pushed in address
// order, so allocation pops the last pushed (the highest address) first and
// walks down the block; frees push in front. Every page of the block is
// written at once, where bumping touches each page when its first object is
// handed out.
void thread_block(Block *b) noexcept {
  FreeObj *head = free_list_end(b);
  for (char *p = b->start; p < b->end; p += b->size) {
    auto *f = reinterpret_cast<FreeObj *>(p);
    free_link_set(f, head);
    head = f;
  }
  b->free = head;
  b->bump = b->end;
}

}  // namespace

// Block b off its class's lists; when it is the front, the head of the
// waiting list takes its place.
void avail_remove(Heap *h, Block *b) noexcept {
  const unsigned cls = b->cls;
  if (class_front(h, cls) != b) return wait_unlink(h, b);
  Block *next = h->wait[cls];
  set_class_front(h, cls, next);
  if (next) {
    wait_unlink(h, next);
    store_relaxed(next->state, BlockState::front);
  }
}

// An empty block of the right size for `cls`, set up for it: reuse one
// whose pages are still resident, then a discarded one, then carve a fresh
// one. The caller makes it the front (make_front).
Block *get_block(Heap *h, unsigned cls) noexcept {
  const int kind = kind_of_class(cls);
  Block *b = h->empty_dirty[kind];
  if (b) {
    h->empty_dirty[kind] = b->next;
    h->dirty_pages -= block_pages(kind);
  } else if ((b = h->empty_clean[kind]) != nullptr) {
    h->empty_clean[kind] = b->next;
    h->segments.stats.pages_used(block_pages(kind));
    b->discarded = 0;
  } else {
    Segment *s = h->carve[kind];
    if (!s || s->next_block == s->nblocks) {
      reclaim_abandoned();
      s = new_block_segment(h, kind);
      if (!s) return nullptr;
      h->carve[kind] = s;
    }
    const std::uint32_t i = s->next_block;
    store_relaxed(s->next_block, i + 1);
    b = s->blocks() + i;
    b->start = s->block_start(i) + g_layout.header;
    // Every heap's first carve says so; later carves only read the flag
    // (relaxed atomics: several threads may carve their first block at once).
    if (!load_relaxed(g_layout_fixed)) store_relaxed(g_layout_fixed, true);
    b->discarded = 0;
    // Pages of the block table are touched as it grows (records never
    // straddle a page; the header page was counted with the segment).
    const std::uintptr_t before = i == s->first_block()
                                      ? reinterpret_cast<std::uintptr_t>(s)
                                      : reinterpret_cast<std::uintptr_t>(b - 1);
    if (reinterpret_cast<std::uintptr_t>(b) / kPage != before / kPage) h->segments.stats.pages_used(1);
    h->segments.stats.pages_used(block_pages(kind));
  }
  Segment *bs = segment_of(b->start);
  ++bs->used_blocks;
  bs->idle = 0;
  const std::size_t size = page_stride(g_layout.slot[cls]);
  // A page class's objects start at its colour (size_classes.hpp,
  // block_colour); a fine class's at the block's start, also in a reused
  // block that a page class coloured (blocks of one kind serve both when
  // VAM_BLOCK_PAGES or VAM_BLOCK_OBJECTS make their sizes meet), as many as
  // the layout says (Layout::fine_cap).
  std::size_t cap = 0, colour = 0;
  if (cls < kFineClasses) {
    cap = g_layout.fine_cap[cls];
  } else {
    const BlockColour c = block_colour(block_bytes(kind) - g_layout.header, size,
                                       static_cast<std::size_t>(b - bs->blocks()));
    cap = c.cap;
    colour = c.colour;
  }
  b->start = block_base(b) + g_layout.header + colour;
  b->size = static_cast<std::uint32_t>(size);
  store_relaxed(b->cls, static_cast<std::uint8_t>(cls));
  b->recip = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) + size - 1) / size);
  store_relaxed<std::uint16_t>(b->used, 0);
  b->free = free_list_end(b);
  b->has_pending = 0;
  for (std::uint64_t &w : b->pending) w = 0;
  b->bump = b->start;
  b->end = b->start + cap * size;
  if (g_layout.lifo) thread_block(b);
  h->segments.stats.class_block(cls, 1);
  return b;
}

namespace {

// Block b, with no live object, leaves its class (to go onto an empty list
// of the block kind returned).
int leave_class(Heap *h, Block *b) noexcept {
  avail_remove(h, b);
  store_relaxed(b->state, BlockState::empty);
  h->segments.stats.class_block(b->cls, -1);
  --segment_of(b->start)->used_blocks;
  return kind_of_class(b->cls);
}

}  // namespace

// A block with no live objects leaves its class; paper §3.6: its pages can
// go back to the OS.
void retire(Heap *h, Block *b) noexcept {
  const int kind = leave_class(h, b);
  switch (static_cast<DiscardPolicy>(options().discard)) {
    case DiscardPolicy::eager:
      discard_block(h, b, kind);
      push(h->empty_clean[kind], b);
      break;
    case DiscardPolicy::delayed: {
      const bool was_clean = dirty_total(h) <= 0;
      b->young = 1;
      push(h->empty_dirty[kind], b);
      h->dirty_pages += block_pages(kind);
      note_dirty(h, was_clean);
      break;
    }
    case DiscardPolicy::off:
      push(h->empty_dirty[kind], b);
      h->dirty_pages += block_pages(kind);  // as get_block takes them off
      break;
  }
}

void retire_discarded(Heap *h, Block *b) noexcept {
  const int kind = leave_class(h, b);
  b->discarded = 1;
  b->young = 0;
  push(h->empty_clean[kind], b);
  h->segments.stats.pages_discarded(block_pages(kind));
}

}  // namespace alloclab::vam
