// Conformance and behaviour of libvam through its prefixed API (vam_malloc,
// ...). These run in every build, including ASan+UBSan.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "vam/api.hpp"           // the calling thread's heap (VamHot)
#include "vam/heap.hpp"          // where the heap and segment fields sit (VamCacheSets)
#include "vam/object_heap.hpp"   // the size split every allocation follows (VamObjectHeap)
#include "vam/remote.hpp"        // the batches of remote frees (VamThreads)
#include "vam/size_classes.hpp"  // block geometry, for the tests that depend on it

namespace {

bool aligned(const void *p, size_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; }

void fill(void *p, size_t n, unsigned char seed) {
  auto *b = static_cast<unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(seed + i * 7);
}
bool check(const void *p, size_t n, unsigned char seed) {
  auto *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(seed + i * 7)) return false;
  return true;
}

vam_stats_t stats() {
  vam_stats_t s;
  vam_stats(&s);
  return s;
}

// ---- malloc / free -------------------------------------------------------

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

// 0..8 bytes the 8-byte class, then 16 bytes apart: every size, since
// malloc's inline path finds the first class by its own test (api.hpp).
TEST(VamMalloc, SmallSizesGetExactFitClasses16BytesApart) {
  for (size_t n = 0; n <= 1024; ++n) {
    void *p = vam_malloc(n);
    EXPECT_EQ(vam_usable_size(p), n <= 8 ? 8 : (n + 15) / 16 * 16) << n;
    vam_free(p);
  }
}

// The class of a request is computed, not looked up, in the default
// geometry (a table read was a cache line per malloc); both must agree.
TEST(VamMalloc, ClassLookupWithoutTheTableAgreesWithIt) {
  using namespace alloclab::vam;
  for (size_t n = 0; n <= kSmallMax; ++n)
    EXPECT_EQ(layout_class(n), g_layout.class_of[(n + 7) >> 3]) << n;
}

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
  EXPECT_EQ(set_of(&g_layout.inline_tiny), set_of(&g_layout.inline_fine));
  EXPECT_EQ(g_layout.large_max, 256u * 1024);  // the default VAM_LARGE_MAX
  Heap *h = object_segment(small)->owner;
  ASSERT_NE(h, nullptr);
  for (unsigned g = 0; g < kFrontSlots; ++g) EXPECT_NE(set_of(&h->slots[g]), 0u) << g;
  vam_free(small);
  vam_free(medium);
  vam_free(large);
}

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

// ---- calloc / reallocarray overflow --------------------------------------

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

// ---- realloc -------------------------------------------------------------

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
        void *q = vam_realloc(p, 1000);  // moves, then frees p a second time
        fprintf(stderr, "not caught: %p %p\n", q, keep);
      },
      "vam: free\\(\\): double free detected");
}

// ---- aligned allocation --------------------------------------------------

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

// ---- hardening: misuse aborts with a message, in every build --------------
// (Death tests fork; "threadsafe" re-runs only the test in a fresh process.)

TEST(VamHardening, DoubleFreeOfASmallObjectAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *p = vam_malloc(100);
        vam_free(p);
        vam_free(p);  // without the check the next two mallocs return p
      },
      "vam: free\\(\\): double free detected");
}

TEST(VamHardening, DoubleFreeOfASmallObjectAfterAnotherFreeAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        // Enough objects of one class that the middle one's block holds only
        // ours, whatever the test framework allocated in that class before.
        // Freeing them all empties that block; the second free of its object
        // is not the block's most recent free, so only the empty-block check
        // can catch it.
        constexpr int kObjects = 1000;
        static void *objs[kObjects];
        for (auto &o : objs) o = vam_malloc(100);
        void *p = objs[kObjects / 2];
        for (auto *o : objs) vam_free(o);
        vam_free(p);
      },
      "vam: free\\(\\): double free detected");
}

TEST(VamHardening, DoubleFreeWithOtherFreesBetweenIntoTheActiveBlockAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // free(p); free(q); free(p) with p and q of one class in the block
  // allocation is using: p is on the block's free list, second from its
  // head, and the block holds live objects (not the empty-block check).
  EXPECT_DEATH(
      {
        void *live = vam_malloc(100);
        void *p = vam_malloc(100);
        void *q = vam_malloc(100);
        vam_free(p);
        vam_free(q);
        vam_free(p);  // without the check the next two mallocs return p
        vam_free(live);
      },
      "vam: free\\(\\): double free detected");
  // Deeper: ten frees between, from a run of 64 objects (one or two blocks).
  EXPECT_DEATH(
      {
        static void *objs[64];
        for (auto &o : objs) o = vam_malloc(100);
        vam_free(objs[20]);
        for (int i = 21; i < 31; ++i) vam_free(objs[i]);
        vam_free(objs[20]);
      },
      "vam: free\\(\\): double free detected");
}

TEST(VamHardening, ObjectsNeverWrittenAreNotTakenForFreedOnes) {
  // The free-list check reads an object's first word. Objects handed out
  // and freed without being written, from a free list (the word is cleared)
  // and by bumping through reused blocks (the word may be a stale link of
  // the blocks' earlier life), must be freed normally, in every class.
  const size_t before = stats().small_live_bytes;
  for (size_t n : {8, 16, 48, 100, 776}) {
    std::vector<void *> v(3000);
    for (int round = 0; round < 4; ++round) {
      for (auto &p : v) p = vam_malloc(n);
      for (auto *p : v) vam_free(p);
    }
    for (int i = 0; i < 1000; ++i) vam_free(vam_malloc(n));
    for (int i = 0; i < 100; ++i) vam_free(vam_malloc(0));
  }
  EXPECT_LE(stats().small_live_bytes, before);
}

TEST(VamHardening, AnObjectBumpedOutOfAReusedBlockDoesNotLookFreed) {
  // Blocks of 64-byte objects emptied, then reused for 48-byte ones: every
  // fourth 48-byte slot starts where a 64-byte one did, on a link of the
  // blocks' old free lists. An object handed out there with its first word
  // still a link would make each free walk the block's list (a 5x slowdown
  // on allocate-all-then-free-all loops of changing sizes).
  std::vector<void *> v(4000);
  for (auto &p : v) p = vam_malloc(64);
  for (auto *p : v) vam_free(p);
  int suspects = 0;
  for (auto &p : v) {
    p = vam_malloc(48);
    if (alloclab::vam::looks_freed(p)) ++suspects;
  }
  EXPECT_EQ(suspects, 0);
  for (auto *p : v) vam_free(p);
}

TEST(VamHardening, DoubleFreeFromAnotherThreadWithAFreeBetweenAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        static void *objs[3];  // one kept live, p, q
        std::thread([] {
          for (auto &o : objs) o = vam_malloc(64);
        }).join();
        void *p = objs[1];
        void *q = objs[2];
        vam_free(p);  // remote frees into the exited thread's heap:
        vam_free(q);  // p, q, p on its remote stack, p linked in a cycle
        vam_free(p);
        vam_stats_t s;
        vam_stats(&s);  // applies them: the second p finds itself on the free list
      },
      "vam: free\\(\\): double free detected");
}

TEST(VamHardening, DoubleFreeOfALargeObjectBetweenLiveNeighboursAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *a = vam_malloc(15000);  // above VAM_PAGE_MAX's largest: a large object
        void *p = vam_malloc(15000);
        void *b = vam_malloc(15000);
        vam_free(p);
        vam_free(p);  // without the check the free list links p to itself
        vam_free(a);
        vam_free(b);
      },
      "vam: free\\(\\): double free detected \\(large object\\)");
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

TEST(VamHardening, DoubleFreeIntoAnExitedThreadsHeapAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *p = nullptr;
        std::thread([&] { p = vam_malloc(64); }).join();
        vam_free(p);  // remote frees into the abandoned heap
        vam_free(p);
        vam_stats_t s;
        vam_stats(&s);  // applies them
      },
      "vam: free\\(\\): double free detected");
}

TEST(VamHardening, FreeOfAnInteriorPointerOfASmallObjectAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto *q = static_cast<char *>(vam_malloc(64));
        vam_malloc(64);
        vam_free(q + 8);  // accepted and handed out again without the check
      },
      "vam: free\\(\\): invalid pointer");
}

// free's fast path (a front block that keeps live objects) checks that p
// starts a slot from the same product that gives the slot (heap.hpp,
// small_free_local), not by multiplying back: a pointer 8 bytes into an
// object, or 8 bytes before the next, of every small class size up to
// 1024 bytes, freed while other objects of the block live, still aborts.
TEST(VamHardening, FreeOfAnInteriorPointerIntoAFrontBlockAbortsForEveryClass) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (std::size_t size = 16; size <= 1024; size += size < 128 ? 8 : 56) {
    for (std::size_t back : {std::size_t{8}, size - 8}) {
      EXPECT_DEATH(
          {
            auto *q = static_cast<char *>(vam_malloc(size));
            vam_malloc(size);
            vam_malloc(size);
            vam_free(q + back);
          },
          "vam: free\\(\\): invalid pointer")
          << "size " << size << " offset " << back;
    }
  }
}

TEST(VamHardening, FreeOfAnInteriorPointerOfALargeObjectAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto *q = static_cast<char *>(vam_malloc(5000));
        memset(q, 0, 5000);
        vam_free(q + 64);
      },
      "vam: free\\(\\): invalid pointer");
  EXPECT_DEATH(
      {
        auto *q = static_cast<char *>(vam_malloc(5000));
        vam_free(q + 8);
      },
      "vam: free\\(\\): invalid pointer");
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

// free's fast path trusts the segment the thread last freed into (vam.cpp,
// t_free_seg) without asking the segment map. Once that segment has been
// unmapped, a stale pointer into it must still meet the map's check, not
// be read through the unmapped block table. (The death tests' bodies are
// functions: gtest keeps a statement's text as a string, and a long one
// would change the 1024-byte class the VamReap tests below depend on.)
void free_into_an_unmapped_segment() {
  // 64-byte objects fill a medium segment with about 65,000: three
  // segments' worth, so the middle one holds only these.
  constexpr size_t kObjects = 200000;
  static void *objs[kObjects];
  for (auto &o : objs) o = vam_malloc(64);
  // A live object in the last block keeps that block on the class's list,
  // so the block mid's free empties is not the class's only one, which
  // would be kept (with its segment) rather than retired.
  void *keep = vam_malloc(64);
  void *mid = objs[kObjects / 2];
  for (auto *o : objs)
    if (o != mid) vam_free(o);
  vam_free(mid);  // the last free: its segment is the one trusted
  vam_collect();  // empty at two collections in a row: unmapped
  vam_collect();
  vam_free(mid);
  vam_free(keep);
}

TEST(VamHardening, FreeIntoASegmentVamHasUnmappedAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(free_into_an_unmapped_segment(), "vam: free\\(\\): invalid pointer \\(not from vam");
}

// A thread keeps every block segment it has freed into, one per slot of
// t_free_seg (heap.hpp): objects of 8, 64 and 1000 bytes live in blocks of
// 4, 16 and 32 KiB, each block size in segments of its own, and a free into each
// must find its segment there afterwards. With one segment remembered, frees
// of mixed sizes alternated between them and the fast path's test went
// whichever way the size did (larson: 6.8 M mispredicted branches, 1.2 M).
TEST(VamFreePath, AThreadKeepsTheSegmentOfEachBlockSizeItFreesInto) {
  using namespace alloclab::vam;
  std::thread([] {
    const size_t sizes[] = {8, 64, 1000};
    void *p[3], *q[3];
    for (int i = 0; i < 3; ++i) {
      p[i] = vam_malloc(sizes[i]);
      q[i] = vam_malloc(sizes[i]);  // keeps the block from emptying
    }
    std::set<Segment *> segs;
    for (void *x : p) segs.insert(segment_of(x));
    EXPECT_EQ(segs.size(), 3u);  // three block sizes, three segments
    for (void *x : p) vam_free(x);
    for (int i = 0; i < 3; ++i) {
      Segment *s = segment_of(p[i]);
      EXPECT_TRUE(free_seg_has(s)) << "the segment of the " << sizes[i] << "-byte objects";
      EXPECT_EQ(t_free_seg.shift[free_seg_slot(s)], s->block_shift);
    }
    for (void *x : q) vam_free(x);
  }).join();
}

// A heap bigger than a few segments: slot_churn's table of 9..1024-byte
// objects spans a dozen or more, and with eight slots a fifth of its frees
// found their segment's slot taken by another and went the checked way
// (segment map, then the header: 10% of its time). 1000-byte objects in
// 32 KiB blocks fill a 4 MiB segment with about 4,000; twenty segments'
// worth, one object of each freed: every segment whose slot no other of
// the twenty shares must be kept, and the twenty, mapped next to each
// other, must take at least sixteen slots (eight slots cannot hold them).
TEST(VamFreePath, AThreadKeepsTheSegmentsOfABigHeap) {
  using namespace alloclab::vam;
  std::thread([] {
    constexpr size_t kSegs = 20;
    std::vector<void *> objs;
    std::vector<void *> first;  // the second object of each new segment (the first stays live)
    std::map<Segment *, int> seen;
    while (first.size() < kSegs) {
      void *p = vam_malloc(1000);
      ASSERT_NE(p, nullptr);
      objs.push_back(p);
      if (++seen[segment_of(p)] == 2) first.push_back(p);
    }
    std::map<unsigned, int> slots;
    for (void *p : first) ++slots[free_seg_slot(segment_of(p))];
    EXPECT_GE(slots.size(), 16u) << "the twenty segments share slots";
    for (void *p : first) vam_free(p);
    for (void *p : first) {
      Segment *s = segment_of(p);
      if (slots[free_seg_slot(s)] == 1) {
        EXPECT_TRUE(free_seg_has(s)) << "segment " << s;
      }
    }
    for (void *p : objs)
      if (std::find(first.begin(), first.end(), p) == first.end()) vam_free(p);
  }).join();
}

// The fast path is a thread's own heap's: once thread exit has abandoned the
// heap, a TLS destructor's free of one of its objects is a remote free into
// it. Taken for a local free (with no heap), a free into a full block
// crashed. In a fresh process (a death test's), so that the thread's heap is
// new and its blocks are carved one after another from one segment.
pthread_key_t g_late_free_key;
// 944-byte objects: two blocks full and a third begun (34 to a 32 KiB block).
constexpr int kLateObjects =
    static_cast<int>(2 * (alloclab::vam::class_block_bytes(alloclab::vam::size_class(944)) / 944) + 6);
void late_free(void *arg) {
  auto **objs = static_cast<void **>(arg);
  for (int i = 0; i < kLateObjects - 1; ++i) vam_free(objs[i]);  // objs[0]'s block is full
}

void tls_destructor_frees_after_vams() {
  vam_free(vam_malloc(8));  // vam's key exists before ours
  if (pthread_key_create(&g_late_free_key, late_free) != 0) abort();
  static void *objs[kLateObjects];
  const vam_stats_t before = stats();
  std::thread([] {
    for (auto &o : objs) o = vam_malloc(944);
    vam_free(objs[kLateObjects - 1]);  // a local free into their segment
    pthread_setspecific(g_late_free_key, objs);
  }).join();
  const vam_stats_t after = stats();  // applies the frees waiting on the abandoned heap
  const unsigned c = alloclab::vam::size_class(944);
  exit(after.class_live[c] == before.class_live[c] ? 0 : 1);
}

TEST(VamThreads, ATlsDestructorFreesIntoItsAbandonedHeapAsARemoteFree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(tls_destructor_frees_after_vams(), ::testing::ExitedWithCode(0), "");
}

TEST(VamUsableSize, NullHasUsableSizeZero) { EXPECT_EQ(vam_usable_size(nullptr), 0u); }

// ---- the paper's behaviour ------------------------------------------------

TEST(VamReap, FreshBlockIsFilledByBumpingInAddressOrder) {
  // A size nobody else in this test binary uses.
  std::vector<char *> v;
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<char *>(vam_malloc(1000)));
  int adjacent = 0;
  for (int i = 1; i < 8; ++i) adjacent += (v[i] - v[i - 1] == 1008);
  EXPECT_GE(adjacent, 5);
  for (char *p : v) vam_free(p);
}

TEST(VamReap, FrontBlockReusesTheObjectJustFreed) {
  // A free into the block allocation is using comes back first (LIFO):
  // that object is the one most likely still in cache.
  void *a = vam_malloc(936);
  void *b = vam_malloc(936);
  vam_free(a);
  void *c = vam_malloc(936);
  EXPECT_EQ(a, c);
  vam_free(b);
  vam_free(c);
}

// Full blocks A, B and C of 1024-byte objects (32 per 32 KiB block), then
// frees that leave A third in the class's list: one object freed while A
// was still in state front (its LIFO list), two freed out of address order
// once it waits (pending: they come back in address order). A full block
// that regains space becomes the front and the block it displaces stays in
// state front, second; the one behind that waits. C's freed object is
// handed out again at once, leaving C, used up, at the front and B second.
// vam_free, then the class's hot object (heap.hpp, FrontSlot) back to its
// block: the block-order tests below follow every free into its block, as
// a free does whenever the hot slot is taken. The hot slot has tests of its
// own (VamHot).
// VAM_ORDER=recent (the default) makes a full block that regains space its
// class's front; =fifo puts it at the end of the class's available blocks
// (ctest runs this file both ways). The TwoBlocks tests below are of the
// recent order.
bool order_recent() {
  const char *v = getenv("VAM_ORDER");
  return v == nullptr || strcmp(v, "fifo") != 0;
}
#define SKIP_UNLESS_RECENT_ORDER() \
  if (!order_recent()) GTEST_SKIP() << "VAM_ORDER=fifo: a regained block joins the back (VamReap.ARegainedBlock*)"

void free_to_block(void *p) {
  alloclab::vam::Segment *s = alloclab::vam::segment_of(p);
  vam_free(p);
  alloclab::vam::hot_return_all(s->owner);
}

struct TwoBlocks {
  std::vector<char *> all, a, b, c;
  char *again = nullptr;  // c[0] again
  static constexpr uintptr_t kBlock = alloclab::vam::class_block_bytes(alloclab::vam::size_class(1024));
  static constexpr size_t kPer = kBlock / 1024;
  static uintptr_t block(const char *p) { return reinterpret_cast<uintptr_t>(p) & ~(kBlock - 1); }
  TwoBlocks() {
    std::map<uintptr_t, std::vector<char *>> blocks;
    for (size_t i = 0; i < 6 * kPer; ++i) {
      all.push_back(static_cast<char *>(vam_malloc(1024)));
      blocks[block(all.back())].push_back(all.back());
    }
    std::vector<std::vector<char *>> full;
    for (auto &kv : blocks)
      if (kv.second.size() == kPer && kv.first != block(all.back())) full.push_back(kv.second);
    if (full.size() < 3) return;
    a = full[0];
    b = full[1];
    c = full[2];
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::sort(c.begin(), c.end());
    free_to_block(a[9]);   // A was full: the front
    free_to_block(b[3]);   // B too: B is the front, A second (still LIFO)
    free_to_block(c[0]);   // C: the front, B second, A waits
    again = static_cast<char *>(vam_malloc(1024));  // c[0]: C is used up
    free_to_block(a[12]);  // A waits: pending
    free_to_block(a[1]);
  }
  std::vector<char *> next4() {
    std::vector<char *> got;
    for (int i = 0; i < 4; ++i) got.push_back(static_cast<char *>(vam_malloc(1024)));
    return got;
  }
  void release(const std::vector<char *> &got) {
    for (char *p : all)
      if (p != a[9] && p != b[3] && p != a[12] && p != a[1] && p != c[0]) vam_free(p);
    for (char *p : got) vam_free(p);
    vam_free(again);
  }
};

// A free into a waiting block only sets the slot's bit in the block record:
// it must not read the object (the double-free check that reads an object's
// first word runs only where free writes that word anyway). Reading it cost
// gp_mix 5.8% more D1 misses (docs/vam.md, "Hardening"). The object's page is
// made unreadable for the free: a read would fault.
TEST(VamReap, AFreeIntoAWaitingBlockDoesNotTouchTheObject) {
  SKIP_UNLESS_RECENT_ORDER();
  TwoBlocks t;
  ASSERT_FALSE(t.a.empty());
  // A is waiting (B is the front); a[4..7] share a page and are all live.
  char *p = t.a[5];
  char *page = reinterpret_cast<char *>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095});
  ASSERT_EQ(reinterpret_cast<uintptr_t>(t.a[4]) & ~uintptr_t{4095}, reinterpret_cast<uintptr_t>(page));
  ASSERT_EQ(0, mprotect(page, 4096, PROT_NONE));
  vam_free(p);
  ASSERT_EQ(0, mprotect(page, 4096, PROT_READ | PROT_WRITE));
  t.all.erase(std::find(t.all.begin(), t.all.end(), p));
  const auto got = t.next4();  // B's freed slot, A's list, then its pending slots in address order
  EXPECT_EQ(got, (std::vector<char *>{t.b[3], t.a[9], t.a[1], t.a[5]}));
  t.release(got);  // a[12] stays free (pending)
}

TEST(VamReap, NextBlockReusesItsListThenItsPendingSlotsInAddressOrder) {
  SKIP_UNLESS_RECENT_ORDER();
  TwoBlocks t;
  ASSERT_FALSE(t.a.empty());
  const auto got = t.next4();
  EXPECT_EQ(t.again, t.c[0]);
  // B (second behind the used-up front) first; then A: its LIFO list
  // (a[9]), then the slots freed while it waited, lowest address first.
  EXPECT_EQ(got, (std::vector<char *>{t.b[3], t.a[9], t.a[1], t.a[12]}));
  t.release(got);
}

TEST(VamReap, ScatteredFreesIntoAWaitingBlockComeBackInAddressOrder) {
  SKIP_UNLESS_RECENT_ORDER();
  // A littered block: objects freed in a scrambled order while another
  // block is the front.
  TwoBlocks t;
  ASSERT_FALSE(t.a.empty());
  const auto first = t.next4();     // A, B and C are full again
  free_to_block(t.a[14]);                // A becomes the front: LIFO list
  free_to_block(t.b[5]);                 // B the front, A second
  free_to_block(t.c[7]);                 // C the front, B second, A waits
  const int scrambled[] = {4, 10, 0, 6, 2, 8, 13};
  for (int i : scrambled) free_to_block(t.a[i]);
  std::vector<char *> want = {t.c[7], t.b[5], t.a[14], t.a[0], t.a[2], t.a[4], t.a[6], t.a[8], t.a[10], t.a[13]};
  std::vector<char *> got;
  for (size_t i = 0; i < want.size(); ++i) got.push_back(static_cast<char *>(vam_malloc(1024)));
  std::vector<char *> got_sorted = got, want_sorted = want;
  std::sort(got_sorted.begin(), got_sorted.end());
  std::sort(want_sorted.begin(), want_sorted.end());
  ASSERT_EQ(got_sorted, want_sorted);  // else the objects are left alone rather than freed twice
  EXPECT_EQ(got, want);
  t.release(first);  // frees `got` too: the same objects as the ones freed above
}

// malloc's inline path finds a request's front block at byte offset
// (n + 15) & ~15 of the heap's entries, or at the first for 0..8 bytes
// (api.hpp): for every small size that entry is the front of the size's
// class, the block the object just came from.
TEST(VamReap, EveryRequestSizeFindsItsClassFront) {
  using namespace alloclab::vam;
  std::vector<void *> got;
  for (size_t n = 0; n <= kSmallMax; ++n) {
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

// The block a regained full block displaces from the front stays in state
// front, at the head of the waiting list (heap.cpp, make_front): frees into
// it go on its LIFO list in the fast path, not into `pending`, and it hands
// them out, the last freed first, as soon as the front is used up. Before,
// it waited, and on a heap whose live objects nearly fill their blocks
// (larson) every free into a full block turned the frees into the former
// front into waiting-block frees, off the fast path.
TEST(VamReap, TheBlockARegainedOneDisplacesKeepsItsLifoFrees) {
  SKIP_UNLESS_RECENT_ORDER();
  TwoBlocks t;  // C used up at the front; B second (b[3] on its list); A waits
  ASSERT_FALSE(t.a.empty());
  ASSERT_EQ(t.again, t.c[0]);
  free_to_block(t.b[7]);
  free_to_block(t.b[2]);  // lower address, freed last
  std::vector<char *> got;
  for (int i = 0; i < 3; ++i) got.push_back(static_cast<char *>(vam_malloc(1024)));
  EXPECT_EQ(got, (std::vector<char *>{t.b[2], t.b[7], t.b[3]}));
  t.release({t.b[3]});  // b[2] and b[7], live again, are in `all`
}

// A used-up front that a regain displaces is full at once, in no list
// (heap.cpp, make_front): on random replacement such blocks piled up below
// the front until a slow path walked them off one by one (freelist_micro).
// A displaced block that is not used up heads the waiting list and keeps
// its LIFO frees; the head it displaces waits. Full blocks A, B and C: A
// regains a slot that the next malloc takes (A used up, the front), B
// regains one (B the front, A full), C regains one (C the front, B the
// head of the waiting list): a free into A regains it at once and the next
// malloc hands out that object, where a waiting A would have kept it
// pending behind C.
TEST(VamReap, AUsedUpFrontARegainDisplacesIsFullAtOnce) {
  SKIP_UNLESS_RECENT_ORDER();
  using namespace alloclab::vam;
  TwoBlocks t;
  ASSERT_FALSE(t.a.empty());
  const auto first = t.next4();  // b[3], a[9], a[1], a[12]: A, B and C are full again
  ASSERT_EQ(first, (std::vector<char *>{t.b[3], t.a[9], t.a[1], t.a[12]}));
  free_to_block(t.a[9]);
  char *again = static_cast<char *>(vam_malloc(1024));
  ASSERT_EQ(again, t.a[9]);  // A used up at the front
  Segment *s = alloclab::vam::segment_of(t.a[2]);
  Heap *h = s->owner;
  Block *ba = alloclab::vam::block_of(s, t.a[2]), *bb = alloclab::vam::block_of(s, t.b[0]),
        *bc = alloclab::vam::block_of(s, t.c[0]);
  const unsigned cls = ba->cls;
  free_to_block(t.b[3]);  // B the front, A (used up) full
  EXPECT_EQ(ba->state, BlockState::full);
  EXPECT_EQ(class_front(h, cls), bb);
  free_to_block(t.c[5]);  // C the front, B (one free slot) heads the waiting list, still LIFO
  EXPECT_EQ(ba->state, BlockState::full);
  EXPECT_EQ(ba->next, nullptr);
  EXPECT_EQ(ba->prev, nullptr);
  EXPECT_EQ(class_front(h, cls), bc);
  EXPECT_EQ(h->wait[cls], bb);
  EXPECT_EQ(bb->state, BlockState::front);
  free_to_block(t.a[2]);  // A regained: the front again
  EXPECT_EQ(ba->state, BlockState::front);
  char *p = static_cast<char *>(vam_malloc(1024));
  EXPECT_EQ(p, t.a[2]);
  // A the front; C then B waiting, linked both ways, C keeping its LIFO
  // frees and B now waiting.
  EXPECT_EQ(class_front(h, cls), ba);
  EXPECT_EQ(ba->next, nullptr);
  ASSERT_EQ(h->wait[cls], bc);
  EXPECT_EQ(bc->prev, nullptr);
  EXPECT_EQ(bc->next, bb);
  EXPECT_EQ(bb->prev, bc);
  EXPECT_EQ(bc->state, BlockState::front);
  EXPECT_EQ(bb->state, BlockState::waiting);
  // Every object of `all` is live again but b[3] and c[5] (a[9] and a[2]
  // came back as `again` and p; `first` and t.again are among them).
  for (char *q : t.all)
    if (q != t.b[3] && q != t.c[5]) vam_free(q);
}

// A full block of 1024-byte objects, not the front, in a segment free's fast
// path already knows (a free and a malloc of the front's last object): a
// free into it takes the fast path's hot slot (heap.hpp, FrontSlot).
struct FullBlock {
  std::vector<char *> all, objs;
  static constexpr uintptr_t kBlock = TwoBlocks::kBlock;
  // Three blocks' worth of objects, more if the tests before left blocks
  // with room that take them (VAM_ORDER=fifo keeps more such blocks).
  FullBlock() {
    for (int round = 0; round < 4 && objs.empty(); ++round) {
      for (size_t i = 0; i < 3 * TwoBlocks::kPer; ++i) all.push_back(static_cast<char *>(vam_malloc(1024)));
      char *last = all.back();
      vam_free(last);
      if (vam_malloc(1024) != last) return;
      std::map<uintptr_t, std::vector<char *>> blocks;
      for (char *p : all) blocks[TwoBlocks::block(p)].push_back(p);
      for (auto &kv : blocks)
        if (kv.second.size() == TwoBlocks::kPer && kv.first != TwoBlocks::block(last)) {
          objs = kv.second;
          return;
        }
    }
  }
  alloclab::vam::Block *record() const {
    alloclab::vam::Segment *s = alloclab::vam::segment_of(objs[0]);
    return alloclab::vam::block_of(s, objs[0]);
  }
  alloclab::vam::Heap *heap() const { return alloclab::vam::segment_of(objs[0])->owner; }
};

// The free leaves the block full and the object in its class's entry; a
// malloc of any size of the class (its smallest here) hands it out.
TEST(VamHot, AFreeIntoAFullBlockIsTheNextMallocOfItsClass) {
  using namespace alloclab::vam;
  FullBlock f;
  ASSERT_FALSE(f.objs.empty());
  Block *b = f.record();
  Heap *h = f.heap();
  const unsigned cls = b->cls;
  ASSERT_EQ(b->state, BlockState::full);
  const vam_stats_t before = stats();
  char *p = f.objs[5];
  vam_free(p);
  const vam_stats_t after = stats();
  EXPECT_EQ(b->state, BlockState::full);
  EXPECT_EQ(b->used, TwoBlocks::kPer);  // the block still counts it
  EXPECT_EQ(class_hot_list(h, cls), reinterpret_cast<uintptr_t>(p));  // a list of one: its address
  EXPECT_EQ(after.class_live[cls] + 1, before.class_live[cls]);  // statistics do not
  char *other = static_cast<char *>(vam_malloc(8));  // another class: not it
  EXPECT_NE(other, p);
  vam_free(other);
  const size_t smallest = class_size(cls - 1) + 1;
  ASSERT_EQ(size_class(smallest), cls);
  EXPECT_EQ(vam_malloc(smallest), p);
  EXPECT_EQ(class_hot_list(h, cls), 0u);
  EXPECT_NE(vam_malloc(1024), p);  // handed out once
  EXPECT_EQ(b->state, BlockState::full);
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

// free's fast path reads `used` and `state` as one word and writes it back
// whole (heap.hpp, use_state, used_dec): the count falls by one per free and
// the state and the zero byte stay as they were, in the front block and in
// one another free regains.
TEST(VamReap, FreeKeepsTheBlocksStateWhenItWritesItsCountWord) {
  using namespace alloclab::vam;
  FullBlock f;
  ASSERT_GE(f.objs.size(), 6u);
  Block *b = f.record();
  ASSERT_EQ(b->state, BlockState::full);
  const uint16_t n = b->used;
  EXPECT_EQ(use_state(b), n + (uint32_t{static_cast<uint8_t>(BlockState::full)} << 16));
  // Two frees: the first may go to the hot list, the second regains the
  // block; then each free into the front lowers the count by one.
  vam_free(f.objs[0]);
  vam_free(f.objs[1]);
  ASSERT_EQ(b->state, BlockState::front);
  const uint16_t before = b->used;
  for (size_t i = 2; i < 6; ++i) {
    vam_free(f.objs[i]);
    EXPECT_EQ(b->used, before - (i - 1)) << i;
    EXPECT_EQ(b->state, BlockState::front) << i;
    EXPECT_EQ(b->zero, 0u) << i;
    EXPECT_EQ(use_state(b), b->used + (uint32_t{static_cast<uint8_t>(BlockState::front)} << 16)) << i;
  }
  // A malloc from it (the front, unless VAM_ORDER=fifo put it at the back):
  // its count up by one, the rest as it was.
  if (class_front(f.heap(), b->cls) != b) return;
  void *q = vam_malloc(b->size);
  ASSERT_TRUE(block_holds(b, q));
  EXPECT_EQ(use_state(b), before - 3 + (uint32_t{static_cast<uint8_t>(BlockState::front)} << 16));
}

// free's fast path knows the segments the thread has freed into
// (t_free_seg); the first free into another goes through free_checked,
// which must treat it alike: the object becomes hot there too. (Before it
// did, a test that freed into a block of a segment new to the thread saw
// the block regained instead, depending on what earlier tests had left.)
TEST(VamHot, AFreeOffTheFastPathFillsTheHotSlotToo) {
  using namespace alloclab::vam;
  FullBlock f;
  ASSERT_FALSE(f.objs.empty());
  Block *b = f.record();
  ASSERT_EQ(b->state, BlockState::full);
  t_free_seg = kNoFreeSegs;  // as for a thread's first free into the segment
  char *p = f.objs[6];
  vam_free(p);
  EXPECT_EQ(b->state, BlockState::full);
  EXPECT_EQ(class_hot(f.heap(), b->cls), p);
  EXPECT_EQ(vam_malloc(1024), p);
}

// A full block of `size`-byte objects, not the front, from `count` mallocs;
// its objects, or none.
static std::vector<char *> full_block_of(size_t size, size_t count, std::vector<char *> &all) {
  using namespace alloclab::vam;
  for (size_t i = 0; i < count; ++i) all.push_back(static_cast<char *>(vam_malloc(size)));
  std::map<Block *, std::vector<char *>> by_block;
  for (char *p : all) by_block[block_of(segment_of(p), p)].push_back(p);
  for (auto &kv : by_block)
    if (kv.first->state == BlockState::full && kv.second.size() > 2) return kv.second;
  return {};
}

// The 8- and 16-byte classes have one entry each: an object freed onto one's
// hot list is the next malloc of its own class only.
TEST(VamHot, TheEightAndSixteenByteClassesKeepTheirOwnLists) {
  using namespace alloclab::vam;
  std::vector<char *> all8, all16;
  const std::vector<char *> b8 = full_block_of(8, 3 * kPage / 8, all8);
  const std::vector<char *> b16 = full_block_of(16, 3 * kPage / 16, all16);
  ASSERT_FALSE(b8.empty());
  ASSERT_FALSE(b16.empty());
  Heap *h = segment_of(b8[0])->owner;
  char *p8 = b8[1], *p16 = b16[1];
  vam_free(p8);
  vam_free(p16);
  ASSERT_EQ(class_hot(h, 0), p8);
  ASSERT_EQ(class_hot(h, 1), p16);
  void *a = vam_malloc(16);  // the 16-byte class's: not the 8-byte object
  EXPECT_EQ(a, p16);
  void *b = vam_malloc(1);
  EXPECT_EQ(b, p8);
  EXPECT_EQ(class_hot_list(h, 0), 0u);
  EXPECT_EQ(class_hot_list(h, 1), 0u);
  vam_free(p16);  // onto the list again: a request of 9 bytes takes it, one of 8 does not
  vam_free(p8);
  void *c = vam_malloc(8);
  EXPECT_EQ(c, p8);
  void *d = vam_malloc(9);
  EXPECT_EQ(d, p16);
  for (char *q : all8) vam_free(q);
  for (char *q : all16) vam_free(q);
}

// n full blocks of 1024-byte objects, none the front: the hot list's tests
// free one object of each, since a second free into the same full block
// regains it (hot_push). They take past the blocks with room that the tests
// before left; `release` frees what the test did not.
struct FullBlocks {
  std::vector<char *> all;
  std::vector<std::vector<char *>> blocks;
  explicit FullBlocks(size_t n) {
    std::map<uintptr_t, std::vector<char *>> by_block;
    for (size_t i = 0; i < (n + 8) * TwoBlocks::kPer; ++i) {
      all.push_back(static_cast<char *>(vam_malloc(1024)));
      by_block[TwoBlocks::block(all.back())].push_back(all.back());
    }
    for (auto &kv : by_block)
      if (kv.second.size() == TwoBlocks::kPer && kv.first != TwoBlocks::block(all.back()) && blocks.size() < n)
        blocks.push_back(kv.second);
  }
  alloclab::vam::Block *record(size_t k) const {
    return alloclab::vam::block_of(alloclab::vam::segment_of(blocks[k][0]), blocks[k][0]);
  }
  void release(const std::set<char *> &freed) {
    for (char *p : all)
      if (!freed.count(p)) vam_free(p);
  }
};

// Frees into different full blocks of one class pile up on its hot list,
// up to kHotMax, and mallocs of the class take them back last in, first
// out; statistics count them as free; the blocks stay full all along.
TEST(VamHot, TheHotListHoldsUpToItsLengthLastInFirstOut) {
  using namespace alloclab::vam;
  FullBlocks f(kHotMax);
  ASSERT_EQ(f.blocks.size(), kHotMax);
  Heap *h = segment_of(f.blocks[0][0])->owner;
  const unsigned cls = f.record(0)->cls;
  const vam_stats_t before = stats();
  for (unsigned i = 0; i < kHotMax; ++i) {
    vam_free(f.blocks[i][i]);
    EXPECT_EQ(hot_length(class_hot_list(h, cls)), i + 1);
    EXPECT_EQ(class_hot(h, cls), f.blocks[i][i]);
  }
  for (unsigned i = 0; i < kHotMax; ++i) {
    EXPECT_EQ(f.record(i)->state, BlockState::full);
    EXPECT_EQ(f.record(i)->used, TwoBlocks::kPer);
  }
  EXPECT_EQ(stats().class_live[cls] + kHotMax, before.class_live[cls]);
  for (unsigned i = kHotMax; i-- > 0;) EXPECT_EQ(vam_malloc(1024), f.blocks[i][i]);
  EXPECT_EQ(class_hot_list(h, cls), 0u);
  f.release({});
}

// A second free into a full block whose object heads the hot list regains
// the block, as before there was a list: the object goes back to it, and
// the block's next mallocs (it is the front, or, VAM_ORDER=fifo, waits at
// the back) see both.
TEST(VamHot, ASecondFreeIntoTheSameFullBlockRegainsIt) {
  using namespace alloclab::vam;
  FullBlock f;
  ASSERT_FALSE(f.objs.empty());
  Block *b = f.record();
  Heap *h = f.heap();
  vam_free(f.objs[3]);  // onto the list
  vam_free(f.objs[7]);  // into the same block
  EXPECT_EQ(b->state, BlockState::front);
  EXPECT_EQ(class_hot_list(h, b->cls), 0u);
  EXPECT_EQ(b->used, TwoBlocks::kPer - 2);
  if (order_recent()) {
    std::set<void *> got = {vam_malloc(1024), vam_malloc(1024)};
    EXPECT_EQ(got, (std::set<void *>{f.objs[3], f.objs[7]}));
  } else {
    EXPECT_EQ(h->wait_tail[b->cls], b);
    EXPECT_EQ(b->free, static_cast<void *>(f.objs[3]));
  }
}

// The list full, a free into a full block regains it, and only that
// block's objects leave the list; the others stay, in their order.
TEST(VamHot, ARegainTakesBackOnlyItsOwnBlocksObjects) {
  using namespace alloclab::vam;
  FullBlocks f(kHotMax + 1);
  ASSERT_EQ(f.blocks.size(), kHotMax + 1);
  Heap *h = segment_of(f.blocks[0][0])->owner;
  const unsigned cls = f.record(0)->cls;
  std::set<char *> freed;
  for (unsigned i = 0; i < kHotMax; ++i) {
    vam_free(f.blocks[i][0]);
    freed.insert(f.blocks[i][0]);
  }
  ASSERT_EQ(hot_length(class_hot_list(h, cls)), kHotMax);
  Block *x = f.record(2);  // its object is fifth from the top
  vam_free(f.blocks[2][5]);  // the list full: x is regained
  freed.insert(f.blocks[2][5]);
  EXPECT_NE(x->state, BlockState::full);
  EXPECT_EQ(x->used, TwoBlocks::kPer - 2);
  EXPECT_EQ(hot_length(class_hot_list(h, cls)), kHotMax - 1);
  for (unsigned i = kHotMax; i-- > 0;) {
    if (i == 2) continue;
    EXPECT_EQ(vam_malloc(1024), f.blocks[i][0]);
    freed.erase(f.blocks[i][0]);
  }
  EXPECT_EQ(class_hot_list(h, cls), 0u);
  f.release(freed);
}

// vam_collect gives the hot objects back to their blocks.
TEST(VamHot, CollectReturnsTheHotObjects) {
  using namespace alloclab::vam;
  FullBlocks f(3);
  ASSERT_EQ(f.blocks.size(), 3u);
  Heap *h = segment_of(f.blocks[0][0])->owner;
  const unsigned cls = f.record(0)->cls;
  for (size_t k = 0; k < 3; ++k) vam_free(f.blocks[k][4]);
  ASSERT_EQ(hot_length(class_hot_list(h, cls)), 3u);
  vam_collect();
  EXPECT_EQ(class_hot_list(h, cls), 0u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(f.record(k)->used, TwoBlocks::kPer - 1);
    EXPECT_NE(f.record(k)->state, BlockState::full);
  }
  f.release({f.blocks[0][4], f.blocks[1][4], f.blocks[2][4]});
}

// A second free of any object on the hot list aborts: of its head, of one
// in the middle, of its last (the first pushed).
void double_free_on_the_hot_list(unsigned which) {
  FullBlocks f(4);
  if (f.blocks.size() < 4) abort();  // not the check under test: the message differs
  for (unsigned k = 0; k < 4; ++k) vam_free(f.blocks[k][1]);
  vam_free(f.blocks[which][1]);
}
TEST(VamHot, DoubleFreeOfAnyObjectOnTheHotListAborts) {
  static_assert(alloclab::vam::kHotMax >= 5);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(double_free_on_the_hot_list(3), "vam: free\\(\\): double free detected");
  EXPECT_DEATH(double_free_on_the_hot_list(1), "vam: free\\(\\): double free detected");
  EXPECT_DEATH(double_free_on_the_hot_list(0), "vam: free\\(\\): double free detected");
}

TEST(VamHot, ThreadExitReturnsTheHotObject) {
  using namespace alloclab::vam;
  std::atomic<Block *> blk{nullptr};
  std::atomic<long> used{-1};
  std::atomic<int> state_after{-1};
  std::thread([&] {
    FullBlock f;
    if (f.objs.empty()) return;
    vam_free(f.objs[4]);
    if (class_hot(f.heap(), f.record()->cls) != f.objs[4]) {
      state_after = int(f.record()->state);
      return;
    }
    blk = f.record();
    for (char *p : f.all)
      if (p != f.objs[4]) vam_free(p);
  }).join();
  ASSERT_NE(blk.load(), nullptr) << "block state after the free: " << state_after.load();
  used = blk.load()->used;  // abandoned, not yet unmapped: heaps keep their segments a while
  EXPECT_EQ(used.load(), 0);
}

// `frees` run on a FullBlock in a death test must abort, naming a double free.
template <class Frees>
void expect_double_free_on_full_block(Frees frees) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        FullBlock f;
        if (f.objs.empty()) abort();  // not the check under test: the message differs
        frees(f.objs);
      },
      "vam: free\\(\\): double free detected");
}

// ---- page classes above 1 KiB (VAM_PAGE_MAX) ----------------------------

// free's fast path takes the slot from one product (heap.hpp,
// small_free_local): exact, offset by offset, for every class and block size
// in use, with and without the 16-byte headers.
TEST(VamPageClasses, SlotProductIsExact) {
  using namespace alloclab::vam;
  for (unsigned c = 0; c < kNumClasses; ++c) {
    for (std::uint32_t size : {static_cast<std::uint32_t>(class_size(c)), static_cast<std::uint32_t>(class_size(c) + 16),
                               static_cast<std::uint32_t>(page_stride(class_size(c)))}) {
      const auto recip = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) + size - 1) / size);
      int bad = 0;
      for (std::uint32_t off = 0; off < (1u << kMaxBlockShift); ++off) {
        const std::uint64_t prod = std::uint64_t{off} * recip;
        const bool start = static_cast<std::uint32_t>(prod) < recip;
        bad += start != (off % size == 0) || (start && (prod >> 32) != off / size);
      }
      EXPECT_EQ(bad, 0) << "object size " << size;
    }
  }
}

// Above 1 KiB, up to VAM_PAGE_MAX, a request gets the smallest class that
// holds it, at most an eighth more, 16-aligned, in a block segment.
TEST(VamPageClasses, EachSizeGetsTheSmallestClassThatHoldsIt) {
  using namespace alloclab::vam;
  const std::size_t page_max = g_layout.page_max;
  for (std::size_t n = kSmallMax + 1; n <= kPageMax + 64; n += 13) {
    char *p = static_cast<char *>(vam_malloc(n));
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << n;
    const std::size_t got = vam_usable_size(p);
    EXPECT_GE(got, n);
    if (n <= page_max) {
      EXPECT_EQ(object_segment(p)->kind, SegKind::medium) << n;
      EXPECT_EQ(got, page_stride(class_size(size_class(n)) + g_layout.header) - g_layout.header) << n;
      EXPECT_LE(got, n + n / 8) << n;
    } else {
      EXPECT_EQ(object_segment(p)->kind, SegKind::large) << n;
    }
    memset(p, 0x5a, got);
    vam_free(p);
  }
}

// The blocks of a page class start their objects at different cache
// colours (size_classes.hpp, block_colour): the first objects of four blocks
// of 4096-byte objects are not all in one L1 set, each lies less than 1 KiB
// into its block, and the block's last object ends less than one object
// before the block does.
TEST(VamPageClasses, BlocksStartTheirObjectsAtDifferentCacheColours) {
  using namespace alloclab::vam;
  if (g_layout.page_max < 4096 || g_layout.header) GTEST_SKIP() << "4096 bytes is no headerless page class here";
  const uintptr_t block = class_block_bytes(size_class(4096));
  std::vector<char *> all;
  for (int i = 0; i < 80; ++i) all.push_back(static_cast<char *>(vam_malloc(4096)));
  std::map<uintptr_t, uintptr_t> first;  // block -> its lowest object
  std::map<uintptr_t, long> count;       // block -> objects of `all` in it
  for (char *p : all) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = first.find(a & ~(block - 1));
    if (it == first.end() || a < it->second) first[a & ~(block - 1)] = a;
    ++count[a & ~(block - 1)];
  }
  std::set<uintptr_t> sets;
  int whole = 0;
  for (auto &kv : first) {
    Block *b = block_of(segment_of(reinterpret_cast<void *>(kv.second)), reinterpret_cast<void *>(kv.second));
    if (count[kv.first] != (b->end - b->start) / b->size) continue;  // not every object of it is one of these
    ++whole;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->start), kv.second);
    EXPECT_LT(kv.second - kv.first, kColourBytes);
    EXPECT_LT(kv.first + block - reinterpret_cast<uintptr_t>(b->end), b->size);
    sets.insert((kv.second >> 6) & 63);
  }
  EXPECT_GE(whole, 3);
  EXPECT_GE(sets.size(), 2u);
  for (char *p : all) vam_free(p);
}

// Within one block, the objects of a class whose size is a multiple of 1 KiB
// are 64 bytes more apart than their size (size_classes.hpp, page_stride):
// at size apart, every object of a 4096-byte block would start in the same
// L1 set (every second one for 2048), and a program's few big arrays of one
// class would fight over that set's 8 lines.
TEST(VamPageClasses, ObjectsOfOneBlockStartInDifferentCacheSets) {
  using namespace alloclab::vam;
  if (g_layout.header) GTEST_SKIP() << "headers make the objects 16 bytes bigger: no size is a multiple of 1 KiB";
  if (g_layout.page_max < 2048) GTEST_SKIP() << "no page classes above 1 KiB here";
  for (std::size_t n : {2048u, 3072u, 4096u, 8192u}) {
    if (n > g_layout.page_max) continue;
    char *first = static_cast<char *>(vam_malloc(n));
    ASSERT_NE(first, nullptr);
    Block *b = block_of(segment_of(first), first);
    const std::size_t cap = static_cast<std::size_t>(b->end - b->start) / b->size;
    EXPECT_EQ(b->size, n + 64) << n;
    std::set<uintptr_t> sets;
    for (std::size_t i = 0; i < cap; ++i) sets.insert((reinterpret_cast<uintptr_t>(b->start + i * b->size) >> 6) & 63);
    EXPECT_EQ(sets.size(), std::min<std::size_t>(cap, 64)) << n;  // one set per object
    EXPECT_EQ(vam_usable_size(first), n + 64) << n;
    vam_free(first);
  }
}

// free's slot check rejects every pointer in a colour's gap before a
// block's first object: an invalid pointer, not an object.
TEST(VamPageClasses, FreeOfAPointerBeforeABlocksFirstObjectAborts) {
  using namespace alloclab::vam;
  if (g_layout.page_max < 2048) GTEST_SKIP() << "no page classes above 1 KiB here";
  for (unsigned c = kFineClasses; c < fine_classes_up_to(g_layout.page_max); ++c) {
    const std::uint32_t size = g_layout.slot[c];
    const auto recip = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) + size - 1) / size);
    for (std::uint32_t d = 8; d < kColourBytes + 16; d += 8) {
      const std::uint64_t prod = std::uint64_t{0u - d} * recip;
      EXPECT_GE(static_cast<std::uint32_t>(prod), recip) << "object size " << size << ", " << d << " bytes before";
    }
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        std::vector<char *> v;
        Block *b = nullptr;
        for (int i = 0; i < 200 && !b; ++i) {  // a block whose objects start after a gap
          v.push_back(static_cast<char *>(vam_malloc(3000)));
          Block *k = block_of(segment_of(v.back()), v.back());
          if ((reinterpret_cast<uintptr_t>(k->start) & 4095) >= 64 && v.back() == k->start) b = k;
        }
        if (!b) abort();
        vam_free(b->start - 64);
      },
      "vam: free\\(\\): invalid pointer");
}

// The hot object (FrontSlot) works for these classes too: malloc_other
// reads it (object_heap.hpp, small_alloc_layout).
TEST(VamPageClasses, AFreeIntoAFullBlockIsTheNextMallocOfItsClass) {
  using namespace alloclab::vam;
  if (g_layout.page_max < 4096) GTEST_SKIP() << "VAM_PAGE_MAX=" << g_layout.page_max << ": 3000 bytes is a large object";
  const unsigned cls = size_class(3000);
  const uintptr_t block = class_block_bytes(cls);
  const std::size_t per = block_colour(block - g_layout.header, page_stride(g_layout.slot[cls]), 0).cap;
  std::vector<char *> all;
  for (std::size_t i = 0; i < 3 * per; ++i) all.push_back(static_cast<char *>(vam_malloc(3000)));
  char *last = all.back();
  vam_free(last);
  ASSERT_EQ(vam_malloc(3000), last);  // the front is the block of `last`
  std::map<uintptr_t, std::vector<char *>> blocks;
  for (char *p : all) blocks[reinterpret_cast<uintptr_t>(p) & ~(block - 1)].push_back(p);
  std::vector<char *> full;
  for (auto &kv : blocks)
    if (kv.second.size() == per && kv.first != (reinterpret_cast<uintptr_t>(last) & ~(block - 1))) full = kv.second;
  ASSERT_FALSE(full.empty());
  Heap *h = segment_of(full[0])->owner;
  Block *b = block_of(segment_of(full[0]), full[0]);
  ASSERT_EQ(b->state, BlockState::full);
  ASSERT_EQ(b->cls, cls);
  char *p = full[2];
  vam_free(p);
  EXPECT_EQ(b->state, BlockState::full);
  EXPECT_EQ(class_hot_list(h, cls), reinterpret_cast<uintptr_t>(p));  // a list of one: its address
  EXPECT_EQ(vam_malloc(2900), p);  // the same class
  EXPECT_EQ(class_hot_list(h, cls), 0u);
  char *other = static_cast<char *>(vam_malloc(3000));
  EXPECT_NE(other, p);  // handed out once
  vam_free(other);
  for (char *q : all) vam_free(q);
}

TEST(VamHot, DoubleFreeOfTheHotObjectAborts) {
  expect_double_free_on_full_block([](const std::vector<char *> &o) {
    vam_free(o[5]);
    vam_free(o[5]);
  });
}

// Freed again after a free into its block returned it there: on the
// front's list, found by the list walk.
TEST(VamHot, DoubleFreeAfterTheHotObjectWentBackAborts) {
  expect_double_free_on_full_block([](const std::vector<char *> &o) {
    vam_free(o[5]);
    vam_free(o[6]);
    vam_free(o[5]);
  });
}

// Freed again by another thread: the remote free reaches the block when
// the owner drains (a slow path of any class), the block is regained, and
// the object just pushed is the hot one.
TEST(VamHot, RemoteDoubleFreeOfTheHotObjectAborts) {
  expect_double_free_on_full_block([](const std::vector<char *> &o) {
    vam_free(o[5]);
    std::thread([&] { vam_free(o[5]); }).join();
    for (int i = 0; i < 1000; ++i) vam_malloc(200);  // another class: its slow path drains
  });
}

TEST(VamHardening, DoubleFreeIntoAWaitingBlockAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        TwoBlocks t;
        if (t.a.empty()) abort();  // not the check under test: the message differs
        vam_free(t.a[5]);          // A waits behind B: pending
        vam_free(t.a[5]);
      },
      "vam: free\\(\\): double free detected");
}

// A free into a waiting block that keeps live objects, or into a full one,
// is finished by the first tests in small_free_other (heap.cpp), which check
// the slot start as free's fast path does (frac < recip): an interior
// pointer into a waiting or a full block still aborts, for every class.
constexpr std::size_t kMaxSlotsForTest = 512;  // slots of a 4 KiB block of 8-byte objects
void free_interior_into_block(std::size_t size, std::size_t back, bool waiting) {
  const unsigned c = alloclab::vam::size_class(size);
  const std::size_t block = alloclab::vam::class_block_bytes(c);
  const std::size_t slots = block / alloclab::vam::class_size(c);
  // Fill blocks of the class; those all of whose objects are ours are full.
  // (No container here: its own allocations would share the 64-byte class.)
  static char *objs[8 * kMaxSlotsForTest];
  const std::size_t count = 8 * slots;
  for (std::size_t i = 0; i < count; ++i) objs[i] = static_cast<char *>(vam_malloc(size));
  std::sort(objs, objs + count);
  char *const *full[2] = {};  // the first object of each of two full blocks
  int n = 0;
  const auto block_of = [&](const char *p) { return reinterpret_cast<uintptr_t>(p) & ~uintptr_t{block - 1}; };
  for (std::size_t i = 0; i + slots <= count && n < 2;) {
    std::size_t k = i;
    while (k < count && block_of(objs[k]) == block_of(objs[i])) ++k;
    if (k - i == slots) full[n++] = &objs[i];
    i = k;
  }
  if (n < 2) abort();  // not the check under test: the message differs
  if (waiting) {
    vam_free(full[0][0]);  // full -> the front
    vam_free(full[1][0]);  // the front; the first waits behind it
  }
  vam_free(full[0][1] + back);
}

TEST(VamHardening, FreeOfAnInteriorPointerIntoAWaitingBlockAbortsForEveryClass) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (std::size_t size = 16; size <= 1024; size += size < 128 ? 8 : 56)
    for (std::size_t back : {std::size_t{8}, size - 8})
      EXPECT_DEATH(free_interior_into_block(size, back, true), "vam: free\\(\\): invalid pointer")
          << "size " << size << " offset " << back;
}

TEST(VamHardening, FreeOfAnInteriorPointerIntoAFullBlockAbortsForEveryClass) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (std::size_t size = 16; size <= 1024; size += size < 128 ? 8 : 56)
    for (std::size_t back : {std::size_t{8}, size - 8})
      EXPECT_DEATH(free_interior_into_block(size, back, false), "vam: free\\(\\): invalid pointer")
          << "size " << size << " offset " << back;
}

// Objects of an n-byte request that fit in one page block.
static size_t per_block(size_t n) {
  const unsigned c = alloclab::vam::size_class(n);
  return alloclab::vam::class_block_bytes(c) / alloclab::vam::class_size(c);
}

TEST(VamOrdered, FreeIntoFullBlockMakesItTheFrontBlock) {
  // 240-byte objects (68 per 16 KiB block); fill three blocks.
  const size_t n = 240;
  std::vector<char *> v;
  for (size_t i = 0; i < per_block(n) * 3; ++i) v.push_back(static_cast<char *>(vam_malloc(n)));
  // Free one object of the first (full) block: it goes to the front,
  // so the next allocation of this size lands there.
  char *first_block_obj = v[2];
  vam_free(first_block_obj);
  char *p = static_cast<char *>(vam_malloc(n));
  EXPECT_EQ(p, first_block_obj);
  v[2] = p;
  for (char *q : v) vam_free(q);
}

TEST(VamOrdered, PerClassCountsTrackLiveObjects) {
  const unsigned cls = 600 / 16 + 1;  // 608-byte class
  const size_t before = stats().class_live[cls];
  std::vector<void *> v;
  for (int i = 0; i < 10; ++i) v.push_back(vam_malloc(600));
  EXPECT_EQ(stats().class_live[cls], before + 10);
  EXPECT_EQ(stats().class_size[cls], 608u);
  for (void *p : v) vam_free(p);
  EXPECT_EQ(stats().class_live[cls], before);
}

TEST(VamOrdered, PerClassCountsCoverFullWaitingAndFrontBlocksAndOtherThreads) {
  // 176-byte objects, 40 blocks' worth, then every third freed, so some
  // blocks are full, many wait with pending frees and one is the front. The
  // counts come from the block records.
  const unsigned cls = 176 / 16;
  const size_t before = stats().class_live[cls];
  std::vector<void *> v;
  for (size_t i = 0; i < per_block(176) * 40; ++i) v.push_back(vam_malloc(170));
  size_t live = v.size();
  for (size_t i = 0; i < v.size(); i += 3, --live) {
    vam_free(v[i]);
    v[i] = nullptr;
  }
  EXPECT_EQ(stats().class_live[cls], before + live);
  // A thread that owns objects of the class and is still running.
  std::atomic<int> phase{0};
  std::thread t([&] {
    std::vector<void *> mine;
    for (int i = 0; i < 100; ++i) mine.push_back(vam_malloc(176));
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
    for (void *p : mine) vam_free(p);
  });
  while (phase.load() != 1) std::this_thread::yield();
  EXPECT_EQ(stats().class_live[cls], before + live + 100);
  phase = 2;
  t.join();
  for (void *p : v) vam_free(p);
  EXPECT_EQ(stats().class_live[cls], before);
}

TEST(VamDiscard, EmptiedBlocksGiveTheirPagesBack) {
  // Many blocks of one class, all emptied: the delayed policy's threshold
  // (or vam_collect) discards them.
  std::vector<void *> v;
  for (int i = 0; i < 20000; ++i) v.push_back(vam_malloc(200));
  const vam_stats_t full = stats();
  for (void *p : v) vam_free(p);
  vam_collect();
  const vam_stats_t empty = stats();
  EXPECT_GT(empty.pages_discarded, full.pages_discarded);
  EXPECT_LT(empty.pages_in_use + 900, full.pages_in_use);  // 20000*208 B is ~1000 pages
}

TEST(VamDiscard, BlocksEmptiedOutOfOrderAreDiscardedInAdjacentRuns) {
  // Empty 64 blocks in a scrambled order: the collection sorts them and
  // makes one discard call per run of adjacent blocks, not one per block.
  // (A new thread's heap may be an adopted one whose blocks are not all
  // adjacent, so the runs are counted from the addresses.)
  vam_stats_t before{}, after{};
  size_t runs = 0;
  const uintptr_t block_bytes = alloclab::vam::class_block_bytes(alloclab::vam::size_class(128));
  const size_t block_pages = block_bytes / 4096;
  // The counts are summed over every heap, and the heaps earlier tests'
  // threads left keep their empty pages for VAM_DISCARD_DELAY_MS (100 ms),
  // then give them back at the next statistics call: wait for that and let
  // it happen before counting (the delay does not pass again while this
  // test runs).
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  stats();
  std::thread t([&] {
    // Whatever such pages the adopted heap held go now, out of the count.
    vam_collect();
    constexpr int kBlocks = 64;
    std::vector<std::vector<void *>> blocks(kBlocks);
    for (auto &b : blocks)
      for (size_t i = 0; i < per_block(128); ++i) b.push_back(vam_malloc(128));
    std::set<uintptr_t> starts;
    for (auto &b : blocks) {
      const uintptr_t start = reinterpret_cast<uintptr_t>(b[0]) & ~(block_bytes - 1);
      for (void *p : b) ASSERT_EQ(reinterpret_cast<uintptr_t>(p) & ~(block_bytes - 1), start);
      starts.insert(start);
    }
    ASSERT_EQ(starts.size(), size_t{kBlocks});
    uintptr_t prev = 0;
    for (uintptr_t start : starts) {
      runs += (start != prev + block_bytes);
      prev = start;
    }
    before = stats();
    for (int k = 0; k < kBlocks; ++k)
      for (void *p : blocks[(k * 37) % kBlocks]) vam_free(p);  // 37 is prime to 64
    vam_collect();
    after = stats();
    vam_free(vam_malloc(128));
  });
  t.join();
  EXPECT_EQ(after.pages_discarded - before.pages_discarded, 63 * block_pages);  // one block stays: the class's last
  // The block that stays may split one run in two; one call per block would
  // be 63.
  EXPECT_LE(after.discard_calls - before.discard_calls, runs + 1);
  EXPECT_LT(runs, 16u);  // else the test proves little: most blocks should be neighbours
}

TEST(VamDiscard, DiscardedBlocksAreReusedAndReadBackCleanData) {
  std::vector<void *> v;
  for (int i = 0; i < 5000; ++i) {
    v.push_back(vam_malloc(48));
    fill(v.back(), 48, 5);
  }
  for (void *p : v) vam_free(p);
  vam_collect();
  v.clear();
  for (int i = 0; i < 5000; ++i) {
    v.push_back(vam_malloc(48));
    fill(v.back(), 48, 6);
  }
  for (void *p : v) {
    EXPECT_TRUE(check(p, 48, 6));
    vam_free(p);
  }
}

// Where a full block that regains space goes, in either order. Full blocks
// A, B and C; frees into A, B, A again and C, each followed into its block.
// recent (paper §3.5): each regained block becomes the front in turn, so C's
// object comes back first, then B's, then A's, the last freed first. fifo:
// they join the back in the order they regained space, behind whatever the
// class had available; A's two frees went onto its list, so A hands out
// a[12] then a[9], then B and C follow.
// n blocks' worth of 1024-byte objects into `all`; the blocks these mallocs
// filled whole, each sorted by address, but the one the last malloc came
// from (the class's front).
std::vector<std::vector<char *>> fill_blocks_of_1024(size_t n, std::vector<char *> &all) {
  std::map<uintptr_t, std::vector<char *>> blocks;
  for (size_t i = 0; i < n * TwoBlocks::kPer; ++i) {
    all.push_back(static_cast<char *>(vam_malloc(1024)));
    blocks[TwoBlocks::block(all.back())].push_back(all.back());
  }
  std::vector<std::vector<char *>> full;
  for (auto &kv : blocks)
    if (kv.second.size() == TwoBlocks::kPer && kv.first != TwoBlocks::block(all.back())) {
      std::sort(kv.second.begin(), kv.second.end());
      full.push_back(kv.second);
    }
  return full;
}

TEST(VamReap, ARegainedBlockGoesWhereTheOrderSays) {
  using namespace alloclab::vam;
  constexpr size_t kPer = TwoBlocks::kPer;
  std::vector<char *> all;
  const auto full = fill_blocks_of_1024(6, all);
  ASSERT_GE(full.size(), 3u);
  char *a9 = full[0][9], *a12 = full[0][12], *b3 = full[1][3], *c0 = full[2][0];
  Segment *s = segment_of(a9);
  Block *ba = block_of(s, a9), *bb = block_of(s, b3), *bc = block_of(s, c0);
  for (char *p : {a9, b3, a12, c0}) {
    free_to_block(p);
    all.erase(std::find(all.begin(), all.end(), p));
  }
  Heap *h = s->owner;
  const unsigned cls = ba->cls;
  std::vector<char *> got;
  for (size_t i = 0; i < 2 * kPer + 4; ++i) got.push_back(static_cast<char *>(vam_malloc(1024)));
  if (order_recent()) {
    EXPECT_EQ(std::vector<char *>(got.begin(), got.begin() + 4), (std::vector<char *>{c0, b3, a12, a9}));
  } else {
    const auto at = std::find(got.begin(), got.end(), a12);
    ASSERT_LE(at + 4, got.end()) << "a12 not among the first " << got.size() << " objects";
    EXPECT_EQ(std::vector<char *>(at, at + 4), (std::vector<char *>{a12, a9, b3, c0}));
    (void)bb;
    (void)bc;
  }
  EXPECT_NE(class_front(h, cls), nullptr);
  for (char *p : all) vam_free(p);
  for (char *p : got) vam_free(p);
}

// While a regained block waits at the back (VAM_ORDER=fifo), its frees go on
// its list and a double free of one of them is caught there, as at the
// front; the wait list stays linked both ways, tail included.
TEST(VamReap, ABlockWaitingAtTheBackKeepsItsChecks) {
  using namespace alloclab::vam;
  if (order_recent()) GTEST_SKIP() << "VAM_ORDER=recent: no block waits at the back";
  constexpr size_t kPer = TwoBlocks::kPer;
  std::vector<char *> all;
  const auto blocks = fill_blocks_of_1024(4, all);
  ASSERT_FALSE(blocks.empty());
  const std::vector<char *> &full = blocks.back();
  char *p = full[kPer / 2], *q = full[kPer / 2 + 1];
  Segment *s = segment_of(p);
  Block *b = block_of(s, p);
  ASSERT_EQ(b->state, BlockState::full);
  free_to_block(p);
  free_to_block(q);
  EXPECT_EQ(b->state, BlockState::front);
  EXPECT_NE(class_front(s->owner, b->cls), b);
  EXPECT_EQ(s->owner->wait_tail[b->cls], b);
  EXPECT_EQ(b->next, nullptr);
  EXPECT_DEATH(vam_free(p), "double free");
  for (char *x : all)
    if (x != p && x != q) vam_free(x);
}

// VAM_LARGE_QUICK=on (the default) holds freed large chunks whole on quick
// lists until the next full sweep, which vam_collect makes, or a request
// that would put pages into use (LargeHeap::find_or_grow); =off coalesces
// at each free (ctest runs the VamLarge tests both ways).
bool large_quick_on() {
  const char *v = getenv("VAM_LARGE_QUICK");
  return v == nullptr || (strcmp(v, "off") != 0 && strcmp(v, "0") != 0);
}
void sweep_if_quick() {
  if (large_quick_on()) vam_collect();
}

// Three adjacent 20000-byte objects, then a guard after them; the three
// freed, the middle one first. *a: the first of the three.
void free_three_adjacent(char **a, char **guard) {
  *a = static_cast<char *>(vam_malloc(20000));
  char *b = static_cast<char *>(vam_malloc(20000));
  char *c = static_cast<char *>(vam_malloc(20000));
  *guard = static_cast<char *>(vam_malloc(20000));
  ASSERT_EQ(b - *a, 20016);
  ASSERT_EQ(c - b, 20016);
  vam_free(b);
  vam_free(*a);
  vam_free(c);
}

TEST(VamLarge, FreedNeighboursCoalesceSoABiggerObjectFitsInTheirPlace) {
  // Three adjacent large objects; free all three; an object as big as all
  // three together fits at the first one's address (coalescing: at once,
  // or at the sweep with the quick lists on).
  sweep_if_quick();  // no chunk a test before left on a quick list
  char *a, *guard;
  ASSERT_NO_FATAL_FAILURE(free_three_adjacent(&a, &guard));
  sweep_if_quick();
  char *big = static_cast<char *>(vam_malloc(60000));
  EXPECT_EQ(big, a);
  vam_free(big);
  vam_free(guard);
}

TEST(VamLarge, ChunksOnTheQuickListsNeverMakeTheHeapGrow) {
  if (!large_quick_on()) GTEST_SKIP() << "VAM_LARGE_QUICK=off: every free coalesces at once";
  // Three adjacent objects freed onto the quick lists, held there whole; an
  // object as big as the three together takes no page the heap has not used
  // (their place, or a hole a test before left): the lists go through the
  // coalescing free before the heap touches new pages.
  sweep_if_quick();
  std::vector<void *> live;
  for (int i = 0; i < 64; ++i) live.push_back(vam_malloc(20000));  // the lists hold up to a sixteenth of these
  char *a, *guard;
  ASSERT_NO_FATAL_FAILURE(free_three_adjacent(&a, &guard));
  const std::size_t before = stats().pages_in_use;
  char *big = static_cast<char *>(vam_malloc(60000));
  EXPECT_LE(stats().pages_in_use, before) << "the heap grew around the chunks on its quick lists";
  vam_free(big);
  vam_free(guard);
  for (void *p : live) vam_free(p);
  vam_collect();
}

TEST(VamLarge, BestFitPrefersTheSmallestHoleThatFits) {
  sweep_if_quick();
  std::vector<char *> v;
  for (size_t n : {50000, 20000, 30000, 20000, 40000, 20000}) v.push_back(static_cast<char *>(vam_malloc(n)));
  vam_free(v[0]);  // 50000-byte hole
  vam_free(v[2]);  // 30000-byte hole
  vam_free(v[4]);  // 40000-byte hole
  sweep_if_quick();
  char *p = static_cast<char *>(vam_malloc(35000));
  EXPECT_EQ(p, v[4]);
  vam_free(p);
  for (int i : {1, 3, 5}) vam_free(v[i]);
}

TEST(VamLarge, AFreedChunkIsHandedOutWholeForTheNextRequestItsSizeServes) {
  if (!large_quick_on()) GTEST_SKIP() << "VAM_LARGE_QUICK=off: every free coalesces";
  // The lists hold at most a sixteenth of the heap's live large bytes.
  std::vector<void *> live;
  for (int i = 0; i < 64; ++i) live.push_back(vam_malloc(12000));
  char *a = static_cast<char *>(vam_malloc(12000));
  char *guard = static_cast<char *>(vam_malloc(12000));
  const vam_stats_t before = stats();
  vam_free(a);
  EXPECT_EQ(stats().large_live_bytes + vam_usable_size(guard), before.large_live_bytes);
  char *b = static_cast<char *>(vam_malloc(11600));  // the same list: a, as it was
  EXPECT_EQ(b, a);
  EXPECT_GE(vam_usable_size(b), 12000u);
  vam_free(b);
  char *c = static_cast<char *>(vam_malloc(14000));  // more than a holds: not a
  EXPECT_NE(c, a);
  vam_free(c);
  vam_free(guard);
  for (void *p : live) vam_free(p);
  vam_collect();
}

TEST(VamLarge, RemoteFreesWaitOnlyWhileTheQuickListsServe) {
  if (!large_quick_on()) GTEST_SKIP() << "VAM_LARGE_QUICK=off: every large malloc applies the remote frees";
  // A large malloc served from a quick list leaves the heap's remote frees
  // alone (it reads only the lists' lines); the first the lists cannot serve
  // applies them, and their chunks are handed out again.
  sweep_if_quick();
  std::vector<void *> live;
  for (int i = 0; i < 64; ++i) live.push_back(vam_malloc(12000));  // room on the quick lists
  std::vector<char *> sent;
  for (int i = 0; i < 16; ++i) sent.push_back(static_cast<char *>(vam_malloc(10000)));  // large in every geometry
  std::thread([&] {
    for (char *p : sent) vam_free(p);  // remote frees into this thread's heap
  }).join();
  void *q = vam_malloc(20000);
  vam_free(q);  // onto its quick list
  for (int i = 0; i < 100; ++i) {
    void *r = vam_malloc(20000);
    ASSERT_EQ(r, q);  // the quick list serves it
    vam_free(r);
  }
  char *n = static_cast<char *>(vam_malloc(10000));  // no such chunk on a list: the remote frees apply
  EXPECT_NE(std::find(sent.begin(), sent.end(), n), sent.end());
  vam_free(n);
  for (void *p : live) vam_free(p);
  vam_collect();
}

TEST(VamLarge, DoubleFreeOfAChunkOnAQuickListAborts) {
  if (!large_quick_on()) GTEST_SKIP() << "VAM_LARGE_QUICK=off: DoubleFreeOfALargeObject* cover it";
  EXPECT_DEATH(
      {
        for (int i = 0; i < 64; ++i) vam_malloc(12000);  // live large bytes, so that the lists take a
        char *a = static_cast<char *>(vam_malloc(12000));
        char *guard = static_cast<char *>(vam_malloc(12000));
        vam_free(a);  // onto a quick list, still in use to its neighbours
        vam_free(a);
        vam_free(guard);
      },
      "vam: free\\(\\): double free detected \\(large object\\)");
}

TEST(VamStats, LiveBytesAndFragmentationFollowAllocations) {
  const vam_stats_t a = stats();
  void *p = vam_malloc(size_t{8} << 20);
  const vam_stats_t b = stats();
  EXPECT_GE(b.live_bytes, a.live_bytes + (size_t{8} << 20));
  EXPECT_GE(b.huge_live_bytes, size_t{8} << 20);
  EXPECT_GT(b.fragmentation, 0.0);
  vam_free(p);
  EXPECT_EQ(stats().huge_live_bytes, a.huge_live_bytes);
}

TEST(VamLarge, ReallocGrowsIntoAFreeNeighbourInPlace) {
  sweep_if_quick();
  // Sizes above VAM_PAGE_MAX's largest, 8 KiB: large objects whatever it is.
  char *a = static_cast<char *>(vam_malloc(10000));
  char *b = static_cast<char *>(vam_malloc(10000));
  char *guard = static_cast<char *>(vam_malloc(10000));
  fill(a, 10000, 4);
  vam_free(b);
  sweep_if_quick();
  char *grown = static_cast<char *>(vam_realloc(a, 18000));
  EXPECT_EQ(grown, a);
  EXPECT_GE(vam_usable_size(grown), 18000u);
  EXPECT_TRUE(check(grown, 10000, 4));
  // Shrinking to well under half gives the tail back, in place (a size the
  // page classes would take moves there instead: VamPageClasses).
  char *shrunk = static_cast<char *>(vam_realloc(grown, 8500));
  EXPECT_EQ(shrunk, a);
  EXPECT_LT(vam_usable_size(shrunk), 12000u);
  EXPECT_TRUE(check(shrunk, 8500, 4));
  vam_free(shrunk);
  vam_free(guard);
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

TEST(VamStats, PrintStatsWritesAReport) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  vam_print_stats(fds[1]);
  close(fds[1]);
  char buf[256] = {};
  ASSERT_GT(read(fds[0], buf, sizeof buf - 1), 0);
  close(fds[0]);
  EXPECT_NE(strstr(buf, "live bytes"), nullptr);
}

// ---- threads --------------------------------------------------------------

TEST(VamThreads, ObjectsFreedByAnotherThreadAreReusedByTheOwner) {
  // Everything this test needs is allocated up front: in the release build
  // the C++ containers allocate through libvam too.
  std::vector<void *> v;
  std::vector<void *> w;
  v.reserve(1000);
  w.reserve(3000);
  for (int i = 0; i < 1000; ++i) v.push_back(vam_malloc(64));
  std::vector<void *> old(v);
  std::sort(old.begin(), old.end());
  std::thread t([&] {
    for (void *p : v) vam_free(p);
  });
  t.join();
  // The owner drains its remote list in its slow path and reuses them.
  int reused = 0;
  for (int i = 0; i < 3000; ++i) {
    w.push_back(vam_malloc(64));
    reused += std::binary_search(old.begin(), old.end(), w.back());
  }
  EXPECT_GT(reused, 900);
  for (void *p : w) vam_free(p);
}

// A thread's heap pointer starts at a shared empty heap (api.hpp) whose
// class fronts are all null, so malloc's inline path tests no pointer: the
// first malloc of every kind misses and gets the thread a real heap, and a
// thread that only frees (remotely) or collects never gets one, nor puts
// anything into the empty heap.
TEST(VamThreads, AThreadsFirstMallocOfEveryKindGetsItAHeap) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{8}, size_t{9}, size_t{100}, alloclab::vam::kSmallMax,
                   alloclab::vam::kSmallMax + 1, size_t{3000}, size_t{70000}, size_t{2} << 20}) {
    bool ok = false;
    std::thread([&] {
      char *p = static_cast<char *>(vam_malloc(n));  // the thread's first call
      if (!p || vam_usable_size(p) < n) return;
      fill(p, n, 5);
      char *q = static_cast<char *>(vam_malloc(n));  // its heap serves the next one
      ok = q != nullptr && q != p && check(p, n, 5);
      vam_free(q);
      vam_free(p);
    }).join();
    EXPECT_TRUE(ok) << n;
  }
  int err = 0;
  std::thread([&] {
    void *p = vam_malloc(SIZE_MAX - 4096);  // the thread's first call, impossible
    err = p == nullptr ? errno : -1;
  }).join();
  EXPECT_EQ(err, ENOMEM);
}

TEST(VamThreads, AThreadThatOnlyFreesAndCollectsGetsNoHeap) {
  std::vector<void *> v;
  for (int i = 0; i < 100; ++i) v.push_back(vam_malloc(48));
  // Set up before the frees: this binary's operator new is vam's, and a
  // std::set's nodes (48-byte objects) would take some of them first.
  std::vector<void *> freed(v.begin(), v.end());
  std::sort(freed.begin(), freed.end());
  std::vector<void *> w;
  w.reserve(400);
  size_t live_before = 0, live_after = 0;
  std::thread([&] {
    const vam_stats_t b = stats();
    vam_collect();  // no heap to collect
    for (void *p : v) vam_free(p);  // remote frees: no segment is the empty heap's
    vam_collect();
    const vam_stats_t a = stats();
    live_before = b.heaps - b.abandoned_heaps;
    live_after = a.heaps - a.abandoned_heaps;
  }).join();
  EXPECT_EQ(live_after, live_before);
  // The frees went to main's heap: its slow path drains them and reuses them.
  int reused = 0;
  for (int i = 0; i < 400; ++i) {
    w.push_back(vam_malloc(48));
    reused += std::binary_search(freed.begin(), freed.end(), w.back());
  }
  EXPECT_GT(reused, 90);
  for (void *p : w) vam_free(p);
}

TEST(VamThreads, HeapOfAnExitedThreadIsAdoptedNotLeaked) {
  std::thread([] {
    void *p = vam_malloc(100);
    vam_free(p);
  }).join();
  const size_t heaps = stats().heaps;
  for (int i = 0; i < 5; ++i) {
    std::thread([] {
      std::vector<void *> v;
      for (int k = 0; k < 100; ++k) v.push_back(vam_malloc(32 + k));
      for (void *p : v) vam_free(p);
    }).join();
  }
  EXPECT_EQ(stats().heaps, heaps);  // one after another: the same heap every time
}

// A TLS destructor of a key created after vam's runs after vam's own
// destructor has abandoned the thread's heap; one that frees and mallocs
// again (and re-arms itself, as caches of per-thread buffers do) must not
// keep a heap alive after the thread is gone: 2000 such threads left 2001.
pthread_key_t g_rearming_key;
std::atomic<int> g_destructor_runs{0};
void rearming_destructor(void *v) {
  g_destructor_runs.fetch_add(1);
  vam_free(v);
  void *q = vam_malloc(100);
  pthread_setspecific(g_rearming_key, q);  // glibc runs destructors up to 4 rounds
}
pthread_key_t g_once_key;
void once_destructor(void *v) {
  vam_free(v);
  vam_free(vam_malloc(3000));
  vam_free(vam_malloc(40));
}

TEST(VamThreads, HeapsOfThreadsWhoseTlsDestructorsAllocateAllComeBack) {
  vam_free(vam_malloc(8));  // vam's key exists before ours
  ASSERT_EQ(pthread_key_create(&g_rearming_key, rearming_destructor), 0);
  ASSERT_EQ(pthread_key_create(&g_once_key, once_destructor), 0);
  std::thread([] { vam_free(vam_malloc(8)); }).join();
  const size_t heaps = stats().heaps;
  for (int i = 0; i < 2000; ++i) {
    std::thread([] {
      pthread_setspecific(g_rearming_key, vam_malloc(64));
      pthread_setspecific(g_once_key, vam_malloc(64));
    }).join();
  }
  EXPECT_GE(g_destructor_runs.load(), 2000);
  const vam_stats_t s = stats();
  EXPECT_LE(s.heaps, heaps + 1);  // plus one heap shared by threads on their way out
  EXPECT_LE(s.heaps - s.abandoned_heaps, 2u);  // main's and that one; was 2001
  pthread_key_delete(g_rearming_key);
  pthread_key_delete(g_once_key);
}

// Objects on a heap's remote stack, counted without taking them.
size_t remote_count(alloclab::vam::Heap *h) {
  size_t n = 0;
  for (auto *f = h->remote.load(std::memory_order_acquire); f; f = alloclab::vam::remote_next(f)) ++n;
  return n;
}

// A thread batches its frees into another live thread's heap: one CAS per
// kRemoteBatch objects (heap.hpp, remote_free_batched), not one per object,
// whether it has a heap of its own or only frees (xmalloc's consumers: the
// thread-exit key is then set for the batches alone, and it still gets no
// heap). Nothing is held back for long: a full batch goes at once, and the
// freeing thread's exit sends what is left.
TEST(VamThreads, RemoteFreesGoToTheOwnerInBatchesAndAtTheFreeingThreadsExit) {
  using alloclab::vam::kRemoteBatch;
  for (bool own_heap : {true, false}) {
    SCOPED_TRACE(own_heap ? "freeing thread with a heap" : "freeing thread without a heap");
    std::vector<void *> v, sent;
    v.reserve(200);
    sent.reserve(200);
    for (int i = 0; i < 100; ++i) v.push_back(vam_malloc(48));
    alloclab::vam::Heap *h = alloclab::vam::object_segment(v[0])->owner;
    alloclab::vam::drain_remote(h);  // main's own: only this test's frees count
    size_t before_batch = 1, after_batch = 0, after_more = 0;
    std::int64_t heaps_before = 0, heaps_after = 0;
    std::thread([&] {
      const vam_stats_t b = stats();
      heaps_before = b.heaps - b.abandoned_heaps;
      if (own_heap) vam_free(vam_malloc(16));  // a heap of its own
      for (uint32_t i = 0; i + 1 < kRemoteBatch; ++i) vam_free(v[i]);
      before_batch = remote_count(h);
      vam_free(v[kRemoteBatch - 1]);
      after_batch = remote_count(h);
      for (uint32_t i = kRemoteBatch; i < kRemoteBatch + 5; ++i) vam_free(v[i]);
      after_more = remote_count(h);
      const vam_stats_t a = stats();
      heaps_after = a.heaps - a.abandoned_heaps;
    }).join();
    EXPECT_EQ(before_batch, 0u);
    EXPECT_EQ(after_batch, size_t{kRemoteBatch});
    EXPECT_EQ(after_more, size_t{kRemoteBatch});
    EXPECT_EQ(heaps_after, heaps_before + (own_heap ? 1 : 0));  // live heaps: none for a thread that only frees
    // The rest came with the thread's exit (with std::thread's own state,
    // which main allocated and the thread freed). `sent` was reserved up
    // front: an allocation here could drain the list.
    for (auto *f = h->remote.load(std::memory_order_acquire); f; f = alloclab::vam::remote_next(f))
      sent.push_back(f);
    for (uint32_t i = 0; i < kRemoteBatch + 5; ++i) EXPECT_EQ(std::count(sent.begin(), sent.end(), v[i]), 1) << i;
    // The full batch, 48-byte objects (room for the drain's hint), newest
    // first: each but the last kRemoteAhead points kRemoteAhead further on.
    const auto full = std::find(sent.begin(), sent.end(), v[kRemoteBatch - 1]);
    ASSERT_LE(full + kRemoteBatch, sent.end());
    for (uint32_t i = 0; i < kRemoteBatch; ++i) {
      auto *o = reinterpret_cast<alloclab::vam::RemoteObj *>(full[i]);
      const bool hinted = (o->link & alloclab::vam::kAheadBit) != 0;
      EXPECT_EQ(hinted, i + alloclab::vam::kRemoteAhead < kRemoteBatch) << i;
      if (hinted) {
        EXPECT_EQ(o->ahead, full[i + alloclab::vam::kRemoteAhead]) << i;
      }
    }
    alloclab::vam::drain_remote(h);
    for (size_t i = kRemoteBatch + 5; i < v.size(); ++i) vam_free(v[i]);
  }
}

// Statistics see the calling thread's batched frees (it sends them first).
TEST(VamThreads, StatisticsSendTheCallersBatchedRemoteFreesFirst) {
  void *p = vam_malloc(48);
  alloclab::vam::Heap *h = alloclab::vam::object_segment(p)->owner;
  alloclab::vam::drain_remote(h);
  size_t queued = 1, sent = 0;
  std::thread([&] {
    vam_free(vam_malloc(16));
    vam_free(p);
    queued = remote_count(h);
    vam_stats_t s;
    vam_stats(&s);
    sent = remote_count(h);
  }).join();
  EXPECT_EQ(queued, 0u);
  EXPECT_EQ(sent, 1u);
  alloclab::vam::drain_remote(h);
}

// A double free into one batch would otherwise cut the objects behind it
// off the owner's list (a silent leak): sending the batch walks it first.
TEST(VamHardening, DoubleFreeIntoAnotherLiveThreadsHeapAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *p = vam_malloc(64);
        void *q = vam_malloc(64);
        std::thread([&] {
          vam_free(vam_malloc(16));
          vam_free(p);
          vam_free(q);
          vam_free(p);
        }).join();  // its exit sends the batch
      },
      "vam: free\\(\\): double free detected");
}

TEST(VamThreads, FreesIntoAnExitedThreadsHeapAreReclaimed) {
  std::vector<void *> v;
  v.reserve(2000);
  std::thread([&] {
    for (int i = 0; i < 2000; ++i) v.push_back(vam_malloc(i % 2 ? 3000 : 100));
  }).join();
  const vam_stats_t before = stats();
  for (void *p : v) vam_free(p);  // remote frees into an abandoned heap
  const vam_stats_t after = stats();  // statistics apply them first
  EXPECT_LE(after.live_bytes + 1000 * 3000 + 1000 * 100, before.live_bytes + 4096);
}

// ---- memory goes back to the system ----------------------------------------

// Resident and mapped sizes of this process, in bytes (/proc/self/statm).
size_t statm_field(int i) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long v[2] = {0, 0};
  const int n = fscanf(f, "%lu %lu", &v[0], &v[1]);
  fclose(f);
  return n == 2 ? v[i] * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}
size_t rss_bytes() { return statm_field(1); }
size_t mapped_bytes() { return statm_field(0); }

TEST(VamMemoryBack, CrossThreadFreesIntoExitedThreadsComeBackWithoutAnyCall) {
  // Threads allocate and exit; main frees everything and calls nothing else
  // of vam's. Their heaps are abandoned: the frees must be applied and the
  // pages given back without another thread's slow path or vam_stats.
  constexpr int kThreads = 4;
  constexpr size_t kPerThread = size_t{40} << 20;
  constexpr size_t kSize = 200;
  std::vector<std::vector<void *>> objs(kThreads);
  for (auto &v : objs) v.reserve(kPerThread / kSize);
  const size_t rss0 = rss_bytes();
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (size_t i = 0; i < kPerThread / kSize; ++i) {
        void *p = vam_malloc(kSize);
        memset(p, 1, kSize);
        objs[t].push_back(p);
      }
    });
  for (auto &t : ts) t.join();
  const size_t rss1 = rss_bytes();
  ASSERT_GT(rss1, rss0 + kThreads * kPerThread * 3 / 4);
  for (auto &v : objs)
    for (void *p : v) vam_free(p);
  const size_t rss2 = rss_bytes();
  printf("rss: before %zu MB, allocated %zu MB, after main freed %zu MB\n", rss0 >> 20, rss1 >> 20,
         rss2 >> 20);
#if !defined(__SANITIZE_THREAD__)  // TSan's shadow of those writes stays resident
  EXPECT_LT(rss2, rss0 + (size_t{24} << 20));  // was all 160 MB until a vam_stats() call
#endif
  const vam_stats_t s = stats();
  EXPECT_LT(s.small_live_bytes, size_t{1} << 20);
}

TEST(VamMemoryBack, SixteenExitedThreadsMemoryComesBackWithinTheDelay) {
  // Issue 15 §3, smaller: 16 threads allocate 8 MiB each of 200-byte objects
  // and exit; main frees everything, then only works in its own heap. The
  // frees left unapplied (under a batch) and the empty pages the orphaned
  // heaps keep must go back within VAM_DISCARD_DELAY_MS (100 ms) without
  // another thread, a vam_stats() or a vam_collect() call: main's own slow
  // paths see to it. They used to stay until the next orphan free, forever
  // in a program that makes none (up to 16 MiB of kept pages).
  constexpr int kThreads = 16;
  constexpr size_t kPerThread = size_t{8} << 20;
  constexpr size_t kSize = 200;
  constexpr size_t kCount = kPerThread / kSize;
  // The pointers, outside any allocator, unmapped before RSS is read again.
  const size_t table = kThreads * kCount * sizeof(void *);
  auto **ptrs = static_cast<void **>(mmap(nullptr, table, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(ptrs, MAP_FAILED);
  vam_free(vam_malloc(64));  // main's heap exists before the baseline
  const size_t rss0 = rss_bytes();
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([=] {
      for (size_t i = 0; i < kCount; ++i) {
        void *p = vam_malloc(kSize);
        memset(p, 1, kSize);
        ptrs[t * kCount + i] = p;
      }
    });
  for (auto &t : ts) t.join();
  const size_t rss1 = rss_bytes();
  ASSERT_GT(rss1, rss0 + kThreads * kPerThread * 3 / 4);
  for (size_t i = 0; i < kThreads * kCount; ++i) vam_free(ptrs[i]);
  munmap(ptrs, table);
  const size_t rss2 = rss_bytes();
  // Past the delay, main's own work: 1 MiB of small objects, twice.
  for (int round = 0; round < 2; ++round) {
    usleep(150 * 1000);
    std::vector<void *> mine;
    for (int i = 0; i < 8192; ++i) {
      mine.push_back(vam_malloc(64 + i % 193));
      memset(mine.back(), 2, 64);
    }
    for (void *p : mine) vam_free(p);
  }
  const size_t rss3 = rss_bytes();
  printf("rss: before %zu MB, allocated %zu MB, after main freed %zu MB, after the delay and main's work %zu MB\n",
         rss0 >> 20, rss1 >> 20, rss2 >> 20, rss3 >> 20);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)  // their shadow memory stays resident
  EXPECT_LT(rss2, rss0 + (size_t{24} << 20));  // 128 MB allocated
  EXPECT_LT(rss3, rss0 + (size_t{4} << 20));
#endif
  // Applied without a vam_stats() call: statistics read after the checks.
  EXPECT_LT(stats().small_live_bytes, size_t{1} << 20);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VAM_SANITIZED 1
#endif

// Address-space limits (ulimit -v) in a fresh process: the sanitizers
// reserve terabytes up front, so these run only in plain builds.
[[noreturn]] void big_object_after_small_ones_under_ulimit() {
  // ulimit -v 600000, as glibc and mimalloc pass it.
  const rlimit lim{600000ul * 1024, 600000ul * 1024};
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
  // 300 MB of 64-byte objects, linked through themselves.
  void *head = nullptr;
  for (size_t i = 0; i < (size_t{300} << 20) / 64; ++i) {
    void **p = static_cast<void **>(vam_malloc(64));
    if (!p) _exit(4);
    *p = head;
    head = p;
  }
  while (head) {
    void *next = *static_cast<void **>(head);
    vam_free(head);
    head = next;
  }
  void *big = vam_malloc(size_t{300} << 20);
  if (!big) _exit(5);
  memset(big, 1, size_t{300} << 20);
  vam_free(big);
  _exit(0);
}

TEST(VamMemoryBack, EmptySegmentsAreUnmappedSoABigObjectFitsUnderUlimitV) {
#ifdef VAM_SANITIZED
  GTEST_SKIP() << "RLIMIT_AS cannot be used under a sanitizer";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(big_object_after_small_ones_under_ulimit(), ::testing::ExitedWithCode(0), "");
}

[[noreturn]] void new_segment_under_tight_ulimit() {
  vam_free(vam_malloc(64));  // vam is up: options, a heap, a segment
  // Room for one more 4 MiB segment (and a little), not for 8 MiB.
  const size_t limit = mapped_bytes() + (size_t{6} << 20);
  const rlimit lim{limit, limit};
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
  // 64-byte objects until they need a new segment.
  const size_t segs = stats().segments;
  for (int i = 0; stats().segments == segs; ++i)
    for (int k = 0; k < 1000; ++k)
      if (!vam_malloc(64)) _exit(4);
  _exit(0);
}

TEST(VamMemoryBack, ANewSegmentNeedsNoTwiceItsSizeOfAddressSpace) {
#ifdef VAM_SANITIZED
  GTEST_SKIP() << "RLIMIT_AS cannot be used under a sanitizer";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(new_segment_under_tight_ulimit(), ::testing::ExitedWithCode(0), "");
}

// An object of the threads test below: its size at the front, a byte made
// from the size at the end. Whoever frees it reads both back first.
void *make_sized(size_t n) {
  auto *p = static_cast<unsigned char *>(vam_malloc(n));
  if (!p) return nullptr;
  memcpy(p, &n, sizeof n);
  p[n - 1] = static_cast<unsigned char>(n * 31 + 7);
  return p;
}
bool intact(const void *v) {
  const auto *p = static_cast<const unsigned char *>(v);
  size_t n;
  memcpy(&n, p, sizeof n);
  return n > sizeof n && n <= 200100 && vam_usable_size(v) >= n &&
         p[n - 1] == static_cast<unsigned char>(n * 31 + 7);
}

TEST(VamThreads, ManyThreadsAllocateAndFreeEachOthersObjects) {
  constexpr int kThreads = 4;
  constexpr int kPer = 20000;
  std::vector<std::atomic<void *>> slots(kThreads * 64);
  for (auto &s : slots) s.store(nullptr);
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      uint64_t x = 0x9E3779B97F4A7C15ull * (t + 1);
      for (int i = 0; i < kPer; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t n = 16 + x % (x % 16 == 0 ? 200000 : 2000);  // room for the size and the end byte
        void *p = make_sized(n);
        ASSERT_NE(p, nullptr);
        void *old = slots[x % slots.size()].exchange(p);
        if (old) {
          if (!intact(old)) bad.fetch_add(1);  // overwritten while it was live
          vam_free(old);
        }
      }
    });
  }
  for (auto &t : ts) t.join();
  for (auto &s : slots) {
    void *p = s.load();
    if (p && !intact(p)) bad.fetch_add(1);
    vam_free(p);
  }
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
