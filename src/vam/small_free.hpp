// small_free.hpp — the free of a small object into its own heap: its checks
// and its push, inline for free's fast path, with the rare cases out of line
// (small_free.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/hot_list.hpp"
#include "vam/layout.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// Free fast path for an object of a block this thread's heap owns (or, in
// drain_remote and for an abandoned heap, the heap being worked on: its owner).
//
// A free into a block in state `front` goes on the block's LIFO list, so the
// next allocation from it reuses the object most likely still in cache
// (§3.4). Those blocks are the one allocation is using (its class's front)
// and the one a regain displaced from there, at the head of the waiting
// list (heap.cpp, make_front). A free
// into a full block goes on its list too, and makes it the front (§3.5):
// the next malloc of its class hands out the object just freed. A free
// into a block further down cannot be reused before that block is the front
// again, by which time LIFO order means nothing: it sets the slot's bit in
// `pending` instead, and the block's next use takes those slots in address
// order — on a fragmented heap, consecutive objects then run forwards
// through the page rather than jumping about in it.
//
// Hardening, in every build, from the block record already in cache: the
// block holds live objects (not empty or never used: a double free of its
// last object, or a pointer into the segment header), p is the start of a
// slot (not q+8), and p's first word does not decode as a free-list link
// (above; if it does, the block's list is walked to confirm: p on it is a
// double free at any depth). A slot already pending is a double free.
//
// small_free_invalid never returns (it aborts) but is not declared
// [[noreturn]]: a call to it is then a tail jump, and the fast path needs no
// stack frame. Each field is read once (the relaxed store to `used` would
// otherwise make the compiler read `state` and `free` again).
void small_free_invalid(Block *b, void *p) noexcept;
// p's first word looks like a link: abort if p is on b's free list, else
// free it as small_free_local does. A tail call of the fast path, so that
// the rare call costs the fast path no saved registers.
void small_free_suspect(Segment *s, Block *b, void *p, std::uint32_t slot) noexcept;

// The second half of a free, the checks passed: `state`, `live` and `head`
// are the block's fields as the caller read them.
inline void small_free_push(Segment *s, Block *b, void *p, std::uint32_t i, BlockState state,
                            std::uint16_t live, FreeObj *head) noexcept {
  const std::uint16_t used = live - 1;
  store_relaxed(b->used, used);
  if (state == BlockState::waiting) {
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

// Every free small_free_local does not finish itself, with every check
// (out of line, a tail call: heap.cpp). `prod`: p's offset in the block
// times its recip, as small_free_local computed it.
void small_free_other(Segment *s, Block *b, void *p, std::uint64_t prod) noexcept;

// The common free, into a front or full block that keeps live objects, is
// finished here (a full block then becomes the front: small_free_regained);
// a free into a waiting block, of a block's last object, or one any check
// rejects, goes to small_free_other, which repeats the checks in full. One
// product gives both the interior-pointer check and the slot: off * recip =
// slot * 2^32 + frac, and off is a multiple of the size exactly when frac <
// recip (size * recip = 2^32 + e, e < size, so a slot start leaves frac =
// slot * e < off < 2^32 / size <= recip, and any other offset adds at least
// recip: exact for every offset in a block of up to 64 KiB and every object
// size of a page class, headers included, up to kPageMax + 16 bytes, which
// VamPageClasses.SlotProductIsExact checks offset by offset; a pointer
// before the block's first object, VAM_HEADERS=on, is accepted by no more
// sizes than the old check, slot * size == off, accepted).
//
// `owner`: s->owner, given by a caller that has it at hand (free's fast
// path: this thread's heap) so that the regain need not wait for the
// segment header's load; read only on that branch.
//
// kFillHot (free's fast path only, where `owner` is this thread's heap): a
// free into a full block, when its class's hot slot is empty, goes there and
// leaves the block as it is (FrontSlot). A full block has nothing on its
// list and nothing pending, so a double free of an object of it can only be
// of the hot object: the compare with the slot is that check, and the
// object's first word is not read.
template <bool kFillHot, class Owner>
inline void small_free_local(Segment *s, void *p, std::size_t shift, Owner owner) noexcept {
  Block *b = block_of(s, p, shift);
  const auto off = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) -
                                              reinterpret_cast<std::uintptr_t>(b->start));
  const std::uint32_t recip = b->recip;
  const std::uint64_t prod = std::uint64_t{off} * recip;
  const std::uint32_t word = use_state(b);
  FreeObj *head = b->free;
  // Two copies of the push, one per state, rather than one push and a test
  // of the state after it: the common free, into the front, runs no more
  // instructions than when it was the only state taken here. Each state's
  // test is one compare of the block's use_state word: in state st with at
  // least two live objects, word - (st * 2^16 + 2) is below 2^16 - 2.
  if (VAM_LIKELY(static_cast<std::uint32_t>(prod) < recip)) {
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
          Heap *h = owner();
          const unsigned cls = b->cls;
          const std::uintptr_t hot = class_hot_list(h, cls);
          // An empty list, as for every free of a program that frees and
          // allocates one object of the class in turn: the object's address
          // is the list, and nothing is written into it (hot_push marks it
          // as the list's end if another object goes on top).
          if (VAM_LIKELY(hot == 0)) return set_class_hot(h, cls, reinterpret_cast<std::uintptr_t>(p));
          if (VAM_LIKELY(hot_length(hot) < kHotMax)) return hot_push(h, b, p);
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
