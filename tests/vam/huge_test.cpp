// huge_test.cpp — huge objects (huge.hpp/.cpp): the cache of freed mappings,
// remapping on realloc, and the checks of a huge free.
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

TEST(VamRealloc, HugeObjectsGrowAndShrinkByRemappingPagesNotCopying) {
  const size_t first = 1 << 20;
  auto *p = static_cast<unsigned char *>(vam_malloc(first));
  ASSERT_NE(p, nullptr);
  fill(p, first, 5);
  const size_t remaps = stats().huge_remaps;
  for (size_t n : {size_t{8} << 20, size_t{64} << 20, size_t{200} << 20, size_t{2} << 20}) {
    p = static_cast<unsigned char *>(vam_realloc(p, n));
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
    EXPECT_GE(vam_usable_size(p), n);
    EXPECT_TRUE(check(p, first, 5)) << "after realloc to " << n;
    p[n - 1] = 0x5a;  // the whole new size is usable
  }
  EXPECT_EQ(stats().huge_remaps, remaps + 4);
  vam_free(p);
}

TEST(VamRealloc, AlignedHugeObjectSurvivesARemap) {
  void *v = nullptr;
  ASSERT_EQ(vam_posix_memalign(&v, size_t{1} << 20, size_t{3} << 20), 0);
  auto *p = static_cast<unsigned char *>(v);
  fill(p, size_t{3} << 20, 7);
  p = static_cast<unsigned char *>(vam_realloc(p, size_t{40} << 20));
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(check(p, size_t{3} << 20, 7));
  vam_free(p);  // the header moved with the pages: free still finds it
}

TEST(VamRealloc, HugeFailureReturnsNullSetsEnomemAndKeepsOldBlock) {
  auto *p = static_cast<unsigned char *>(vam_malloc(size_t{2} << 20));
  ASSERT_NE(p, nullptr);
  fill(p, size_t{2} << 20, 3);
  errno = 0;
  EXPECT_EQ(vam_realloc(p, SIZE_MAX - 4096), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_TRUE(check(p, size_t{2} << 20, 3));
  vam_free(p);
}

TEST(VamHardening, DoubleFreeOfAHugeObjectAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *p = vam_malloc(size_t{1} << 20);  // kept in the huge cache when freed
        vam_free(p);
        vam_free(p);  // without the check: the mapping in two cache slots
      },
      "vam: free\\(\\): double free detected \\(huge object\\)");
}

TEST(VamHardening, DoubleFreeOfAnUnmappedHugeObjectAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        // Above half of VAM_HUGE_CACHE (8 MiB): unmapped when freed, not cached.
        void *p = vam_malloc(size_t{16} << 20);
        vam_free(p);
        vam_free(p);  // the segment map no longer knows the address: no header read
      },
      "vam: free\\(\\): invalid pointer \\(not from vam, or already freed and unmapped\\)");
}

TEST(VamHardening, FreeOfAnInteriorPointerOfAHugeObjectAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto *q = static_cast<char *>(vam_malloc(size_t{1} << 20));
        vam_free(q + 4096);
      },
      "vam: free\\(\\): invalid pointer");
}

TEST(VamHuge, FreedMappingIsReusedForANearlyEqualSize) {
  void *p = vam_malloc(600000);
  vam_free(p);
  void *q = vam_malloc(590000);
  EXPECT_EQ(p, q);
  vam_free(q);
}

TEST(VamHuge, CallocClearsAReusedMapping) {
  void *p = vam_malloc(700000);
  memset(p, 0xFF, 700000);
  vam_free(p);
  auto *q = static_cast<unsigned char *>(vam_calloc(1, 699000));
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(std::all_of(q, q + 699000, [](unsigned char c) { return c == 0; }));
  vam_free(q);
}

}  // namespace
