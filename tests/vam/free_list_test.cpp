// free_list_test.cpp — a block's own objects (free_list.hpp): bump in address
// order, the LIFO list, the count word free writes back, first words cleared on
// malloc.
#include <stdint.h>

#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

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


// The tests before may have left blocks of the class with room: mallocs go
// on until one returns the first object of a block taken fresh (empty, its
// only live object the one just handed out); the next ones follow it in
// address order, one slot apart.
TEST(VamReap, FreshBlockIsFilledByBumpingInAddressOrder) {
  using namespace alloclab::vam;
  std::vector<char *> v;
  Block *fresh = nullptr;
  for (size_t i = 0; i < 64 * per_block(1000) && fresh == nullptr; ++i) {
    v.push_back(static_cast<char *>(vam_malloc(1000)));
    Block *b = block_of(segment_of(v.back()), v.back());
    if (v.back() == b->start && b->used == 1) fresh = b;
  }
  ASSERT_NE(fresh, nullptr);
  const size_t first = v.size() - 1;
  for (int i = 0; i < 7; ++i) v.push_back(static_cast<char *>(vam_malloc(1000)));
  for (size_t i = first + 1; i < v.size(); ++i) EXPECT_EQ(v[i] - v[i - 1], 1008) << i - first;
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

// free's fast path reads `used` and `state` as one word and writes it back
// whole (free_list.hpp, use_state, used_dec): the count falls by one per free and
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

}  // namespace
