// hot_list_test.cpp — the hot lists (hot_list.hpp/.cpp): frees into full blocks
// handed out first, per class, last in first out; regains, returns and double
// frees.
#include <stdint.h>

#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"
#include "vam/hot_list.hpp"

namespace {

using namespace vam_test;

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
    vam_free(f.blocks[i][i % TwoBlocks::kPer]);
    EXPECT_EQ(hot_length(class_hot_list(h, cls)), i + 1);
    EXPECT_EQ(class_hot(h, cls), f.blocks[i][i % TwoBlocks::kPer]);
  }
  for (unsigned i = 0; i < kHotMax; ++i) {
    EXPECT_EQ(f.record(i)->state, BlockState::full);
    EXPECT_EQ(f.record(i)->used, TwoBlocks::kPer);
  }
  EXPECT_EQ(stats().class_live[cls] + kHotMax, before.class_live[cls]);
  // An object taken from a list of two or more held the list's link in its
  // first word; the word is zeroed as it is handed out, so that its next
  // free, if the program leaves the word alone, does not read as a free of
  // a listed object (hot_link_like) and walk the list. The last, a list of
  // one, holds the end mark.
  for (unsigned i = kHotMax; i-- > 0;) {
    char *p = static_cast<char *>(vam_malloc(1024));
    EXPECT_EQ(p, f.blocks[i][i % TwoBlocks::kPer]);
    std::uintptr_t first;
    std::memcpy(&first, p, sizeof first);
    if (i > 0) {
      EXPECT_EQ(first, 0u) << "taken from a list of " << i + 1;
    }
  }
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
  Block *x = f.record(2);  // its object is third from the bottom
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
// in the middle, of its last (the first pushed), on a list of `len`.
void double_free_on_the_hot_list(unsigned len, unsigned which) {
  FullBlocks f(len);
  if (f.blocks.size() < len) abort();  // not the check under test: the message differs
  for (unsigned k = 0; k < len; ++k) vam_free(f.blocks[k][1]);
  vam_free(f.blocks[which][1]);
}
TEST(VamHot, DoubleFreeOfAnyObjectOnTheHotListAborts) {
  using alloclab::vam::kHotMax;
  static_assert(kHotMax >= 5);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(double_free_on_the_hot_list(4, 3), "vam: free\\(\\): double free detected");
  EXPECT_DEATH(double_free_on_the_hot_list(4, 1), "vam: free\\(\\): double free detected");
  EXPECT_DEATH(double_free_on_the_hot_list(4, 0), "vam: free\\(\\): double free detected");
  // A full list: the walk reaches its first object, kHotMax - 1 links down.
  EXPECT_DEATH(double_free_on_the_hot_list(kHotMax, kHotMax / 2), "vam: free\\(\\): double free detected");
  EXPECT_DEATH(double_free_on_the_hot_list(kHotMax, 0), "vam: free\\(\\): double free detected");
}

// An object whose first word the program left reading as a link (a word
// hot_link_like accepts, pointing at an object on no list) is not on the
// list: its free walks the list, finds it absent and pushes it, at every
// length from one up, and the mallocs after hand each object out once, last
// in first out.
TEST(VamHot, AWordThatReadsAsALinkByChanceIsPushed) {
  using namespace alloclab::vam;
  constexpr unsigned kLen = 5;
  FullBlocks f(kLen + 1);
  ASSERT_EQ(f.blocks.size(), kLen + 1);
  Heap *h = segment_of(f.blocks[0][0])->owner;
  const unsigned cls = f.record(0)->cls;
  // A link to an object of the last block, which stays full and listless.
  const std::uintptr_t like = hot_encode(reinterpret_cast<std::uintptr_t>(f.blocks[kLen][5]));
  ASSERT_TRUE(hot_link_like(like));
  std::vector<char *> freed;
  for (unsigned i = 0; i < kLen; ++i) {
    char *p = f.blocks[i][2];
    std::memcpy(p, &like, sizeof like);
    vam_free(p);
    freed.push_back(p);
    ASSERT_EQ(hot_length(class_hot_list(h, cls)), i + 1);
    EXPECT_EQ(class_hot(h, cls), p);
  }
  for (unsigned i = kLen; i-- > 0;) EXPECT_EQ(vam_malloc(1024), freed[i]);
  EXPECT_EQ(class_hot_list(h, cls), 0u);
  f.release({});
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

// The hot list (hot_list.hpp) works for these classes too: malloc_other
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

}  // namespace
