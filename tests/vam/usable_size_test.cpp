// usable_size_test.cpp — malloc_usable_size of a pointer vam never handed out
// aborts with a message naming the fault, as free does, instead of reading a
// header that is not there.
#include <gtest/gtest.h>

#include <cstdint>

#include "alloclab/vam.h"

namespace {

TEST(VamUsableSizeDeathTest, AForeignPointerAbortsWithAMessage) {
  static char not_from_vam[64];
  EXPECT_DEATH(vam_usable_size(not_from_vam), "malloc_usable_size\\(\\): invalid pointer");
  int on_stack = 0;
  EXPECT_DEATH(vam_usable_size(&on_stack), "malloc_usable_size\\(\\): invalid pointer");
}

TEST(VamUsableSize, OwnObjectsOfEverySizeRangeAnswer) {
  for (std::size_t n : {1u, 100u, 5000u, 300000u, 5000000u}) {
    void *p = vam_malloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_GE(vam_usable_size(p), n);
    vam_free(p);
  }
}

}  // namespace
