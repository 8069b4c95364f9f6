// vam_layers_test.cpp — libvam's layers, each on its own, outside the
// allocator: built from the headers alone, with this file's own segment map
// (an inline global of segment_map.hpp) and its own corruption handler.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <stdlib.h>

#include <gtest/gtest.h>

#include "layers/mmap_heap.hpp"
#include "vam/heap_segments.hpp"
#include "vam/large_region.hpp"
#include "vam/options.hpp"
#include "vam/segment_source.hpp"

namespace alloclab::vam {
// The allocator's handler lives in vam.cpp; these tests never corrupt.
void corruption(const char *what, const void *p) noexcept {
  std::fprintf(stderr, "corruption: %s %p\n", what, p);
  std::abort();
}
}  // namespace alloclab::vam

namespace {

using namespace alloclab;
using namespace alloclab::vam;

constexpr std::size_t kMiB = std::size_t{1} << 20;

bool aligned(const void *p, std::size_t a) { return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) == 0; }

TEST(AlignedMmapHeap, ChunksStartAtTheirAlignmentAndKeepItThroughResizes) {
  AlignedMmapHeap<4 * kMiB> src;
  auto *c = static_cast<char *>(src.get_chunk(64 * 1024));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(aligned(c, 4 * kMiB));
  std::memset(c, 0x5a, 64 * 1024);
  if (src.resize_chunk(c, 64 * 1024, 256 * 1024)) {  // in place, or refused when the next range is taken
    EXPECT_EQ(c[64 * 1024 - 1], 0x5a);
    EXPECT_EQ(c[256 * 1024 - 1], 0);  // fresh pages
    ASSERT_TRUE(src.resize_chunk(c, 256 * 1024, 64 * 1024));
  }
  auto *m = static_cast<char *>(src.move_chunk(c, 64 * 1024, 6 * kMiB));
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(aligned(m, 4 * kMiB));
  EXPECT_EQ(m[0], 0x5a);
  EXPECT_EQ(m[64 * 1024 - 1], 0x5a);
  src.put_chunk(m, 6 * kMiB);
}

TEST(AlignedMmapHeap, ASkewedChunkHasItsStartPlusSkewAligned) {
  AlignedMmapHeap<4 * kMiB> src;
  void *c = src.get_chunk_at(12 * kMiB, 8 * kMiB, 4 * kMiB);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(aligned(c, 4 * kMiB));
  EXPECT_TRUE(aligned(static_cast<char *>(c) + 4 * kMiB, 8 * kMiB));
  src.put_chunk(c, 12 * kMiB);
}

TEST(SegmentSource, ASegmentIsKnownToTheMapExactlyWhileItIsMapped) {
  SegmentSource src;
  Segment *s = src.get_segment(kSegmentBytes);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(aligned(s, kSegmentBytes));
  EXPECT_TRUE(segment_known(s));
  src.put_segment(s, kSegmentBytes);
  EXPECT_FALSE(segment_known(s));
}

TEST(SegmentSource, AMovedSegmentIsKnownAtItsNewPlaceOnly) {
  SegmentSource src;
  // Tripled: in place when the range after it is free, else moved.
  Segment *s = src.get_segment(kSegmentBytes);
  ASSERT_NE(s, nullptr);
  reinterpret_cast<char *>(s)[100] = 7;
  Segment *moved = src.move_segment(s, kSegmentBytes, 3 * kSegmentBytes);
  ASSERT_NE(moved, nullptr);
  EXPECT_TRUE(segment_known(moved));
  if (moved != s) {
    EXPECT_FALSE(segment_known(s));
  }
  EXPECT_EQ(reinterpret_cast<char *>(moved)[100], 7);
  src.put_segment(moved, 3 * kSegmentBytes);
  EXPECT_FALSE(segment_known(moved));
}

TEST(SegmentSource, AnOverAlignedSegmentIsRecordedAtItsHeader) {
  SegmentSource src;
  Segment *s = src.get_segment_at(3 * kSegmentBytes, 4 * kSegmentBytes, kSegmentBytes);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(aligned(reinterpret_cast<char *>(s) + kSegmentBytes, 4 * kSegmentBytes));
  EXPECT_TRUE(segment_known(s));
  src.put_segment(s, 3 * kSegmentBytes);
  EXPECT_FALSE(segment_known(s));
}

TEST(HeapSegments, CountsEverySegmentAndDiscardThroughIt) {
  options().hugepages = int(HugePages::off);
  HeapSegments hs;
  auto *owner = reinterpret_cast<Heap *>(0x1000);  // only stored
  Segment *s = hs.map(owner, SegKind::medium, 14, 1);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(segment_known(s));
  EXPECT_EQ(s->magic, kSegmentMagic);
  EXPECT_EQ(s->kind, SegKind::medium);
  EXPECT_EQ(s->block_shift, 14u);
  EXPECT_EQ(s->owner, owner);
  EXPECT_EQ(s->map_bytes, kSegmentBytes);
  EXPECT_EQ(hs.stats.segments(), 1);
  EXPECT_EQ(hs.stats.pages_in_use(), 1);
  char *page = reinterpret_cast<char *>(s) + 64 * kPage;
  page[0] = 9;
  hs.stats.pages_used(1);
  hs.discard(s, page, kPage);
  hs.stats.pages_discarded(1);
  EXPECT_EQ(page[0], 0);  // the contents went back
  EXPECT_EQ(hs.stats.discard_calls(), 1);
  EXPECT_EQ(hs.stats.pages_discarded(), 1);
  EXPECT_EQ(hs.stats.pages_in_use(), 1);
  hs.unmap(s, 1);
  EXPECT_FALSE(segment_known(s));
  EXPECT_EQ(hs.stats.segments(), 0);
  EXPECT_EQ(hs.stats.pages_in_use(), 0);
}

TEST(HeapSegments, HugePageAdviceIsCountedWhileTheSegmentKeepsIt) {
  options().hugepages = int(HugePages::always);
  HeapSegments hs;
  Segment *s = hs.map(nullptr, SegKind::small, 12, 1);
  ASSERT_NE(s, nullptr);
  // Advised where the kernel has transparent huge pages; either way the
  // count follows the segment's flag.
  EXPECT_EQ(hs.stats.hugepage_segments(), static_cast<std::int64_t>(s->hugepages));
  hs.discard(s, reinterpret_cast<char *>(s) + 8 * kPage, kPage);
  EXPECT_EQ(s->hugepages, 0u);  // a segment giving pages back stops asking
  EXPECT_EQ(hs.stats.hugepage_segments(), 0);
  hs.unmap(s, 1);
  EXPECT_EQ(hs.stats.segments(), 0);
  options().hugepages = int(HugePages::automatic);
}

// A sysfs tree of the test's own, for host_takes_free_hugepages: files
// written under a fresh temporary root.
class FakeSys {
 public:
  FakeSys() {
    char t[] = "/tmp/vam-sysfs-XXXXXX";
    root_ = mkdtemp(t) ? t : "";
  }
  ~FakeSys() { std::system(("rm -rf '" + root_ + "'").c_str()); }
  const char *root() const { return root_.c_str(); }
  void put(const std::string &path, const std::string &text) {
    const std::string full = root_ + path;
    std::system(("mkdir -p '" + full.substr(0, full.rfind('/')) + "'").c_str());
    FILE *f = std::fopen(full.c_str(), "w");
    ASSERT_NE(f, nullptr) << full;
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  // A virtio device: its id and its negotiated feature bits, bit 0 first.
  void device(int i, const char *id, const std::string &features) {
    const std::string dir = "/bus/virtio/devices/virtio" + std::to_string(i);
    put(dir + "/device", std::string(id) + "\n");
    put(dir + "/features", features + "\n");
  }

 private:
  std::string root_;
};

// Bits 0-7 of a balloon's features, as this machine's reads: 1, 2 (statistics,
// deflate on out-of-memory), 5 (free page reporting), 7.
const std::string kReporting = "01100101" + std::string(56, '0');
const std::string kNoReporting = "01100001" + std::string(56, '0');

// 2 MiB huge pages, and virtio0 a balloon reporting free blocks of `order`.
void reporting_balloon(FakeSys &sys, const char *order) {
  sys.put("/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
  sys.put("/module/page_reporting/parameters/page_reporting_order", order);
  sys.device(0, "0x0005", kReporting);
}

TEST(HostHugePages, ABalloonThatReportsFreePagesAtTheHugePageOrderTakesThem) {
  FakeSys sys;
  ASSERT_NE(sys.root()[0], 0);
  reporting_balloon(sys, "9\n");
  EXPECT_TRUE(host_takes_free_hugepages(sys.root()));
}

TEST(HostHugePages, NoBalloonOrNoSysfsMeansNo) {
  FakeSys sys;
  EXPECT_FALSE(host_takes_free_hugepages(sys.root()));  // an empty tree
  EXPECT_FALSE(host_takes_free_hugepages("/nonexistent-sysfs"));
  sys.put("/module/page_reporting/parameters/page_reporting_order", "9\n");
  sys.device(0, "0x0002", kReporting);  // a block device: bit 5 is not reporting there
  EXPECT_FALSE(host_takes_free_hugepages(sys.root()));
}

TEST(HostHugePages, ABalloonWithoutReportingDoesNotTakeThem) {
  FakeSys sys;
  sys.device(0, "0x0005", kNoReporting);
  EXPECT_FALSE(host_takes_free_hugepages(sys.root()));
}

TEST(HostHugePages, ReportingOnlyBlocksLargerThanAHugePageLeavesHugePagesAlone) {
  FakeSys sys;
  reporting_balloon(sys, "10\n");
  EXPECT_FALSE(host_takes_free_hugepages(sys.root()));
}

TEST(HostHugePages, TheBalloonIsFoundAmongOtherDevicesAndPastAGapInTheirNumbers) {
  FakeSys sys;
  sys.device(0, "0x0001", kReporting);  // a network card
  sys.device(1, "0x0002", kReporting);
  sys.device(4, "0x0005", kReporting);  // virtio2 and virtio3 are gone
  // No reporting order to read (kernels before 5.14): a huge page's order.
  EXPECT_TRUE(host_takes_free_hugepages(sys.root()));
}

// The large heap's free lists: FitBins over chunk headers, vam's geometry
// (exact lists 16 bytes apart below 32 KiB, eight per power of two above,
// best fit inside those).
}  // namespace

namespace alloclab::vam {
// The bins' links are checked when read (large_region.hpp); this program
// links none of vam's aborts, so a broken link ends it here.
void chunk_link_broken(const Chunk *) noexcept { std::abort(); }
}  // namespace alloclab::vam

namespace {

TEST(LargeBins, ExactListsBelowThirtyTwoKiBThenBestFitInEighthsOfAPowerOfTwo) {
  EXPECT_EQ(LargeBins::bin_of(kMinChunk), int(kMinChunk / 16));
  EXPECT_EQ(LargeBins::bin_of(32768 - 16), kExactLargeBins - 1);
  EXPECT_EQ(LargeBins::bin_of(32768), kExactLargeBins);
  EXPECT_EQ(LargeBins::bin_of(65536 + 8192), kExactLargeBins + 8 + 1);
  EXPECT_LT(LargeBins::bin_of(kSegmentBytes), kLargeBins);

  alignas(16) static Chunk chunks[6];
  const std::size_t sizes[] = {4096, 4096, 70000, 66000, 80000, 200000};
  LargeBins bins;
  for (int i = 0; i < 6; ++i) {
    chunks[i].head = sizes[i] | kChunkDirty;  // flags do not move a chunk between lists
    bins.insert(&chunks[i], sizes[i]);
  }
  EXPECT_EQ(bins.find(4096), &chunks[1]);     // exact list: its newest chunk
  EXPECT_EQ(bins.find(4112), &chunks[3]);     // the next non-empty list, [64 KiB, 72 KiB): its head
  EXPECT_EQ(bins.find(67000), &chunks[2]);    // best fit there, not the head (66000 is too small)
  EXPECT_EQ(bins.find(71000), &chunks[4]);    // none fits there: the head of [72 KiB, 80 KiB)
  EXPECT_EQ(bins.find(80016), &chunks[5]);
  EXPECT_EQ(bins.find(200016), nullptr);
  std::size_t total = 0;
  bins.for_each([&](Chunk *c) { total += chunk_size(c); });
  EXPECT_EQ(total, 4096u * 2 + 70000 + 66000 + 80000 + 200000);

  // The links are stored encoded, and a link changed in one byte is not
  // followed: the walk of a coarse list aborts at it.
  EXPECT_NE(reinterpret_cast<std::uintptr_t>(chunks[3].next), reinterpret_cast<std::uintptr_t>(&chunks[2]));
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        reinterpret_cast<unsigned char *>(&chunks[3].next)[0] ^= 0x10;  // the list's head, 66000 bytes
        bins.find(67000);
      },
      "");
}

}  // namespace
