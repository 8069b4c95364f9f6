// Checked mode (REAP_CHECK=1, set by ctest): bad frees abort with a message
// naming the fault.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "alloclab/reap.h"

namespace {

TEST(CheckedReap, ADoubleFreeAbortsNamingIt) {
  EXPECT_DEATH(
      {
        reap_t *r = reap_create(nullptr);
        void *a = reap_malloc(r, 100);
        reap_malloc(r, 100);
        reap_free(r, a);
        reap_free(r, a);
      },
      "double free");
}

TEST(CheckedReap, ADoubleFreeOfTheLastObjectAbortsToo) {
  EXPECT_DEATH(
      {
        reap_t *r = reap_create(nullptr);
        void *a = reap_malloc(r, 100);
        reap_free(r, a);
        reap_free(r, a);
      },
      "double free");
}

TEST(CheckedReap, AForeignPointerAbortsNamingIt) {
  EXPECT_DEATH(
      {
        reap_t *r = reap_create(nullptr);
        void *m = std::malloc(64);
        reap_free(r, m);
      },
      "foreign pointer|not allocated by this reap");
}

TEST(CheckedReap, AFreeIntoTheWrongReapAbortsNamingTheOwner) {
  EXPECT_DEATH(
      {
        reap_t *a = reap_create(nullptr);
        reap_t *b = reap_create(nullptr);
        void *p = reap_malloc(a, 64);
        reap_free(b, p);
      },
      "wrong reap");
}

TEST(CheckedReap, AFreeOfALargeObjectIntoTheWrongReapAborts) {
  EXPECT_DEATH(
      {
        reap_t *a = reap_create(nullptr);
        reap_t *b = reap_create(nullptr);
        void *p = reap_malloc(a, 1 << 20);
        reap_free(b, p);
      },
      "wrong reap");
}

TEST(CheckedReap, AReallocOfAFreedObjectAborts) {
  EXPECT_DEATH(
      {
        reap_t *r = reap_create(nullptr);
        void *a = reap_malloc(r, 100);
        reap_malloc(r, 100);
        reap_free(r, a);
        reap_realloc(r, a, 200);
      },
      "double free|not allocated");
}

TEST(CheckedReap, CorrectUseRunsClean) {
  // Checked mode lets every correct call through (a false alarm aborts the
  // test) and still does the work: contents survive realloc, counts follow.
  reap_t *r = reap_create(nullptr);
  reap_t *c = reap_create(r);
  for (int i = 0; i < 1000; ++i) {
    auto *p = static_cast<unsigned char *>(reap_malloc(c, 1 + i));
    ASSERT_NE(p, nullptr);
    std::memset(p, i & 0xFF, 1 + i);
    void *wall = reap_malloc(c, 16);  // a neighbour, so that growing may have to move
    p = static_cast<unsigned char *>(reap_realloc(c, p, 2 + 2 * i));
    ASSERT_NE(p, nullptr);
    for (int k = 0; k <= i; ++k) ASSERT_EQ(p[k], i & 0xFF) << i;
    reap_free(c, p);
    reap_free(c, wall);
  }
  reap_stats_t s;
  reap_stats(c, &s);
  EXPECT_EQ(s.live_objects, 0u);
  reap_destroy(r);
}

}  // namespace
