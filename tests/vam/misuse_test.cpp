// misuse_test.cpp — misuse that used to pass every check and turn into
// silent corruption (issue 38): a large double free after its chunk merged
// with a free neighbour on each side, realloc of a freed object, a double
// free into a waiting block of an object on that block's list, and a
// one-byte overflow into a freed neighbour's link. Each runs over every size
// class (the class table; for large objects, every list of LargeBins) in a
// forked child, which either aborts with a message naming the cause or
// shows that no address was handed out twice and none outside a slot.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"
#include "child_run.hpp"
#include "vam/free_list.hpp"
#include "vam/large_region.hpp"
#include "vam/remote.hpp"

namespace {

using namespace vam_test;
using namespace alloclab::vam;

// Exit codes of a child that was not stopped.
constexpr int kHandedOutTwice = 3;   // one address came back from two mallocs
constexpr int kOutsideASlot = 4;     // malloc returned a pointer no slot starts at
constexpr int kSetUpFailed = 5;      // the layout under test could not be made
constexpr int kNotReclaimed = 6;     // no block was given back by a reclaim (remote_reclaim.cpp)

std::string describe(const Outcome &o) {
  if (o.aborted()) return "aborted: " + o.err;
  if (o.code() == kHandedOutTwice) return "not caught: an address handed out twice";
  if (o.code() == kOutsideASlot) return "not caught: a pointer outside every slot handed out";
  if (o.code() == kSetUpFailed) return "set-up failed " + o.err;
  if (o.code() == kNotReclaimed) return "set-up failed: no reclaim happened " + o.err;
  return "not caught, exit " + std::to_string(o.code()) + " " + o.err;
}

// One chunk size per list of LargeBins, from the smallest large request in
// the geometry in force to VAM_LARGE_MAX's (a request of `return - 16`
// bytes lands in that list).
std::vector<std::size_t> large_list_sizes() {
  std::vector<std::size_t> sizes;
  const std::size_t first = (g_layout.page_max + 1 + kChunkHeader + 15) & ~std::size_t{15};
  const std::size_t last = (262144 + kChunkHeader + 15) & ~std::size_t{15};
  int bin = -1;
  for (std::size_t s = first; s <= last; s += 16) {
    const int b = LargeBins::bin_of(s);
    if (b != bin) sizes.push_back(s);
    bin = b;
  }
  return sizes;
}

// ---- 1a. A large double free after merges on both sides -------------------

// a, v, b, g carved one after another; free(a), free(b), free(v) merge v
// with both neighbours; the second free(v) must stop there. Without the
// check, the merged chunk is handed out again over v's stale tags and the
// mallocs after return addresses twice (g's among them).
int large_double_free_after_merges(std::size_t n) {
  g_layout.large_quick = 0;  // the quick lists would hold the chunks whole: no merge
  char *a = nullptr, *v = nullptr, *b = nullptr, *g = nullptr;
  for (int tries = 0; tries < 8; ++tries) {
    a = static_cast<char *>(vam_malloc(n));
    v = static_cast<char *>(vam_malloc(n));
    b = static_cast<char *>(vam_malloc(n));
    g = static_cast<char *>(vam_malloc(n));
    const std::size_t c = LargeHeap::usable(a) + kChunkHeader;
    if (v == a + c && b == v + c && g == b + c) break;
    a = nullptr;
  }
  if (a == nullptr) return kSetUpFailed;
  vam_free(a);
  vam_free(b);
  vam_free(v);
  vam_free(v);
  void *got[8];
  for (int i = 0; i < 8; ++i) {
    got[i] = vam_malloc(i % 2 ? 3 * n : n);
    if (got[i] == g) return kHandedOutTwice;
    for (int j = 0; j < i; ++j) {
      const auto lo = static_cast<char *>(got[j]), hi = lo + vam_usable_size(got[j]);
      if (static_cast<char *>(got[i]) >= lo && static_cast<char *>(got[i]) < hi) return kHandedOutTwice;
    }
  }
  return 0;
}

TEST(VamMisuse, LargeDoubleFreeAfterMergingWithBothNeighboursAbortsForEveryList) {
  for (std::size_t s : large_list_sizes()) {
    const Outcome o = in_child([s] { return large_double_free_after_merges(s - kChunkHeader); });
    ASSERT_TRUE(o.aborted() && o.err.find("vam: free(): double free detected") != std::string::npos)
        << "chunk size " << s << ": " << describe(o);
  }
}

// ---- 1b. realloc of a freed object ----------------------------------------

// A small object freed onto its front block's list, onto its class's hot
// list (a full block) or into a waiting block's pending bits: realloc to a
// size it already holds returned it, and the next malloc returned it again.
enum class Freed { front, hot, waiting };

int realloc_freed_small(unsigned cls, Freed where) {
  const std::size_t size = layout_usable(cls);
  char *p = nullptr;
  if (where == Freed::front) {
    vam_malloc(size);  // its block keeps a live object
    p = static_cast<char *>(vam_malloc(size));
    vam_malloc(size);
  } else {
    ClassBlocks t(cls);
    if (t.n < 3) return kSetUpFailed;
    if (where == Freed::waiting) t.regain_all();
    p = t.full[0][1];
    if (ClassBlocks::block(p)->state != (where == Freed::hot ? BlockState::full : BlockState::waiting))
      return kSetUpFailed;
  }
  vam_free(p);
  void *q = vam_realloc(p, size);
  for (int i = 0; i < 4; ++i)
    if (vam_malloc(size) == q) return kHandedOutTwice;
  return 0;
}

TEST(VamMisuse, ReallocOfAFreedSmallObjectAbortsForEveryClassAndState) {
  for (Freed where : {Freed::front, Freed::hot, Freed::waiting}) {
    if (where == Freed::waiting && !order_recent()) continue;  // fifo: no block waits behind a front
    for (unsigned c = 0; c < g_layout.classes; ++c) {
      const Outcome o = in_child([c, where] { return realloc_freed_small(c, where); });
      ASSERT_TRUE(o.aborted() && o.err.find("vam: realloc(): double free / realloc of a freed object") !=
                                     std::string::npos)
          << "class " << c << " size " << layout_usable(c) << " freed " << static_cast<int>(where) << ": "
          << describe(o);
    }
  }
}

// A large object between live neighbours: realloc to a size it holds in
// place, and to one its free successor makes room for.
int realloc_freed_large(std::size_t n, bool grow) {
  g_layout.large_quick = 0;
  vam_malloc(n);
  void *p = vam_malloc(n);
  void *after = vam_malloc(n);
  vam_malloc(n);
  if (grow) vam_free(after);
  vam_free(p);
  void *q = vam_realloc(p, grow ? n + n / 2 : n);
  for (int i = 0; i < 4; ++i)
    if (vam_malloc(n) == q) return kHandedOutTwice;
  return 0;
}

TEST(VamMisuse, ReallocOfAFreedLargeObjectAbortsForEveryList) {
  for (bool grow : {false, true})
    for (std::size_t s : large_list_sizes()) {
      const Outcome o = in_child([s, grow] { return realloc_freed_large(s - kChunkHeader, grow); });
      ASSERT_TRUE(o.aborted() && o.err.find("vam: realloc(): double free / realloc of a freed object") !=
                                     std::string::npos)
          << "chunk size " << s << (grow ? " grown" : "") << ": " << describe(o);
    }
}

// A freed huge object whose mapping the cache holds: realloc grew the cached
// mapping in place, and the next malloc of the first size returned it.
int realloc_freed_huge(std::size_t n) {
  void *p = vam_malloc(n);
  vam_free(p);
  void *q = vam_realloc(p, n + n / 4);
  for (int i = 0; i < 4; ++i)
    if (vam_malloc(n) == q) return kHandedOutTwice;
  return 0;
}

TEST(VamMisuse, ReallocOfAFreedHugeObjectInTheMappingCacheAborts) {
  for (std::size_t n : {std::size_t{400000}, std::size_t{1} << 20, std::size_t{3} << 20}) {
    const Outcome o = in_child([n] { return realloc_freed_huge(n); });
    ASSERT_TRUE(o.aborted() && o.err.find("vam: realloc(): double free / realloc of a freed object") !=
                                   std::string::npos)
        << n << " bytes: " << describe(o);
  }
}

// ---- 1c. A double free into a waiting block -------------------------------

// p freed while its block was the front (onto the block's list); frees into
// two other full blocks make them the front in turn, and p's block waits;
// then p again. Its pending bit was clear, so the free was taken, and p came
// back twice: from the list and from the pending slots.
int double_free_into_waiting(unsigned cls) {
  ClassBlocks t(cls);
  if (t.n < 3) return kSetUpFailed;
  char *p = t.full[0][1];
  free_to_block(t.full[0][0]);  // the block is the front
  if (ClassBlocks::block(p)->state != BlockState::front) return kSetUpFailed;
  vam_free(p);  // onto its list
  free_to_block(t.full[1][0]);
  free_to_block(t.full[2][0]);
  if (ClassBlocks::block(p)->state != BlockState::waiting) return kSetUpFailed;
  vam_free(p);
  const std::size_t size = layout_usable(cls);
  static void *got[4 * ClassBlocks::kMaxSlots];
  const std::size_t count = 3 * t.slots;
  for (std::size_t i = 0; i < count; ++i) got[i] = vam_malloc(size);
  std::sort(got, got + count);
  return std::adjacent_find(got, got + count) != got + count ? kHandedOutTwice : 0;
}

TEST(VamMisuse, DoubleFreeIntoAWaitingBlockOfAnObjectOnItsListAbortsForEveryClass) {
  SKIP_UNLESS_RECENT_ORDER();
  for (unsigned c = 0; c < g_layout.classes; ++c) {
    const Outcome o = in_child([c] { return double_free_into_waiting(c); });
    ASSERT_TRUE(o.aborted() && o.err.find("vam: free(): double free detected") != std::string::npos)
        << "class " << c << " size " << layout_usable(c) << ": " << describe(o);
  }
}

// ---- 1d. A one-byte overflow into a freed neighbour -----------------------

bool slot_start_of_class(const void *m, unsigned cls) {
  Segment *s = segment_of(m);
  if (s->kind != SegKind::small && s->kind != SegKind::medium) return false;
  const Block *b = block_of(s, m);
  const auto off = static_cast<std::size_t>(static_cast<const char *>(m) - b->start);
  return b->cls == cls && static_cast<const char *>(m) >= b->start && static_cast<const char *>(m) < b->end &&
         off % b->size == 0;
}

// p and q bumped one after the other out of the front block, q freed onto
// the list (after r when `deep`: q's link is then r, else the list's end, the
// segment's base), and p's last byte written one past its end: q's link's
// low byte XOR-ed with `delta`. The next mallocs pop q and then whatever
// the link decodes to.
int overflow_into_freed_link(unsigned cls, unsigned delta, bool deep) {
  const std::size_t size = layout_usable(cls);
  char *p = nullptr, *q = nullptr, *r = nullptr;
  for (std::size_t i = 0; i < 4 * ClassBlocks::kMaxSlots && q == nullptr; ++i) {
    auto *m = static_cast<char *>(vam_malloc(size));
    const Block *b = ClassBlocks::block(m);
    // Bumped out of the front, with room for q and r, nothing on its list
    // and nothing hot before it.
    if (b != class_front(t_heap, cls) || class_hot_list(t_heap, cls) != 0 || free_list_has(b->free) ||
        m + b->size != b->bump || b->bump + 2 * b->size > b->end)
      continue;
    p = m;
    q = static_cast<char *>(vam_malloc(size));
    r = static_cast<char *>(vam_malloc(size));
    if (q != p + b->size || r != q + b->size) return kSetUpFailed;
  }
  if (q == nullptr) return kSetUpFailed;
  if (deep) vam_free(r);
  vam_free(q);
  p[ClassBlocks::block(p)->size] ^= static_cast<char>(delta);  // one byte past p: q's first
  // Enough mallocs to reach q behind whatever the class's hot list holds.
  for (unsigned i = 0; i < 12; ++i) {
    void *m = vam_malloc(size);
    if (!slot_start_of_class(m, cls)) return kOutsideASlot;
    if (m == p || (!deep && m == r)) return kHandedOutTwice;
  }
  return 0;
}

TEST(VamMisuse, OneByteOverflowIntoAFreedLinkNeverHandsOutAPointerOutsideASlotForEveryClass) {
  // Every 16-byte-aligned change of the low byte (a header address, when the
  // link is the list's end) and a few others.
  const unsigned deltas[] = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0,
                             0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0x01, 0x08, 0x18, 0x88, 0xff};
  int caught = 0;
  for (bool deep : {false, true})
    for (unsigned c = 0; c < g_layout.classes; ++c)
      for (unsigned d : deltas) {
        const Outcome o = in_child([c, d, deep] { return overflow_into_freed_link(c, d, deep); });
        if (o.aborted()) {
          ++caught;
          ASSERT_NE(o.err.find("vam: malloc(): heap corruption near 0x"), std::string::npos) << o.err;
          ASSERT_NE(o.err.find("(overflow?)"), std::string::npos) << o.err;
          continue;
        }
        // A link to the list's end changed in its low byte points into the
        // segment's header, never at a slot: always caught. A link to an
        // object may be changed into another slot's start, which no check
        // of the link against its block can tell from a free slot: then the
        // mallocs must still return slot starts of the class.
        ASSERT_TRUE(deep && o.code() == 0) << "class " << c << " size " << layout_usable(c) << " delta " << d
                                           << (deep ? " (link to an object)" : " (link to the list's end)")
                                           << ": " << describe(o);
      }
  EXPECT_GE(caught, static_cast<int>(g_layout.classes * std::size(deltas)));
}

// ---- 1e. A free of a block's address that no slot starts at ----------------

constexpr int kNothingToFree = 7;  // the class's blocks leave no such address

// A free of the address just past the front block's last slot (`after`: the
// room a block's objects leave at its end) or 16 bytes before its first (a
// page class's colour gap), each still inside the block. Either passes the
// slot product for some sizes; it must abort, and never reach the list.
int free_outside_the_objects(unsigned cls, bool after) {
  auto *m = static_cast<char *>(vam_malloc(layout_usable(cls)));
  Segment *s = segment_of(m);
  if (s->kind != SegKind::small && s->kind != SegKind::medium) return kSetUpFailed;
  const Block *b = block_of(s, m);
  char *base = block_base(b), *limit = base + (std::size_t{1} << s->block_shift);
  char *x = after ? b->end : b->start - 16;
  if (x < base || x + 16 > limit) return kNothingToFree;
  vam_free(x);
  for (int i = 0; i < 8; ++i)
    if (!slot_start_of_class(vam_malloc(layout_usable(cls)), cls)) return kOutsideASlot;
  return 0;
}

TEST(VamMisuse, FreeOfAnAddressInABlockBeforeOrPastItsObjectsAbortsForEveryClass) {
  int tested[2] = {0, 0};
  for (bool after : {true, false})
    for (unsigned c = 0; c < g_layout.classes; ++c) {
      const Outcome o = in_child([c, after] { return free_outside_the_objects(c, after); });
      if (o.code() == kNothingToFree) continue;
      ++tested[after];
      ASSERT_TRUE(o.aborted() && o.err.find("vam: free(): invalid pointer") != std::string::npos)
          << "class " << c << " size " << layout_usable(c) << (after ? " past the last slot" : " before the first")
          << ": " << describe(o);
    }
  // The 48-byte class leaves room at a block's end in every geometry.
  EXPECT_GE(tested[1], 1);
}

// ---- 1f. A free of a slot its block has not handed out yet -----------------

enum class NotHandedOut { free_front, free_waiting, realloc_front };

// The slot at the bump of a block with live objects and room left, freed
// (or reallocated) while the block is the front, or once it waits. It
// starts a slot below the block's end, so every other check passes; taken,
// it goes onto the list (or the pending bits), and the bump hands it out a
// second time.
int free_not_handed_out(unsigned cls, NotHandedOut how) {
  const std::size_t size = layout_usable(cls);
  Block *f = nullptr;
  std::size_t slots = 0;
  if (how == NotHandedOut::free_waiting) {
    ClassBlocks t(cls);
    if (t.n < 2) return kSetUpFailed;
    slots = t.slots;
    f = class_front(t_heap, cls);
    if (f == nullptr || f->bump >= f->end || f->used == 0) return kNothingToFree;
    free_to_block(t.full[0][0]);  // the front is second, still in state front
    free_to_block(t.full[1][0]);  // and now waits
    if (f->state != BlockState::waiting) return kSetUpFailed;
  } else {
    // Past whatever the class's hot list and its front's list hold (the
    // tests before this one leave them as they are), to a front with room.
    for (std::size_t i = 0; i < 8 * ClassBlocks::kMaxSlots && f == nullptr; ++i) {
      Block *b = ClassBlocks::block(vam_malloc(size));
      if (b == class_front(t_heap, cls) && b->bump < b->end) f = b;
    }
    if (f == nullptr) return kSetUpFailed;
    slots = static_cast<std::size_t>(f->end - f->start) / f->size;
  }
  char *x = f->bump;
  if (how == NotHandedOut::realloc_front) {
    if (vam_realloc(x, size / 2 + 1) == nullptr) return kSetUpFailed;
  } else {
    vam_free(x);
  }
  static void *got[4 * ClassBlocks::kMaxSlots];
  const std::size_t count = 3 * slots;
  for (std::size_t i = 0; i < count; ++i) got[i] = vam_malloc(size);
  std::sort(got, got + count);
  return std::adjacent_find(got, got + count) != got + count ? kHandedOutTwice : 0;
}

TEST(VamMisuse, FreeOfASlotNotHandedOutYetAbortsForEveryClassAndState) {
  int tested = 0;
  for (NotHandedOut how : {NotHandedOut::free_front, NotHandedOut::free_waiting, NotHandedOut::realloc_front}) {
    if (how == NotHandedOut::free_waiting && !order_recent()) continue;  // a regained block may join the back
    const char *want = how == NotHandedOut::realloc_front ? "vam: realloc(): invalid pointer (an object never handed out)"
                                                          : "vam: free(): invalid pointer (an object never handed out)";
    for (unsigned c = 0; c < g_layout.classes; ++c) {
      const Outcome o = in_child([c, how] { return free_not_handed_out(c, how); });
      if (o.code() == kNothingToFree) continue;
      ++tested;
      ASSERT_TRUE(o.aborted() && o.err.find(want) != std::string::npos)
          << "class " << c << " size " << layout_usable(c) << " case " << static_cast<int>(how) << ": "
          << describe(o);
    }
  }
  EXPECT_GE(tested, static_cast<int>(2 * g_layout.classes));
}

// ---- 2. Messages that name the cause ---------------------------------------

// A large double free after a backward merge only: the chunk's stale tags
// lie inside its free predecessor.
int large_double_free_after_backward_merge(std::size_t n) {
  g_layout.large_quick = 0;
  char *a = nullptr, *v = nullptr, *b = nullptr;
  for (int tries = 0; tries < 8 && b == nullptr; ++tries) {
    a = static_cast<char *>(vam_malloc(n));
    v = static_cast<char *>(vam_malloc(n));
    b = static_cast<char *>(vam_malloc(n));
    const std::size_t c = LargeHeap::usable(a) + kChunkHeader;
    if (v != a + c || b != v + c) b = nullptr;
  }
  if (b == nullptr) return kSetUpFailed;
  vam_free(a);
  vam_free(v);
  vam_free(v);
  return 0;
}

// Large requests in the geometry in force (VAM_PAGE_MAX may reach 8 KiB).
std::vector<std::size_t> some_large_sizes() {
  return {g_layout.page_max + 2000, g_layout.page_max + 20000, std::size_t{200000}};
}

TEST(VamMisuse, LargeDoubleFreeAfterABackwardMergeSaysDoubleFree) {
  for (std::size_t n : some_large_sizes()) {
    const Outcome o = in_child([n] { return large_double_free_after_backward_merge(n); });
    ASSERT_TRUE(o.aborted() && o.err.find("vam: free(): double free detected") != std::string::npos)
        << n << " bytes: " << describe(o);
  }
}

// One byte written past a large object lands in its successor's tag (the
// size of the chunk before it): freeing either object says so.
//
// Both need b right after a in one region, and a third object after b: the
// free chunks the tests before left (a quick list's chunk, handed out whole,
// a neighbour an in-place growth took part of) decide where the first
// requests land, so the set-up tries eight times.
bool adjacent_large_pair(std::size_t n, char *&a, char *&b) {
  for (int tries = 0; tries < 8; ++tries) {
    a = static_cast<char *>(vam_malloc(n));
    b = static_cast<char *>(vam_malloc(n));
    vam_malloc(n);
    if (b == a + LargeHeap::usable(a) + kChunkHeader) return true;
  }
  return false;
}

int overflow_into_large_tag(std::size_t n, bool free_the_next) {
  char *a = nullptr, *b = nullptr;
  if (!adjacent_large_pair(n, a, b)) return kSetUpFailed;
  a[LargeHeap::usable(a)] ^= 0x30;
  vam_free(free_the_next ? b : a);
  return 0;
}

TEST(VamMisuse, OverflowIntoALargeNeighboursTagSaysHeapCorruption) {
  for (bool next : {false, true})
    for (std::size_t n : some_large_sizes()) {
      const Outcome o = in_child([n, next] { return overflow_into_large_tag(n, next); });
      ASSERT_TRUE(o.aborted() && o.err.find("vam: free(): heap corruption near 0x") != std::string::npos &&
                  o.err.find("(overflow?)") != std::string::npos)
          << n << " bytes, free of the " << (next ? "next" : "overflowing") << " object: " << describe(o);
    }
}

// realloc in place reads the tags it relies on: an object's own size and the
// next chunk's copy of it. One byte written past a large object into its
// successor's copy of that size, or into the successor's
// own size, and a realloc to the same size of the object whose size no
// longer matches its copy aborts instead of keeping it.
int realloc_after_overflow_into_large_tag(std::size_t n, bool into_size_copy) {
  char *a = nullptr, *b = nullptr;
  if (!adjacent_large_pair(n, a, b)) return kSetUpFailed;
  if (into_size_copy) a[LargeHeap::usable(a)] ^= 0x30;      // b's prev_size: a's size as b repeats it
  else a[LargeHeap::usable(a) + sizeof(std::size_t)] ^= 0x30;  // b's head: its size
  char *p = into_size_copy ? a : b;
  if (vam_realloc(p, n) == p) return kHandedOutTwice;  // kept on a size its tags deny
  return 0;
}

TEST(VamMisuse, ReallocInPlaceOfALargeObjectWhoseSizeTagWasOverwrittenAborts) {
  for (bool into_size_copy : {false, true})
    for (std::size_t n : some_large_sizes()) {
      const Outcome o = in_child([n, into_size_copy] { return realloc_after_overflow_into_large_tag(n, into_size_copy); });
      ASSERT_TRUE(o.aborted() && o.err.find("vam: realloc(): ") != std::string::npos)
          << n << " bytes, " << (into_size_copy ? "the size's copy" : "the size") << " overwritten: " << describe(o);
    }
}

// An interior pointer of a live large object is still an invalid pointer.
TEST(VamMisuse, InteriorPointerOfALiveLargeObjectStillSaysInvalidPointer) {
  const Outcome o = in_child([] {
    const std::size_t n = g_layout.page_max + 2000;
    auto *a = static_cast<char *>(vam_malloc(n));
    memset(a, 0, n);
    vam_free(a + 1024);
    return 0;
  });
  EXPECT_TRUE(o.aborted() && o.err.find("vam: free(): invalid pointer (not the start of a large object)") !=
                                 std::string::npos)
      << describe(o);
}

// ---- 1g. A large object freed twice across threads ------------------------

// p, one of several large objects of main's heap, freed by another thread
// (which only pushes it onto main's remote stack) and by main, in either
// order, or by two other threads, or freed by another thread and then
// reallocated by main. Unmarked, the owner's own free put p on a quick list
// and the next malloc took it back before the remote free was applied, which
// then freed the new object: one address out twice. Freed locally first, the
// remote push wrote its link over the quick list's.
enum class Cross { remote_then_owner, owner_then_remote, remote_twice, remote_then_realloc };

int cross_thread_double_free(std::size_t n, Cross how) {
  vam_free(vam_malloc(64));
  void *keep[8];
  for (void *&k : keep) k = vam_malloc(n);
  void *p = keep[3];
  auto remote = [p] { std::thread([p] { vam_free(p); }).join(); };
  switch (how) {
    case Cross::remote_then_owner: remote(); vam_free(p); break;
    case Cross::owner_then_remote: vam_free(p); remote(); break;
    case Cross::remote_twice: remote(); remote(); break;
    case Cross::remote_then_realloc: remote(); vam_realloc(p, n / 2); break;
  }
  void *got[16];
  for (void *&g : got) g = vam_malloc(n);
  for (void *g : got)
    for (void *k : keep)
      if (g == k && k != p) return kHandedOutTwice;
  std::sort(std::begin(got), std::end(got));
  return std::adjacent_find(std::begin(got), std::end(got)) != std::end(got) ? kHandedOutTwice : 0;
}

TEST(VamMisuse, LargeDoubleFreeAcrossThreadsAbortsInEveryOrder) {
  const struct {
    Cross how;
    const char *name;
    const char *want;
  } cases[] = {
      {Cross::remote_then_owner, "by another thread, then by the owner",
       "vam: free(): double free detected (large object, freed by another thread already)"},
      {Cross::owner_then_remote, "by the owner, then by another thread", "vam: free(): double free detected (large object)"},
      {Cross::remote_twice, "by two other threads",
       "vam: free(): double free detected (large object, freed by another thread already)"},
      {Cross::remote_then_realloc, "by another thread, then reallocated by the owner",
       "vam: realloc(): double free / realloc of a freed object"}};
  for (const auto &c : cases)
    for (std::size_t n : some_large_sizes()) {
      const Outcome o = in_child([n, how = c.how] { return cross_thread_double_free(n, how); });
      ASSERT_TRUE(o.aborted() && o.err.find(c.want) != std::string::npos) << n << " bytes, freed " << c.name << ": "
                                                                          << describe(o);
    }
}

// ---- 1h'. A small object freed by its owner and another thread ----------

// An object p of `size` bytes, of the main thread's heap, freed twice: by
// another thread (its free waits on main's remote stack, remote.hpp) and
// by main, in each order, or by two other threads; or freed by another
// thread, then by main, which mallocs it again before its drain. p's
// block is the front, or full (p went to the hot list). Then main drains
// (vam_collect) and mallocs as many objects again: each must abort naming
// a double free before one address can come back twice.
// remote_then_realloc: freed by another thread, then main reallocs it to
// its own size (in place), before its drain, with another remote free
// waiting below it; remote_then_foreign_realloc: the same realloc by a
// third thread, which owns nothing there (main drains after it has left).
// owner_then_foreign_realloc: main frees p (onto its block's list, or, full,
// onto the hot list, its word untouched), then a third thread reallocates
// it to its own size; owner_hot_then_foreign_realloc: the same with p at the
// head of a hot list of two (its word the list's link).
// owner_hot_then_remote: main frees an object of another full block first,
// so that p heads a hot list of two and holds its link when the other
// thread's free writes over it; owner_hot_then_remote_reuses: and main
// mallocs twice before it drains, popping p and then what p's word leads to.
enum class Twice {
  remote_then_owner,
  owner_then_remote,
  remote_twice,
  remote_then_owner_reuses,
  owner_hot_then_remote,
  owner_hot_then_remote_reuses,
  remote_then_realloc,
  remote_then_foreign_realloc,
  owner_then_foreign_realloc,
  owner_hot_then_foreign_realloc
};

// A thread that frees p when told to (or leaves without), made before the
// misuse starts: its own state, which main allocates, must not take a slot
// the misuse has freed (a 16-byte one, for std::thread's state of a lambda).
// With `realloc_to`, it reallocates p to that size instead (result()).
class Freer {
 public:
  explicit Freer(void *p, std::size_t realloc_to = 0)
      : t_([this, p, realloc_to] {
          int go;
          while ((go = go_.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
          if (go == 1 && realloc_to == 0) vam_free(p);
          if (go == 1 && realloc_to != 0) result_ = vam_realloc(p, realloc_to);
        }) {}
  void free_now() { finish(1); }
  void *result() const { return result_; }
  ~Freer() { finish(2); }

 private:
  void finish(int go) {
    if (!t_.joinable()) return;
    go_.store(go, std::memory_order_release);
    t_.join();
  }
  std::atomic<int> go_{0};
  void *result_ = nullptr;
  std::thread t_;
};

int small_cross_double_free(std::size_t size, Twice how, bool full) {
  vam_free(vam_malloc(64));
  constexpr std::size_t kMany = 1100;  // more than any block's slots (kMaxSlots)
  static void *keep[3 * kMany];
  static void *got[6 * kMany];
  const bool hot = how == Twice::owner_hot_then_remote || how == Twice::owner_hot_then_remote_reuses ||
                   how == Twice::owner_hot_then_foreign_realloc;
  const std::size_t n = !full ? 8 : hot ? 3 * kMany : kMany;
  for (std::size_t i = 0; i < n; ++i) keep[i] = vam_malloc(size);
  void *p = keep[3];
  std::size_t other = 0;  // keep[other], freed as well: of another full block (owner_hot_*), or below p
  if (hot) {
    const Block *b = ClassBlocks::block(p);
    for (std::size_t i = 4; i < n && other == 0; ++i) {
      const Block *c = ClassBlocks::block(keep[i]);
      if (c != b && c->state == BlockState::full && b->state == BlockState::full) other = i;
    }
    if (other == 0) return kSetUpFailed;
  }
  // remote_then_realloc: another thread frees keep[5] first, so that p's
  // keyed link leads to it (with nothing below, p's word is its bare mark,
  // which the owner's realloc has long read as freed).
  if (how == Twice::remote_then_realloc || how == Twice::remote_then_foreign_realloc) other = 5;
  Freer one(p), two(p), below(keep[5]), third(p, size);
  switch (how) {
    case Twice::owner_hot_then_remote:
    case Twice::owner_hot_then_remote_reuses:
      vam_free(keep[other]);
      vam_free(p);
      if (class_hot(t_heap, ClassBlocks::block(p)->cls) != p) return kSetUpFailed;
      one.free_now();
      if (how == Twice::owner_hot_then_remote_reuses) {
        keep[3] = vam_malloc(size);  // p, off the hot list
        vam_free(vam_malloc(size));  // what p's word, as the list's link, led to
      }
      break;
    case Twice::remote_then_owner: one.free_now(); vam_free(p); break;
    case Twice::owner_then_remote: vam_free(p); one.free_now(); break;
    case Twice::remote_twice: one.free_now(); two.free_now(); break;
    case Twice::remote_then_realloc:
      below.free_now();
      one.free_now();
      keep[3] = vam_realloc(p, size);  // p again, in place
      break;
    case Twice::remote_then_foreign_realloc:
      below.free_now();
      one.free_now();
      third.free_now();  // joined: its batch of remote frees, if any, is sent
      keep[3] = third.result();
      break;
    case Twice::remote_then_owner_reuses:
      one.free_now();
      vam_free(p);
      keep[3] = vam_malloc(size);  // p again, most likely: live, and still on the remote stack
      break;
    case Twice::owner_then_foreign_realloc:
      vam_free(p);
      third.free_now();
      keep[3] = third.result();
      break;
    case Twice::owner_hot_then_foreign_realloc:
      vam_free(keep[other]);
      vam_free(p);
      if (class_hot(t_heap, ClassBlocks::block(p)->cls) != p) return kSetUpFailed;
      third.free_now();
      keep[3] = third.result();
      break;
  }
  vam_collect();  // applies the remote frees
  const std::size_t m = 2 * n;
  for (std::size_t i = 0; i < m; ++i) got[i] = vam_malloc(size);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < n; ++k)
      if (got[i] == keep[k] &&
          (k != 3 || how == Twice::remote_then_owner_reuses || how == Twice::owner_hot_then_remote_reuses ||
           how == Twice::remote_then_realloc || how == Twice::remote_then_foreign_realloc ||
           how == Twice::owner_then_foreign_realloc || how == Twice::owner_hot_then_foreign_realloc) &&
          (other == 0 || k != other))
        return kHandedOutTwice;
  std::sort(got, got + m);
  return std::adjacent_find(got, got + m) != got + m ? kHandedOutTwice : 0;
}

TEST(VamMisuse, SmallDoubleFreeAcrossThreadsAbortsInEveryOrderForEveryClass) {
  constexpr const char *kDouble = "double free detected";
  const struct {
    Twice how;
    const char *name;
    const char *want = kDouble;
  } cases[] = {{Twice::remote_then_owner, "by another thread, then by the owner"},
               {Twice::owner_then_remote, "by the owner, then by another thread"},
               {Twice::remote_twice, "by two other threads"},
               {Twice::remote_then_owner_reuses, "by another thread, then by the owner, which mallocs it again"},
               {Twice::owner_hot_then_remote, "by the owner onto a hot list of two, then by another thread"},
               {Twice::owner_hot_then_remote_reuses,
                "by the owner onto a hot list of two, then by another thread, then malloc'd by the owner"},
               {Twice::remote_then_realloc, "by another thread, then reallocated in place by the owner",
                "vam: realloc(): double free / realloc of a freed object"},
               {Twice::remote_then_foreign_realloc, "by another thread, then reallocated by a third thread",
                "double free"},  // found by realloc (a medium object's mark) or by the drain
               {Twice::owner_then_foreign_realloc, "by the owner, then reallocated by another thread",
                "double free"},  // found by realloc (p on its block's list) or by the drain (p hot)
               {Twice::owner_hot_then_foreign_realloc,
                "by the owner onto a hot list of two, then reallocated by another thread", "double free"}};
  for (unsigned c = 0; c < g_layout.classes; ++c)
    for (const auto &k : cases)
      for (bool full : {false, true}) {
        const bool hot = k.how == Twice::owner_hot_then_remote || k.how == Twice::owner_hot_then_remote_reuses ||
                         k.how == Twice::owner_hot_then_foreign_realloc;
        if (hot && (!full || g_layout.inline_fine == 0)) continue;
        const std::size_t size = layout_usable(c);
        const Outcome o = in_child([size, how = k.how, full] { return small_cross_double_free(size, how, full); });
        ASSERT_TRUE(o.aborted() && o.err.find(k.want) != std::string::npos)
            << size << " bytes, " << (full ? "full" : "front") << " block, freed " << k.name << ": " << describe(o);
      }
}

// A live 8- or 16-byte object whose first word reads as a keyed remote link
// (here the chain's end, its bare mark: remote_keyed_like), reallocated to
// its own size by a thread that does not own it: only the owner could tell
// it from one waiting on a chain, so it moves, its bytes kept, and nothing
// aborts; then no address comes back twice.
int foreign_realloc_of_link_like(std::size_t size) {
  vam_free(vam_malloc(64));
  constexpr std::size_t kSome = 64;
  void *keep[kSome];
  for (auto &k : keep) k = vam_malloc(size);
  auto *p = static_cast<std::uintptr_t *>(keep[3]);
  memset(p, 0x3c, size);
  *p = remote_mark_base(p);
  if (!remote_keyed_like(p)) return kSetUpFailed;
  Freer third(p, size);
  third.free_now();
  auto *r = static_cast<std::uintptr_t *>(third.result());
  if (r == nullptr || r == p || *r != remote_mark_base(p)) return 7;
  for (std::size_t i = sizeof *r; i < size; ++i)
    if (reinterpret_cast<unsigned char *>(r)[i] != 0x3c) return 7;
  keep[3] = r;
  vam_collect();  // applies the free of p
  void *got[2 * kSome];
  for (auto &g : got) g = vam_malloc(size);
  for (void *g : got)
    for (void *k : keep)
      if (g == k) return kHandedOutTwice;
  std::sort(got, got + 2 * kSome);
  return std::adjacent_find(got, got + 2 * kSome) != got + 2 * kSome ? kHandedOutTwice : 0;
}

TEST(VamMisuse, ForeignReallocOfALiveObjectThatReadsAsALinkMovesIt) {
  for (unsigned c = 0; c < g_layout.classes; ++c) {
    const std::size_t size = layout_usable(c);
    if (size > 16) break;
    const Outcome o = in_child([size] { return foreign_realloc_of_link_like(size); });
    ASSERT_EQ(o.code(), 0) << size << " bytes: " << describe(o);
  }
}

// Another thread's realloc of a pointer 4 or 8 bytes into a live object of
// every class (inside its slot), or its free of the address of the
// object's block record (in the segment's header): each names the pointer
// as no object's start. Unchecked, the realloc returned the interior
// pointer as a new object, and the free wrote its link into the block's
// record, which the owner then followed (a fault).
int foreign_bad_pointer(std::size_t size, bool realloc) {
  vam_free(vam_malloc(64));
  void *keep[16];
  for (auto &k : keep) k = vam_malloc(size);
  char *p = static_cast<char *>(keep[3]);
  void *bad = realloc ? static_cast<void *>(p + (size >= 16 ? 8 : 4))
                      : static_cast<void *>(&const_cast<Block *>(ClassBlocks::block(p))->free);
  std::thread([bad, size, realloc] {
    if (realloc) vam_realloc(bad, size);
    else vam_free(bad);
  }).join();
  vam_collect();
  for (int i = 0; i < 64; ++i) vam_malloc(size);
  return 0;
}

TEST(VamMisuse, ForeignReallocOrFreeOfAPointerThatStartsNoObjectAbortsForEveryClass) {
  for (unsigned c = 0; c < g_layout.classes; ++c)
    for (bool realloc : {true, false}) {
      const std::size_t size = layout_usable(c);
      const Outcome o = in_child([size, realloc] { return foreign_bad_pointer(size, realloc); });
      const char *want = realloc ? "vam: realloc(): invalid pointer (not the start of an object)"
                                 : "vam: free(): invalid pointer (not the start of an object)";
      ASSERT_TRUE(o.aborted() && o.err.find(want) != std::string::npos)
          << size << " bytes, another thread's " << (realloc ? "realloc inside the object" : "free of its block record")
          << ": " << describe(o);
    }
}

// ---- 1d'. A one-byte overflow into a hot object's link ---------------------

// The second object of each of three full blocks freed onto the class's hot
// list in turn (a list of `freed`, two or three: each object but the last
// freed holds its link), then the byte one past the object before the
// list's object `which` (0, the head, or 1) XOR-ed with `delta`: that
// object's link's low byte. The next mallocs pop the list; the one that
// reads the changed link must abort before it hands out what it decodes to.
int overflow_into_hot_link(unsigned cls, unsigned delta, unsigned freed, unsigned which) {
  const ClassBlocks cb(cls);
  if (cb.n < 3) return kSetUpFailed;
  const std::size_t size = layout_usable(cls);
  char *q[3];
  for (unsigned i = 0; i < freed; ++i) {
    q[i] = cb.full[i][1];
    vam_free(q[i]);
  }
  const std::uintptr_t v = class_hot_list(t_heap, cls);
  if (hot_length(v) != freed || hot_head(v) != q[freed - 1]) return kSetUpFailed;
  char *target = q[freed - 1 - which];
  char *before = target - ClassBlocks::block(target)->size;  // live: the block's first object
  before[ClassBlocks::block(target)->size] ^= static_cast<char>(delta);  // one byte past it: target's first
  for (unsigned i = 0; i < freed + 1; ++i) {
    void *m = vam_malloc(size);
    if (!slot_start_of_class(m, cls)) return kOutsideASlot;
    for (unsigned k = 0; k < 3; ++k)
      for (std::size_t j = 0; j < cb.slots; ++j)
        if (m == cb.full[k][j] && !(j == 1 && k < freed)) return kHandedOutTwice;
  }
  return 0;
}

TEST(VamMisuse, OneByteOverflowIntoAHotLinkAbortsForEveryClass) {
  if (g_layout.inline_fine == 0) GTEST_SKIP() << "no hot lists in this geometry (VAM_HEADERS=on or VAM_CLASSES=coarse)";
  const unsigned deltas[] = {0x01, 0x08, 0x10, 0x40, 0x80, 0xff};
  for (unsigned c = 0; c < g_layout.classes; ++c)
    for (unsigned freed : {2u, 3u})
      for (unsigned which = 0; which + 1 < freed; ++which)
        for (unsigned d : deltas) {
          const Outcome o = in_child([c, d, freed, which] { return overflow_into_hot_link(c, d, freed, which); });
          ASSERT_TRUE(o.aborted() && o.err.find("vam: malloc(): heap corruption near 0x") != std::string::npos &&
                      o.err.find("(overflow?)") != std::string::npos)
              << "class " << c << " size " << layout_usable(c) << ", a list of " << freed << ", link " << which
              << ", delta " << d << ": " << describe(o);
        }
}

// ---- 1h. A sized release of more than the object holds --------------------

// vam_free_sized(p, n) of an object made for `made` bytes, in a child: n
// larger than the object holds (its usable size) must abort naming it; n up
// to the usable size, or smaller than asked, must not.
int sized_release(std::size_t made, std::size_t n) {
  void *p = vam_malloc(made);
  if (p == nullptr) return kSetUpFailed;
  vam_free_sized(p, n);
  vam_free(vam_malloc(made));
  return 0;
}

TEST(VamMisuse, SizedReleaseOfMoreThanTheObjectHoldsAbortsForEveryClass) {
  std::vector<std::size_t> sizes;
  for (unsigned c = 0; c < g_layout.classes; ++c) sizes.push_back(layout_usable(c));
  for (std::size_t n : some_large_sizes()) sizes.push_back(n);
  sizes.push_back(std::size_t{5} << 20);  // huge
  for (std::size_t made : sizes) {
    void *probe = vam_malloc(made);
    const std::size_t have = vam_usable_size(probe);
    vam_free(probe);
    // Past the slot with VAM_HEADERS=on too (its header's bytes pass the fast test).
    const std::size_t over = have + 1 + g_layout.header;
    const Outcome big = in_child([made, over] { return sized_release(made, over); });
    ASSERT_TRUE(big.aborted() && big.err.find("more bytes than the object holds") != std::string::npos)
        << made << " bytes released as " << over << ": " << describe(big);
    for (std::size_t n : {made, have, made / 2}) {
      const Outcome fine = in_child([made, n] { return sized_release(made, n); });
      ASSERT_EQ(fine.code(), 0) << made << " bytes released as " << n << ": " << describe(fine);
    }
  }
}

// ---- 2. Double frees into blocks a reclaim gave back ----------------------

// An owner thread allocates 3 * kReclaimObjects objects of `size` and waits;
// main frees them all, so that reclaims give whole blocks back and hand
// them to the owner in records (remote_reclaim.cpp). One object p, in a
// block the reclaims take whole, is freed twice:
//   remote_twice  by main, again after all the others (a later batch);
//   owner_first   by the owner before it waits, then by main with the rest;
//   owner_after   by main with the rest, then by the owner once it wakes;
//   owner_first_malloc, owner_after_malloc: as those two, and the owner,
//                 once it wakes, mallocs one object of the size (p again,
//                 from its hot list) and writes it, before any drain;
//   owner_after_realloc: by main with the rest, then the owner reallocs p.
// The reclaim gives back the pages that held p's remote mark, which the
// drain would otherwise have met; and then its record frees every slot of
// p's block, the one the owner has just handed out again included.
// At 3,000 bytes (large) the reclaims free the objects into the owner's
// heap themselves (LargeHeap::reclaim_free), p's double free is met by the
// tag checks: a reclaim's, the drain's or the owner's free.
// The owner then makes a call whose slow path drains its remote stack
// (an aligned large malloc), and, if still running, mallocs as many
// objects again: no address may come back twice.
enum class Split { remote_twice, owner_first, owner_after, owner_first_malloc, owner_after_malloc, owner_after_realloc };

int double_free_into_reclaimed(std::size_t size, Split how) {
  vam_free(vam_malloc(64));  // main has a heap, so its remote frees go in batches
  const std::size_t n = 3 * static_cast<std::size_t>(kReclaimObjects);
  std::vector<void *> objs(n);
  std::mutex m;
  std::condition_variable cv;
  int step = 0;  // 1: the owner has allocated; 2: main has freed
  int result = 0;
  std::thread owner([&] {
    for (auto &o : objs) o = vam_malloc(size);
    void *p = objs[n / 4];
    if (how == Split::owner_first || how == Split::owner_first_malloc) vam_free(p);
    {
      std::unique_lock<std::mutex> lock(m);
      step = 1;
      cv.notify_all();
      cv.wait(lock, [&] { return step == 2; });
    }
    if (how == Split::owner_after || how == Split::owner_after_malloc) vam_free(p);
    void *kept = nullptr;  // an object the program holds through the drain
    if (how == Split::owner_first_malloc || how == Split::owner_after_malloc) kept = vam_malloc(size);
    if (how == Split::owner_after_realloc) kept = vam_realloc(p, size);
    if (kept) std::memset(kept, 0x11, size);
    vam_free(vam_memalign(64, 20000));
    std::vector<void *> got(n);
    for (auto &g : got) g = vam_malloc(size);
    if (kept) got.push_back(kept);
    std::sort(got.begin(), got.end());
    if (std::adjacent_find(got.begin(), got.end()) != got.end()) result = kHandedOutTwice;
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return step == 1; });
  }
  const std::uint64_t before = g_reclaimed_blocks.load() + g_reclaimed_large.load();
  for (void *o : objs) vam_free(o);
  if (how == Split::remote_twice) vam_free(objs[n / 4]);
  vam_collect();  // main's last batches go to the owner
  if (g_reclaimed_blocks.load() + g_reclaimed_large.load() == before) _exit(kNotReclaimed);
  {
    std::lock_guard<std::mutex> lock(m);
    step = 2;
  }
  cv.notify_all();
  owner.join();
  return result;
}

TEST(VamMisuse, DoubleFreeIntoAReclaimedBlockAbortsForSeveralClasses) {
  if (g_layout.header != 0) GTEST_SKIP() << "no reclaim with VAM_HEADERS (docs/vam.md, Threads)";
  const struct {
    Split how;
    const char *name;
    const char *says;
  } splits[] = {
      {Split::remote_twice, "twice by another thread", "vam: free(): double free detected"},
      {Split::owner_first, "by the owner, then by another thread", "vam: free(): double free detected"},
      {Split::owner_after, "by another thread, then by the owner", "vam: free(): double free detected"},
      {Split::owner_first_malloc, "by the owner, then by another thread, then taken by the owner's malloc",
       "double free detected"},
      {Split::owner_after_malloc, "by another thread, then by the owner, then taken by the owner's malloc",
       "vam: free(): double free detected"},
      {Split::owner_after_realloc, "by another thread, then reallocated by the owner", "double free"}};
  for (const auto &split : splits)
    for (std::size_t size : {8, 16, 48, 200, 512, 1024, 3000}) {
      const Outcome o = in_child([size, how = split.how] { return double_free_into_reclaimed(size, how); });
      ASSERT_TRUE(o.aborted() && o.err.find(split.says) != std::string::npos)
          << size << " bytes, freed " << split.name << ": " << describe(o);
    }
}

// Another thread frees a pointer inside a live large object, where the
// word before it (the program's data) reads as a chunk's tag in use of
// nearly 4 MiB. Counted towards a reclaim by that size, it had the reclaim
// give back every page over the owner's live objects beyond: their bytes
// read zero, with no message, until the owner's next free met the wiped
// tags. The free itself must abort, and the other objects keep their bytes.
constexpr int kLiveBytesLost = 7;

int interior_large_free_by_another_thread() {
  constexpr int kObjects = 6;
  constexpr std::size_t kBytes = 200000;
  char *obj[kObjects];
  std::atomic<int> step{0};
  std::thread owner([&] {
    for (char *&o : obj) {
      o = static_cast<char *>(vam_malloc(kBytes));
      std::memset(o, 0xab, kBytes);
    }
    step.store(1);
    while (step.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // Before this thread's exit drains the free (and aborts at its tag).
    for (int i = 1; i < kObjects; ++i)
      if (obj[i][kBytes / 2] != static_cast<char>(0xab)) _exit(kLiveBytesLost);
  });
  while (step.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the owner is idle
  const std::size_t fake = (std::size_t{0x3f} << 16) | kChunkInUse;
  for (std::size_t at : {64, 128}) {
    std::memcpy(obj[0] + at - 8, &fake, sizeof fake);
    vam_free(obj[0] + at);
  }
  step.store(2);
  owner.join();
  return 0;
}

TEST(VamMisuse, AnotherThreadsFreeInsideALargeObjectAbortsBeforeAReclaimCanReachItsNeighbours) {
  const Outcome o = in_child([] { return interior_large_free_by_another_thread(); });
  ASSERT_TRUE(o.aborted() && o.err.find("vam: free(): invalid pointer (not the start of a large object)") !=
                                 std::string::npos)
      << describe(o);
}

}  // namespace
