// free_list.hpp — a block's own objects: reap allocation from one block
// (bump, then the list of freed objects, paper §3.4), the list's encoding,
// and the block's live count as free's fast path reads and writes it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// A block's free list, as its objects hold it. Each link is stored XOR-ed
// with g_free_key, a per-process random word with its top bit set, and the
// list ends in the block's segment base (never an object: segment offset 0
// is the header) rather than in null. So the first word of a freed object,
// decoded, always lies in its own segment, while a live object's first word
// almost never does: null, small integers and any user-space pointer decode
// to a word with the top bit set. A free that finds such a word is a
// suspect, and walks the list to confirm (small_free_suspect). The encoding
// costs an XOR on each push and pop; the check a load of the word the push
// overwrites anyway, an XOR and a compare. `b->free` itself is kept plain.
extern std::uintptr_t g_free_key VAM_HIDDEN;
void free_key_init() noexcept;  // once, before the first heap (startup.cpp: init_options)

inline FreeObj *free_link_decode(const FreeObj *f) noexcept {
  return reinterpret_cast<FreeObj *>(reinterpret_cast<std::uintptr_t>(f->next) ^ g_free_key);
}
inline void free_link_set(FreeObj *f, const FreeObj *next) noexcept {
  f->next = reinterpret_cast<FreeObj *>(reinterpret_cast<std::uintptr_t>(next) ^ g_free_key);
}
// The end of every block free list: the segment base of the block record.
inline FreeObj *free_list_end(const Block *b) noexcept {
  return reinterpret_cast<FreeObj *>(reinterpret_cast<std::uintptr_t>(b) & ~(kSegmentBytes - 1));
}
// An object, not the end (nor the null of a record never used).
inline bool free_list_has(const FreeObj *f) noexcept {
  return (reinterpret_cast<std::uintptr_t>(f) & (kSegmentBytes - 1)) != 0;
}
// Does p's first word, decoded, point into p's own segment, as a link of a
// free list does?
inline bool looks_freed(const void *p) noexcept {
  const std::uintptr_t w = *static_cast<const std::uintptr_t *>(p) ^ g_free_key;
  return ((w ^ reinterpret_cast<std::uintptr_t>(p)) >> kSegmentShift) == 0;
}

// A block's `used` and `state` read at once (segment.hpp, Block): used +
// state * 2^16. One load where there were two, and each test of free's fast
// path one compare where there were two.
inline std::uint32_t use_state(const Block *b) noexcept {
  std::uint32_t w;
  __builtin_memcpy(&w, reinterpret_cast<const char *>(b) + offsetof(Block, used), sizeof w);
  return w;
}

// One more live object in b, and one fewer (`word`: use_state(b), used >
// 0). Only the heap's owner writes `used`; the statistics walk reads it from
// other threads (load_relaxed), so each write must be one store. A relaxed
// atomic store of the value read plus one is that, but the compiler emits it
// as a load, an add and a store; an x86 add to memory is the same single
// store in one instruction (2 of malloc's 22).
//
// free writes the whole use_state word back, not `used` alone: its fast
// path loads that word, and a load wider than the store before it to the
// same place cannot take its value from the store buffer; it waits for the
// store to reach the cache, on every free that follows a free into the
// same block closely (a run of frees into one block: freelist_micro 1.074x
// the time with a 16-bit store there, 1.001x with this one, against the
// tree that loaded `used` and `state` apart). malloc's add stays 16 bits
// wide: a 32-bit one measured 0.7% slower on bignum_factor, whose frees
// follow their block's mallocs less closely (docs/results.md, "free's
// block word"). used > 0, so the 32-bit store's borrow never reaches `state`.
// Sanitizer builds keep the atomic form, which the thread sanitizer checks.
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
inline void used_inc(Block *b) noexcept { asm("addw $1, %0" : "+m"(b->used)); }
inline void used_dec(Block *b, std::uint32_t word) noexcept {
  word -= 1;
  __builtin_memcpy(reinterpret_cast<char *>(b) + offsetof(Block, used), &word, sizeof word);
}
#else
inline void used_inc(Block *b) noexcept { store_relaxed<std::uint16_t>(b->used, b->used + 1); }
inline void used_dec(Block *b, std::uint32_t word) noexcept {
  store_relaxed<std::uint16_t>(b->used, static_cast<std::uint16_t>(word - 1));
}
#endif

// Allocation fast path: reap allocation from the front block (§3.4) —
// reuse a freed object, else bump; null if there is no front block or it is
// used up (the caller's slow path: small_alloc_slow, or malloc_miss).
// small_alloc_block takes a record (g_no_front included), small_alloc_front
// a front that may be null.
inline void *small_alloc_block(Block *b) noexcept {
  if (FreeObj *f = b->free; VAM_LIKELY(free_list_has(f))) {
    b->free = free_link_decode(f);
    f->next = nullptr;  // live again: its first word no longer decodes as a link
    used_inc(b);
    return f;
  }
  if (VAM_LIKELY(b->bump < b->end)) {
    char *p = b->bump;
    if (p == nullptr) __builtin_unreachable();  // bump < end: so the caller tests no null
    b->bump = p + b->size;
    // A reused block still holds the links of its last use, some of them
    // now at object starts: cleared, as for an object taken off the list,
    // or the free of each such object would walk the block's list to rule
    // out a double free (small_free_suspect), one walk per free.
    reinterpret_cast<FreeObj *>(p)->next = nullptr;
    used_inc(b);
    return p;
  }
  return nullptr;
}
inline void *small_alloc_front(Block *b) noexcept { return VAM_LIKELY(b != nullptr) ? small_alloc_block(b) : nullptr; }

// Is q within b's objects (from its first to its end)?
inline bool block_holds(const Block *b, const void *q) noexcept {
  return static_cast<std::uintptr_t>(static_cast<const char *>(q) - b->start) <
         static_cast<std::uintptr_t>(b->end - b->start);
}

}  // namespace alloclab::vam
