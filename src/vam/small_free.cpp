// small_free.cpp — the frees small_free_local (small_free.hpp) does not
// finish, with every check and the aborts they end in; the push onto a hot
// list; and the owner's drain of its remote frees, here so that the
// compiler inlines small_free_other's common case into the drain's loop.
#include "vam/small_free.hpp"

#include "vam/clock.hpp"
#include "vam/free_cache.hpp"
#include "vam/remote.hpp"

namespace alloclab::vam {

__thread FreeSegs t_free_seg __attribute__((tls_model("initial-exec"))) = kNoFreeSegs;

// p's first word decodes as a link: p on the block's list is a double free,
// however many frees came between, and so is p waiting on a remote chain
// with its mark (remote.hpp); otherwise the word is the program's data and
// the free goes on. The walk stops at anything outside the block, so a
// list that use-after-free writes have broken ends it without a fault.
void small_free_suspect(Segment *s, Block *b, void *p, std::uint32_t slot) noexcept {
  std::size_t steps = (static_cast<std::size_t>(b->end - b->start)) / b->size + 1;
  for (FreeObj *f = b->free; free_list_has(f) && steps-- != 0; f = free_link_decode(f)) {
    if (f == p) corruption("free(): double free detected", p);
    if (reinterpret_cast<char *>(f) < b->start || reinterpret_cast<char *>(f) >= b->end) break;
  }
  if (VAM_UNLIKELY(remote_marked(p))) corruption("free(): double free detected (freed by another thread already)", p);
  small_free_push(s, b, p, slot, b->state, b->used, b->free);
}

namespace {

// Every free small_free_other does not finish itself: every check again.
[[gnu::noinline]] void small_free_general(Segment *s, Block *b, void *p) noexcept {
  const auto off = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) -
                                              reinterpret_cast<std::uintptr_t>(b->start));
  const auto i = static_cast<std::uint32_t>((std::uint64_t{off} * b->recip) >> 32);  // slot_of(p)
  const BlockState state = b->state;
  const std::uint16_t live = b->used;
  FreeObj *head = b->free;
  if (VAM_UNLIKELY(static_cast<unsigned>(state) - 1u > 2u || live == 0 || i * b->size != off ||
                   !block_handed_out(b, p)))
    return small_free_invalid(b, p);
  if (VAM_UNLIKELY(state != BlockState::waiting && looks_freed(p))) return small_free_suspect(s, b, p, i);
  small_free_push(s, b, p, i, state, live, head);
}

}  // namespace

// The most common free small_free_local leaves, into a waiting block that
// keeps live objects, is finished here with no stack frame, after the same
// slot-start check (`prod`): the slot's pending bit, a bit already set a
// double free. The rest go to small_free_general, every check again.
void small_free_other(Segment *s, Block *b, void *p, std::uint64_t prod) noexcept {
  const BlockState state = b->state;
  const std::uint16_t live = b->used;
  const bool slot_start = static_cast<std::uint32_t>(prod) < b->recip &&
                          static_cast<char *>(p) >= b->start && static_cast<char *>(p) < b->bump;
  const auto i = static_cast<std::uint32_t>(prod >> 32);
  if (VAM_LIKELY(state == BlockState::waiting && live > 1 && slot_start)) {
    if (VAM_UNLIKELY(free_list_has(b->free))) small_free_pend_list(b);
    std::uint64_t &word = b->pending[i / 64];
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if (VAM_UNLIKELY(word & bit)) return small_free_invalid(b, p);
    word |= bit;
    b->has_pending = 1;
    store_relaxed<std::uint16_t>(b->used, live - 1);
    return;
  }
  small_free_general(s, b, p);
}

namespace {

// The push itself, the checks passed: p's first word links to the rest of
// the list, and the entry holds p with the length one more. A list of one
// is its object alone, its first word untouched (free's fast path): with
// another on top it becomes the end, and says so.
inline void hot_link_on(std::uintptr_t &entry, void *p, std::uintptr_t hot) noexcept {
  if (hot < (std::uintptr_t{1} << kHotLenShift)) *static_cast<std::uintptr_t *>(hot_head(hot)) = hot_encode(0);
  *static_cast<std::uintptr_t *>(p) = hot_encode(hot);
  store_relaxed(entry, reinterpret_cast<std::uintptr_t>(p) | ((hot & ~kHotHeadMask) + (std::uintptr_t{1} << kHotLenShift)));
}

// p is the head, or its first word decodes as a link (hot_link_like): on
// the list, a double free; a word that reads as a link by chance, a push.
[[gnu::noinline]] void hot_push_suspect(std::uintptr_t &entry, Block *b, void *p, std::uintptr_t hot) noexcept {
  if (hot_holds(hot, p, HotOp::free)) return small_free_invalid(b, p);
  void *head = hot_head(hot);
  if (block_holds(b, head)) return small_free_general(segment_of(p), b, p);
  hot_link_on(entry, p, hot);
}

}  // namespace

void hot_push(std::uintptr_t &entry, Block *b, void *p, std::uintptr_t hot) noexcept {
  void *head = hot_head(hot);
  // Both tests of a double free in one branch. Every object on a list of two
  // or more holds its link, so p on the list is the head or reads as a link;
  // a word reads as one never for null, so never for an object a malloc
  // took from a list or a block (both zero the word), and for other data
  // about once in 2^12 (hot_link_like). Of a list of one, only the head is
  // on it: its own word may read as anything.
  if (VAM_UNLIKELY(p == head || hot_link_like(*static_cast<const std::uintptr_t *>(p))))
    return hot_push_suspect(entry, b, p, hot);
  // A second object of the head's full block (a program freeing objects
  // that were made together, as a container's elements): the block is
  // regained, its object on the list goes back to it (hot_reclaim), and the
  // frees after go onto its own list on the fast path. The list is for
  // frees into different blocks.
  if (block_holds(b, head)) return small_free_general(segment_of(p), b, p);
  hot_link_on(entry, p, hot);
}

// A waiting block's list becomes pending slots: they come back in address
// order with the rest when the block is next the front (take_pending), and
// a second free of one of them meets its bit. The objects' links are read
// once here, as the pops would have read them; each must be a slot b has
// handed out, and the walk is bounded by the block's slots.
void small_free_pend_list(Block *b) noexcept {
  FreeObj *const end = free_list_end(b);
  std::size_t steps = static_cast<std::size_t>(b->end - b->start) / b->size;
  const FreeObj *from = nullptr;  // the object whose link led here
  for (FreeObj *f = b->free; f != end; from = f, f = free_link_decode(f)) {
    const auto off = static_cast<std::size_t>(reinterpret_cast<char *>(f) - b->start);
    if (VAM_UNLIKELY(!block_handed_out(b, f) || off % b->size != 0 || steps-- == 0))
      corruption_near("free()", from ? static_cast<const void *>(from) : static_cast<const void *>(b->start));
    const std::size_t i = off / b->size;
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if (VAM_UNLIKELY(b->pending[i / 64] & bit)) corruption("free(): double free detected", f);
    b->pending[i / 64] |= bit;
  }
  b->free = end;
  b->has_pending = 1;
}

namespace {
[[noreturn]] void realloc_freed(void *p) noexcept { corruption("realloc(): double free / realloc of a freed object", p); }
}  // namespace

void small_check_live(Heap *h, Segment *s, void *p) noexcept {
  // An 8- or 16-byte object another thread has freed, not yet applied: its
  // word is its keyed link, which reads as data. h is the caller's heap:
  // applied now, the free puts p where the tests below find it. (p's
  // segment stays mapped: a collection unmaps only a segment it found
  // empty before, and p was live until now.)
  if (s->kind == SegKind::small && remote_keyed_like(p)) drain_remote(h);
  Block *b = block_of(s, p);
  const auto off = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) -
                                              reinterpret_cast<std::uintptr_t>(b->start));
  const auto i = static_cast<std::uint32_t>((std::uint64_t{off} * b->recip) >> 32);  // slot_of(p)
  const BlockState state = b->state;
  if (VAM_UNLIKELY(state == BlockState::fresh || (state != BlockState::empty && i * b->size != off) ||
                   !block_holds(b, p)))
    corruption("realloc(): invalid pointer (not the start of an object)", p);
  if (VAM_UNLIKELY(!block_handed_out(b, p))) corruption("realloc(): invalid pointer (an object never handed out)", p);
  if (VAM_UNLIKELY(state == BlockState::empty || b->used == 0)) realloc_freed(p);
  if (state == BlockState::waiting && (b->pending[i / 64] >> (i % 64) & 1)) realloc_freed(p);
  if (state == BlockState::full && hot_holds(class_hot_list(h, b->cls), p, HotOp::realloc)) realloc_freed(p);
  if (looks_freed(p)) {
    if (remote_marked(p)) realloc_freed(p);
    std::size_t steps = static_cast<std::size_t>(b->end - b->start) / b->size + 1;
    for (FreeObj *f = b->free; free_list_has(f) && steps-- != 0 && block_holds(b, f); f = free_link_decode(f))
      if (f == p) realloc_freed(p);
  }
}

void small_free_invalid(Block *b, void *p) noexcept {  // aborts (small_free.hpp)
  const auto off = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(p) -
                                            reinterpret_cast<std::uintptr_t>(b->start));
  const BlockState st = b->state;
  if (st == BlockState::fresh || !block_holds(b, p) || (st != BlockState::empty && off % b->size != 0))
    corruption("free(): invalid pointer (not the start of an object)", p);
  if (!block_handed_out(b, p)) corruption("free(): invalid pointer (an object never handed out)", p);
  corruption("free(): double free detected", p);
}

// The objects other threads pushed (remote.hpp), each freed as its owner
// would free it, the last pushed first; a record of reclaimed blocks frees
// each block's every slot (remote_record_apply). The count of queued
// objects (remote_reclaim.cpp) restarts before the stack is taken: a batch
// pushed between the two is drained now and counted towards the next
// reclaim, which it can only bring a little early.
void drain_remote(Heap *h) noexcept {
  h->remote_queued.store(0, std::memory_order_relaxed);
  h->drains.store(h->drains.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  h->draining.store(1, std::memory_order_relaxed);
  FreeObj *f = h->remote.exchange(nullptr, std::memory_order_acquire);
  if (f) h->drained_ms.store(now_ms(), std::memory_order_relaxed);
  while (f) {
    if (VAM_UNLIKELY(reinterpret_cast<std::uintptr_t>(f) & kRecordBit)) {
      f = remote_record_apply(h, f);
      continue;
    }
    Segment *s = object_segment(f);
    FreeObj *next;
    if (s->kind == SegKind::medium) {
      next = remote_medium_next(f);
      reinterpret_cast<RemoteObj *>(f)->mark = 0;  // applied: the free must not read it as a link
      small_free_local(s, f);
    } else {
      next = s->kind == SegKind::large ? f->next : remote_keyed_next(f);
      // Freed twice in a row by other threads: the second push linked it to itself.
      if (VAM_UNLIKELY(next == f)) corruption("free(): double free detected (from another thread)", f);
      if (s->kind == SegKind::large) {
        *remote_mark_word(f) = 0;  // applied: no mark outlives the object (large_freed_remotely)
        large_free_local(h, f);
      } else {
        f->next = nullptr;  // applied: the last node's keyed link is its mark
        small_free_local(s, f);
      }
    }
    f = next;
  }
  h->draining.store(0, std::memory_order_relaxed);
}

}  // namespace alloclab::vam
