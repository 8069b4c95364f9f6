// reuse_order.cpp — slow paths of a thread heap: ordered block lists, block reuse,
// page discarding, remote frees.
#include "vam/discard.hpp"
#include "vam/heap.hpp"
#include "vam/hot_list.hpp"

#include <time.h>

#include "layers/os.hpp"
#include "vam/huge.hpp"
#include "vam/options.hpp"
#include "vam/segment_source.hpp"

namespace alloclab::vam {

namespace {

// A class's available blocks (paper §3.5) are the front (class_front,
// heap.hpp), the block allocation takes objects from, in no list; and
// behind it the waiting list, h->wait[cls], linked both ways, the block
// displaced last first. Full blocks are in neither. The front is null only
// when the waiting list is empty too.
//
// The head of the waiting list is the block the last regain displaced
// (make_front). It keeps state `front`, so frees into it still take the free
// fast path onto its LIFO list, and allocation goes back to it when the
// front is used up; the blocks behind it wait (their frees set pending
// bits, heap.hpp).
void wait_push(Heap *h, Block *b) noexcept {
  Block *&head = h->wait[b->cls];
  b->prev = nullptr;
  b->next = head;
  if (head) {
    head->prev = b;
    if (head->state == BlockState::front) store_relaxed(head->state, BlockState::waiting);
  } else {
    h->wait_tail[b->cls] = b;
  }
  head = b;
}

// VAM_ORDER=fifo: b, a full block that regained space, joins the end of
// the waiting list in state `front`, its frees still pushed on its list:
// allocation reaches it after every block ahead of it, by which time more
// of its objects may have been freed.
void wait_append(Heap *h, Block *b) noexcept {
  Block *&tail = h->wait_tail[b->cls];
  b->next = nullptr;
  b->prev = tail;
  if (tail) tail->next = b;
  else h->wait[b->cls] = b;
  tail = b;
  store_relaxed(b->state, BlockState::front);
}

void wait_unlink(Heap *h, Block *b) noexcept {
  if (b->prev) b->prev->next = b->next;
  else h->wait[b->cls] = b->next;
  if (b->next) b->next->prev = b->prev;
  else h->wait_tail[b->cls] = b->prev;
  b->next = b->prev = nullptr;
}

// No free slot, none pending, no room to bump: allocation cannot use it.
inline bool used_up(const Block *b) noexcept {
  return !free_list_has(b->free) && b->bump >= b->end && !b->has_pending;
}

// b, a new block or a full one that regained space, becomes the front
// (§3.5: the object just freed, likely still in cache, is the next one
// handed out; a new block is where the next objects go). The front it
// displaces goes to the head of the waiting list, still in state `front`
// (above) — unless it is used up (typically a block regained before, whose
// one slot the next malloc took): then it is full, and in no list at no
// cost, since the front is in none. Random replacement in a class whose
// live objects fill its blocks makes that the common case: each free
// regains a block, the next malloc takes its slot, the next free regains
// another. With the front the head of a doubly linked list, that move
// unlinked and relinked three block records, ~45 instructions a free:
// freelist_micro took 1.3x mimalloc's time (docs/vam.md, "Reap allocation
// and ordering").
void make_front(Heap *h, Block *b) noexcept {
  const unsigned cls = b->cls;
  hot_reclaim(h, b);
  if (Block *f = class_front(h, cls)) {
    if (used_up(f)) store_relaxed(f->state, BlockState::full);
    else wait_push(h, f);
  }
  set_class_front(h, cls, b);
  store_relaxed(b->state, BlockState::front);
}

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

// The class's sole available block: the front, with none waiting.
inline bool sole_block(const Heap *h, const Block *b) noexcept {
  return class_front(h, b->cls) == b && h->wait[b->cls] == nullptr;
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

// An empty block of the right size for `cls`: reuse one whose pages are
// still resident, then a discarded one, then carve a fresh one.
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
  // At most kMaxSlots objects (the pending bitmap): only VAM_BLOCK_PAGES above
  // 4 (or VAM_BLOCK_OBJECTS above 512) makes that bite, leaving the tail of a
  // small class's block untouched.
  std::size_t cap = block_bytes(kind) / size;
  if (cap > kMaxSlots) cap = kMaxSlots;
  // A page class's objects start at its colour (size_classes.hpp,
  // block_colour); every other class's at the block's start, also in a
  // reused block that a page class coloured (blocks of one kind serve
  // both when VAM_BLOCK_PAGES or VAM_BLOCK_OBJECTS make their sizes meet).
  std::size_t colour = 0;
  if (cls >= kFineClasses) {
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
  make_front(h, b);
  return b;
}

// A block with no live objects leaves its class; paper §3.6: its pages can
// go back to the OS.
void retire(Heap *h, Block *b) noexcept {
  avail_remove(h, b);
  store_relaxed(b->state, BlockState::empty);
  h->segments.stats.class_block(b->cls, -1);
  --segment_of(b->start)->used_blocks;
  const int kind = kind_of_class(b->cls);
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

// The slots freed while `b` was not the front become its free list, lowest
// address first. Only the bitmap is read; each slot is written once, its
// next pointer, and these independent stores overlap where a walk of a list
// would wait for one miss after another.
bool take_pending(Block *b) noexcept {
  FreeObj *const end = free_list_end(b);
  FreeObj *head = end;
  FreeObj *last = nullptr;
  const std::size_t words = (static_cast<std::size_t>(b->end - b->start) / b->size + 63) / 64;
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t bits = b->pending[w];
    if (!bits) continue;
    b->pending[w] = 0;
    char *base = b->start + w * 64 * b->size;
    do {
      auto *f = reinterpret_cast<FreeObj *>(base + static_cast<std::size_t>(__builtin_ctzll(bits)) * b->size);
      if (last) free_link_set(last, f);
      else head = f;
      last = f;
      bits &= bits - 1;
    } while (bits);
  }
  if (last) free_link_set(last, end);
  b->free = head;
  b->has_pending = 0;
  return last != nullptr;
}

}  // namespace

void *small_alloc_slow(Heap *h, unsigned cls) noexcept {
  if (h->remote.load(std::memory_order_relaxed) != nullptr) drain_remote(h);
  orphan_tick();
  // A used-up front is full and leaves; the head of the waiting list takes
  // its place, its pending frees becoming its free list.
  for (Block *b = class_front(h, cls); b != nullptr; b = class_front(h, cls)) {
    if (free_list_has(b->free) || b->bump < b->end || (b->has_pending && take_pending(b))) return small_alloc(h, cls);
    avail_remove(h, b);
    store_relaxed(b->state, BlockState::full);
  }
  if (!get_block(h, cls)) return nullptr;
  return small_alloc(h, cls);
}

void small_free_slow(Heap *h, Block *b) noexcept {
  if (b->state == BlockState::full) small_free_regained(h, b);
  // Keep an empty block only when it is its class's sole block: the next
  // allocation of this size would just need it again.
  if (b->used == 0 && !sole_block(h, b)) retire(h, b);
}

// Where a full block that regains space goes (VAM_ORDER): the front
// (recent, paper §3.5), or the end of the waiting list (fifo) when its
// class has a front to go on with.
void small_free_regained(Heap *h, Block *b) noexcept {
  if (VAM_UNLIKELY(g_layout.order == static_cast<std::uint32_t>(ReuseOrder::fifo)) && class_front(h, b->cls) != nullptr) {
    hot_reclaim(h, b);
    return wait_append(h, b);
  }
  make_front(h, b);
}

// A heap no thread owns. Programs that start a thread per task hand the same
// heap from one thread to the next within microseconds, and discarding its
// empty pages at every exit made the next thread fault them all back in. So
// under the delayed policy an abandoned heap keeps its empty pages while
// they fit `room` (what is left of the budget all abandoned heaps share:
// VAM_DISCARD_THRESHOLD_ALONE, what one lone thread's heap may keep; vam.cpp)
// and gives them back once they reach a heap's largest budget or have
// waited VAM_DISCARD_DELAY_MS (checked whenever frees into abandoned heaps
// are applied, and when a heap maps a new segment).
std::int64_t idle_limit() noexcept { return options().discard_threshold_alone; }

// A segment backed by transparent huge pages from its first touch holds, at
// its carving point, the rest of a 2 MiB page the kernel filled in whole:
// pages no block has been carved from, resident all the same, and counted
// nowhere. A running heap carves into them soon; a heap whose thread is gone
// may never, and sixteen exited threads' heaps kept 32 MB of them resident
// (bench/xthread_rss). So when such a heap is collected, that rest goes too,
// once per segment: the discard withdraws the segment's advice, so the pages
// it faults in later are small ones.
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
  if (h->segments.stats.large_live_objects() != 0) return false;
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
  h->large.quick_flush();  // its pages become dirty ones, which the idle sweeps count
  // A front block left empty would sit idle until the heap is adopted.
  for (unsigned c = 0; c < kNumClasses; ++c) {
    Block *b = class_front(h, c);
    if (b && b->used == 0) retire(h, b);
  }
  return heap_sweep_idle(h, room);
}

}  // namespace alloclab::vam
