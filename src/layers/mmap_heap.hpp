// mmap_heap.hpp — the bottom of every stack: whole page-multiple chunks
// straight from the operating system (through os.hpp, the one seam).
//
// Chunk interface shared by the chunk-source layers:
//   void *get_chunk(size_t bytes)        bytes: a multiple of the page size
//   void  put_chunk(void *p, size_t bytes)
//   static constexpr bool kFreshIsZeroed  memory from get_chunk may be assumed zero
// Sources of aligned chunks (AlignedMmapHeap, and the layers stacked on it)
// add:
//   static constexpr size_t kAlignment   every chunk starts at a multiple of it
//   void *get_chunk_at(size_t bytes, size_t align, size_t skew)
//                                        start + skew a multiple of align (a
//                                        power of two >= kAlignment)
//   bool  resize_chunk(void *p, size_t old_bytes, size_t new_bytes)
//                                        in place (the start stays); false,
//                                        chunk untouched, when it cannot grow
//   void *move_chunk(void *p, size_t old_bytes, size_t new_bytes)
//                                        resize, moving the pages (no copy)
//                                        to a new kAlignment-aligned start if
//                                        need be; nullptr, chunk untouched,
//                                        when refused
//   void  trim_chunk(void *tail, size_t bytes)
//                                        give back a chunk's last pages (a
//                                        page-aligned range that is not its
//                                        start); the rest stays mapped
#pragma once

#include <cstddef>

#include "layers/os.hpp"

namespace alloclab {

class MmapHeap {
 public:
  static constexpr bool kFreshIsZeroed = true;

  void *get_chunk(std::size_t bytes) noexcept { return os::map(bytes); }
  void put_chunk(void *p, std::size_t bytes) noexcept { os::unmap(p, bytes); }
};

// Chunks aligned to kAlign (a power of two, at least a page): what a BIBOP
// allocator needs so that `p & ~(kAlign - 1)` finds the header of any
// object's chunk.
template <std::size_t kAlign>
class AlignedMmapHeap {
  static_assert((kAlign & (kAlign - 1)) == 0, "a power of two");

 public:
  static constexpr bool kFreshIsZeroed = true;
  static constexpr std::size_t kAlignment = kAlign;

  void *get_chunk(std::size_t bytes) noexcept { return os::map_aligned(bytes, kAlign); }
  void *get_chunk_at(std::size_t bytes, std::size_t align, std::size_t skew) noexcept {
    return os::map_aligned(bytes, align < kAlign ? kAlign : align, skew);
  }
  void put_chunk(void *p, std::size_t bytes) noexcept { os::unmap(p, bytes); }
  bool resize_chunk(void *p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
    return os::resize_in_place(p, old_bytes, new_bytes);
  }
  void *move_chunk(void *p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
    return os::remap(p, old_bytes, new_bytes, kAlign);
  }
  void trim_chunk(void *tail, std::size_t bytes) noexcept { os::unmap(tail, bytes); }
};

}  // namespace alloclab
