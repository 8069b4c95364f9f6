// hot_list.hpp — each class's hot list (FrontSlot::hot, heap.hpp): objects
// freed into full blocks, kept in the heap's entry rather than pushed on
// their blocks, and handed out first by the class's next mallocs, last in
// first out. Through the block, that malloc would read three words the
// free had just written, each load waiting on the one before; from the
// list it reads one (docs/vam.md, "The hot list").
//
// The list is one word: its head, with its length less one in the top bits
// (hot_word), or 0. Each object's first word holds the rest of the list the
// same way, g_free_key-encoded (0 at the end), so a pop moves that word into
// the entry and reads no length; a list of one is the object's bare address,
// its first word untouched.
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
// Does word w, decoded, read as a link of a list (a user-space head and a
// length below kHotMax)? For data, by chance: about 1 in 2^12 (nine bits
// that must match the key's, and a length field below 31 of 256); such a
// match costs a walk of the list, nothing more.
inline bool hot_link_like(std::uintptr_t w) noexcept {
  const std::uintptr_t x = w ^ g_free_key;
  return (x & kHotHeadMask) >> 47 == 0 && (x >> kHotLenShift) < kHotMax;
}
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
  store_relaxed(entry, *w ^ g_free_key);
  *w = 0;
  return w;
}
inline void *hot_pop(Heap *h, unsigned cls, std::uintptr_t v) noexcept {
  return hot_take(h->slots[front_slot(cls)].hot, v);
}
// Is p on the hot list v? (A walk of at most kHotMax links.)
inline bool hot_holds(std::uintptr_t v, const void *p) noexcept {
  for (unsigned n = hot_length(v); n > 0; --n) {
    if (hot_head(v) == p) return true;
    if (n > 1) v = *static_cast<const std::uintptr_t *>(hot_head(v)) ^ g_free_key;
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
