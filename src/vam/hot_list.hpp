// hot_list.hpp — each class's hot list (FrontSlot::hot, heap.hpp): objects
// freed into full blocks, kept in the heap's entry rather than pushed on
// their blocks, and handed out first by the class's next mallocs, last in
// first out. Through the block, that malloc would read three words the
// free had just written, each load waiting on the one before; from the
// list it reads one (docs/vam.md, "The hot list").
//
// The list is one word: its head, with its length less one in the top bits
// (hot_word), or 0. Each object's first word holds the rest of the list the
// same way, encoded (hot_encode; 0 at the end), so a pop moves that word into
// the entry and reads no length; a list of one is the object's bare address,
// its first word untouched. A rest read from an object must be one shorter
// than the list it was read from (hot_rest): a link written over after the
// free (an overflow of the object before, a write after free, another
// thread's free of the same object) aborts before malloc hands out what it
// decodes to.
//
// Rules:
// - A hot object's block is full and counts it as live (statistics subtract
//   the lists' lengths). A free that goes into a full block regains it, and
//   a regain first takes the block's objects back from the list
//   (hot_reclaim); so does a free into the head's own block (hot_push).
// - Only a free by the heap's own thread fills a list (free_impl, or
//   free_checked for its first free into a segment), and only when malloc's
//   inline path reads it (inline_fine != 0).
// - Thread exit and vam_collect return every list (hot_return_all).
// A second free of a hot object meets it on the list (hot_push) or among
// the objects a regain takes back (hot_reclaim_list): a double free.
#pragma once

#include <cstdint>

#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// A list word: the head's address in the low 56 bits (user-space addresses,
// with 4- or 5-level page tables), its length less one in the top 8 (so a
// list of one is its head's bare address).
inline constexpr unsigned kHotLenShift = 56;
inline constexpr std::uintptr_t kHotHeadMask = (std::uintptr_t{1} << kHotLenShift) - 1;
// Objects a class's list holds at most: enough that a program freeing and
// allocating one class in no order seldom finds the list empty at a malloc
// or full at a free (each a branch it would mispredict), few enough that
// the full blocks they keep full stay a small share of the heap.
inline constexpr unsigned kHotMax = 31;
static_assert(kHotMax < 128);  // a word of 0, encoded, has its top bit set: never a link (hot_push)
// A list word below this has room for one more: its length is below kHotMax.
inline constexpr std::uintptr_t kHotRoomBelow = std::uintptr_t{kHotMax - 1} << kHotLenShift;
inline void *hot_head(std::uintptr_t v) noexcept { return reinterpret_cast<void *>(v & kHotHeadMask); }
inline unsigned hot_length(std::uintptr_t v) noexcept {
  return v == 0 ? 0 : static_cast<unsigned>(v >> kHotLenShift) + 1;
}
inline std::uintptr_t hot_word(const void *head, unsigned length) noexcept {
  return reinterpret_cast<std::uintptr_t>(head) | std::uintptr_t{length - 1} << kHotLenShift;
}
// A rest is stored as (rest ^ g_free_key) * kHotMix and read back by
// multiplying with kHotUnmix, then the XOR. Unlike a block's link
// (free_list.hpp), whose decoded value need only leave the segment, a
// rest's must keep its top 17 bits (the length, and the zeroes above a
// user-space head) exactly: the constant moves the product by at least 2^47
// for a change of any one byte, so such a change always reaches them.
inline constexpr std::uint64_t kHotUnmix = 0xbf58'476d'1ce4'e5b9ull;
inline constexpr std::uint64_t kHotMix = link_inverse(kHotUnmix);
static_assert(kHotMix * kHotUnmix == 1);
inline constexpr int kHotCheckShift = 47;
static_assert(one_byte_changes_move(kHotUnmix, kHotCheckShift));
inline std::uintptr_t hot_encode(std::uintptr_t rest) noexcept { return (rest ^ g_free_key) * kHotMix; }
inline std::uintptr_t hot_decode(std::uintptr_t w) noexcept { return (w * kHotUnmix) ^ g_free_key; }
// Does word w, decoded, read as a link of a list (a user-space head and a
// length below kHotMax)? Never for 0 (g_free_key's top bit); for data, by
// chance, about 1 in 2^12 (nine bits that must be zero, and a length field
// below 31 of 256); such a match costs a walk of the list, nothing more.
inline bool hot_link_like(std::uintptr_t w) noexcept {
  const std::uintptr_t x = hot_decode(w);
  return (x & kHotHeadMask) >> kHotCheckShift == 0 && (x >> kHotLenShift) < kHotMax;
}
// The rest of list v (two objects or more), read from its head's first word:
// its top bits must be v's with the length one less (the head below 2^47 in
// both). Else the word was written over, and the abort names the head and
// `op`, the call that found it (hot_list.cpp, hot_link_broken).
enum class HotOp : std::uint8_t { malloc, free, realloc };
[[noreturn]] void hot_link_broken(HotOp op, const void *head) noexcept;
inline bool hot_rest_fits(std::uintptr_t v, std::uintptr_t rest) noexcept {
  return ((rest ^ (v - (std::uintptr_t{1} << kHotLenShift))) >> kHotCheckShift) == 0;
}
inline std::uintptr_t hot_rest(std::uintptr_t v, HotOp op) noexcept {
  const auto *w = static_cast<const std::uintptr_t *>(hot_head(v));
  const std::uintptr_t rest = hot_decode(*w);
  if (VAM_UNLIKELY(!hot_rest_fits(v, rest))) hot_link_broken(op, w);
  return rest;
}
// hot_link_broken for malloc's pop. It aborts, but is not declared
// [[noreturn]], so that malloc reaches it by a tail jump and its fast path
// sets up no stack frame for the call.
void *hot_take_broken(const void *head) noexcept;
// The hot list of class cls, 0 when empty, and its head. The heap's owner
// writes it; statistics read its length from other threads (from the entry,
// never from an object): relaxed atomics, plain moves.
inline std::uintptr_t class_hot_list(const Heap *h, unsigned cls) noexcept {
  return load_relaxed(h->slots[front_slot(cls)].hot);
}
inline void *class_hot(const Heap *h, unsigned cls) noexcept { return hot_head(class_hot_list(h, cls)); }
inline void set_class_hot(Heap *h, unsigned cls, std::uintptr_t v) noexcept {
  store_relaxed(h->slots[front_slot(cls)].hot, v);
}
// The head of the list v, in `entry`, taken off. A list of one is its
// object's bare address, and the object is not read; a longer list's head
// holds the rest, which goes into the entry. Either way the object's first
// word is zeroed, as a block's pop zeroes it (free_list.hpp): the object
// handed out never reads as a link to a later free (hot_link_like), and a
// remote free's mark it held, freed twice, is gone for the drain to see
// (remote.hpp). The test is of the length bits alone: the list of one needs
// no mask.
[[gnu::always_inline]] inline void *hot_take(std::uintptr_t &entry, std::uintptr_t v) noexcept {
  if (v >> kHotLenShift == 0) {
    store_relaxed<std::uintptr_t>(entry, 0);
    *reinterpret_cast<std::uintptr_t *>(v) = 0;  // as every malloc leaves it (remote.hpp: a lost mark)
    return reinterpret_cast<void *>(v);
  }
  auto *w = static_cast<std::uintptr_t *>(hot_head(v));
  const std::uintptr_t rest = hot_decode(*w);
  if (VAM_UNLIKELY(!hot_rest_fits(v, rest))) return hot_take_broken(w);
  store_relaxed(entry, rest);
  *w = 0;
  return w;
}
inline void *hot_pop(Heap *h, unsigned cls, std::uintptr_t v) noexcept {
  return hot_take(h->slots[front_slot(cls)].hot, v);
}
// Is p on the hot list v? (A walk of at most kHotMax links, each checked;
// `op` names the caller in an abort.)
inline bool hot_holds(std::uintptr_t v, const void *p, HotOp op) noexcept {
  for (unsigned n = hot_length(v); n > 0; --n) {
    if (hot_head(v) == p) return true;
    if (n > 1) v = hot_rest(v, op);
  }
  return false;
}
// hot_reclaim's walk of the list, out of line (hot_list.cpp).
void hot_reclaim_list(Heap *h, Block *b, std::uintptr_t v) noexcept;
// b, full until now, is about to take frees: its objects on the class's
// hot list, if any, go back to it first. Only a full block has any there.
inline void hot_reclaim(Heap *h, Block *b) noexcept {
  if (b->state != BlockState::full) return;
  if (const std::uintptr_t v = class_hot_list(h, b->cls)) hot_reclaim_list(h, b, v);
}

}  // namespace alloclab::vam
