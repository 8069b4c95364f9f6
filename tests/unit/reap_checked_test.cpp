// Checked mode (REAP_CHECK=1, set by ctest): bad frees abort with a message
// naming the fault.
#include <gtest/gtest.h>

#include <cstdlib>

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
  reap_t *r = reap_create(nullptr);
  reap_t *c = reap_create(r);
  for (int i = 0; i < 1000; ++i) {
    void *p = reap_malloc(c, 1 + i);
    p = reap_realloc(c, p, 2 + 2 * i);
    reap_free(c, p);
  }
  reap_destroy(r);
  SUCCEED();
}

}  // namespace
