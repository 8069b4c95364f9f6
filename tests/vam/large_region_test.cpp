// large_region_test.cpp — large objects (large_region.hpp/.cpp): coalescing,
// best fit, the quick lists, growing in place, and the checks of a large free.
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

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

TEST(VamLarge, AHeapWithFewLargeObjectsStillHoldsOneFreedChunkWhole) {
  if (!large_quick_on()) GTEST_SKIP() << "VAM_LARGE_QUICK=off: every free coalesces";
  // A sixteenth of the live large bytes is less than one chunk when the heap
  // holds few large objects; the lists may still hold up to kQuickFloor
  // (64 KiB). A program that churns one buffer of a few KiB (zlib's inflate
  // state, 7160 bytes, once per stream: git reading its packs) then gets it
  // back whole from its list instead of a coalescing free and a best-fit
  // carve each time.
  sweep_if_quick();
  char *a = static_cast<char *>(vam_malloc(12000));  // large in every geometry
  char *guard = static_cast<char *>(vam_malloc(12000));
  const size_t held = vam_usable_size(a);
  vam_free(a);
  char *b = static_cast<char *>(vam_malloc(11600));  // the same list: a, whole
  EXPECT_EQ(b, a);
  EXPECT_EQ(vam_usable_size(b), held) << "carved anew: the free coalesced instead of holding the chunk";
  vam_free(b);
  vam_free(guard);
  vam_collect();
}

// Two 12000-byte objects and a guard after them, then the first freed, and
// the second too when `held` is 2: a quick list of one chunk or two, the
// second on top.
struct QuickPair {
  char *a, *b;
  void *guard;
};
// The death tests below run their body in a new process ("threadsafe"
// style), which reads the options anew: with the default aging delay, a
// child that the machine's load stalls for 100 ms sweeps at the first free
// (note_dirty), and the chunk it meant to corrupt leaves its quick list,
// coalesced, before the write. Set while the guard lives.
struct NoAgingInChildren {
  NoAgingInChildren() { setenv("VAM_DISCARD_DELAY_MS", "100000000", 1); }
  ~NoAgingInChildren() { unsetenv("VAM_DISCARD_DELAY_MS"); }
};

QuickPair quick_list_of(int held) {
  sweep_if_quick();
  QuickPair q{static_cast<char *>(vam_malloc(12000)), static_cast<char *>(vam_malloc(12000)), vam_malloc(12000)};
  vam_free(q.a);
  if (held == 2) vam_free(q.b);
  return q;
}

TEST(VamLarge, AWriteAfterFreeIntoAQuickListsLinkAbortsAtTheNextMalloc) {
  if (!large_quick_on()) GTEST_SKIP() << "VAM_LARGE_QUICK=off: no quick list holds the chunk";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const NoAgingInChildren no_aging;
  // The payload's first word is the quick list's link: written over, a later
  // malloc must not follow it (a list of one chunk and of two).
  for (int held : {1, 2}) {
    EXPECT_DEATH(
        {
          const QuickPair q = quick_list_of(held);
          (held == 2 ? q.b : q.a)[0] = 0x77;  // the top chunk's link
          for (int i = 0; i < 3; ++i) vam_malloc(12000);
          vam_free(q.guard);
        },
        "vam: malloc\\(\\): corrupted quick list \\(write after free\\?\\)");
  }
}

TEST(VamLarge, AnAlignedObjectsFreeTakesOffWhatItsMallocCounted) {
  // An aligned large object is carved with room for the alignment, then
  // gives its tail back. It was counted live before the tail went, and its
  // free took off only what was left: each one left its tail counted live
  // for good (116 MB after 400,000 aligned mallocs and frees).
  vam_collect();
  vam_stats_t before, after;
  vam_stats(&before);
  for (std::size_t align : {32u, 256u, 4096u})
    for (std::size_t n : {12000u, 50000u, 100000u}) {
      void *p = vam_memalign(align, n);
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u);
      vam_free(p);
    }
  vam_collect();
  vam_stats(&after);
  EXPECT_EQ(after.large_live_bytes, before.large_live_bytes);
  EXPECT_EQ(after.live_objects, before.live_objects);
}

TEST(VamLarge, AWriteAfterFreeIntoAFreeChunksLinksAbortsBeforeTheyAreFollowed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // A freed object too big for the quick lists is a free chunk on the size
  // lists, its links the payload's first two words. Either changed in one
  // byte, the next malloc that takes the chunk off its list, or walks the
  // list past it, must abort rather than follow it (the next link, the
  // previous one; each of three byte values).
  for (int word : {0, 1})
    for (unsigned delta : {0x01u, 0x10u, 0x80u}) {
      EXPECT_DEATH(
          {
            vam_collect();
            void *before = vam_malloc(100000);
            char *a = static_cast<char *>(vam_malloc(100000));
            void *after = vam_malloc(100000);
            vam_free(a);  // its neighbours live: a free chunk of its own
            a[8 * word] ^= static_cast<char>(delta);
            for (int i = 0; i < 3; ++i) vam_malloc(100000);
            vam_free(before);
            vam_free(after);
          },
          "vam: heap corruption: a freed large object's link was overwritten \\(write after free\\?\\)");
    }
}

TEST(VamLarge, AWriteAfterFreeIntoAQuickListsLinkAbortsWhenTheListsAreSwept) {
  if (!large_quick_on()) GTEST_SKIP() << "VAM_LARGE_QUICK=off: no quick list holds the chunk";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const NoAgingInChildren no_aging;
  // A sweep (vam_collect, a thread's exit, a heap over its budget) walks
  // every quick list to free its chunks: a link written over must stop it,
  // at the list's last chunk (its null link) and at the one before.
  for (int held : {1, 2}) {
    EXPECT_DEATH(
        {
          const QuickPair q = quick_list_of(held);
          q.a[1] ^= 0x40;  // the link of the list's last chunk
          vam_collect();
          vam_free(q.guard);
        },
        "vam: corrupted quick list \\(write after free\\?\\)");
  }
}

TEST(VamLarge, APointerBeforeARegionsFirstObjectAbortsForEveryCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // A pointer into a region's header or its first chunk's tag names no
  // object; its own tag would lie in the header or before the region, in
  // memory that may not be mapped. free, realloc and malloc_usable_size
  // of it abort, naming it, rather than read there.
  void *p = vam_malloc(12000);
  char *region = reinterpret_cast<char *>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{(4u << 20) - 1});
  for (std::size_t off : {std::size_t{1}, std::size_t{8}, std::size_t{16}, std::size_t{256}, std::size_t{264}}) {
    char *q = region + off;
    EXPECT_DEATH(vam_free(q), "vam: free\\(\\): invalid pointer \\(not the start of a large object\\)") << off;
    EXPECT_DEATH(vam_realloc(q, 100), "vam: realloc\\(\\): invalid pointer \\(not the start of a large object\\)")
        << off;
    EXPECT_DEATH(vam_usable_size(q),
                 "vam: malloc_usable_size\\(\\): invalid pointer \\(not the start of a large object\\)")
        << off;
  }
  vam_free(p);
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

// A growth into a free neighbour keeps realloc's eighth of slack, as a move
// does (a buffer grown a few bytes at a time is then resized once per
// eighth, not at every 16 bytes: realloc_steps made 218 K resizes in 1.28 M
// reallocs without it, 29 K with it), and no more of the neighbour.
TEST(VamLarge, AGrowthInPlaceKeepsAnEighthOfSlackAndNoMore) {
  sweep_if_quick();
  char *a = static_cast<char *>(vam_malloc(10000));
  char *b = static_cast<char *>(vam_malloc(30000));
  char *guard = static_cast<char *>(vam_malloc(10000));
  fill(a, 10000, 5);
  vam_free(b);
  sweep_if_quick();
  char *grown = static_cast<char *>(vam_realloc(a, 12000));
  ASSERT_EQ(grown, a);
  const size_t u = vam_usable_size(grown);
  EXPECT_GE(u, 12000u + 12000u / 8);
  EXPECT_LT(u, 12000u + 12000u / 8 + 64);
  EXPECT_TRUE(check(grown, 10000, 5));
  char *again = static_cast<char *>(vam_realloc(grown, 13000));  // within the slack
  EXPECT_EQ(again, a);
  EXPECT_EQ(vam_usable_size(again), u);
  vam_free(again);
  vam_free(guard);
}

}  // namespace
