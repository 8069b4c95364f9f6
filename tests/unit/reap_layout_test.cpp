// How reaps lay objects out and reuse memory (reaps proper, not emulated):
// region-mode bumping, the heap of freed objects, coalescing, clearing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "alloclab/reap.h"
#include "layers/os.hpp"  // call counters of the OS layer reaps map through

namespace {

char *as_char(void *p) { return static_cast<char *>(p); }

struct Layout : ::testing::Test {
  reap_t *r = nullptr;
  void SetUp() override {
    r = reap_create(nullptr);
    ASSERT_NE(r, nullptr);
    reap_stats_t s;
    reap_stats(r, &s);
    ASSERT_EQ(s.emulated, 0);
  }
  void TearDown() override { reap_destroy(r); }
  reap_stats_t stats() const {
    reap_stats_t s;
    reap_stats(r, &s);
    return s;
  }
};

TEST_F(Layout, AllocationsWithoutFreesAreLaidOutBackToBack) {
  char *prev = as_char(reap_malloc(r, 40));
  for (int i = 0; i < 100; ++i) {
    char *p = as_char(reap_malloc(r, 40));
    EXPECT_EQ(p - prev, 48) << "one header word plus 40 bytes, rounded to 16";
    prev = p;
  }
}

TEST_F(Layout, AFreedObjectIsReusedByTheNextRequestOfItsSize) {
  void *a = reap_malloc(r, 100);
  void *guard = reap_malloc(r, 100);
  (void)guard;
  reap_free(r, a);
  EXPECT_EQ(reap_malloc(r, 100), a);
}

TEST_F(Layout, FreeingTheLastObjectGivesItsSpaceBackToTheRegion) {
  void *a = reap_malloc(r, 100);
  void *b = reap_malloc(r, 100);
  reap_free(r, b);
  reap_free(r, a);
  EXPECT_EQ(reap_malloc(r, 30), a) << "bump pointer moved back over both";
}

TEST_F(Layout, AdjacentFreeObjectsCoalesceIntoOneBlock) {
  char *a = as_char(reap_malloc(r, 600));
  char *b = as_char(reap_malloc(r, 600));
  char *c = as_char(reap_malloc(r, 600));
  void *guard = reap_malloc(r, 8);
  (void)guard;
  reap_free(r, a);
  reap_free(r, c);
  reap_free(r, b);  // joins a and c
  char *big = as_char(reap_malloc(r, 1800));
  EXPECT_EQ(big, a);
  EXPECT_GE(reap_usable_size(r, big), 1800u);
}

TEST_F(Layout, SmallFreedObjectsAreCoalescedBeforeTheReapTakesMoreMemory) {
  // small blocks go to exact-size quick lists first (coalescing deferred)
  char *a = as_char(reap_malloc(r, 200));
  reap_malloc(r, 200);
  reap_malloc(r, 200);
  void *guard = reap_malloc(r, 8);
  (void)guard;
  reap_free(r, as_char(a) + 0);
  reap_free(r, a + 208);
  reap_free(r, a + 416);
  const std::size_t chunks = stats().chunks;
  bool reused = false;
  for (int i = 0; i < 100 && !reused && stats().chunks == chunks; ++i)
    reused = reap_malloc(r, 600) == a;
  EXPECT_TRUE(reused) << "the three 208-byte blocks were merged to serve 600 bytes";
}

TEST_F(Layout, ReallocGrowsInPlaceAtTheEndOfTheRegion) {
  void *p = reap_malloc(r, 100);
  EXPECT_EQ(reap_realloc(r, p, 4000), p);
}

TEST_F(Layout, ReallocGrowsInPlaceIntoAFreeNeighbour) {
  void *p = reap_malloc(r, 100);
  void *n = reap_malloc(r, 600);  // large enough to be coalesced at once
  void *guard = reap_malloc(r, 8);
  (void)guard;
  reap_free(r, n);
  EXPECT_EQ(reap_realloc(r, p, 650), p);
}

TEST_F(Layout, ReallocShrinkGivesTheTailBack) {
  char *p = as_char(reap_malloc(r, 1000));
  void *guard = reap_malloc(r, 8);
  (void)guard;
  EXPECT_EQ(reap_realloc(r, p, 100), p);
  void *q = reap_malloc(r, 500);
  EXPECT_GT(as_char(q), p);
  EXPECT_LT(as_char(q), p + 1000) << "the freed tail is reused";
}

TEST_F(Layout, AfterTheHeapEmptiesAllocationBumpsAgain) {
  std::vector<void *> v;
  for (int i = 0; i < 100; ++i) v.push_back(reap_malloc(r, 64));
  void *guard = reap_malloc(r, 8);
  (void)guard;
  for (int i = 0; i < 100; i += 2) reap_free(r, v[i]);
  for (int i = 0; i < 50; ++i) reap_malloc(r, 64);  // takes every freed block
  char *a = as_char(reap_malloc(r, 64));
  char *b = as_char(reap_malloc(r, 64));
  EXPECT_EQ(b - a, 80) << "back to contiguous bumping";
}

TEST_F(Layout, LargeObjectsGetTheirOwnMappingAndGoBackOnFree) {
  const std::size_t before = stats().footprint_bytes;
  void *p = reap_malloc(r, 4u << 20);
  EXPECT_EQ(stats().large_objects, 1u);
  EXPECT_GE(stats().footprint_bytes, before + (4u << 20));
  reap_free(r, p);
  EXPECT_EQ(stats().large_objects, 0u);
  EXPECT_EQ(stats().footprint_bytes, before);
}

TEST_F(Layout, AFreedLargeObjectsMappingIsReusedForOtherSizesAndOtherReaps) {
  auto maps = [] { return alloclab::os::counters().maps.load(); };
  char *p = as_char(reap_malloc(r, 600000));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 600000);
  reap_free(r, p);
  const std::uint64_t m = maps();
  // Smaller, but more than half: the mapping as it is, with all its room.
  char *q = as_char(reap_malloc(r, 400000));
  EXPECT_EQ(q, p);
  EXPECT_EQ(maps(), m);
  EXPECT_GE(reap_usable_size(r, q), 600000u);
  EXPECT_EQ(stats().large_objects, 1u);
  std::memset(q, 2, 600000);
  reap_free(r, q);
  // Larger: the same mapping, grown in place when the address space after
  // it is free, else a fresh one; either way a working object.
  char *g = as_char(reap_malloc(r, 900000));
  ASSERT_NE(g, nullptr);
  std::memset(g, 3, 900000);
  reap_free(r, g);
  // Another reap (a reap per request): what this one freed serves it.
  reap_t *o = reap_create(nullptr);
  ASSERT_NE(o, nullptr);
  const std::uint64_t m2 = maps();
  char *x = as_char(reap_malloc(o, 300000));
  EXPECT_TRUE(x == p || x == g);
  EXPECT_EQ(maps(), m2);
  reap_destroy(o);
}

TEST_F(Layout, ClearKeepsEnoughToRefillWithoutNewChunks) {
  auto cycle = [&] {
    for (int i = 0; i < 20000; ++i) reap_malloc(r, 24);
  };
  cycle();
  reap_free_all(r);
  const reap_stats_t kept = stats();
  cycle();
  const reap_stats_t refilled = stats();
  EXPECT_EQ(refilled.footprint_bytes, kept.footprint_bytes) << "no new chunk was needed";
  reap_free_all(r);
  cycle();
  EXPECT_EQ(stats().footprint_bytes, kept.footprint_bytes);
}

TEST_F(Layout, AClearAfterASpikeGivesTheSpikeBack) {
  auto cycle = [&](int n) {
    for (int i = 0; i < n; ++i) reap_malloc(r, 24);
    reap_free_all(r);
  };
  for (int i = 0; i < 4; ++i) cycle(5000);  // ~160 KB a cycle
  const std::size_t steady = stats().footprint_bytes;
  cycle(1000000);  // a ~32 MB spike
  EXPECT_GT(stats().peak_footprint_bytes, std::size_t{30} << 20);
  EXPECT_LE(stats().footprint_bytes, 2 * steady + (64u << 10));
}

TEST_F(Layout, ProducerConsumerFootprintStaysBoundedWithFrees) {
  // a queue: produce one, consume the oldest; the region alone would grow
  std::vector<void *> q;
  std::size_t head = 0;
  for (int i = 0; i < 200000; ++i) {
    q.push_back(reap_malloc(r, 16 + (i * 7) % 200));
    if (q.size() - head > 1000) reap_free(r, q[head++]);
  }
  const reap_stats_t s = stats();
  EXPECT_LE(s.peak_footprint_bytes, 2 * s.live_bytes + (64u << 10));
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
// Built only with AddressSanitizer: reaps poison what is not a live object.
TEST(ReapUnderAsan, AUseAfterFreeInsideAReapIsReported) {
  EXPECT_DEATH(
      {
        reap_t *r = reap_create(nullptr);
        auto *p = static_cast<volatile char *>(reap_malloc(r, 64));
        reap_malloc(r, 64);
        reap_free(r, const_cast<char *>(p));
        p[10] = 2;
      },
      "use-after-poison");
}

TEST(ReapUnderAsan, AnOverflowIntoUnallocatedRegionSpaceIsReported) {
  EXPECT_DEATH(
      {
        reap_t *r = reap_create(nullptr);
        // through a volatile pointer, so only ASan (not UBSan) can object
        volatile char *volatile p = static_cast<char *>(reap_malloc(r, 64));
        p[100] = 1;  // beyond the last object: bump space
      },
      "use-after-poison");
}
#endif
