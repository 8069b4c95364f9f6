// size_classes_test.cpp — size classes (size_classes.hpp): exact fit 16 bytes
// apart, the class computed without the table, and the page classes above 1 KiB
// with their cache colours and strides.
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

// 0..8 bytes the 8-byte class, then 16 bytes apart: every size, since
// malloc's inline path finds the first class by its own test (api.hpp).
TEST(VamMalloc, SmallSizesGetExactFitClasses16BytesApart) {
  for (size_t n = 0; n <= 1024; ++n) {
    void *p = vam_malloc(n);
    EXPECT_EQ(vam_usable_size(p), n <= 8 ? 8 : (n + 15) / 16 * 16) << n;
    vam_free(p);
  }
}

// The class of a request is computed, not looked up, in the default
// geometry (a table read was a cache line per malloc); both must agree.
TEST(VamMalloc, ClassLookupWithoutTheTableAgreesWithIt) {
  using namespace alloclab::vam;
  for (size_t n = 0; n <= kSmallMax; ++n)
    EXPECT_EQ(layout_class(n), g_layout.class_of[(n + 7) >> 3]) << n;
}

// Above 1 KiB, up to VAM_PAGE_MAX, a request gets the smallest class that
// holds it, at most an eighth more, 16-aligned, in a block segment.
TEST(VamPageClasses, EachSizeGetsTheSmallestClassThatHoldsIt) {
  using namespace alloclab::vam;
  const std::size_t page_max = g_layout.page_max;
  for (std::size_t n = kSmallMax + 1; n <= kPageMax + 64; n += 13) {
    char *p = static_cast<char *>(vam_malloc(n));
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << n;
    const std::size_t got = vam_usable_size(p);
    EXPECT_GE(got, n);
    if (n <= page_max) {
      EXPECT_EQ(object_segment(p)->kind, SegKind::medium) << n;
      EXPECT_EQ(got, page_stride(class_size(size_class(n)) + g_layout.header) - g_layout.header) << n;
      EXPECT_LE(got, n + n / 8) << n;
    } else {
      EXPECT_EQ(object_segment(p)->kind, SegKind::large) << n;
    }
    memset(p, 0x5a, got);
    vam_free(p);
  }
}

// The blocks of a page class start their objects at different cache
// colours (size_classes.hpp, block_colour): the first objects of four blocks
// of 4096-byte objects are not all in one L1 set, each lies less than 1 KiB
// into its block, and the block's last object ends less than one object
// before the block does.
TEST(VamPageClasses, BlocksStartTheirObjectsAtDifferentCacheColours) {
  using namespace alloclab::vam;
  if (g_layout.page_max < 4096 || g_layout.header) GTEST_SKIP() << "4096 bytes is no headerless page class here";
  const uintptr_t block = class_block_bytes(size_class(4096));
  std::vector<char *> all;
  for (int i = 0; i < 80; ++i) all.push_back(static_cast<char *>(vam_malloc(4096)));
  std::map<uintptr_t, uintptr_t> first;  // block -> its lowest object
  std::map<uintptr_t, long> count;       // block -> objects of `all` in it
  for (char *p : all) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = first.find(a & ~(block - 1));
    if (it == first.end() || a < it->second) first[a & ~(block - 1)] = a;
    ++count[a & ~(block - 1)];
  }
  std::set<uintptr_t> sets;
  int whole = 0;
  for (auto &kv : first) {
    Block *b = block_of(segment_of(reinterpret_cast<void *>(kv.second)), reinterpret_cast<void *>(kv.second));
    if (count[kv.first] != (b->end - b->start) / b->size) continue;  // not every object of it is one of these
    ++whole;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->start), kv.second);
    EXPECT_LT(kv.second - kv.first, kColourBytes);
    EXPECT_LT(kv.first + block - reinterpret_cast<uintptr_t>(b->end), b->size);
    sets.insert((kv.second >> 6) & 63);
  }
  EXPECT_GE(whole, 3);
  EXPECT_GE(sets.size(), 2u);
  for (char *p : all) vam_free(p);
}

// Within one block, the objects of a class whose size is a multiple of 1 KiB
// are 64 bytes more apart than their size (size_classes.hpp, page_stride):
// at size apart, every object of a 4096-byte block would start in the same
// L1 set (every second one for 2048), and a program's few big arrays of one
// class would fight over that set's 8 lines.
TEST(VamPageClasses, ObjectsOfOneBlockStartInDifferentCacheSets) {
  using namespace alloclab::vam;
  if (g_layout.header) GTEST_SKIP() << "headers make the objects 16 bytes bigger: no size is a multiple of 1 KiB";
  if (g_layout.page_max < 2048) GTEST_SKIP() << "no page classes above 1 KiB here";
  for (std::size_t n : {2048u, 3072u, 4096u, 8192u}) {
    if (n > g_layout.page_max) continue;
    char *first = static_cast<char *>(vam_malloc(n));
    ASSERT_NE(first, nullptr);
    Block *b = block_of(segment_of(first), first);
    const std::size_t cap = static_cast<std::size_t>(b->end - b->start) / b->size;
    EXPECT_EQ(b->size, n + 64) << n;
    std::set<uintptr_t> sets;
    for (std::size_t i = 0; i < cap; ++i) sets.insert((reinterpret_cast<uintptr_t>(b->start + i * b->size) >> 6) & 63);
    EXPECT_EQ(sets.size(), std::min<std::size_t>(cap, 64)) << n;  // one set per object
    EXPECT_EQ(vam_usable_size(first), n + 64) << n;
    vam_free(first);
  }
}

// free's slot check rejects every pointer in a colour's gap before a
// block's first object: an invalid pointer, not an object.
TEST(VamPageClasses, FreeOfAPointerBeforeABlocksFirstObjectAborts) {
  using namespace alloclab::vam;
  if (g_layout.page_max < 2048) GTEST_SKIP() << "no page classes above 1 KiB here";
  for (unsigned c = kFineClasses; c < fine_classes_up_to(g_layout.page_max); ++c) {
    const std::uint32_t size = g_layout.slot[c];
    const auto recip = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) + size - 1) / size);
    for (std::uint32_t d = 8; d < kColourBytes + 16; d += 8) {
      const std::uint64_t prod = std::uint64_t{0u - d} * recip;
      EXPECT_GE(static_cast<std::uint32_t>(prod), recip) << "object size " << size << ", " << d << " bytes before";
    }
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        std::vector<char *> v;
        Block *b = nullptr;
        for (int i = 0; i < 200 && !b; ++i) {  // a block whose objects start after a gap
          v.push_back(static_cast<char *>(vam_malloc(3000)));
          Block *k = block_of(segment_of(v.back()), v.back());
          if ((reinterpret_cast<uintptr_t>(k->start) & 4095) >= 64 && v.back() == k->start) b = k;
        }
        if (!b) abort();
        vam_free(b->start - 64);
      },
      "vam: free\\(\\): invalid pointer");
}

// A fine class's block holds whole periods of its slots' line offsets where
// that costs one slot (size_classes.hpp, line_whole_cap): 340 objects of 48
// bytes, not 341, so that a program allocating in a fixed pattern (a node
// and a record of one class in turn) finds its objects at the same line
// offsets in every block, the run going on from one block into the next.
TEST(VamMalloc, FineBlocksHoldWholePeriodsOfLineOffsets) {
  using namespace alloclab::vam;
  if (g_layout.inline_fine == 0) GTEST_SKIP() << "not the default geometry";
  std::vector<void *> all;
  std::set<Block *> blocks;
  for (int i = 0; i < 1200; ++i) {
    all.push_back(vam_malloc(48));
    blocks.insert(block_of(segment_of(all.back()), all.back()));
  }
  ASSERT_GE(blocks.size(), 3u);
  for (Block *b : blocks) {
    const auto cap = static_cast<std::size_t>(b->end - b->start) / b->size;
    EXPECT_EQ(b->size, 48u);
    EXPECT_EQ(cap, 340u);
    EXPECT_EQ(cap * b->size % 64, 0u);
    EXPECT_EQ(b->start, block_base(b));
  }
  for (std::size_t cap = 32; cap <= kMaxSlots; ++cap)
    for (std::size_t size = 16; size <= 1024; size += 16) {
      const std::size_t k = line_whole_cap(cap, size);
      EXPECT_TRUE(k == cap || (k + 1 == cap && k * size % 64 == 0 && cap >= 64)) << cap << " of " << size;
    }
  for (void *p : all) vam_free(p);
}

}  // namespace
