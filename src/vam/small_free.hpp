// small_free.hpp — the free of a small object into the heap that owns its
// block (free's fast path: this thread's; drain_remote and a heap no thread
// owns: the heap being worked on), inline, with the rare cases out of line
// (small_free.cpp).
//
// Where the object goes, by its block's state (block_lists.hpp):
//   front     onto the block's LIFO list: the next allocation reuses the
//             object most likely still in cache (§3.4)
//   full      onto its class's hot list, or onto the block's list, and the
//             block is regained (§3.5)
//   waiting   the slot's pending bit, the object untouched: by the time the
//             block is the front again LIFO order means nothing, and its
//             pending slots become its list in address order
//             (reuse_order.cpp, take_pending)
// and a block left with no live object is retired unless it is its class's
// only one (small_free_slow).
//
// Checks, in every build, from the block record the free reads anyway: the
// block holds live objects (not a double free of its last object, nor a
// pointer into the segment header), p starts a slot the block has handed
// out (below its bump: block_handed_out), a waiting block's
// pending bit is clear, and p's first word does not decode as a free-list
// link (free_list.hpp; if it does, the list is walked to confirm). A
// waiting block keeps its free slots in one place: the first free into it
// moves its list, if it has one, into the pending bits (small_free_pend_list),
// so that the bit test sees an object freed while the block was the front,
// and the free still reads nothing of the object.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/hot_list.hpp"
#include "vam/layout.hpp"
#include "vam/remote.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// The out-of-line cases are tail calls of the fast path, so that it saves
// no registers and needs no stack frame; small_free_invalid aborts, but is
// not declared [[noreturn]] so that a call to it stays a tail jump.
void small_free_invalid(Block *b, void *p) noexcept;  // a check failed: abort, naming it
// p's first word looks like a link: abort if p is on b's list, else free it.
void small_free_suspect(Segment *s, Block *b, void *p, std::uint32_t slot) noexcept;
// Waiting block b's list (not empty) into its pending bits, in one place
// with the slots freed since it waits; a link that is not one of b's slots
// aborts as heap corruption.
void small_free_pend_list(Block *b) noexcept;
// realloc's test that p, of a block of the calling thread's heap h, is live:
// not on its block's list, its class's hot list or among its pending slots,
// nor in an empty block, nor waiting on h's remote stack. Aborts if it is
// not.
void small_check_live(Heap *h, Segment *s, void *p) noexcept;
// The same test's common case, for realloc's fast path (api.hpp's free
// cache found s): an object of a front block that keeps live objects, at a
// slot start and whose first word does not decode as a link, is live, read
// from the block record and that word. False means not known: the caller
// asks small_check_live, which tests every case whole. A front block has
// nothing pending and nothing on the hot list (a hot object's block is
// full), so an object freed into it is on its list, and every object on
// the list looks freed (free_list.hpp): what passes here passes there. An
// 8- or 16-byte object another thread has freed reads as live to that test
// (its keyed link, remote.hpp): one whose word could be such a link is not
// known either.
inline bool small_live_front(Segment *s, void *p, std::size_t shift) noexcept {
  const Block *b = block_of(s, p, shift);
  const auto off = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) -
                                              reinterpret_cast<std::uintptr_t>(b->start));
  const std::uint32_t recip = b->recip;
  const std::uint32_t live_front = use_state(b) - ((static_cast<std::uint32_t>(BlockState::front) << 16) + 1);
  return static_cast<std::uint32_t>(std::uint64_t{off} * recip) < recip && live_front < 0xffff &&
         off < static_cast<std::uint32_t>(b->bump - b->start) && !looks_freed(p) &&
         !(s->kind == SegKind::small && remote_keyed_like(p));
}

// The second half of a free, the checks passed: `state`, `live` and `head`
// are the block's fields as the caller read them, once (after the relaxed
// store to `used` the compiler would read them again).
inline void small_free_push(Segment *s, Block *b, void *p, std::uint32_t i, BlockState state,
                            std::uint16_t live, FreeObj *head) noexcept {
  const std::uint16_t used = live - 1;
  store_relaxed(b->used, used);
  if (state == BlockState::waiting) {
    if (VAM_UNLIKELY(free_list_has(head))) small_free_pend_list(b);
    const std::uint64_t word = b->pending[i / 64];
    if (VAM_UNLIKELY(word >> (i % 64) & 1)) return small_free_invalid(b, p);
    b->pending[i / 64] = word | std::uint64_t{1} << (i % 64);
    b->has_pending = 1;
    if (VAM_LIKELY(used != 0)) return;
  } else {
    auto *f = static_cast<FreeObj *>(p);
    free_link_set(f, head);
    b->free = f;
    if (VAM_LIKELY(used != 0 && state == BlockState::front)) return;
  }
  small_free_slow(s->owner, b);  // the heap the caller works on: the owner (read here, off the fast path)
}

// In state st, with at least two live objects (so a free leaves one)?
inline bool keeps_live(std::uint32_t word, BlockState st) noexcept {
  constexpr std::uint32_t kMaxUsed = 0xffff;
  return word - ((static_cast<std::uint32_t>(st) << 16) + 2) < kMaxUsed - 1;
}

// The frees small_free_local does not finish. `prod`: p's offset in the
// block times its recip, as small_free_local computed it.
void small_free_other(Segment *s, Block *b, void *p, std::uint64_t prod) noexcept;

// The common free, into a front or full block that keeps live objects, is
// finished here; the others go to small_free_other, which checks again.
//
// One product gives both the slot-start check and the slot: off * recip =
// slot * 2^32 + frac, and off is a multiple of the size exactly when frac <
// recip. (size * recip = 2^32 + e with e < size, so a slot start leaves
// frac = slot * e < off < 2^32 / size <= recip, and any other offset adds
// at least recip.) Exact for every offset in a block of up to 64 KiB and
// every object size up to kPageMax + 16 bytes, headers included:
// VamPageClasses.SlotProductIsExact checks it offset by offset. A pointer
// before the block's first object (VAM_HEADERS=on) passes for no more sizes
// than slot * size == off would let pass.
//
// `owner`: s->owner, from a caller that has it at hand (free's fast path:
// this thread's heap), so that the regain does not wait on the segment
// header's load; called only on that branch.
//
// kFillHot (a free by the heap's own thread): a free into a full block goes
// onto its class's hot list while the list has room. A full block has
// nothing on its list and nothing pending, so a double free of one of its
// objects can only be of a hot object: onto an empty list the object's
// first word is not read, and hot_push checks the rest.
template <bool kFillHot, class Owner>
inline void small_free_local(Segment *s, void *p, std::size_t shift, Owner owner) noexcept {
  Block *b = block_of(s, p, shift);
  const auto off = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) -
                                              reinterpret_cast<std::uintptr_t>(b->start));
  const std::uint32_t recip = b->recip;
  const std::uint64_t prod = std::uint64_t{off} * recip;
  const std::uint32_t word = use_state(b);
  FreeObj *head = b->free;
  // Below the bump (block_handed_out), no dearer than a compare with the
  // block's end (the next word of the record): a slot at or past it was
  // never handed out, and once on the list the bump would hand it out a
  // second time; one past the end (in the room a block's last slot leaves)
  // passes the product test, and would be handed out over the block's end.
  // One before `start` (a page class's colour gap, less than one object:
  // static_assert colours_fit) wraps off to 2^32 - d, d < size, which the
  // product test rejects. A full block's bump is its end.
  const bool below_bump = static_cast<char *>(p) < b->bump;
  // Two copies of the push, one per state, rather than one push and a test
  // of the state after it, so that the common free, into the front, tests
  // nothing after the push. Each state's test is one compare of the block's
  // use_state word (keeps_live).
  if (VAM_LIKELY(static_cast<std::uint32_t>(prod) < recip && below_bump)) {
    if (VAM_LIKELY(keeps_live(word, BlockState::front))) {
      if (VAM_UNLIKELY(looks_freed(p))) return small_free_suspect(s, b, p, static_cast<std::uint32_t>(prod >> 32));
      used_dec(b, word);
      auto *f = static_cast<FreeObj *>(p);
      free_link_set(f, head);
      b->free = f;
      return;
    }
    if (keeps_live(word, BlockState::full)) {
      if constexpr (kFillHot) {
        if (VAM_LIKELY(g_layout.inline_fine != 0)) {
          std::uintptr_t &entry = owner()->slots[front_slot(b->cls)].hot;
          const std::uintptr_t hot = load_relaxed(entry);
          // An empty list, as for every free of a program that frees and
          // allocates one object of the class in turn: the object's address
          // is the list, and nothing is written into it (hot_push marks it
          // as the list's end when another object goes on top).
          if (VAM_LIKELY(hot == 0)) return store_relaxed(entry, reinterpret_cast<std::uintptr_t>(p));
          if (VAM_LIKELY(hot < kHotRoomBelow)) return hot_push(entry, b, p, hot);
        }
      }
      if (VAM_UNLIKELY(looks_freed(p))) return small_free_suspect(s, b, p, static_cast<std::uint32_t>(prod >> 32));
      used_dec(b, word);
      auto *f = static_cast<FreeObj *>(p);
      free_link_set(f, head);
      b->free = f;
      return small_free_regained(owner(), b);
    }
  }
  small_free_other(s, b, p, prod);
}
inline void small_free_local(Segment *s, void *p) noexcept {
  small_free_local<false>(s, p, s->block_shift, [s] { return s->owner; });
}

}  // namespace alloclab::vam
