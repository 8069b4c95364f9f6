// heap_test.cpp — the heap record (heap.hpp, heap.cpp): where malloc's inline
// path finds a class's entry, the empty front record, and what malloc and free
// read kept out of the cache set of page starts.
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

// Every page-aligned address falls in one set of a 64-set, 64-byte-line L1
// (set 0): every segment's first line, every block's, every page-aligned
// object's. What malloc and free read on every call must live elsewhere, or
// it is evicted between calls (docs/vam.md, "Cache sets": sqlite3 missed on
// its class's front in 36% of its mallocs and on the segment header in 27% of its
// frees while both sat in set 0).
TEST(VamCacheSets, WhatMallocAndFreeReadIsNotInTheSetOfPageStarts) {
  using namespace alloclab::vam;
  auto set_of = [](const void *a) { return (reinterpret_cast<uintptr_t>(a) >> 6) & 63; };
  void *small = vam_malloc(8), *medium = vam_malloc(100), *large = vam_malloc(5000);
  for (void *p : {small, medium, large}) {
    Segment *s = object_segment(p);
    EXPECT_NE(set_of(&s->kind), 0u);
    EXPECT_NE(set_of(&s->owner), 0u);
    EXPECT_NE(set_of(&s->block_shift), 0u);
    EXPECT_NE(set_of(&s->touched_end), 0u);
  }
  // the options malloc and free consult share the line malloc reads anyway
  EXPECT_EQ(set_of(&g_layout.large_max), set_of(&g_layout.inline_fine));
  EXPECT_EQ(set_of(&g_layout.discard), set_of(&g_layout.inline_fine));
  EXPECT_EQ(set_of(&g_layout.inline_limit), set_of(&g_layout.inline_fine));
  EXPECT_EQ(g_layout.large_max, 256u * 1024);  // the default VAM_LARGE_MAX
  Heap *h = object_segment(small)->owner;
  ASSERT_NE(h, nullptr);
  for (unsigned g = 0; g < kFrontSlots; ++g) EXPECT_NE(set_of(&h->slots[g]), 0u) << g;
  vam_free(small);
  vam_free(medium);
  vam_free(large);
}

// malloc's inline path finds a request's front block at byte offset
// (n + 15) & ~15 of the heap's entries, or at the first for 0..8 bytes
// (api.hpp): for every small size that entry is the front of the size's
// class, the block the object just came from.
TEST(VamReap, EveryRequestSizeFindsItsClassFront) {
  using namespace alloclab::vam;
  std::vector<void *> got;
  for (size_t n = 0; n <= kSmallMax; ++n) {
    // The class's hot list comes first (hot_list.hpp), and the test
    // framework's own frees (through vam's malloc, linked into this program)
    // may have left objects there: taken first, so that the next comes from
    // the front.
    if (t_heap != &g_empty_heap)
      for (int i = 0; i <= 32 && class_hot_list(t_heap, size_class(n)) != 0; ++i) got.push_back(vam_malloc(n));
    void *p = vam_malloc(n);
    ASSERT_NE(p, nullptr);
    got.push_back(p);
    Segment *s = object_segment(p);
    Block *b = block_of(s, p);
    ASSERT_EQ(b->cls, size_class(n)) << n;
    const size_t off = n <= 8 ? 0 : (n + 15) & ~size_t{15};
    EXPECT_EQ(reinterpret_cast<FrontSlot *>(reinterpret_cast<char *>(s->owner->slots) + off)->front, b) << n;
    EXPECT_EQ(class_front(s->owner, b->cls), b) << n;
  }
  for (void *p : got) vam_free(p);
}

// A class with no front block has g_no_front in its slot: malloc reads it,
// misses, and gets a block; nothing ever writes the record. A new thread's
// first malloc of every small size takes that path once per class.
TEST(VamHot, AClassWithNoFrontReadsTheEmptyRecordAndMisses) {
  using namespace alloclab::vam;
  std::thread([] {
    Heap *h = t_heap;
    ASSERT_EQ(h, &g_empty_heap);  // no heap yet: every slot holds g_no_front
    for (unsigned c = 0; c < kFrontSlots; ++c) {
      EXPECT_EQ(h->slots[c].front, &g_no_front) << c;
      EXPECT_EQ(class_front(h, c), nullptr) << c;
    }
    std::vector<void *> got;
    for (size_t n = 0; n <= kSmallMax; n += 8) {
      void *p = vam_malloc(n);
      ASSERT_NE(p, nullptr) << n;
      memset(p, 0xa5, n);
      got.push_back(p);
    }
    h = t_heap;
    ASSERT_NE(h, &g_empty_heap);
    for (size_t n = 0; n <= kSmallMax; n += 8) {
      Block *f = class_front(h, size_class(n));
      ASSERT_NE(f, nullptr) << n;
      EXPECT_TRUE(block_holds(f, got[n / 8])) << n;
    }
    for (void *p : got) vam_free(p);
  }).join();
  const unsigned char *r = reinterpret_cast<const unsigned char *>(&g_no_front);
  EXPECT_TRUE(std::all_of(r, r + sizeof(Block), [](unsigned char x) { return x == 0; }));
}

}  // namespace
