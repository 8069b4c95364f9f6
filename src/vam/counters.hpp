// counters.hpp — HeapStats, the statistics layer of a heap: every change to
// what vam_stats() reports is one named event here, called from the heap's
// slow paths and its segment layer (heap_segments.hpp). The small fast paths
// update just the block's own live count; vam_stats (stats.cpp) sums those.
//
// Each counter is written only by the thread that currently owns the heap
// (remote frees are applied by the owner when it drains its remote list), so
// an event is a relaxed load + store — no locked instruction. vam_stats()
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

class HeapStats {
 public:
  // A segment came from the system / went back; `resident`: its pages in
  // use at that moment (its header's, when mapped).
  void segment_mapped(std::int64_t resident) noexcept {
    segments_.add(1);
    pages_in_use_.add(resident);
  }
  void segment_unmapped(std::int64_t resident) noexcept {
    segments_.add(-1);
    pages_in_use_.add(-resident);
  }
  void hugepage_segment(std::int64_t d) noexcept { hugepage_segments_.add(d); }
  // Pages handed out for the first time, or again after a discard.
  void pages_used(std::int64_t n) noexcept { pages_in_use_.add(n); }
  // Pages given back (one discard call may give back none that were counted
  // in use, e.g. a huge-page tail that no block had reached).
  void discard_call() noexcept { discard_calls_.add(1); }
  void pages_discarded(std::int64_t n) noexcept {
    pages_in_use_.add(-n);
    pages_discarded_.add(n);
  }
  // A page block assigned to class `cls` (+1) or taken back from it (-1).
  void class_block(unsigned cls, std::int64_t d) noexcept { class_blocks_[cls].add(d); }
  // Large objects: `bytes` usable bytes, `objects` objects, come (+) or go (-).
  void large(std::int64_t bytes, std::int64_t objects) noexcept {
    large_live_bytes_.add(bytes);
    large_live_objects_.add(objects);
  }

  std::int64_t segments() const noexcept { return segments_.get(); }
  std::int64_t hugepage_segments() const noexcept { return hugepage_segments_.get(); }
  std::int64_t pages_in_use() const noexcept { return pages_in_use_.get(); }
  std::int64_t pages_discarded() const noexcept { return pages_discarded_.get(); }
  std::int64_t discard_calls() const noexcept { return discard_calls_.get(); }
  std::int64_t class_blocks(unsigned cls) const noexcept { return class_blocks_[cls].get(); }
  std::int64_t large_live_bytes() const noexcept { return large_live_bytes_.get(); }
  std::int64_t large_live_objects() const noexcept { return large_live_objects_.get(); }

 private:
  Counter class_blocks_[kNumClasses];  // page blocks assigned per class
  Counter large_live_bytes_;
  Counter large_live_objects_;
  Counter pages_in_use_;
  Counter pages_discarded_;
  Counter discard_calls_;
  Counter segments_;
  Counter hugepage_segments_;  // of which advised to use transparent huge pages
};

}  // namespace alloclab::vam
