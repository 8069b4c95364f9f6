// heap_hooks.hpp — what the parts a heap is made of (large_region.*, huge.*)
// call back into the process around them for.
//
// LargeHeap is a member of Heap, so heap.hpp includes large_region.hpp; had
// large_region.cpp included heap.hpp for these few calls, the two would form
// an include cycle (large_region.cpp -> heap.hpp -> large_region.hpp), and
// every change to Heap would rebuild the large-object code. The calls are
// declared here instead; heap.hpp includes this header, so its users see
// them as before. Defined in threads.cpp. (Mapping, discarding and unmapping a
// heap's segments, with their statistics and huge-page advice, is a layer of
// its own: heap_segments.hpp.)
// tests/vam/include_cycles.py fails the build's tests if a cycle comes back.
#pragma once

namespace alloclab::vam {

void reclaim_abandoned() noexcept;     // apply frees waiting on abandoned heaps (threads.cpp)
int live_heaps() noexcept;             // heaps owned by running threads (threads.cpp)

}  // namespace alloclab::vam
