// segment.hpp — 4 MiB aligned areas and the page blocks inside them.
//
// Paper §3.3 splits a 32-bit address space into 16 MB areas and keeps a
// 256-byte table saying which hold headerless objects. On 64 bits such a
// table would not fit, so we invert it: every area libvam maps is aligned to
// its own size (kSegmentBytes), and its header sits at its start. Any object
// pointer p finds its header as p & ~(kSegmentBytes-1) — for all 2^64
// addresses, with no table at all. Huge objects get a segment of their own,
// with the object inside the first kSegmentBytes so the mask still works.
//
// Small and medium segments are cut into equal page blocks (BIBOP, §3.2);
// each page block holds objects of one size class and is described by a
// Block record in the segment header, so objects carry no header (§3.3).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "vam/size_classes.hpp"

namespace alloclab::vam {

inline constexpr std::size_t kSegmentShift = 22;
inline constexpr std::size_t kSegmentBytes = std::size_t{1} << kSegmentShift;  // 4 MiB
inline constexpr std::uint64_t kSegmentMagic = 0x5641'4d53'4547'0001ull;

enum class SegKind : std::uint32_t {
  small = 0,   // one-page blocks, classes 8 and 16
  medium = 1,  // blocks of four pages or more, classes 32..VAM_PAGE_MAX
  large = 2,   // one shared coalescing region (large_region.hpp)
  huge = 3,    // one object mapped on its own
};

struct Heap;

// Fields that statistics read from other threads (a block's live count,
// class and state; a segment's carved count) are written only by the owning
// thread, with these relaxed stores, and read elsewhere with relaxed loads:
// the same plain moves on x86-64, but no data race.
template <class T>
inline void store_relaxed(T &field, T value) noexcept {
  std::atomic_ref<T>(field).store(value, std::memory_order_relaxed);
}
template <class T>
inline T load_relaxed(T &field) noexcept {
  return std::atomic_ref<T>(field).load(std::memory_order_relaxed);
}

struct FreeObj {
  FreeObj *next;
};

// Life of a page block (block_lists.hpp): fresh (never used) -> available
// in its class: `front` (the block allocation takes objects from, and the
// block a regain displaced from there, the waiting list's head; frees go on
// the LIFO list of both) or `waiting` behind it <-> `full` (in no list) ->
// `empty` (on the heap's empty lists, reusable for any class of the same
// block size).
enum class BlockState : std::uint8_t { fresh = 0, front, waiting, full, empty };

// Most slots per block: 4096 / 8 (the smallest class in a one-page block).
inline constexpr std::size_t kMaxSlots = 512;

struct alignas(128) Block {
  Block *next;          // available list of its class, or empty list
  Block *prev;
  FreeObj *free;        // objects freed into this block (reap: reuse after bump)
  char *bump;           // next never-used object
  char *end;            // start + capacity * size
  char *start;
  std::uint32_t size;   // object size
  // `used`, `state` and `zero` form one aligned 32-bit word, which free's
  // fast path reads and tests at once (use_state, free_list.hpp): `zero` is never
  // written, so the word is used + state * 2^16.
  std::uint16_t used;   // live objects
  BlockState state;
  std::uint8_t zero;
  std::uint8_t cls;
  std::uint8_t has_pending;  // some bit of `pending` is set
  std::uint8_t young;   // empty and dirty since the last aging sweep (discard.cpp, heap_age)
  std::uint8_t discarded;  // pages given back; contents read as zero
  std::uint32_t recip;  // ceil(2^32 / size): slot = (offset * recip) >> 32, exact here
  // Slots freed while the block was waiting (small_free.hpp):
  // they become the free list, in address order, when the block is next used.
  std::uint64_t pending[kMaxSlots / 64];

  std::uint32_t slot_of(const void *p) const noexcept {
    const auto off = static_cast<std::uint64_t>(static_cast<const char *>(p) - start);
    return static_cast<std::uint32_t>((off * recip) >> 32);
  }
};
static_assert(sizeof(Block) == 128);
static_assert(kNumClasses <= 256);  // a class fits `cls`
static_assert(offsetof(Block, pending) == 64);  // the hot fields share one cache line
static_assert(offsetof(Block, used) % 4 == 0 && offsetof(Block, state) == offsetof(Block, used) + 2 &&
              offsetof(Block, zero) == offsetof(Block, used) + 3);  // use_state's word
static_assert(kSmallBlockBytes / class_size(0) <= kMaxSlots &&
              kMediumBlockBytes / class_size(size_class(kMediumMin)) <= kMaxSlots);

inline constexpr std::size_t kBlockTableOffset = 256;
static_assert(kBlockTableOffset % sizeof(Block) == 0 && kPage % sizeof(Block) == 0);  // no record straddles a page

// A small/medium segment's header: the Segment record, then one Block record
// per block of the segment (those of the header's own blocks go unused),
// rounded up to whole blocks: 132 KiB for one-page blocks, 48 KiB for
// four-page ones. Only the records in use are touched — unless the segment
// is backed by huge pages, which fault in the whole header at once; hence
// no bigger than it must be.
constexpr std::size_t segment_header_bytes(std::size_t block_bytes) noexcept {
  const std::size_t table_end = kBlockTableOffset + (kSegmentBytes / block_bytes) * sizeof(Block);
  return (table_end + block_bytes - 1) / block_bytes * block_bytes;
}
static_assert(segment_header_bytes(kSmallBlockBytes) == 132 * 1024);
static_assert(segment_header_bytes(kMediumBlockBytes) == 48 * 1024);

// The fields every free reads (kind, owner, block_shift; touched_end for a
// large object) sit in the header's second cache line, not its first:
// segments are 4 MiB aligned, so every segment's first line falls in the
// same set of a 64-set L1 (set 0), the set every page-aligned thing shares
// -- the first line of every block and page, and of every object of 256,
// 512 or 1024 bytes -- where a free's read of it is evicted between frees
// (docs/vam.md, "Cache sets"). The line stays inside the 128 bytes before a
// huge object (kHugeOffset).
struct Segment {
  std::uint64_t magic;
  Segment *next;               // large: owner's regions; small/medium: owner's block segments
  Segment *prev;
  std::size_t map_bytes;       // bytes mapped (huge: the whole mapping)
  std::size_t usable;          // huge: usable bytes of the object
  std::uint32_t next_block;    // small/medium: first never-carved block
  std::uint32_t nblocks;
  std::uint32_t zeroed;        // huge: fresh from the OS, reads as zero
  std::uint32_t hugepages;     // small/medium/large: advised to use transparent huge pages
  // ---- second cache line: what free() reads
  alignas(64) SegKind kind;
  std::uint32_t block_shift;   // small: 12, medium: 14
  Heap *owner;                 // never changes; heaps pass between threads whole
  std::uint32_t used_blocks;   // small/medium: blocks not on an empty list
  std::uint32_t idle;          // small/medium: collections that found it empty (discard.cpp)
  std::uint32_t thp_tail;      // small/medium: advised at mapping (1); its carving tail discarded (2)
  // small/medium: the end of its records (this one and the block table):
  // no object starts below it (another thread's free tests it: remote.hpp)
  std::uint32_t records_end;
  char *touched_end;           // large: end of the part ever handed out (for pages in use)

  Block *blocks() noexcept {
    return reinterpret_cast<Block *>(reinterpret_cast<char *>(this) + kBlockTableOffset);
  }
  char *block_start(std::size_t i) noexcept {
    return reinterpret_cast<char *>(this) + (i << block_shift);
  }
  // Index of the first block after the header (small/medium segments).
  std::uint32_t first_block() const noexcept {
    return static_cast<std::uint32_t>(segment_header_bytes(std::size_t{1} << block_shift) >> block_shift);
  }
};
static_assert(sizeof(Segment) <= kBlockTableOffset);
static_assert(offsetof(Segment, kind) == 64 && offsetof(Segment, touched_end) < 128);  // off the segment's first line

inline Segment *segment_of(const void *p) noexcept {
  return reinterpret_cast<Segment *>(reinterpret_cast<std::uintptr_t>(p) & ~(kSegmentBytes - 1));
}

// The segment of an object libvam handed out. No object starts at its
// segment's first byte (the header is there) except a huge object aligned to
// a segment or more, which sits one segment after its header: the mask of
// the byte before the object finds the header in both cases.
// (Integer arithmetic: free(nullptr) masks 0 - 1 to the top of the address
// space, where no segment is, with no pointer arithmetic on null.)
inline Segment *object_segment(const void *p) noexcept {
  return reinterpret_cast<Segment *>((reinterpret_cast<std::uintptr_t>(p) - 1) & ~(kSegmentBytes - 1));
}

// `shift`: s->block_shift, or a copy of it the caller already holds (free's
// fast path keeps one per verified segment, free_cache.hpp).
inline Block *block_of(Segment *s, const void *p, std::size_t shift) noexcept {
  const std::size_t i = (reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(s)) >> shift;
  return s->blocks() + i;
}
inline Block *block_of(Segment *s, const void *p) noexcept { return block_of(s, p, s->block_shift); }

// First byte of a block's pages (its objects start `header` bytes in, and a
// page class's its colour bytes more: size_classes.hpp, block_colour).
inline char *block_base(const Block *b) noexcept {
  return reinterpret_cast<char *>(reinterpret_cast<std::uintptr_t>(b->start) & ~(kPage - 1));
}

}  // namespace alloclab::vam
