// free_list.hpp — a block's own objects: reap allocation from one block
// (bump, then the list of freed objects, paper §3.4), the list's encoding,
// and the block's live count as free's fast path reads and writes it.
//
// Invariants of a block b in use:
// - Every link of b's list is XOR-ed with g_free_key (b->free itself is
//   plain), and the list ends in b's segment base, never in null.
// - malloc clears the first word of every object it hands out, popped or
//   bumped, so that a live object's first word decodes into its segment
//   only if the program wrote such a word.
// - A link a pop reads decodes into b's segment (the list's end is its
//   base); one that does not was written over after the free (an overflow
//   of the object before, a write after free) and aborts before malloc
//   hands it out. The encoding spreads a change of any one byte of a link
//   over the bits above the segment offset, so no such change passes.
// - b->used counts the objects out of b, hot ones included; only the heap's
//   owner writes it, one store at a time (statistics read it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// Why the encoding: a link is stored as (next ^ g_free_key) * kLinkMix, and
// read back by multiplying with the inverse, kLinkUnmix, then the XOR.
// g_free_key is a per-process random word with its top bit set, so the
// first word of a freed object, decoded, lies in its own segment, while a
// live object's almost never does (1 in 2^42 for a word the product makes
// random). A free that finds such a word walks the list to confirm
// (small_free_suspect): a double free is caught however many frees came
// between. The product is what makes a pop's one compare enough
// (small_alloc_block): a link changed in any one byte decodes at least 4
// MiB away from the link it was, outside the segment (static_assert below);
// changed in more, it lands in the segment about 1 time in 2^42.
extern std::uintptr_t g_free_key VAM_HIDDEN;
void free_key_init() noexcept;  // once, before the first heap (startup.cpp: init_options)

// kLinkUnmix is odd (invertible mod 2^64) and below 2^31, so that a decode
// is one imul with an immediate operand; at least 2^22, so that a change in
// the link's low bytes moves the product out of the segment.
inline constexpr std::uint64_t kLinkUnmix = 0x7f4a'7c15ull;
constexpr std::uint64_t link_inverse(std::uint64_t a) noexcept {
  std::uint64_t x = a;  // Newton's iteration: each step doubles the bits that are right
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}
inline constexpr std::uint64_t kLinkMix = link_inverse(kLinkUnmix);
static_assert(kLinkMix * kLinkUnmix == 1);
// Does every change of one byte of a stored word (by -255..255 in byte j)
// move its product with `unmix` by at least 2^bits, either way?
constexpr bool one_byte_changes_move(std::uint64_t unmix, int bits) noexcept {
  for (int j = 0; j < 8; ++j)
    for (std::int64_t d = -255; d <= 255; ++d) {
      if (d == 0) continue;
      const std::uint64_t moved = (static_cast<std::uint64_t>(d) << (8 * j)) * unmix;
      const auto m = static_cast<std::int64_t>(moved);
      if (m > -(std::int64_t{1} << bits) && m < (std::int64_t{1} << bits)) return false;
    }
  return true;
}
// A link changed in one byte decodes outside its segment.
static_assert(one_byte_changes_move(kLinkUnmix, static_cast<int>(kSegmentShift)));

inline FreeObj *free_link_decode(const FreeObj *f) noexcept {
  return reinterpret_cast<FreeObj *>((reinterpret_cast<std::uintptr_t>(f->next) * kLinkUnmix) ^ g_free_key);
}
inline void free_link_set(FreeObj *f, const FreeObj *next) noexcept {
  f->next = reinterpret_cast<FreeObj *>((reinterpret_cast<std::uintptr_t>(next) ^ g_free_key) * kLinkMix);
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
  const std::uintptr_t w = (*static_cast<const std::uintptr_t *>(p) * kLinkUnmix) ^ g_free_key;
  return ((w ^ reinterpret_cast<std::uintptr_t>(p)) >> kSegmentShift) == 0;
}

// A block's `used` and `state` read at once (segment.hpp, Block): used +
// state * 2^16, so that free's fast path tests both with one load and one
// compare per state (small_free.hpp, keeps_live).
inline std::uint32_t use_state(const Block *b) noexcept {
  std::uint32_t w;
  __builtin_memcpy(&w, reinterpret_cast<const char *>(b) + offsetof(Block, used), sizeof w);
  return w;
}

// One more live object in b, and one fewer (`word`: use_state(b), used >
// 0), each one store, and each of the whole use_state word: free's fast
// path loads that word, and a load wider than the store before it cannot
// take its value from the store buffer, so a free after a malloc or a free
// into the same block would wait for the store to reach the cache (docs/vam.md,
// "One word for free's tests"). malloc's is an x86 add to memory, one
// instruction where a relaxed atomic store of the value plus one compiles
// to three. used < kMaxSlots < 0xffff and used > 0, so neither the carry
// nor the borrow reaches `state`. Sanitizer builds keep the atomic form.
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
using UseStateWord = std::uint32_t __attribute__((may_alias));
inline void used_inc(Block *b) noexcept {
  asm("addl $1, %0" : "+m"(*reinterpret_cast<UseStateWord *>(reinterpret_cast<char *>(b) + offsetof(Block, used))));
}
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

// Reap allocation from one block (§3.4): reuse a freed object, else bump;
// null when the block is used up (the caller's slow path: small_alloc_slow,
// or malloc_miss). small_alloc_block takes a record (g_no_front included),
// small_alloc_front a front that may be null.
inline void *small_alloc_block(Block *b) noexcept {
  if (FreeObj *f = b->free; VAM_LIKELY(free_list_has(f))) {
    FreeObj *n = free_link_decode(f);
    // In f's segment, as every link and the list's end are; else f's first
    // bytes were written over after its free, and the message names f.
    if (VAM_UNLIKELY((reinterpret_cast<std::uintptr_t>(n) ^ reinterpret_cast<std::uintptr_t>(f)) >> kSegmentShift))
      corruption_near("malloc()", f);
    b->free = n;
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
    // so that its free does not walk the block's list (small_free_suspect).
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
// Is q within the objects b has handed out since it joined its class (from
// its first to the bump)? A slot at or past the bump never left the block:
// a free of it would put on the list a slot the bump hands out again, one
// address for two objects. (An empty block keeps the bump of its last use.)
inline bool block_handed_out(const Block *b, const void *q) noexcept {
  return static_cast<std::uintptr_t>(static_cast<const char *>(q) - b->start) <
         static_cast<std::uintptr_t>(b->bump - b->start);
}

}  // namespace alloclab::vam
