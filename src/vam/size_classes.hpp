// size_classes.hpp — Vam's fine-grained, exact-fit size classes (paper §3.1),
// adapted to x86-64: every object >= 16 bytes must be 16-byte aligned, so the
// classes are 16 bytes apart instead of 8 (8-byte spacing would give 24, 40,
// ... byte objects that break the ABI's alignment promise). Requests of 1..8
// bytes get their own 8-byte class, which needs only 8-byte alignment.
//
//   class 0: 8 bytes; class k (1..64): 16*k bytes  -> 8, 16, 32, 48, ..., 1024
//
// Above 1 KiB, up to kPageMax, the classes are eight per power of two
// (1152, 1280, ..., 2048, 2304, ..., 8192: classes 65..88), a slot at most an
// eighth bigger than the request. The paper puts every object above its
// medium range in boundary-tagged best-fit chunks; here that starts above
// VAM_PAGE_MAX when it is set above 1024 (its default: the fine classes
// alone in blocks), because a chunk's malloc and free read and write two to
// four tags scattered over a region where a page block's read one link; the
// ablation keeps them off by default: more D1 misses and memory on its
// programs, time within noise (docs/vam.md, "Page classes above 1 KiB").
//
// A class's page block is sized to hold enough objects: one page for the 8-
// and 16-byte classes, four pages (16 KiB) from 32 bytes up, doubled (up to
// 16 pages) while the block would hold fewer than 32 objects -- 32 KiB for
// 528..1024 bytes, 64 KiB above. A bigger block means fewer block
// switches and, on a fragmented heap, objects allocated one after the other
// land in the same 16 KiB instead of jumping to another page every dozen
// objects; a block of few objects turns over every few frees, and each turn
// is a trip through the slow paths (docs/vam.md, "Block sizes"). The two
// tiny classes stay at one page because a block's pending-free bitmap has
// 512 bits (segment.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>  // colours_fit's loop over the two header sizes

namespace alloclab::vam {

inline constexpr std::size_t kPage = 4096;            // x86-64 Linux base page
inline constexpr unsigned kFineClasses = 65;          // 8, 16, 32, ..., 1024
inline constexpr std::size_t kSmallMax = 1024;        // largest object of the fine classes
inline constexpr std::size_t kPageMax = 8192;         // largest page-block object (VAM_PAGE_MAX's most)
inline constexpr unsigned kPageClassesPerDoubling = 8;
inline constexpr unsigned kNumClasses = kFineClasses + 3 * kPageClassesPerDoubling;  // 1 KiB..8 KiB
inline constexpr std::size_t kSmallBlockBytes = kPage;       // classes 8 and 16
inline constexpr std::size_t kMediumBlockBytes = 4 * kPage;  // classes 32..1024: the fewest pages
inline constexpr std::size_t kMediumMin = 17;                // smallest size in a four-page block
inline constexpr unsigned kMaxBlockShift = 16;               // 64 KiB: the most a block grows to
// Block kinds: a block of kind k is kPage << k bytes (one page .. 16 pages).
// Each kind has its own segments, carving and empty lists (block_lists.cpp).
inline constexpr unsigned kBlockKinds = kMaxBlockShift - 12 + 1;
inline constexpr unsigned kBlockObjects = 32;                // the fewest objects a block grows to hold

// Class index for a request of `n` bytes, n <= kSmallMax (malloc's inline
// path and its miss: no test of the range).
constexpr unsigned fine_class(std::size_t n) noexcept {
  return n <= 8 ? 0u : static_cast<unsigned>((n + 15) >> 4);
}
// Class index for a request of `n` bytes (n <= kPageMax). 0 bytes -> class 0.
constexpr unsigned size_class(std::size_t n) noexcept {
  if (n <= kSmallMax) return fine_class(n);
  const unsigned k = 63u - static_cast<unsigned>(__builtin_clzll(n - 1));  // 2^k < n <= 2^(k+1)
  return kFineClasses + kPageClassesPerDoubling * (k - 10) +
         static_cast<unsigned>((n - 1 - (std::size_t{1} << k)) >> (k - 3));
}

// Object size of class c.
constexpr std::size_t class_size(unsigned c) noexcept {
  if (c < kFineClasses) return c == 0 ? 8 : std::size_t{c} << 4;
  const unsigned i = c - kFineClasses;
  const std::size_t base = kSmallMax << (i / kPageClassesPerDoubling);
  return base + (base / kPageClassesPerDoubling) * (i % kPageClassesPerDoubling + 1);
}

// Classes in use when page blocks end at `page_max` (a power of two,
// kSmallMax..kPageMax) with the fine spacing.
constexpr unsigned fine_classes_up_to(std::size_t page_max) noexcept {
  unsigned c = kFineClasses;
  for (std::size_t m = kSmallMax; m < page_max; m *= 2) c += kPageClassesPerDoubling;
  return c;
}

// Kind of the block of objects of `size` bytes: `pages` pages (a power of
// two), doubled while it holds fewer than `objects` objects, up to 16 pages;
// one page below kMediumMin bytes.
constexpr unsigned block_kind_for(std::size_t size, std::size_t pages, std::size_t objects) noexcept {
  if (size < kMediumMin) return 0;
  unsigned k = static_cast<unsigned>(__builtin_ctzll(pages));
  while (k + 12 < kMaxBlockShift && (kPage << k) / size < objects) ++k;
  return k;
}

// Block bytes of class c in the default geometry.
constexpr std::size_t class_block_bytes(unsigned c) noexcept {
  return kPage << block_kind_for(class_size(c), kMediumBlockBytes / kPage, kBlockObjects);
}
static_assert(class_block_bytes(0) == kPage && class_block_bytes(2) == 4 * kPage &&
              class_block_bytes(32) == 4 * kPage && class_block_bytes(33) == 8 * kPage &&
              class_block_bytes(64) == 8 * kPage);

static_assert(size_class(0) == 0 && size_class(8) == 0 && size_class(9) == 1);
static_assert(size_class(16) == 1 && size_class(17) == 2 && size_class(1024) == 64);
static_assert(size_class(1025) == 65 && size_class(1152) == 65 && size_class(1153) == 66 &&
              size_class(2048) == 72 && size_class(2049) == 73 && size_class(8192) == kNumClasses - 1);
static_assert(class_size(64) == kSmallMax && class_size(65) == 1152 && class_size(72) == 2048 &&
              class_size(73) == 2304 && class_size(kNumClasses - 1) == kPageMax);
static_assert(fine_classes_up_to(kSmallMax) == kFineClasses && fine_classes_up_to(kPageMax) == kNumClasses);
constexpr bool classes_fit() noexcept {  // every request lands in the smallest class that holds it
  for (std::size_t n = 1; n <= kPageMax; ++n) {
    const unsigned c = size_class(n);
    if (class_size(c) < n || (c > 0 && class_size(c - 1) >= n) || class_size(c) % 8 != 0) return false;
    if (n >= 16 && class_size(c) % 16 != 0) return false;
  }
  return class_block_bytes(kNumClasses - 1) == 16 * kPage && class_block_bytes(65) == 16 * kPage;
}
static_assert(classes_fit());

// Cache colour of a page-class block (above 1 KiB). Without it the first
// object of every such block sits at the block's start, 64 KiB-aligned, so
// in L1 set 0 (docs/vam.md, "Cache sets"), as does every object of the
// 2048-, 4096- and 8192-byte classes: a program whose few big arrays are each
// the first of its class (perl's stacks and hash arrays) would have them all
// fight over one set's 8 lines. So objects start `colour` bytes in, a multiple of
// 64 chosen by the block's index in its segment, and a block whose objects
// leave less than kColourBytes at its end holds fewer of them (the pages of
// its tail are never touched: no memory, only address space). The colour
// stays below 1 KiB: free's slot check (small_free.hpp, small_free_local) rejects
// every pointer that far before the first object (VamPageClasses tests it),
// and never leaves a slot's room at the block's end, where a pointer would
// pass it as one slot past the last.
// The distance between two objects of a page-class block. A 4 KiB span of
// addresses covers each L1 set once (64 sets of 64-byte lines), so objects
// exactly a multiple of 1 KiB apart start in at most four sets, and those of
// the 4096- and 8192-byte classes all in one: a program's few big arrays of
// one class would share its 8 lines. Such a class's objects are one line
// more apart, object i starting i lines further round the sets (docs/vam.md,
// "Page classes above 1 KiB"). The 64 bytes are usable; slot and slot check use the stride.
constexpr std::size_t page_stride(std::size_t size) noexcept {
  return size > 1024 && size % 1024 == 0 ? size + 64 : size;
}
inline constexpr std::size_t kColourBytes = 1024;
inline constexpr std::size_t kColourAlign = 64;  // every colour is a multiple of it
struct BlockColour {
  std::size_t cap;     // objects
  std::size_t colour;  // bytes before the first
};
constexpr BlockColour block_colour(std::size_t bytes, std::size_t size, std::size_t index) noexcept {
  const std::size_t whole = bytes / size;
  std::size_t cap = whole;
  if (bytes - cap * size < kColourBytes) cap -= (kColourBytes - (bytes - cap * size) + size - 1) / size;
  // A block too small to give up an object for it (other VAM_BLOCK_PAGES or
  // VAM_BLOCK_OBJECTS) goes uncoloured rather than lose a quarter of them.
  if (cap == 0 || 4 * cap < 3 * whole) return {whole, 0};
  const std::size_t slack = bytes - cap * size;
  const std::size_t lo = slack >= size ? (slack - size) / 64 * 64 + 64 : 0;  // no slot's room at the end
  const std::size_t hi = (slack < kColourBytes ? slack : kColourBytes - 64) / 64 * 64;
  const std::size_t n = hi >= lo ? (hi - lo) / 64 + 1 : 1;
  return {cap, lo + (index * 7 % n) * 64};
}
constexpr bool colours_fit() noexcept {
  for (unsigned c = kFineClasses; c < kNumClasses; ++c)
    for (std::size_t header : {std::size_t{0}, std::size_t{16}})
      for (std::size_t i = 0; i < 64; ++i) {
        const std::size_t size = page_stride(class_size(c) + header), bytes = class_block_bytes(c) - header;
        const BlockColour k = block_colour(bytes, size, i);
        if (k.cap < 2 || k.colour % kColourAlign || k.colour + header >= kColourBytes ||
            k.colour + k.cap * size > bytes || bytes - (k.colour + k.cap * size) >= size)
          return false;
      }
  return block_colour(8192, 8192, 1).cap == 1 && block_colour(8192, 8192, 1).colour == 0;  // VAM_BLOCK_PAGES=1
}
static_assert(colours_fit());

// How many objects a fine-class block holds. A run of allocations that
// fills one block and goes on in the next keeps the cache line offsets it
// had only if the block's count is a multiple of the period of its slots'
// offsets, 64 / gcd(size, 64) slots (four for 48, 80, 112, ... bytes:
// offsets 0, 48, 32, 16). With 341 objects of 48 bytes in 16 KiB, a program
// that allocates a list node and another object of its class in turn had
// its nodes at offsets 0 and 32 in one block, 48 and 16 in the next; at 48
// a node's first three words straddle two lines, one D1 miss more per node
// visited (cfrac: 2.8 M of its 20.0 M; docs/notes/2026-11-29-locality-cfrac.md).
// So the count is cut to whole periods where that costs one slot of at
// least 64 (48, 144, 176 and 224 bytes in the default geometry: 341 objects
// of 48 bytes become 340), the objects still from the block's start. Not
// before the first object: a pointer d bytes before it, 2^32 - d a multiple
// of the size, passes free's general slot check, a 32-bit product
// (small_free.cpp), as an enormous slot. The slot's room left at the end
// is, like the end itself, a slot start that free's checks do not bound by
// the block's count (as on every block whose objects leave a tail): a free
// of such a pointer, never handed out, is not caught.
inline constexpr std::size_t kLineBytes = 64;
constexpr std::size_t line_period(std::size_t size) noexcept {  // a power of two: gcd(size, 64) is one
  const unsigned twos = static_cast<unsigned>(__builtin_ctzll(size));
  return twos >= 6 ? 1 : kLineBytes >> twos;
}
// `cap`: the objects of `size` bytes that fit in the block.
constexpr std::size_t line_whole_cap(std::size_t cap, std::size_t size) noexcept {
  const std::size_t whole = cap & ~(line_period(size) - 1);
  return whole + 1 == cap && cap >= 2 * kBlockObjects ? whole : cap;
}
constexpr bool line_whole_fits() noexcept {
  for (unsigned c = 0; c < kFineClasses; ++c) {
    const std::size_t size = class_size(c), bytes = class_block_bytes(c);
    const std::size_t cap = bytes / size < 512 ? bytes / size : 512, k = line_whole_cap(cap, size);
    if (k != cap && (k % line_period(size) != 0 || (k * size) % kLineBytes != 0 || bytes - k * size >= 2 * size))
      return false;
  }
  return line_whole_cap(341, 48) == 340 && line_whole_cap(146, 112) == 146 && line_whole_cap(53, 304) == 53 &&
         line_whole_cap(5, 720) == 5 && line_whole_cap(512, 8) == 512;
}
static_assert(line_whole_fits());

// ---- the geometry in force (docs/vam.md, "Design switches") ---------------
//
// The functions above are the default geometry, fixed at compile time. Four
// VAM_* options change it for an ablation: VAM_CLASSES=coarse (power-of-two
// classes 8, 16, 32, ..., as PHKmalloc's), VAM_HEADERS=on (a 16-byte
// header before every small object, holding its size, as DLmalloc's),
// VAM_BLOCK_PAGES (pages per medium block) and VAM_PAGE_MAX (the largest
// object in page blocks; larger ones go to the large-object heap). They are settled once, before the
// first block is carved, into this table, which the fast paths read: the
// class of a request is one byte load whatever the spacing, and the inline
// malloc path admits the requests below `inline_limit`, so a geometry it
// cannot serve (headers) costs the default path nothing but that compare's
// operand.
struct alignas(64) Layout {
  // First, the fields malloc and free read on every call outside the
  // inline path: one cache line.
  // In the default geometry only, else both 0: malloc_impl serves n inline
  // when n < inline_limit (0..kSmallMax bytes); inline_fine, kSmallMax - 8,
  // says that it does (free fills the hot lists that path reads).
  std::size_t inline_fine;
  std::size_t inline_limit;
  std::uint32_t coarse;                      // VAM_CLASSES=coarse (class_of differs from size_class)
  std::uint32_t page_max;                    // VAM_PAGE_MAX: requests up to this go to page blocks
  std::uint32_t header;                      // bytes before each small object: 0 or 16
  std::uint32_t lifo;                        // VAM_BLOCK_ALLOC=lifo: blocks threaded when made
  std::uint32_t order;                       // VAM_ORDER (ReuseOrder): where a regained block goes
  unsigned classes;                          // classes in use (<= kNumClasses)
  // Copies of options the allocation and free paths read, in the line
  // malloc reads anyway (options() is a call and one more cold line: 57,000
  // misses on large_max and 56,000 on discard in sqlite3's 0.25 M large
  // mallocs and frees, and 56,000 on large_quick in its large frees). They
  // follow the options even once the geometry is fixed (layout_settle).
  std::uint64_t large_max;                   // VAM_LARGE_MAX
  std::uint32_t discard;                     // VAM_DISCARD (DiscardPolicy)
  std::uint32_t large_quick;                 // VAM_LARGE_QUICK (0 off, 1 on)
  std::uint8_t class_of[kPageMax / 8 + 1];   // request n (<= kPageMax) -> class, at (n + 7) >> 3
  std::uint32_t slot[kNumClasses];           // object spacing in a block (header included)
  std::uint8_t kind[kNumClasses];            // block kind of each class: kPage << kind bytes
  std::uint16_t fine_cap[kFineClasses];      // objects in a block of each class below them (line_whole_cap)
};

static_assert(offsetof(Layout, inline_fine) / 64 == offsetof(Layout, coarse) / 64 &&
                  offsetof(Layout, inline_fine) / 64 == offsetof(Layout, inline_limit) / 64 &&
                  offsetof(Layout, inline_fine) / 64 == offsetof(Layout, discard) / 64 &&
                  offsetof(Layout, inline_fine) / 64 == offsetof(Layout, large_max) / 64 &&
                  offsetof(Layout, inline_fine) / 64 == offsetof(Layout, large_quick) / 64 &&
                  offsetof(Layout, inline_fine) / 64 == offsetof(Layout, page_max) / 64,
              "malloc and free read them together: one cache line");

// The default geometry, as a constant.
constexpr Layout default_layout() noexcept {
  Layout l{};
  for (std::size_t i = 0; i <= kPageMax / 8; ++i) l.class_of[i] = static_cast<std::uint8_t>(size_class(i * 8));
  for (unsigned c = 0; c < kNumClasses; ++c) l.slot[c] = static_cast<std::uint32_t>(class_size(c));
  l.inline_fine = kSmallMax - 8;  // 9..kSmallMax
  l.inline_limit = kSmallMax + 1;  // 0..kSmallMax
  l.header = 0;
  for (unsigned c = 0; c < kNumClasses; ++c)
    l.kind[c] = static_cast<std::uint8_t>(block_kind_for(class_size(c), kMediumBlockBytes / kPage, kBlockObjects));
  l.lifo = 0;
  l.order = 0;               // recent
  l.coarse = 0;
  l.page_max = kSmallMax;    // the options' default (options.hpp): the fine classes alone
  l.classes = fine_classes_up_to(l.page_max);
  l.large_max = 256 * 1024;  // the options' defaults (options.hpp)
  l.discard = 2;             // delayed
  l.large_quick = 1;         // on
  return l;
}

// The geometry in force: written only before the first block is carved.
extern Layout g_layout;

// Class of a request of n <= g_layout.page_max bytes, in the geometry in force.
// The default spacing is arithmetic: a table lookup is one more cache line
// per malloc, and a cold one in a program that does much between mallocs
// (sqlite3: 188,000 misses on class_of in 1 M mallocs). `coarse` shares the
// line of `inline_fine`, which malloc_impl reads anyway.
inline unsigned layout_class(std::size_t n) noexcept {
  return __builtin_expect(g_layout.coarse == 0, 1) ? size_class(n) : g_layout.class_of[(n + 7) >> 3];
}
// Usable bytes of an object of class c (its slot less the header).
inline std::size_t layout_usable(unsigned c) noexcept { return g_layout.slot[c] - g_layout.header; }

}  // namespace alloclab::vam
