// heap_hooks.hpp — what the parts a heap is made of (large_region.*, huge.*)
// call back into the heap and the process around them for.
//
// LargeHeap is a member of Heap, so heap.hpp includes large_region.hpp; had
// large_region.cpp included heap.hpp for these few calls, the two would form
// an include cycle (large_region.cpp -> heap.hpp -> large_region.hpp), and
// every change to Heap would rebuild the large-object code. The calls are
// declared here instead, against a forward-declared Heap; heap.hpp includes
// this header, so its users see them as before. Defined in heap.cpp
// (hugepages_*) and vam.cpp (reclaim_abandoned, live_heaps).
// tests/vam/include_cycles.py fails the build's tests if a cycle comes back.
#pragma once

#include "vam/counters.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

struct Heap;

// Transparent huge pages (VAM_HUGEPAGES): advise a segment the heap has just
// mapped, before its first byte is touched; drop the advice once pages inside
// it are discarded (so the kernel does not fill them back in) or it is unmapped.
void hugepages_new_segment(Heap *h, Segment *s) noexcept;
void hugepages_discarding(HeapCounters &c, Segment *s) noexcept;
void hugepages_unmapping(HeapCounters &c, Segment *s) noexcept;
void reclaim_abandoned() noexcept;     // apply frees waiting on abandoned heaps (vam.cpp)
int live_heaps() noexcept;             // heaps owned by running threads (vam.cpp)

}  // namespace alloclab::vam
