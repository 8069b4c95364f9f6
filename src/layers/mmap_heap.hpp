// mmap_heap.hpp — the bottom of every stack: whole page-multiple chunks
// straight from the operating system (through os.hpp, the one seam).
//
// Chunk interface shared by the chunk-source layers:
//   void *get_chunk(size_t bytes)        bytes: a multiple of the page size
//   void  put_chunk(void *p, size_t bytes)
//   static constexpr bool kFreshIsZeroed  memory from get_chunk may be assumed zero
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

}  // namespace alloclab
