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

#include <atomic>
#include <cstdint>

#include "vam/check.hpp"

namespace alloclab::vam {

struct Heap;

void reclaim_abandoned() noexcept;     // apply frees waiting on abandoned heaps (threads.cpp)
int live_heaps() noexcept;             // heaps owned by running threads (threads.cpp)
void orphan_freed(Heap *h) noexcept;   // a remote free into an orphan heap (threads.cpp)
// When frees or kept pages began to wait on orphan heaps (ms, 0: none); a
// heap's slow paths call orphan_tick, which applies them once they are due.
extern std::atomic<std::int64_t> g_orphan_work_ms;
void orphan_tick_slow(std::int64_t since) noexcept;
inline void orphan_tick() noexcept {
  const std::int64_t since = g_orphan_work_ms.load(std::memory_order_relaxed);
  if (VAM_UNLIKELY(since != 0)) orphan_tick_slow(since);
}
// Unmapping a segment must not race a statistics walk of block_segs: both
// hold this lock (threads.cpp). Taken after the global lock, never before.
void segment_walk_lock() noexcept;
void segment_walk_unlock() noexcept;

}  // namespace alloclab::vam
