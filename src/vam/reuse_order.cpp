// reuse_order.cpp — slow paths of a thread heap: ordered block lists, block reuse,
// page discarding, remote frees.
#include "vam/block_lists.hpp"
#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/hot_list.hpp"
#include "vam/options.hpp"

namespace alloclab::vam {

namespace {

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
//
// Out of line: one copy for its three callers. Inlined into
// small_free_regained, it made small_free_slow's call of that save and
// restore three registers (slot_churn +0.1% instructions).
[[gnu::noinline]] void make_front(Heap *h, Block *b) noexcept {
  const unsigned cls = b->cls;
  hot_reclaim(h, b);
  if (Block *f = class_front(h, cls)) {
    if (used_up(f)) store_relaxed(f->state, BlockState::full);
    else wait_push(h, f);
  }
  set_class_front(h, cls, b);
  store_relaxed(b->state, BlockState::front);
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
  Block *b = get_block(h, cls);
  if (!b) return nullptr;
  make_front(h, b);
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

}  // namespace alloclab::vam
