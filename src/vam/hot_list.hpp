// hot_list.hpp — each class's hot list (FrontSlot::hot, heap.hpp): objects
// freed into full blocks, kept in the heap's entry rather than pushed on
// their blocks, and handed out first by the class's next mallocs, last in
// first out. Through the block, that malloc would read three words the
// free had just written, each load waiting on the one before; from the
// list it reads one (docs/vam.md, "The hot list").
//
// The list is one word: its head, with its length less one in the low three
// bits, or 0. Each object's first word holds the rest of the list the same
// way, g_free_key-encoded (0 at the end), so a pop moves that word into the
// entry and reads no length; a list of one is the object's bare address.
//
// Rules:
// - A hot object's block is full and counts it as live (statistics subtract
//   the lists' lengths). A free that goes into a full block regains it, and
//   a regain first takes the block's objects back from the list
//   (hot_reclaim); so does a free into the head's own block (hot_push).
// - Only a free by the heap's own thread fills a list (free_impl, or
//   free_checked for its first free into a segment), and only when malloc's
//   inline path reads it (inline_limit != 0).
// - Thread exit and vam_collect return every list (hot_return_all).
// A second free of a hot object meets it on the list (hot_push) or among
// the objects a regain takes back (hot_reclaim_list): a double free.
#pragma once

#include <cstdint>

#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

inline constexpr unsigned kHotMax = 7;
static_assert(kHotMax <= 8);
inline void *hot_head(std::uintptr_t v) noexcept { return reinterpret_cast<void *>(v & ~std::uintptr_t{7}); }
inline unsigned hot_length(std::uintptr_t v) noexcept { return v == 0 ? 0 : static_cast<unsigned>(v & 7) + 1; }
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
// The hot list v's head, taken off: the rest goes into the slot.
// The list's last object links to nothing, and is not read for it.
inline std::uintptr_t hot_rest(std::uintptr_t v, const void *head) noexcept {
  return VAM_LIKELY((v & 7) == 0) ? 0 : *static_cast<const std::uintptr_t *>(head) ^ g_free_key;
}
inline void *hot_pop(Heap *h, unsigned cls, std::uintptr_t v) noexcept {
  void *p = hot_head(v);
  set_class_hot(h, cls, hot_rest(v, p));
  return p;
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
