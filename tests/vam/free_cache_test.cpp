// free_cache_test.cpp — free's cache of the segments a thread has verified
// (free_cache.hpp): kept per block size and for a big heap, forgotten when
// unmapped or when the thread exits.
#include <pthread.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

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
// t_free_seg (free_cache.hpp): objects of 8, 64 and 1000 bytes live in blocks of
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
// objects (its pattern before 2026-11-29) spans a dozen or more, and with
// eight slots a fifth of its frees found their segment's slot taken by
// another and went the checked way (segment map, then the header: 10% of
// its time). 1000-byte objects in 32 KiB blocks fill a 4 MiB segment with
// about 4,000; twenty segments' worth, one object of each freed: every
// segment whose slot no other of the twenty shares must be kept, and the
// twenty, mapped next to each other, must take at least sixteen slots
// (eight slots cannot hold them).
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

}  // namespace
