// The reap contract, independent of how a reap is served: these tests run
// twice, on reaps proper and under the region emulator (REAP_MODE=malloc).
#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "alloclab/reap.h"
#include "malloc_in_use.hpp"

namespace {

bool aligned(const void *p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

struct ReapTest : ::testing::Test {
  reap_t *r = nullptr;
  void SetUp() override {
    r = reap_create(nullptr);
    ASSERT_NE(r, nullptr);
  }
  void TearDown() override { reap_destroy(r); }
  reap_stats_t stats() const {
    reap_stats_t s;
    reap_stats(r, &s);
    return s;
  }
};

// Fills n bytes at p with a pattern made from `seed`; holds() reads it back.
void fill(void *p, std::size_t n, unsigned seed) {
  auto *b = static_cast<unsigned char *>(p);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(seed * 13 + i);
}
bool holds(const void *p, std::size_t n, unsigned seed) {
  const auto *b = static_cast<const unsigned char *>(p);
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(seed * 13 + i)) return false;
  return true;
}

TEST_F(ReapTest, MallocAlignsToSixteenFromSixteenBytesAndToEightBelow) {
  std::vector<void *> objs;
  for (std::size_t n = 0; n < 600; ++n) {
    void *p = reap_malloc(r, n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p, n >= 16 ? 16 : 8)) << n;
    EXPECT_GE(reap_usable_size(r, p), n);
    fill(p, n, static_cast<unsigned>(n));
    objs.push_back(p);
  }
  // every requested byte is the object's own
  for (std::size_t n = 0; n < objs.size(); ++n) EXPECT_TRUE(holds(objs[n], n, static_cast<unsigned>(n))) << n;
}

TEST_F(ReapTest, ObjectsDoNotOverlapAndKeepTheirContents) {
  std::vector<std::pair<unsigned char *, std::size_t>> objs;
  for (int i = 0; i < 5000; ++i) {
    std::size_t n = 1 + (i * 37) % 700;
    auto *p = static_cast<unsigned char *>(reap_malloc(r, n));
    ASSERT_NE(p, nullptr);
    std::memset(p, i & 0xFF, n);
    objs.emplace_back(p, n);
  }
  for (std::size_t i = 0; i < objs.size(); ++i)
    for (std::size_t k = 0; k < objs[i].second; ++k) ASSERT_EQ(objs[i].first[k], i & 0xFF);
}

TEST_F(ReapTest, MallocZeroReturnsAUniquePointer) {
  void *a = reap_malloc(r, 0);
  void *b = reap_malloc(r, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
}

TEST_F(ReapTest, AnAbsurdSizeFailsWithEnomem) {
  errno = 0;
  EXPECT_EQ(reap_malloc(r, SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(reap_malloc(r, SIZE_MAX / 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST_F(ReapTest, CallocZeroesAndRefusesAnOverflowingProduct) {
  auto *p = static_cast<unsigned char *>(reap_calloc(r, 100, 7));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 700; ++i) EXPECT_EQ(p[i], 0);
  // reused memory must be zeroed too
  auto *q = static_cast<unsigned char *>(reap_malloc(r, 300));
  std::memset(q, 0xFF, 300);
  reap_free(r, q);
  auto *z = static_cast<unsigned char *>(reap_calloc(r, 1, 300));
  for (int i = 0; i < 300; ++i) ASSERT_EQ(z[i], 0);
  errno = 0;
  EXPECT_EQ(reap_calloc(r, SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST_F(ReapTest, MemalignHonoursEveryPowerOfTwoUpToOneMebibyte) {
  struct Obj {
    void *p;
    std::size_t n;
    unsigned seed;
  };
  std::vector<Obj> objs;
  unsigned seed = 0;
  for (std::size_t a = 1; a <= (1u << 20); a <<= 1) {
    for (std::size_t n : {1u, 100u, 5000u, 200000u}) {
      void *p = reap_memalign(r, a, n);
      ASSERT_NE(p, nullptr) << a << " " << n;
      EXPECT_TRUE(aligned(p, a < 16 ? 16 : a)) << a;
      EXPECT_GE(reap_usable_size(r, p), n);
      fill(p, n, ++seed);
      objs.push_back({p, n, seed});
    }
  }
  // the aligned objects do not overlap (nor the head and tail memalign trims off)
  for (const Obj &o : objs) EXPECT_TRUE(holds(o.p, o.n, o.seed)) << o.n << " #" << o.seed;
}

TEST_F(ReapTest, MemalignRejectsZeroANonPowerOfTwoAndAbsurdAlignmentsWithEinval) {
  for (std::size_t a : {std::size_t{0}, std::size_t{3}, std::size_t{24}, std::size_t{1} << 40}) {
    errno = 0;
    EXPECT_EQ(reap_memalign(r, a, 16), nullptr) << a;
    EXPECT_EQ(errno, EINVAL) << a;
  }
}

TEST_F(ReapTest, ReallocKeepsContentsWhenGrowingAndShrinking) {
  auto *p = static_cast<unsigned char *>(reap_malloc(r, 10));
  for (int i = 0; i < 10; ++i) p[i] = static_cast<unsigned char>(i);
  std::size_t n = 10;
  for (std::size_t to : {100u, 5000u, 300000u, 2000u, 50u, 3u}) {
    p = static_cast<unsigned char *>(reap_realloc(r, p, to));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < std::min<std::size_t>(n, to) && i < 10; ++i) ASSERT_EQ(p[i], i);
    for (std::size_t i = 10; i < to; ++i) p[i] = static_cast<unsigned char>(i);
    n = to;
  }
}

TEST_F(ReapTest, ReallocOfNullActsAsMalloc) {
  void *p = reap_realloc(r, nullptr, 64);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(reap_usable_size(r, p), 64u);
  EXPECT_EQ(stats().live_objects, 1u);
}

TEST_F(ReapTest, AFailedReallocLeavesTheOldObjectIntact) {
  auto *p = static_cast<char *>(reap_malloc(r, 32));
  std::strcpy(p, "still here");
  errno = 0;
  EXPECT_EQ(reap_realloc(r, p, SIZE_MAX - 64), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_STREQ(p, "still here");
  reap_free(r, p);
}

TEST_F(ReapTest, FreeOfNullIsANoOp) {
  // With objects live, so that a null free which freed or forgot anything
  // would show in the counts and the contents.
  void *small = reap_malloc(r, 100);
  void *large = reap_malloc(r, 200000);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  fill(small, 100, 1);
  fill(large, 200000, 2);
  const reap_stats_t before = stats();
  ASSERT_EQ(before.live_objects, 2u);
  reap_free(r, nullptr);
  const reap_stats_t after = stats();
  ASSERT_EQ(after.live_objects, before.live_objects);  // else the objects may be unmapped
  ASSERT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_TRUE(holds(small, 100, 1));
  EXPECT_TRUE(holds(large, 200000, 2));
  // and the next object is a new one, not one of the live two
  void *next = reap_malloc(r, 100);
  EXPECT_NE(next, small);
  EXPECT_NE(next, large);
}

TEST_F(ReapTest, StatsCountLiveObjectsAndBytes) {
  void *a = reap_malloc(r, 100);
  void *b = reap_malloc(r, 200000);
  reap_stats_t s = stats();
  EXPECT_EQ(s.live_objects, 2u);
  EXPECT_GE(s.live_bytes, 200100u);
  EXPECT_GE(s.footprint_bytes, s.live_bytes);
  EXPECT_GE(s.peak_footprint_bytes, s.footprint_bytes);
  reap_free(r, a);
  reap_free(r, b);
  s = stats();
  EXPECT_EQ(s.live_objects, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
}

// Usable after a clear means the reap's contract holds again: new objects of
// every size come aligned, apart from one another, counted, and keep their
// bytes while more are made after them; a reap proper serves them from the
// memory the clear kept (no more footprint than before it), and a freed one
// is the next object of its size. (The region emulator's objects are
// malloc's: their placement and reuse are malloc's business.)
TEST_F(ReapTest, FreeAllFreesEveryObjectAndTheReapStaysUsable) {
  for (int i = 0; i < 10000; ++i) ASSERT_NE(reap_malloc(r, 1 + i % 300), nullptr);
  ASSERT_NE(reap_malloc(r, 1 << 20), nullptr);
  const reap_stats_t full = stats();
  reap_free_all(r);
  EXPECT_EQ(stats().live_objects, 0u);
  EXPECT_EQ(stats().live_bytes, 0u);
  struct Obj {
    char *p;
    std::size_t n;
  };
  std::vector<Obj> objs;
  for (std::size_t n = 1; n <= 4096; n = n * 3 / 2 + 1) {
    auto *p = static_cast<char *>(reap_malloc(r, n));
    ASSERT_NE(p, nullptr) << n;
    EXPECT_TRUE(aligned(p, n >= 16 ? 16 : 8)) << n;
    EXPECT_GE(reap_usable_size(r, p), n);
    fill(p, n, static_cast<unsigned>(n));
    objs.push_back({p, n});
  }
  EXPECT_EQ(stats().live_objects, objs.size());
  std::vector<Obj> by_address = objs;
  std::sort(by_address.begin(), by_address.end(), [](const Obj &a, const Obj &b) { return a.p < b.p; });
  for (std::size_t i = 1; i < by_address.size(); ++i)
    EXPECT_LE(by_address[i - 1].p + by_address[i - 1].n, by_address[i].p) << by_address[i - 1].n;
  for (int i = 0; i < 2000; ++i) fill(reap_malloc(r, 1 + i % 300), 1 + i % 300, 7);
  for (const Obj &o : objs) EXPECT_TRUE(holds(o.p, o.n, static_cast<unsigned>(o.n))) << o.n;
  if (stats().emulated) return;
  EXPECT_LE(stats().footprint_bytes, full.footprint_bytes);
  const Obj victim = objs[objs.size() / 2];
  reap_free(r, victim.p);
  EXPECT_EQ(reap_malloc(r, victim.n), victim.p) << victim.n;
}

bool mapped(const void *p) {
  unsigned char v;
  auto page = reinterpret_cast<std::uintptr_t>(p) & ~(std::uintptr_t(sysconf(_SC_PAGESIZE)) - 1);
  return mincore(reinterpret_cast<void *>(page), 1, &v) == 0;
}

// Is the 8 MiB object at p gone? Reaps unmap it; the emulator frees it to
// malloc, which is seen in malloc's own count of bytes in use.
struct BigObjectProbe {
  bool emulated;
  std::size_t before = malloc_in_use();
  bool gone(const void *p) const {
    return emulated ? malloc_in_use() < before + (1u << 20) : !mapped(p);
  }
};

TEST_F(ReapTest, DestroyingAReapFreesItsDescendants) {
  const BigObjectProbe probe{stats().emulated != 0};
  reap_t *child = reap_create(r);
  reap_t *grandchild = reap_create(child);
  ASSERT_NE(child, nullptr);
  ASSERT_NE(grandchild, nullptr);
  void *big = reap_malloc(grandchild, 8u << 20);  // a mapping of its own
  ASSERT_NE(big, nullptr);
  std::memset(big, 1, 8u << 20);
  reap_malloc(child, 10);
  EXPECT_FALSE(probe.gone(big));
  reap_destroy(child);
  EXPECT_TRUE(probe.gone(big));
}

TEST_F(ReapTest, FreeAllDestroysDescendantsButNotTheReap) {
  const BigObjectProbe probe{stats().emulated != 0};
  reap_t *child = reap_create(r);
  void *big = reap_malloc(child, 8u << 20);
  ASSERT_NE(big, nullptr);
  std::memset(big, 1, 8u << 20);
  void *mine = reap_malloc(r, 8u << 20);
  EXPECT_FALSE(probe.gone(mine));
  reap_free_all(r);
  EXPECT_TRUE(probe.gone(big));
  EXPECT_TRUE(probe.gone(mine));
  EXPECT_NE(reap_malloc(r, 10), nullptr);
}

TEST_F(ReapTest, ManyReapsCanBeCreatedAndDestroyed) {
  for (int i = 0; i < 20000; ++i) {
    reap_t *c = reap_create(i % 2 ? r : nullptr);
    ASSERT_NE(c, nullptr);
    ASSERT_NE(reap_malloc(c, 100), nullptr);
    reap_destroy(c);
  }
}

TEST_F(ReapTest, ADeepNestIsDestroyedWithoutRecursion) {
  // 20000 reaps, each the child of the one before, each with an object.
  // They are freed on a thread with a 64 KiB stack: a recursion a level
  // needs several times that (even inlined a few levels deep, a frame holds
  // a return address and the saved pointers, over 8 bytes a level) and
  // crashes.
  reap_t *at = r;
  for (int i = 0; i < 20000; ++i) {
    at = reap_create(at);
    ASSERT_NE(at, nullptr);
    ASSERT_NE(reap_malloc(at, 64), nullptr);
  }
  ASSERT_NE(reap_malloc(r, 64), nullptr);
  ASSERT_EQ(stats().live_objects, 1u);
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
  pthread_t t;
  ASSERT_EQ(pthread_create(
                &t, &attr,
                [](void *arg) -> void * {
                  reap_free_all(static_cast<reap_t *>(arg));
                  return nullptr;
                },
                r),
            0);
  ASSERT_EQ(pthread_join(t, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(stats().live_objects, 0u);
  EXPECT_EQ(stats().live_bytes, 0u);
  EXPECT_NE(reap_malloc(r, 64), nullptr);  // the reap itself stays
}

}  // namespace
