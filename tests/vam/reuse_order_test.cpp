// reuse_order_test.cpp — the order blocks are reused in (reuse_order.cpp,
// block_lists.hpp): the regained block first, the displaced one keeps its LIFO
// frees, pending slots in address order, VAM_ORDER=fifo and auto.
#include <stdint.h>

#include <algorithm>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

TEST(VamReap, NextBlockReusesItsListAndPendingSlotsInAddressOrder) {
  SKIP_UNLESS_RECENT_ORDER();
  TwoBlocks t;
  ASSERT_FALSE(t.a.empty());
  const auto got = t.next4();
  EXPECT_EQ(t.again, t.c[0]);
  // B (second behind the used-up front) first; then A: the slots freed
  // while it waited and its LIFO list (a[9]), which the first of those frees
  // moved into the pending bits (small_free_pend_list), lowest address first.
  EXPECT_EQ(got, (std::vector<char *>{t.b[3], t.a[1], t.a[9], t.a[12]}));
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
  for (int i : scrambled) free_to_block(t.a[i]);  // the first moves a[14] into the pending bits
  std::vector<char *> want = {t.c[7], t.b[5], t.a[0], t.a[2], t.a[4], t.a[6], t.a[8], t.a[10], t.a[13], t.a[14]};
  std::vector<char *> got;
  for (size_t i = 0; i < want.size(); ++i) got.push_back(static_cast<char *>(vam_malloc(1024)));
  std::vector<char *> got_sorted = got, want_sorted = want;
  std::sort(got_sorted.begin(), got_sorted.end());
  std::sort(want_sorted.begin(), want_sorted.end());
  ASSERT_EQ(got_sorted, want_sorted);  // else the objects are left alone rather than freed twice
  EXPECT_EQ(got, want);
  t.release(first);  // frees `got` too: the same objects as the ones freed above
}

// The block a regained full block displaces from the front stays in state
// front, at the head of the waiting list (reuse_order.cpp, make_front): frees into
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
// (reuse_order.cpp, make_front): on random replacement such blocks piled up below
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
  const auto first = t.next4();  // b[3], a[1], a[9], a[12]: A, B and C are full again
  ASSERT_EQ(first, (std::vector<char *>{t.b[3], t.a[1], t.a[9], t.a[12]}));
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

// VAM_ORDER=auto (the default), regain_at_end in reuse_order.cpp: a block
// that regains space while few blocks of its class wait joins the end; a
// free next to the object freed into the block just before (a run of frees
// into one block) makes it the front; and so does any regain once more than
// four blocks wait.
bool order_auto() { return !order_recent() && !order_fifo(); }

struct AutoBlocks {
  std::vector<char *> all;
  std::vector<std::vector<char *>> full;
  alloclab::vam::Heap *h = nullptr;
  unsigned cls = 0;
  explicit AutoBlocks(size_t n) {
    full = fill_blocks_of_1024(n, all);
    if (full.empty()) return;
    alloclab::vam::Segment *s = alloclab::vam::segment_of(full[0][0]);
    h = s->owner;
    cls = alloclab::vam::block_of(s, full[0][0])->cls;
    alloclab::vam::hot_return_all(h);  // nothing of the class's on its hot list
  }
  alloclab::vam::Block *block(size_t i) const {
    return alloclab::vam::block_of(alloclab::vam::segment_of(full[i][0]), full[i][0]);
  }
  size_t waiting() const {
    size_t n = 0;
    for (const alloclab::vam::Block *w = h->wait[cls]; w != nullptr; w = w->next) ++n;
    return n;
  }
  // Frees objects i and j of full block k, in that order, as a program does:
  // the first onto the hot list, the second into the same block regains it.
  void free_pair(size_t k, size_t i, size_t j) {
    for (size_t x : {i, j}) {
      vam_free(full[k][x]);
      all.erase(std::find(all.begin(), all.end(), full[k][x]));
    }
  }
  ~AutoBlocks() {
    for (char *p : all) vam_free(p);
  }
};

TEST(VamReap, AutoSendsABlockRegainedByScatteredFreesToTheEnd) {
  using namespace alloclab::vam;
  if (!order_auto()) GTEST_SKIP() << "VAM_ORDER is not auto";
  AutoBlocks t(6);
  ASSERT_GE(t.full.size(), 1u);
  ASSERT_LE(t.waiting(), 4u);
  Block *b = t.block(0);
  ASSERT_EQ(b->state, BlockState::full);
  t.free_pair(0, 3, 9);
  EXPECT_EQ(b->state, BlockState::front);
  EXPECT_NE(class_front(t.h, t.cls), b);
  EXPECT_EQ(t.h->wait_tail[t.cls], b);
}

TEST(VamReap, AutoMakesABlockRegainedByNeighbouringFreesTheFront) {
  using namespace alloclab::vam;
  if (!order_auto()) GTEST_SKIP() << "VAM_ORDER is not auto";
  for (const auto &pair : {std::pair<size_t, size_t>{5, 4}, std::pair<size_t, size_t>{7, 8}}) {
    AutoBlocks t(6);
    ASSERT_GE(t.full.size(), 1u);
    Block *b = t.block(0);
    ASSERT_EQ(b->state, BlockState::full);
    t.free_pair(0, pair.first, pair.second);  // newest first, or in order
    EXPECT_EQ(class_front(t.h, t.cls), b) << pair.first << " then " << pair.second;
    // The next two mallocs take the two objects back.
    void *p = vam_malloc(1024), *q = vam_malloc(1024);
    EXPECT_EQ(std::min(p, q), std::min<void *>(t.full[0][pair.first], t.full[0][pair.second]));
    EXPECT_EQ(std::max(p, q), std::max<void *>(t.full[0][pair.first], t.full[0][pair.second]));
    t.all.push_back(static_cast<char *>(p));
    t.all.push_back(static_cast<char *>(q));
  }
}

TEST(VamReap, AutoMakesARegainedBlockTheFrontOnceManyBlocksWait) {
  using namespace alloclab::vam;
  if (!order_auto()) GTEST_SKIP() << "VAM_ORDER is not auto";
  AutoBlocks t(10);
  ASSERT_GE(t.full.size(), 7u);
  size_t k = 0;
  while (t.waiting() <= 4) {
    ASSERT_LT(k + 1, t.full.size()) << "fewer than five blocks wait";
    t.free_pair(k++, 3, 9);  // each joins the end
  }
  Block *b = t.block(k);
  ASSERT_EQ(b->state, BlockState::full);
  t.free_pair(k, 3, 9);
  EXPECT_EQ(class_front(t.h, t.cls), b);
}

}  // namespace
