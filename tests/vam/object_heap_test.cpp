// object_heap_test.cpp — the size split every allocation outside malloc's
// inline path follows (object_heap.hpp).
#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"
#include "vam/object_heap.hpp"

namespace {

using namespace vam_test;

// The composition in object_heap.hpp is the dispatch, not a description of
// it: each request lands in a segment of the kind of the first heap whose
// fits() takes it.
TEST(VamObjectHeap, EachSizeLandsInTheHeapTheSplitNames) {
  using namespace alloclab::vam;
  const std::size_t large_max = g_layout.large_max;
  const std::size_t page_max = g_layout.page_max;  // VAM_PAGE_MAX
  struct Case {
    std::size_t n;
    SegKind kind;
  };
  const Case cases[] = {{1, SegKind::small},          {16, SegKind::small},
                        {24, SegKind::medium},        {kSmallMax, SegKind::medium},
                        {kSmallMax + 1, page_max > kSmallMax ? SegKind::medium : SegKind::large},
                        {page_max, SegKind::medium},  {page_max + 1, SegKind::large},
                        {64 * 1024, SegKind::large},
                        {large_max, SegKind::large},  {large_max + 1, SegKind::huge},
                        {8 * large_max, SegKind::huge}};
  for (const Case &c : cases) {
    const bool small = SmallBlocks::fits(c.n, 0), large = LargeRegions::fits(c.n, 0);
    EXPECT_EQ(small, c.kind == SegKind::small || c.kind == SegKind::medium) << c.n;
    EXPECT_EQ(!small && large, c.kind == SegKind::large) << c.n;
    EXPECT_TRUE(ObjectHeap::fits(c.n, 0));
    void *p = vam_malloc(c.n);
    ASSERT_NE(p, nullptr) << c.n;
    EXPECT_EQ(object_segment(p)->kind, c.kind) << c.n;
    vam_free(p);
  }
  // An alignment counts against the large heap's limit: past it, huge.
  EXPECT_TRUE(LargeRegions::fits(large_max - 4096, 4096));
  EXPECT_FALSE(LargeRegions::fits(large_max - 4096, 8192));
}

}  // namespace
