// heap_hooks.hpp — the calls a heap and the parts it is made of
// (large_region.*, huge.*) make back into the process around them, all
// defined in threads.cpp: abandoned heaps, live heaps, orphan frees, the
// segment-walk lock.
//
// Declared here, not in global.hpp or heap.hpp: LargeHeap is a member of
// Heap, so heap.hpp includes large_region.hpp, and large_region.cpp
// including heap.hpp for these calls would close an include cycle
// (tests/vam/include_cycles.py fails on one) and rebuild the large-object
// code at every change to Heap.
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
