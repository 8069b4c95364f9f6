// reap_heap.hpp — the reap, as a composition of heap layers (reaps §5.1,
// Figure 3(b)). Requests enter at the top and move down:
//
//   NestedHeap                 parent/children; destroy descendants first
//    └ ClearOptimizedHeap      bump while the heap is empty, else heap first
//       └ QuickListHeap        small freed blocks: exact-size LIFO lists
//          └ CoalescingHeap    freed blocks: merged with neighbours, in bins
//             └ BumpHeap       region allocation through the current chunk
//                └ ChunkListHeap   geometric chunks; release-all keeps spares
//                   └ ChunkCache   process-wide cache of released chunks
//                      └ MmapHeap  the system (through os.hpp)
//   beside them: LargeObjectHeap   objects too big for a chunk, a mapping each
//                 └ MappingCache   process-wide cache of freed mappings, any
//                                  size, resized in place (the layer libvam's
//                                  huge objects use too)
//                    └ AlignedMmapHeap<4096>   the system: MmapHeap with the
//                                  in-place resize the cache needs
//
// Boundary tags (boundary_tag.hpp) are the CoalesceableHeap of the paper:
// the one word per object that lets the heap take back region memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/bump_heap.hpp"
#include "layers/chunk_cache.hpp"
#include "layers/chunk_list_heap.hpp"
#include "layers/clear_optimized_heap.hpp"
#include "layers/coalescing_heap.hpp"
#include "layers/large_object_heap.hpp"
#include "layers/mapping_cache.hpp"
#include "layers/mmap_heap.hpp"
#include "layers/nested_heap.hpp"
#include "layers/quick_lists.hpp"
#include "reap/ptr_set.hpp"

namespace alloclab::reap_impl {

using ChunkSource = ChunkCache<MmapHeap>;
using RegionCore = NestedHeap<
    ClearOptimizedHeap<QuickListHeap<CoalescingHeap<BumpHeap<ChunkListHeap<ChunkSource>>>>>>;

// The first chunk of a reap holds the reap itself; it lives as long as the reap.
inline constexpr std::size_t kHomeChunk = 16 * 1024;
// Blocks larger than this get a mapping of their own.
inline constexpr std::size_t kLargeBlock = 128 * 1024;

// What the cache of large objects' mappings keeps: as much as ChunkCache
// does by default (8 MiB, so 64 slots hold it in mappings of just over
// kLargeBlock), mappings of up to half of it, and no expiry: like the chunk
// cache's, it waits for the next reap and never holds more than the limit.
struct LargePolicy {
  static constexpr int kSlots = 64;
  static constexpr std::size_t kLimit = 8u * 1024 * 1024;
  static constexpr std::size_t limit() noexcept { return kLimit; }
  static constexpr std::size_t max_bytes() noexcept { return kLimit / 2; }
  static constexpr std::int64_t delay_ms() noexcept { return kNever; }
  static constexpr std::int64_t now_ms() noexcept { return 0; }
};
using LargeSource = MappingCache<AlignedMmapHeap<4096>, LargePolicy>;

}  // namespace alloclab::reap_impl

// The C type behind reap_t.
struct reap : alloclab::reap_impl::RegionCore {
  alloclab::LargeObjectHeap<alloclab::reap_impl::LargeSource> large;
  std::size_t live_objects = 0;
  std::size_t live_bytes = 0;
  std::size_t typical_use = 0;   // smoothed bytes of chunks used per clear cycle
  bool cleared_once = false;
  // Anything but plain reap operation (emulator, checks, a memory checker)
  // takes the out-of-line path; the fast paths test this one flag.
  bool slow = false;
  bool emulated = false;
  bool checked = false;
  alloclab::PtrSet *objects = nullptr;  // emulator: the out-of-band record
  reap *reg_next = nullptr;             // registry of all reaps (checked mode)
  reap *reg_prev = nullptr;
  char *home_lo = nullptr;              // the area of the home chunk
  char *home_hi = nullptr;

};
