// heap_segments.cpp — a heap's segments: mapping, huge-page advice,
// discarding, unmapping, each counted once.
#include "vam/heap_segments.hpp"

#include <unistd.h>

#include <atomic>

#include "layers/os.hpp"
#include "vam/options.hpp"
#include "vam/segment_source.hpp"

namespace alloclab::vam {

namespace {

// A path under sysfs's root, built without allocating: root, then parts.
struct SysPath {
  char buf[256];
  std::size_t n = 0;
  SysPath &add(const char *t) noexcept {
    while (*t && n < sizeof buf - 1) buf[n++] = *t++;
    buf[n] = 0;
    return *this;
  }
  SysPath &num(unsigned v) noexcept {
    char d[12];
    std::size_t k = 0;
    do { d[k++] = static_cast<char>('0' + v % 10); v /= 10; } while (v);
    while (k && n < sizeof buf - 1) buf[n++] = d[--k];
    buf[n] = 0;
    return *this;
  }
};

// The decimal number at the start of the file, or -1.
long read_number(const SysPath &p) noexcept {
  char b[32];
  const long n = os::read_small_file(p.buf, b, sizeof b);
  long v = -1;
  for (long i = 0; i < n && b[i] >= '0' && b[i] <= '9'; ++i) v = (v < 0 ? 0 : v * 10) + (b[i] - '0');
  return v;
}

constexpr unsigned kVirtioDevices = 64;    // virtio0 .. virtio63 are looked at
constexpr int kVirtioBalloon = 5;          // the balloon's virtio device id
constexpr int kBalloonFreePageReporting = 5;  // VIRTIO_BALLOON_F_REPORTING

// host_takes_free_hugepages, asked once per process: 0 not yet, 1 no, 2 yes.
std::atomic<int> g_hugepages_to_host{0};

bool hugepages_go_to_host() noexcept {
  int v = g_hugepages_to_host.load(std::memory_order_relaxed);
  if (v == 0) {
    v = host_takes_free_hugepages("/sys") ? 2 : 1;  // two threads asking at once get the same answer
    g_hugepages_to_host.store(v, std::memory_order_relaxed);
  }
  return v == 2;
}

}  // namespace

bool hugepages_withheld() noexcept {
  return options().hugepages == int(HugePages::automatic) && g_hugepages_to_host.load(std::memory_order_relaxed) == 2;
}

bool host_takes_free_hugepages(const char *sys) noexcept {
  // A huge page's order (9: 2 MiB of 4 KiB pages), from the size the kernel gives it.
  const long huge = read_number(SysPath{}.add(sys).add("/kernel/mm/transparent_hugepage/hpage_pmd_size"));
  const long page = ::sysconf(_SC_PAGESIZE);
  long huge_order = 9;
  if (huge > 0 && page > 0 && huge > page) {
    huge_order = 0;
    for (long b = huge / page; b > 1; b >>= 1) ++huge_order;
  }
  // Kernels before 5.14 have no such parameter and report at the pageblock
  // order, a huge page's.
  const long order = read_number(SysPath{}.add(sys).add("/module/page_reporting/parameters/page_reporting_order"));
  if (order > huge_order) return false;
  for (unsigned i = 0; i < kVirtioDevices; ++i) {
    SysPath dir;
    dir.add(sys).add("/bus/virtio/devices/virtio").num(i);
    char id[16];
    const long n = os::read_small_file(SysPath(dir).add("/device").buf, id, sizeof id - 1);
    if (n <= 0) continue;
    id[n] = 0;
    // "0x0005": the device id in hexadecimal.
    long dev = -1;
    if (n > 2 && id[0] == '0' && id[1] == 'x') {
      dev = 0;
      for (long k = 2; k < n && id[k] != '\n'; ++k) {
        const char c = id[k];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) { dev = -1; break; }
        dev = dev * 16 + d;
      }
    }
    if (dev != kVirtioBalloon) continue;
    // The negotiated features, one '0' or '1' per bit, bit 0 first.
    char bits[kBalloonFreePageReporting + 1];
    if (os::read_small_file(SysPath(dir).add("/features").buf, bits, sizeof bits) == sizeof bits &&
        bits[kBalloonFreePageReporting] == '1')
      return true;
  }
  return false;
}

// Huge pages. A 2 MiB page needs one TLB entry where 4 KiB pages need 512: on
// a big heap whose objects are spread over many pages (a fragmented one above
// all) that is the difference between hitting and missing the TLB on most
// accesses. The price is memory: the kernel backs a whole 2 MiB at the first
// touch, so a segment only partly used holds up to 2 MiB it does not need.
// `threshold` pays it only once the heap is big enough for that to be small
// beside it: its new segments are advised once it holds VAM_HUGEPAGE_MIN of
// them. `auto`, the default, is `threshold` except on a guest whose kernel
// gives free huge-page blocks back to its host (host_takes_free_hugepages):
// there most huge pages cost a host fault of 2 MiB, which a program that
// grows its heap quickly pays in full and its TLB seldom wins back
// (docs/vam.md, "Huge pages").
//
// The advice must come before the segment's first byte is written: a range
// whose first fault mapped a small page stays small. (The fresh mapping
// reads as zero, so `hugepages` is 0 unless set here.)
void HeapSegments::advise(Segment *s) noexcept {
  const Options &o = options();
  if (o.hugepages == int(HugePages::off)) return;
  if (o.hugepages != int(HugePages::always) &&
      stats.segments() * static_cast<std::int64_t>(kSegmentBytes) < o.hugepage_min)
    return;
  if (o.hugepages == int(HugePages::automatic) && hugepages_go_to_host()) return;
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
  s->records_end = static_cast<std::uint32_t>(kBlockTableOffset + (sizeof(Block) << (kSegmentShift - block_shift)));
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
