// counters.hpp — per-heap statistics, kept on the slow paths only (the small
// fast paths update just the block's own live count; vam.cpp sums those).
//
// Each counter is written only by the thread that currently owns the heap
// (remote frees are applied by the owner when it drains its remote list), so
// an increment is a relaxed load + store — no locked instruction. vam_stats()
// reads them from any thread with relaxed loads: a snapshot, not a barrier.
#pragma once

#include <atomic>
#include <cstdint>

#include "vam/size_classes.hpp"

namespace alloclab::vam {

struct Counter {
  std::atomic<std::int64_t> v{0};
  void add(std::int64_t d) noexcept {
    v.store(v.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
  }
  std::int64_t get() const noexcept { return v.load(std::memory_order_relaxed); }
};

struct HeapCounters {
  Counter class_blocks[kNumClasses];  // page blocks assigned per class
  Counter large_live_bytes;
  Counter large_live_objects;
  Counter pages_in_use;
  Counter pages_discarded;
  Counter discard_calls;
  Counter segments;
  Counter hugepage_segments;  // of which advised to use transparent huge pages
};

}  // namespace alloclab::vam
