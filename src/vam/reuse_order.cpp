// reuse_order.cpp — which block a class allocates from next (paper §3.5),
// and the two slow paths that apply the order. Allocation takes from the
// class's front: its LIFO list, then its bump space. A full block that
// regains space becomes the front (VAM_ORDER=recent, the paper's rule), so
// the object just freed is the next handed out; VAM_ORDER=fifo puts it at
// the end of the waiting list; VAM_ORDER=auto, the default, at the end
// while the class has few blocks waiting, at the front otherwise
// (regain_at_end). A used-up front gives way to the head of the waiting
// list, whose pending slots then become its list in address order.
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

// b, a new block or a full one that regained space, becomes the front. The
// front it displaces heads the waiting list in state `front`, so its frees
// stay on free's fast path — unless it is used up (typically a block
// regained before, whose one slot the next malloc took): then it is full,
// in no list, at no cost. Random replacement in a class whose live objects
// fill its blocks makes that the common case, and no list is touched
// (docs/vam.md, "Reap allocation and ordering").
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

// The slots freed while `b` was waiting become its free list, lowest address
// first: only the bitmap is read, and each slot's link is one store, these
// stores overlapping where sorting a list would wait on miss after miss.
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

// Remote frees are applied first: they may give the front back objects.
void *small_alloc_slow(Heap *h, unsigned cls) noexcept {
  if (h->remote.load(std::memory_order_relaxed) != nullptr) drain_remote(h);
  orphan_tick();
  // A used-up front is full and leaves; the head of the waiting list takes
  // its place.
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
  // A class's sole block stays when empty: the next allocation needs it.
  if (b->used == 0 && !sole_block(h, b)) retire(h, b);
}

namespace {

// Blocks a class may have waiting for VAM_ORDER=auto to send a regained
// block to the end of the list: the end is then at most this many blocks
// from the front.
constexpr int kFewWaiting = 4;

bool few_waiting(const Heap *h, unsigned cls) noexcept {
  const Block *w = h->wait[cls];
  for (int i = 0; i < kFewWaiting && w != nullptr; ++i) w = w->next;
  return w == nullptr;
}

// VAM_ORDER=auto: the free that regains b (its object now heads b's list)
// lands next to the class's hot head, an object of b freed just before it:
// a program freeing objects that were made together (a container's
// elements, a run freed newest first), whose next mallocs are best served
// from b while its objects are in the cache. Frees that land at random
// among a class's blocks are next to each other seldom.
bool freed_next_to_hot(const Heap *h, const Block *b) noexcept {
  const auto d = reinterpret_cast<std::uintptr_t>(b->free) - reinterpret_cast<std::uintptr_t>(class_hot(h, b->cls));
  return d == b->size || 0 - d == b->size;
}

// Does regained block b join the end of the waiting list, rather than
// become the front? Never without a front to go on with. `auto`: the
// paper's front (§3.5) makes the object just freed the next one handed
// out, but where a class's blocks are nearly all full and frees come at
// random, each regain brings one or two objects, a slow malloc follows
// nearly every one, and the front changes back and forth (larson: 0.93
// mispredicted branches an operation, 0.23 with the end). At the end,
// behind at most kFewWaiting blocks, it gathers the frees that come while
// they are used. With more blocks waiting (a fragmented heap) the end is
// far from what the program touches now, and the front keeps allocation
// there; so it does for a run of frees into one block.
bool regain_at_end(const Heap *h, const Block *b) noexcept {
  const auto order = static_cast<ReuseOrder>(g_layout.order);
  if (order == ReuseOrder::recent || class_front(h, b->cls) == nullptr) return false;
  return order == ReuseOrder::fifo || (few_waiting(h, b->cls) && !freed_next_to_hot(h, b));
}

}  // namespace

// VAM_ORDER: the front (recent), the end of the waiting list (fifo), or,
// by the class's state, either (auto: regain_at_end).
void small_free_regained(Heap *h, Block *b) noexcept {
  if (regain_at_end(h, b)) {
    hot_reclaim(h, b);
    return wait_append(h, b);
  }
  make_front(h, b);
}

}  // namespace alloclab::vam
