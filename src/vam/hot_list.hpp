// hot_list.hpp — each class's hot list (FrontSlot, heap.hpp): the objects
// frees gave back to full blocks, handed out again by the next mallocs of
// the class without touching a block.
#pragma once

#include <cstdint>

#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// The hot list (FrontSlot): at most kHotMax objects, linked through their
// first words (g_free_key-encoded, as block lists are). A list is kept as
// one word: its head, with its length less one in the low three bits
// (objects are 8-byte aligned), or 0 when empty. Each link holds the rest
// of the list the same way (0 at the end), so a malloc that pops moves the
// link into the slot as it is, and the length is known without reading an
// object. A list of one is its object's address: the malloc that takes it
// stores 0, as for the single hot object the list grew from, and reads
// nothing more.
inline constexpr unsigned kHotMax = 7;
static_assert(kHotMax <= 8);
inline void *hot_head(std::uintptr_t v) noexcept { return reinterpret_cast<void *>(v & ~std::uintptr_t{7}); }
inline unsigned hot_length(std::uintptr_t v) noexcept { return v == 0 ? 0 : static_cast<unsigned>(v & 7) + 1; }
// The hot list of class cls (FrontSlot), 0 when empty, and its head. Its
// owner writes it; statistics read its length from other threads (from the
// slot, never from an object): relaxed atomics, plain moves.
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
// A free into a full block onto its class's hot list, which holds one
// object or more and has room: out of line (heap.cpp), so that free's fast
// path, which pushes onto an empty list, saves no registers for this one.
void hot_push(Heap *h, Block *b, void *p) noexcept;
// Every hot object of h back to its block (heap.cpp): h's owner, or with h
// no thread's.
void hot_return_all(Heap *h) noexcept;

// hot_reclaim's walk of the list, out of line (hot_list.cpp).
void hot_reclaim_list(Heap *h, Block *b, std::uintptr_t v) noexcept;
// b, full until now, is about to take frees: its objects on the class's
// hot list, if any, go back to it. Only a full block has any there.
inline void hot_reclaim(Heap *h, Block *b) noexcept {
  if (b->state != BlockState::full) return;
  if (const std::uintptr_t v = class_hot_list(h, b->cls)) hot_reclaim_list(h, b, v);
}

}  // namespace alloclab::vam
