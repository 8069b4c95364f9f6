// vam_layers_test.cpp — libvam's layers, each on its own, outside the
// allocator: built from the headers alone, with this file's own segment map
// (an inline global of segment_map.hpp) and its own corruption handler.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "layers/mmap_heap.hpp"
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

}  // namespace
