// small_free_test.cpp — the free of a small object into its own heap
// (small_free.hpp/.cpp): double frees and interior pointers into front, waiting
// and full blocks, for every class; a free into a waiting block leaves the
// object untouched.
#include <stdint.h>
#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

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

// The offsets into an object of `size` bytes that no slot starts at: 8 bytes
// in and 8 bytes before its end, or halfway into an 8-byte object.
std::vector<std::size_t> interior_offsets(std::size_t size) {
  if (size <= 8) return {size / 2};
  if (size == 16) return {8};
  return {8, size - 8};
}

// free's fast path (a front block that keeps live objects) checks that p
// starts a slot from the same product that gives the slot (small_free.hpp,
// small_free_local), not by multiplying back: an interior pointer of every
// class in the geometry in force, freed while other objects of its block
// live, still aborts.
// The test binary's own allocations (the test framework's, through vam's
// malloc) may have left the class's front block nearly full: q is taken
// again until it and two more leave its block the front.
void free_interior_into_front(unsigned cls, std::size_t back) {
  using namespace alloclab::vam;
  const std::size_t size = layout_usable(cls);
  char *q = nullptr;
  for (int tries = 0; tries < 4 && q == nullptr; ++tries) {
    q = static_cast<char *>(vam_malloc(size));
    vam_malloc(size);
    vam_malloc(size);
    if (block_of(segment_of(q), q)->state != BlockState::front) q = nullptr;
  }
  if (q == nullptr) abort();  // not the path under test
  vam_free(q + back);
}

TEST(VamHardening, FreeOfAnInteriorPointerIntoAFrontBlockAbortsForEveryClass) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (unsigned c = 0; c < alloclab::vam::g_layout.classes; ++c)
    for (std::size_t back : interior_offsets(alloclab::vam::layout_usable(c)))
      EXPECT_DEATH(free_interior_into_front(c, back), "vam: free\\(\\): invalid pointer")
          << "class " << c << " size " << alloclab::vam::layout_usable(c) << " offset " << back;
}

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
  const auto got = t.next4();  // B's freed slot, then A's pending slots (its list among them) in address order
  EXPECT_EQ(got, (std::vector<char *>{t.b[3], t.a[1], t.a[5], t.a[9]}));
  t.release(got);  // a[12] stays free (pending)
}


// free's fast path takes the slot from one product (small_free.hpp,
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
// is finished by the first tests in small_free_other and small_free_general
// (small_free.cpp), which check the slot start as free's fast path does: an
// interior pointer into a waiting or a full block still aborts, for every
// class in the geometry in force.
void free_interior_into_block(unsigned cls, std::size_t back, bool waiting) {
  using namespace alloclab::vam;
  ClassBlocks t(cls);
  if (t.n < 3) abort();  // not the check under test: the message differs
  if (waiting) t.regain_all();
  if (t.record(0)->state != (waiting ? BlockState::waiting : BlockState::full)) abort();
  vam_free(t.full[0][1] + back);
}

TEST(VamHardening, FreeOfAnInteriorPointerIntoAWaitingBlockAbortsForEveryClass) {
  SKIP_UNLESS_RECENT_ORDER();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (unsigned c = 0; c < alloclab::vam::g_layout.classes; ++c)
    for (std::size_t back : interior_offsets(alloclab::vam::layout_usable(c)))
      EXPECT_DEATH(free_interior_into_block(c, back, true), "vam: free\\(\\): invalid pointer")
          << "class " << c << " size " << alloclab::vam::layout_usable(c) << " offset " << back;
}

TEST(VamHardening, FreeOfAnInteriorPointerIntoAFullBlockAbortsForEveryClass) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (unsigned c = 0; c < alloclab::vam::g_layout.classes; ++c)
    for (std::size_t back : interior_offsets(alloclab::vam::layout_usable(c)))
      EXPECT_DEATH(free_interior_into_block(c, back, false), "vam: free\\(\\): invalid pointer")
          << "class " << c << " size " << alloclab::vam::layout_usable(c) << " offset " << back;
}

}  // namespace
