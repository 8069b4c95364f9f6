// boundary_tag.hpp — the per-object metadata that lets a heap take back
// memory first handed out by a region (the paper's CoalesceableHeap).
//
// A block is [header word][payload ...]. The header word holds the block
// size (a multiple of 16, header included) and three flags in the low bits.
// Block headers sit at addresses ≡ 8 (mod 16), so every payload is 16-byte
// aligned, as malloc's is on x86-64. A free block also keeps its size in its
// last word (the footer), which lets the block after it find it; an in-use
// block does not need one, and the PREV_INUSE bit of the next header says
// which case holds. One word of overhead per live object.
//
//   in use: [size|INUSE|P][ payload ......................... ]
//   free:   [size|P      ][ next ][ prev ][ ...        ][size]
//
// Areas of blocks end in a sentinel header (size 0, INUSE) so forward
// coalescing always stops at the end of a chunk.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/tool_hooks.hpp"

namespace alloclab::tag {

inline constexpr std::size_t kHeader = sizeof(std::size_t);  // 8
inline constexpr std::size_t kGrain = 16;
inline constexpr std::size_t kMinBlock = 32;  // header + two links + footer
inline constexpr std::size_t INUSE = 1;
inline constexpr std::size_t PREV_INUSE = 2;
inline constexpr std::size_t LARGE = 4;  // payload lives in its own mapping
inline constexpr std::size_t FLAGS = kGrain - 1;
// Largest request a block can describe; anything larger is refused (ENOMEM).
inline constexpr std::size_t kMaxRequest = (SIZE_MAX >> 2) - 4096;

using Block = char;  // a block is addressed by its header

inline std::size_t &word(Block *b) noexcept { return *reinterpret_cast<std::size_t *>(b); }
inline std::size_t size(Block *b) noexcept { return word(b) & ~FLAGS; }
inline bool in_use(Block *b) noexcept { return word(b) & INUSE; }
inline bool prev_in_use(Block *b) noexcept { return word(b) & PREV_INUSE; }
inline void *payload(Block *b) noexcept { return b + kHeader; }
inline Block *block_of(const void *p) noexcept {
  return const_cast<Block *>(static_cast<const char *>(p)) - kHeader;
}
inline std::size_t usable(Block *b) noexcept { return size(b) - kHeader; }

// Block size for a request of n bytes (n <= kMaxRequest).
constexpr std::size_t block_size(std::size_t n) noexcept {
  const std::size_t s = (n + kHeader + kGrain - 1) & ~(kGrain - 1);
  return s < kMinBlock ? kMinBlock : s;
}

// The footer of a free block, and of the block before `b` when that is free.
// These words live inside free (hidden) memory: the accessors open them for
// memory checkers.
inline void set_footer(Block *b, std::size_t s) noexcept {
  std::size_t *f = reinterpret_cast<std::size_t *>(b + s - kHeader);
  if (tools::active()) tools::reveal(f, sizeof *f);
  *f = s;
  if (tools::active()) tools::hide(f, sizeof *f);
}
inline std::size_t prev_size(Block *b) noexcept {
  std::size_t *f = reinterpret_cast<std::size_t *>(b - kHeader);
  if (tools::active()) tools::reveal(f, sizeof *f);
  const std::size_t s = *f;
  if (tools::active()) tools::hide(f, sizeof *f);
  return s;
}

// A fresh area for bump allocation carved from raw memory [lo, hi): the first
// header lands on ≡ 8 (mod 16) and the last word of the range becomes the
// sentinel. Returns the first block address; *limit gets the sentinel's.
inline Block *carve_area(char *lo, char *hi, Block **limit) noexcept {
  auto a = reinterpret_cast<std::uintptr_t>(lo) + kHeader;
  a = ((a + kGrain - 1) & ~(kGrain - 1)) - kHeader;
  Block *s = hi - kHeader;
  s -= (reinterpret_cast<std::uintptr_t>(s) - a) % kGrain;
  word(s) = INUSE;  // size 0: the end of the area
  *limit = s;
  return reinterpret_cast<Block *>(a);
}

}  // namespace alloclab::tag
