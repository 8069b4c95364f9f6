// segment_source.hpp — the one place libvam's segments come from and go back
// to: block segments (block_lists.cpp), large-object regions (large_region.cpp) and
// huge objects' mappings (huge.cpp) are all chunks of SegmentSource.
//
//   SegmentSource = RegisteredSegments       every chunk recorded in the
//                                            segment map while it is ours
//                    └ AlignedMmapHeap<4 MiB>   the system, through os.hpp
//
// A pipe of layers in the way of src/layers (mmap_heap.hpp gives the chunk
// interface): a layer above (the huge cache, huge.cpp; a heap's accounting,
// heap_segments.hpp) takes any Parent with this interface. The segment map
// is what lets free() tell vam's pointers from anybody else's
// (segment_map.hpp), so no segment may exist outside it: recording happens
// here, between the mapping and the first use, and forgetting between the
// last use and the unmapping, never in a caller.
#pragma once

#include <cstddef>

#include "layers/mmap_heap.hpp"
#include "vam/check.hpp"
#include "vam/segment.hpp"
#include "vam/segment_map.hpp"

namespace alloclab::vam {

template <class Parent>
class RegisteredSegments : public Parent {
  static_assert(Parent::kAlignment >= kSegmentBytes, "segments are found by masking");

 public:
  // The chunk interface (mmap_heap.hpp), so that layers stack on this one.
  // A fresh chunk of `bytes` (a multiple of the page size), recorded;
  // nullptr when the system or the segment map's leaf refuses.
  void *get_chunk(std::size_t bytes) noexcept { return record(Parent::get_chunk(bytes), bytes); }
  // The same, its start + skew a multiple of `align` (huge objects aligned
  // to more than a segment sit `skew` = one segment past their header).
  void *get_chunk_at(std::size_t bytes, std::size_t align, std::size_t skew) noexcept {
    return record(Parent::get_chunk_at(bytes, align, skew), bytes);
  }
  // Forget, then unmap.
  void put_chunk(void *p, std::size_t bytes) noexcept {
    segment_map_set(static_cast<Segment *>(p), false);
    Parent::put_chunk(p, bytes);
  }
  // Grow or shrink in place, or give back the last pages: the start, and so
  // the record, stays.
  using Parent::resize_chunk;
  using Parent::trim_chunk;
  // Resize, moving if need be. The old range may be unmapped inside the call
  // and mapped at once by another thread for its own segment: it is
  // forgotten first, and the new one recorded after. nullptr: refused, the
  // chunk is where it was and still recorded.
  void *move_chunk(void *p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
    auto *s = static_cast<Segment *>(p);
    segment_map_set(s, false);
    void *mem = Parent::move_chunk(p, old_bytes, new_bytes);
    if (!mem) {
      segment_map_set(s, true);  // its leaf exists: cannot fail
      return nullptr;
    }
    // A leaf that cannot be mapped now would leave a live object unknown to
    // free(): nothing sensible is left to do.
    if (!segment_map_set(static_cast<Segment *>(mem), true)) corruption("no memory to record a moved segment", mem);
    return mem;
  }

  // The same, typed.
  Segment *get_segment(std::size_t bytes) noexcept { return static_cast<Segment *>(get_chunk(bytes)); }
  Segment *get_segment_at(std::size_t bytes, std::size_t align, std::size_t skew) noexcept {
    return static_cast<Segment *>(get_chunk_at(bytes, align, skew));
  }
  void put_segment(Segment *s, std::size_t bytes) noexcept { put_chunk(s, bytes); }
  bool resize_segment(Segment *s, std::size_t old_bytes, std::size_t new_bytes) noexcept {
    return resize_chunk(s, old_bytes, new_bytes);
  }
  Segment *move_segment(Segment *s, std::size_t old_bytes, std::size_t new_bytes) noexcept {
    return static_cast<Segment *>(move_chunk(s, old_bytes, new_bytes));
  }

 private:
  void *record(void *mem, std::size_t bytes) noexcept {
    if (!mem) return nullptr;
    if (!segment_map_set(static_cast<Segment *>(mem), true)) {
      Parent::put_chunk(mem, bytes);
      return nullptr;
    }
    return mem;
  }
};

using SegmentSource = RegisteredSegments<AlignedMmapHeap<kSegmentBytes>>;

// The process's source. Stateless (the map is global): any code may use this
// one object from any thread.
inline SegmentSource g_segment_source;

}  // namespace alloclab::vam
