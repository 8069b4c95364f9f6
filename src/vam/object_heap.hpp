// object_heap.hpp — the paper's Figure 1 as a type: a request goes, by its
// size, to one of three heaps (Vam §3.1's categories), and ObjectHeap is
// the split of them that every allocation outside malloc's inline path
// (api.hpp) takes (vam.cpp, alloc_in).
//
// Each heap is a stateless struct over a thread's Heap (heap.hpp) with
//   static bool fits(size_t n, size_t align)   this heap serves the request
//   static void *alloc(Heap *h, size_t n, size_t align)   nullptr: no memory
// and SizeSplit<First, Rest> gives a request to First if it fits, else to
// Rest. The compiler flattens the split into the size tests it replaces.
//
// Below the heaps, the back end (docs/vam.md, "How the paper maps to the
// code", quotes every type):
//   SmallBlocks, LargeRegions   a heap's HeapSegments (heap_segments.hpp)
//                               over the process's SegmentSource
//   HugeMappings                HugeCache = MappingCache<SegmentSource, ...>
//                               (huge.cpp)
// and SegmentSource = RegisteredSegments<AlignedMmapHeap<kSegmentBytes>>
// (segment_source.hpp) is the one place segments are mapped and unmapped.
#pragma once

#include <cstddef>

#include "vam/heap.hpp"
#include "vam/hot_list.hpp"
#include "vam/huge.hpp"
#include "vam/size_classes.hpp"

namespace alloclab::vam {

// A page-block object malloc's inline path does not serve: one of the
// classes above 1 KiB, or any in a geometry it does not serve (inline_limit
// 0): VAM_CLASSES=coarse (the class from the table), and VAM_HEADERS=on,
// with its header (the object's usable size, in the 16 bytes before it)
// written, as a DLmalloc-style allocator does. The class's hot object comes
// first, as on the inline path (only free's fast path in the default
// geometry fills it, so there is no header to write then). Out of line, so
// that the callers' default paths stay leaves with no frame.
[[gnu::noinline]] inline void *small_alloc_layout(Heap *h, std::size_t n) noexcept {
  const unsigned c = layout_class(n);
  if (const std::uintptr_t v = class_hot_list(h, c)) return hot_pop(h, c, v);
  void *p = small_alloc(h, c);
  if (VAM_LIKELY(p != nullptr) && g_layout.header) static_cast<std::size_t *>(p)[-2] = layout_usable(c);
  return p;
}

// §3.2–3.5: up to VAM_PAGE_MAX, headerless objects in page blocks of one class,
// reap allocation inside each block, blocks kept in Vam's order (heap.hpp
// lists the files).
// The geometry switches (VAM_CLASSES, VAM_HEADERS, VAM_BLOCK_ALLOC,
// VAM_BLOCK_PAGES) are this heap's options, g_layout, settled before its
// first block is carved (size_classes.hpp).
struct SmallBlocks {
  static bool fits(std::size_t n, std::size_t align) noexcept { return n <= g_layout.page_max && align == 0; }
  static void *alloc(Heap *h, std::size_t n, std::size_t) noexcept {
    return g_layout.header ? small_alloc_layout(h, n) : small_alloc(h, layout_class(n));
  }
};

// §3.1 large objects: up to VAM_LARGE_MAX, boundary-tagged chunks of shared
// regions, best fit, coalesced on free (large_region.hpp: LargeHeap over
// FitBins and coalesce()).
struct LargeRegions {
  static bool fits(std::size_t n, std::size_t align) noexcept {
    return n + align <= g_layout.large_max && n + align <= LargeHeap::region_capacity();
  }
  static void *alloc(Heap *h, std::size_t n, std::size_t align) noexcept { return large_alloc(h, n, align); }
};

// §3.1 "extremely large": one mapping each, freed mappings cached (huge.hpp).
struct HugeMappings {
  static bool fits(std::size_t, std::size_t) noexcept { return true; }
  static void *alloc(Heap *, std::size_t n, std::size_t align) noexcept { return huge_alloc(n, align); }
};

template <class First, class Rest>
struct SizeSplit {
  static bool fits(std::size_t n, std::size_t align) noexcept {
    return First::fits(n, align) || Rest::fits(n, align);
  }
  static void *alloc(Heap *h, std::size_t n, std::size_t align) noexcept {
    return First::fits(n, align) ? First::alloc(h, n, align) : Rest::alloc(h, n, align);
  }
};

using ObjectHeap = SizeSplit<SmallBlocks, SizeSplit<LargeRegions, HugeMappings>>;

}  // namespace alloclab::vam
