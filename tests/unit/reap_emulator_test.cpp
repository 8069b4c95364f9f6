// The region emulator (REAP_MODE=malloc, set by ctest): objects come from the
// process's malloc, and clear/destroy free them (reaps paper §3.1).
#include <gtest/gtest.h>

#include <cstdlib>

#include "alloclab/reap.h"
#include "malloc_in_use.hpp"

namespace {

TEST(RegionEmulator, ReapsReportThatTheyAreEmulated) {
  reap_t *r = reap_create(nullptr);
  reap_stats_t s;
  reap_stats(r, &s);
  EXPECT_EQ(s.emulated, 1);
  reap_destroy(r);
}

TEST(RegionEmulator, ObjectsComeFromMallocAndClearFreesThem) {
  reap_t *r = reap_create(nullptr);
  const std::size_t before = malloc_in_use();
  for (int i = 0; i < 1000; ++i) ASSERT_NE(reap_malloc(r, 1000), nullptr);
  EXPECT_GE(malloc_in_use(), before + 1000 * 1000);
  void *p = reap_malloc(r, 77);
  EXPECT_GE(malloc_usable_size(p), 77u);
  reap_free_all(r);
  EXPECT_LT(malloc_in_use(), before + 65536);
  reap_destroy(r);
}

TEST(RegionEmulator, DestroyingAParentFreesTheChildrensObjects) {
  reap_t *r = reap_create(nullptr);
  reap_t *c = reap_create(r);
  const std::size_t before = malloc_in_use();
  for (int i = 0; i < 500; ++i) ASSERT_NE(reap_malloc(c, 2000), nullptr);
  EXPECT_GE(malloc_in_use(), before + 500 * 2000);
  reap_destroy(r);
  EXPECT_LT(malloc_in_use(), before + 65536);
}

TEST(RegionEmulator, IndividualFreeReturnsTheObjectToMalloc) {
  reap_t *r = reap_create(nullptr);
  const std::size_t before = malloc_in_use();
  void *p = reap_malloc(r, 100000);
  EXPECT_GE(malloc_in_use(), before + 100000);
  reap_free(r, p);
  EXPECT_LT(malloc_in_use(), before + 65536);
  reap_destroy(r);
}

}  // namespace
