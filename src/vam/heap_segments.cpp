// heap_segments.cpp — a heap's segments: mapping, huge-page advice,
// discarding, unmapping, each counted once.
#include "vam/heap_segments.hpp"

#include "layers/os.hpp"
#include "vam/options.hpp"
#include "vam/segment_source.hpp"

namespace alloclab::vam {

// Huge pages. A 2 MiB page needs one TLB entry where 4 KiB pages need 512: on
// a big heap whose objects are spread over many pages (a fragmented one above
// all) that is the difference between hitting and missing the TLB on most
// accesses. The price is memory: the kernel backs a whole 2 MiB at the first
// touch, so a segment only partly used holds up to 2 MiB it does not need.
// `auto` pays it only once the heap is big enough for that to be small beside
// it: its new segments are advised once it holds VAM_HUGEPAGE_MIN of them.
//
// The advice must come before the segment's first byte is written: a range
// whose first fault mapped a small page stays small. (The fresh mapping
// reads as zero, so `hugepages` is 0 unless set here.)
void HeapSegments::advise(Segment *s) noexcept {
  const Options &o = options();
  if (o.hugepages == int(HugePages::off)) return;
  if (o.hugepages == int(HugePages::automatic) &&
      stats.segments() * static_cast<std::int64_t>(kSegmentBytes) < o.hugepage_min)
    return;
  if (!os::advise_hugepages(s, kSegmentBytes, true)) return;
  s->hugepages = 1;
  s->thp_tail = 1;
  stats.hugepage_segment(1);
}

Segment *HeapSegments::map(Heap *owner, SegKind kind, std::uint32_t block_shift,
                           std::int64_t resident) noexcept {
  Segment *s = g_segment_source.get_segment(kSegmentBytes);
  if (!s) return nullptr;
  advise(s);
  s->magic = kSegmentMagic;
  s->kind = kind;
  s->block_shift = block_shift;
  s->owner = owner;
  s->map_bytes = kSegmentBytes;
  stats.segment_mapped(resident);
  return s;
}

void HeapSegments::unmap(Segment *s, std::int64_t resident) noexcept {
  stats.segment_unmapped(resident);
  if (s->hugepages) {
    store_relaxed(s->hugepages, 0u);
    stats.hugepage_segment(-1);
  }
  g_segment_source.put_segment(s, s->map_bytes);
}

// Discarding splits a huge page, and with the advice in place the kernel's
// background collapsing (khugepaged) may later fill the discarded pages back
// in with zeroes to make a huge page again — undoing the discard. A segment
// that gives pages back therefore stops asking; huge pages it has keep working.
void HeapSegments::discard(Segment *s, void *p, std::size_t bytes) noexcept {
  // A reclaim (remote_reclaim.cpp) reads the flag from another thread.
  if (s->hugepages) {
    os::advise_hugepages(s, kSegmentBytes, false);
    store_relaxed(s->hugepages, 0u);
    stats.hugepage_segment(-1);
  }
  os::discard(p, bytes);
  stats.discard_call();
}

}  // namespace alloclab::vam
