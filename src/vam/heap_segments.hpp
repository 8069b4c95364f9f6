// heap_segments.hpp — HeapSegments: one heap's segments, and every page it
// gives back, in one layer over the process's segment source.
//
//   HeapSegments          per heap: its statistics (HeapStats, counters.hpp)
//    │                    and its segments' transparent huge pages (VAM_HUGEPAGES)
//    └ SegmentSource      the process's one source (segment_source.hpp)
//
// A heap's block segments (block_lists.cpp) and large-object regions
// (large_region.cpp) are mapped, discarded and unmapped only through here,
// so the counts vam_stats() reports and the huge-page advice follow every
// such change by construction, not by each caller remembering to.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vam/counters.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

struct Heap;

// Does this machine's kernel hand free memory back to a hypervisor in blocks
// as small as a transparent huge page? That is a virtio balloon that
// negotiated free page reporting (feature bit 5), reporting blocks of an
// order no larger than a huge page's (page_reporting_order). There, a free
// 2 MiB block left alone for about two seconds goes back to the host, and
// the next huge page cut from it costs a host fault of all 2 MiB; small
// pages come first from the fragments below that size, never reported.
// `sys` is sysfs's root ("/sys"; tests give a tree of their own). Read by
// raw system calls, no allocation; false when nothing can be read.
bool host_takes_free_hugepages(const char *sys) noexcept;
// True once VAM_HUGEPAGES=auto has withheld its advice for that reason (it
// asks only when a heap first reaches VAM_HUGEPAGE_MIN): for VAM_STATS.
bool hugepages_withheld() noexcept;

class HeapSegments {
 public:
  // A fresh kSegmentBytes segment of `kind` for heap `owner`, its common
  // header fields set (magic, kind, block_shift, owner, map_bytes) and, per
  // VAM_HUGEPAGES, advised to use huge pages before its first byte is
  // written; `resident` of its pages (its header's) counted in use.
  // nullptr: out of memory.
  Segment *map(Heap *owner, SegKind kind, std::uint32_t block_shift, std::int64_t resident) noexcept;
  // Give back segment s of this heap, `resident` of its pages still counted
  // in use.
  void unmap(Segment *s, std::int64_t resident) noexcept;
  // Drop the contents of the whole pages [p, p + bytes) inside segment s: one
  // discard call. The caller counts the pages that were in use
  // (stats.pages_discarded), since only it knows how many were.
  void discard(Segment *s, void *p, std::size_t bytes) noexcept;

  HeapStats stats;

 private:
  void advise(Segment *s) noexcept;
};

}  // namespace alloclab::vam
