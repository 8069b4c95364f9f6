// api_test.cpp — the C contracts of every entry point, through the prefixed API
// (api.hpp, vam.cpp): sizes, alignment, errno, overflow, realloc's rules, and
// the pointers vam never handed out.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

TEST(VamMalloc, ZeroBytesGivesUniqueFreeablePointers) {
  void *a = vam_malloc(0);
  void *b = vam_malloc(0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  vam_free(a);
  vam_free(b);
}

TEST(VamMalloc, FreeOfNullDoesNothing) {
  // Nothing live changes, a live object keeps its bytes, errno is left alone
  // (POSIX 2024), and the sized frees take null too.
  auto *keep = static_cast<unsigned char *>(vam_malloc(100));
  ASSERT_NE(keep, nullptr);
  fill(keep, 100, 11);
  const vam_stats_t before = stats();
  errno = 1234;
  vam_free(nullptr);
  vam_free_sized(nullptr, 0);
  vam_free_aligned_sized(nullptr, 64, 0);
  const int err = errno;
  const vam_stats_t after = stats();  // before any failure message allocates
  EXPECT_EQ(err, 1234);
  EXPECT_EQ(after.live_objects, before.live_objects);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_TRUE(check(keep, 100, 11));
  vam_free(keep);
}

TEST(VamMalloc, EverySizeUpTo4KiBIsAlignedUsableAndHoldsData) {
  std::vector<std::pair<void *, size_t>> v;
  for (size_t n = 1; n <= 4096; n += (n < 256 ? 1 : 7)) {
    void *p = vam_malloc(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_TRUE(aligned(p, n >= 16 ? 16 : 8)) << n;
    EXPECT_GE(vam_usable_size(p), n);
    fill(p, n, static_cast<unsigned char>(n));
    v.emplace_back(p, n);
  }
  for (auto &[p, n] : v) {
    EXPECT_TRUE(check(p, n, static_cast<unsigned char>(n))) << n;
    vam_free(p);
  }
}

TEST(VamMalloc, HugeRequestFailsWithEnomem) {
  errno = 0;
  EXPECT_EQ(vam_malloc(SIZE_MAX), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(vam_malloc(SIZE_MAX / 2 + 1), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(vam_malloc((size_t{1} << 47)), nullptr);  // 128 TiB: the kernel says no
  EXPECT_EQ(errno, ENOMEM);
}

TEST(VamMalloc, LargeAndHugeObjectsHoldData) {
  for (size_t n : {size_t{1025}, size_t{4000}, size_t{32768}, size_t{100000}, size_t{262144},
                   size_t{262145}, size_t{1} << 20, size_t{5} << 20}) {
    void *p = vam_malloc(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_TRUE(aligned(p, 16));
    EXPECT_GE(vam_usable_size(p), n);
    fill(p, n, 3);
    EXPECT_TRUE(check(p, n, 3));
    vam_free(p);
  }
}


TEST(VamCalloc, ReturnsZeroedMemoryEvenWhenReused) {
  for (size_t n : {size_t{24}, size_t{1000}, size_t{5000}, size_t{300000}}) {
    void *dirty = vam_malloc(n);
    memset(dirty, 0xAB, n);
    vam_free(dirty);
    auto *p = static_cast<unsigned char *>(vam_calloc(1, n));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(std::all_of(p, p + n, [](unsigned char c) { return c == 0; })) << n;
    vam_free(p);
  }
}

TEST(VamCalloc, MultiplicationOverflowFailsWithEnomem) {
  errno = 0;
  EXPECT_EQ(vam_calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(VamReallocarray, MultiplicationOverflowFailsAndKeepsOldBlock) {
  auto *p = static_cast<char *>(vam_malloc(10));
  strcpy(p, "keepme");
  errno = 0;
  EXPECT_EQ(vam_reallocarray(p, SIZE_MAX / 4, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_STREQ(p, "keepme");
  p = static_cast<char *>(vam_reallocarray(p, 100, 10));
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p, "keepme");
  vam_free(p);
}


TEST(VamRealloc, NullPointerActsAsMalloc) {
  void *p = vam_realloc(nullptr, 40);
  ASSERT_NE(p, nullptr);
  vam_free(p);
}

TEST(VamRealloc, GrowingAndShrinkingAcrossAllTiersKeepsContents) {
  size_t sizes[] = {1, 8, 24, 500, 1024, 1025, 3000, 40000, 262144, 300000, 3 << 20, 2000, 10};
  size_t have = 1;
  auto *p = static_cast<unsigned char *>(vam_malloc(have));
  fill(p, have, 9);
  for (size_t n : sizes) {
    p = static_cast<unsigned char *>(vam_realloc(p, n));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(check(p, std::min(have, n), 9)) << have << " -> " << n;
    fill(p, n, 9);
    have = n;
  }
  vam_free(p);
}

TEST(VamRealloc, ABufferGrownInSmallStepsMovesAFewTimesNotAtEveryClass) {
  // Several buffers grown a few bytes at a time, interleaved (so that a
  // large one seldom has a free neighbour to grow into): each move copies
  // the whole buffer. Moving at every 16-byte class took 79 moves per buffer
  // on the way to 4,000 bytes; with an eighth of slack per move, 31.
  constexpr int kBuffers = 8;
  unsigned char *b[kBuffers] = {};
  size_t n[kBuffers] = {};
  int moves = 0;
  for (int step = 0; step < 1000; ++step) {
    for (int k = 0; k < kBuffers; ++k) {
      const size_t grow = 1 + (step + k) % 7;
      auto *q = static_cast<unsigned char *>(vam_realloc(b[k], n[k] + grow));
      ASSERT_NE(q, nullptr);
      if (b[k] != nullptr && q != b[k]) ++moves;
      ASSERT_TRUE(check(q, n[k], static_cast<unsigned char>(k)));
      b[k] = q;
      n[k] += grow;
      fill(q, n[k], static_cast<unsigned char>(k));
    }
  }
  printf("%d moves per buffer\n", moves / kBuffers);
  EXPECT_LT(moves, kBuffers * 45) << moves / kBuffers << " moves per buffer";
  for (auto *q : b) vam_free(q);
}

TEST(VamRealloc, FailureReturnsNullSetsEnomemAndKeepsOldBlock) {
  auto *p = static_cast<char *>(vam_malloc(100));
  strcpy(p, "still here");
  errno = 0;
  EXPECT_EQ(vam_realloc(p, SIZE_MAX - 4096), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_STREQ(p, "still here");
  vam_free(p);
}

TEST(VamRealloc, ToZeroFreesAndReturnsNullLikeGlibc) {
  const size_t live = stats().live_objects;
  void *p = vam_malloc(64);
  ASSERT_EQ(stats().live_objects, live + 1);
  EXPECT_EQ(vam_realloc(p, 0), nullptr);
  EXPECT_EQ(stats().live_objects, live);  // freed, not leaked
}

// realloc of an object in a block segment the thread frees into takes its
// own path (vam.cpp, realloc_impl: no segment map, free's fast path for the
// old object): the contents move, a fitting size stays, zero still frees,
// and the old object is free after the move (its slot is handed out again).
TEST(VamRealloc, AnObjectOfASegmentTheThreadFreesIntoMovesOnTheFastPath) {
  using namespace alloclab::vam;
  void *warm = vam_malloc(40);
  vam_free(warm);  // the segment is now in t_free_seg
  char *p = static_cast<char *>(vam_malloc(40));
  ASSERT_TRUE(free_seg_has(segment_of(p)));
  for (int i = 0; i < 40; ++i) p[i] = static_cast<char>(i * 7);
  EXPECT_EQ(vam_realloc(p, 48), p);  // the 48-byte class: in place
  const size_t live = stats().live_objects;
  char *q = static_cast<char *>(vam_realloc(p, 400));
  ASSERT_NE(q, nullptr);
  ASSERT_NE(q, p);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(q[i], static_cast<char>(i * 7)) << i;
  EXPECT_EQ(stats().live_objects, live);  // one in, one out
  void *again[64];  // not a container: its nodes would be vam's objects too
  int made = 0;
  bool found = false;
  while (made < 64 && !found) found = (again[made++] = vam_malloc(40)) == p;
  EXPECT_TRUE(found) << "the old object was not freed";
  for (int i = 0; i < made; ++i) vam_free(again[i]);
  ASSERT_TRUE(free_seg_has(segment_of(q)));
  EXPECT_EQ(vam_realloc(q, 0), nullptr);
  EXPECT_EQ(stats().live_objects, live - 1);
}

TEST(VamHardening, ReallocOfAFreedObjectOnTheFastPathAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *keep = vam_malloc(100);  // the block keeps a live object
        void *p = vam_malloc(100);
        vam_free(p);
        void *q = vam_realloc(p, 1000);  // would move, then free p a second time
        fprintf(stderr, "not caught: %p %p\n", q, keep);
      },
      "vam: realloc\\(\\): double free / realloc of a freed object");
}


TEST(VamPosixMemalign, RejectsAlignment3WithEinvalAndLeavesPointerUntouched) {
  void *p = reinterpret_cast<void *>(0x1234);
  EXPECT_EQ(vam_posix_memalign(&p, 3, 16), EINVAL);
  EXPECT_EQ(p, reinterpret_cast<void *>(0x1234));
}

TEST(VamPosixMemalign, RejectsAlignmentBelowPointerSizeAndZero) {
  void *p = nullptr;
  EXPECT_EQ(vam_posix_memalign(&p, 4, 16), EINVAL);
  EXPECT_EQ(vam_posix_memalign(&p, 0, 16), EINVAL);
  EXPECT_EQ(vam_posix_memalign(&p, 24, 16), EINVAL);
  EXPECT_EQ(p, nullptr);
}

TEST(VamPosixMemalign, ReturnsEnomemForImpossibleSizeAndLeavesPointerUntouched) {
  void *p = reinterpret_cast<void *>(0x10);
  EXPECT_EQ(vam_posix_memalign(&p, 64, SIZE_MAX - 100), ENOMEM);
  EXPECT_EQ(p, reinterpret_cast<void *>(0x10));
}

TEST(VamPosixMemalign, HonoursEveryPowerOfTwoUpTo2MiBForManySizes) {
  for (size_t a = sizeof(void *); a <= (size_t{2} << 20); a <<= 1) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{1000}, size_t{5000}, size_t{300000}}) {
      void *p = nullptr;
      ASSERT_EQ(vam_posix_memalign(&p, a, n), 0) << a << " " << n;
      EXPECT_TRUE(aligned(p, a)) << a << " " << n;
      EXPECT_GE(vam_usable_size(p), n);
      fill(p, n, 1);
      EXPECT_TRUE(check(p, n, 1));
      vam_free(p);
    }
  }
}

TEST(VamAlignedAlloc, RejectsNonPowerOfTwoWithEinval) {
  errno = 0;
  EXPECT_EQ(vam_aligned_alloc(48, 96), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(vam_aligned_alloc(0, 96), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST(VamAlignedAlloc, AcceptsSizeNotMultipleOfAlignmentPerC17) {
  void *p = vam_aligned_alloc(64, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 64));
  vam_free(p);
}

TEST(VamAlignedAlloc, EveryPowerOfTwoFrom4MiBTo1GiBIsHonoured) {
  // glibc, jemalloc and mimalloc all succeed here; the object sits a segment
  // past its header, so free, usable_size and realloc must still find it.
  for (size_t a = size_t{4} << 20; a <= (size_t{1} << 30); a <<= 1) {
    for (size_t n : {size_t{1}, size_t{100}, size_t{5} << 20}) {
      auto *p = static_cast<unsigned char *>(vam_aligned_alloc(a, n));
      ASSERT_NE(p, nullptr) << a << " " << n;
      EXPECT_TRUE(aligned(p, a)) << a << " " << n;
      EXPECT_GE(vam_usable_size(p), n);
      fill(p, n < 4096 ? n : 4096, 5);
      EXPECT_TRUE(check(p, n < 4096 ? n : 4096, 5));
      p[n - 1] = 9;
      vam_free(p);
    }
  }
  void *q = nullptr;
  ASSERT_EQ(vam_posix_memalign(&q, size_t{64} << 20, 1000), 0);
  EXPECT_TRUE(aligned(q, size_t{64} << 20));
  vam_free(q);
  q = vam_memalign(size_t{16} << 20, 3000);
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(aligned(q, size_t{16} << 20));
  vam_free(q);
}

TEST(VamAlignedAlloc, ObjectAlignedToASegmentSurvivesReallocAndLeavesNothingLive) {
  const size_t live = stats().huge_live_bytes;
  auto *p = static_cast<unsigned char *>(vam_aligned_alloc(size_t{8} << 20, 100000));
  ASSERT_NE(p, nullptr);
  fill(p, 100000, 3);
  p = static_cast<unsigned char *>(vam_realloc(p, size_t{12} << 20));  // a remap
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(check(p, 100000, 3));
  p = static_cast<unsigned char *>(vam_realloc(p, 5000));  // to the large tier
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(check(p, 5000, 3));
  vam_free(p);
  EXPECT_EQ(stats().huge_live_bytes, live);
}

TEST(VamAlignedAlloc, AlignmentTheAddressSpaceCannotHoldFailsWithEnomem) {
  errno = 0;
  EXPECT_EQ(vam_aligned_alloc(size_t{1} << 62, 100), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(VamMemalign, RoundsNonPowerOfTwoAlignmentUpLikeGlibc) {
  void *p = vam_memalign(48, 10);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 64));
  vam_free(p);
}

TEST(VamValloc, ReturnsPageAlignedMemory) {
  void *p = vam_valloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 4096));
  vam_free(p);
}

TEST(VamPvalloc, RoundsSizeUpToAWholePage) {
  void *p = vam_pvalloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 4096));
  EXPECT_GE(vam_usable_size(p), 4096u);
  fill(p, 4096, 2);
  // The whole page is the object's: a neighbour allocated after it and
  // filled does not write into it.
  void *q = vam_pvalloc(100);
  ASSERT_NE(q, nullptr);
  fill(q, 4096, 3);
  EXPECT_TRUE(check(p, 4096, 2));
  EXPECT_TRUE(check(q, 4096, 3));
  vam_free(q);
  vam_free(p);
  p = vam_pvalloc(0);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(vam_usable_size(p), 4096u);
  vam_free(p);
}

TEST(VamFreeSized, FreeSizedAndFreeAlignedSizedReleaseMemory) {
  // Each frees its object: the live counts go back to where they were, and
  // the small object freed is the next one of its size handed out.
  const vam_stats_t before = stats();
  void *p = vam_malloc(100);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(stats().live_objects, before.live_objects + 1);
  vam_free_sized(p, 100);
  const vam_stats_t freed = stats();
  void *again = vam_malloc(100);
  EXPECT_EQ(freed.live_objects, before.live_objects);
  EXPECT_EQ(freed.live_bytes, before.live_bytes);
  EXPECT_EQ(again, p);
  vam_free(again);

  const vam_stats_t before_aligned = stats();
  void *a = vam_aligned_alloc(256, 300);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(stats().live_objects, before_aligned.live_objects + 1);
  vam_free_aligned_sized(a, 256, 300);
  const vam_stats_t freed_aligned = stats();
  EXPECT_EQ(freed_aligned.live_objects, before_aligned.live_objects);
  EXPECT_EQ(freed_aligned.live_bytes, before_aligned.live_bytes);
}

char g_static_buffer[256];

TEST(VamHardening, FreeOfAPointerVamNeverHandedOutAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        vam_malloc(16);  // vam is up and has segments
        int on_stack = 0;
        vam_free(&on_stack);
      },
      "vam: free\\(\\): invalid pointer \\(not from vam");
  EXPECT_DEATH(
      {
        vam_malloc(16);
        vam_free(g_static_buffer + 16);
      },
      "vam: free\\(\\): invalid pointer \\(not from vam");
  EXPECT_DEATH(
      {
        // Another mapping, with a readable segment-aligned address inside it
        // (what vam would take for a header without the check).
        const size_t seg = size_t{4} << 20;
        auto *m = static_cast<char *>(mmap(nullptr, 3 * seg, PROT_READ | PROT_WRITE,
                                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (m == MAP_FAILED) abort();
        auto *inside = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(m) + seg - 1) & ~(seg - 1));
        vam_free(inside + 64);
      },
      "vam: free\\(\\): invalid pointer \\(not from vam");
  EXPECT_DEATH(
      {
        int on_stack = 0;
        vam_realloc(&on_stack, 100);
      },
      "vam: realloc\\(\\): invalid pointer \\(not from vam");
}

TEST(VamUsableSize, NullHasUsableSizeZero) { EXPECT_EQ(vam_usable_size(nullptr), 0u); }

// ---- malloc_usable_size of a pointer vam never handed out

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
