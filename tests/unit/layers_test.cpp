// Unit tests of the heap layers on their own.
#include <cerrno>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <thread>
#include <vector>

#include "layers/boundary_tag.hpp"
#include "layers/chunk_cache.hpp"
#include "layers/chunk_list_heap.hpp"
#include "layers/coalesce.hpp"
#include "layers/fit_bins.hpp"
#include "layers/mapping_cache.hpp"
#include "layers/mmap_heap.hpp"
#include "layers/os.hpp"
#include "layers/segregated_bins.hpp"
#include "reap/ptr_set.hpp"

using namespace alloclab;

TEST(BoundaryTag, BlockSizeIsHeaderPlusRequestRoundedToSixteenWithAMinimum) {
  EXPECT_EQ(tag::block_size(0), 32u);
  EXPECT_EQ(tag::block_size(1), 32u);
  EXPECT_EQ(tag::block_size(24), 32u);
  EXPECT_EQ(tag::block_size(25), 48u);
  EXPECT_EQ(tag::block_size(40), 48u);
  EXPECT_EQ(tag::block_size(41), 64u);
  for (std::size_t n = 0; n < 5000; ++n) {
    const std::size_t s = tag::block_size(n);
    EXPECT_EQ(s % 16, 0u);
    EXPECT_GE(s - tag::kHeader, n);
    EXPECT_LT(s - tag::kHeader, n + 16 + 24);
  }
}

TEST(BoundaryTag, CarvedAreaPutsPayloadsOnSixteenAndEndsInASentinel) {
  alignas(16) static char buf[1024];
  for (int lo = 0; lo < 32; lo += 8) {
    tag::Block *limit = nullptr;
    tag::Block *first = tag::carve_area(buf + lo, buf + 1000, &limit);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(tag::payload(first)) % 16, 0u);
    EXPECT_GE(first, buf + lo);
    EXPECT_LE(limit + tag::kHeader, buf + 1000);
    EXPECT_EQ((limit - first) % 16, 0);
    EXPECT_TRUE(tag::in_use(limit));
    EXPECT_EQ(tag::size(limit), 0u);
  }
}

TEST(SegregatedBins, SmallSizesHaveExactBinsAndLargerOnesAreOrdered) {
  for (std::size_t s = 32; s <= 1024; s += 16) EXPECT_EQ(SegregatedBins::bin_of(s), int(s / 16) - 2);
  int last = -1;
  for (std::size_t s = 32; s < (std::size_t{1} << 30); s += 16 + ((s >> 5) & ~std::size_t{15})) {
    const int b = SegregatedBins::bin_of(s);
    EXPECT_GE(b, last) << s;
    EXPECT_LT(b, SegregatedBins::kBins);
    last = b;
  }
}

TEST(SegregatedBins, TakeFitReturnsABlockAtLeastAsLargeAsAsked) {
  alignas(16) static char arena[1 << 16];
  SegregatedBins bins;
  std::vector<tag::Block *> blocks;
  const std::size_t sizes[] = {32, 48, 1024, 1040, 2000, 4096, 8192};
  char *at = arena + 8;
  for (std::size_t s : sizes) {
    tag::word(at) = s | tag::PREV_INUSE;
    bins.insert(at, s);
    blocks.push_back(at);
    at += s;
  }
  EXPECT_FALSE(bins.empty());
  for (std::size_t want : {16u, 40u, 1000u, 1030u, 1500u, 3000u, 5000u}) {
    tag::Block *b = bins.take_fit(tag::block_size(want));
    ASSERT_NE(b, nullptr) << want;
    EXPECT_GE(tag::size(b), tag::block_size(want));
  }
  EXPECT_EQ(bins.take_fit(tag::block_size(9000)), nullptr);
}

TEST(SegregatedBins, RemoveUnlinksFromTheMiddleOfAList) {
  alignas(16) static char arena[4096];
  SegregatedBins bins;
  tag::Block *b[3];
  for (int i = 0; i < 3; ++i) {
    b[i] = arena + 8 + i * 64;
    tag::word(b[i]) = 48 | tag::PREV_INUSE;
    bins.insert(b[i], 48);
  }
  bins.remove(b[1]);
  std::set<tag::Block *> got;
  while (tag::Block *x = bins.take_fit(48)) got.insert(x);
  EXPECT_EQ(got, (std::set<tag::Block *>{b[0], b[2]}));
  EXPECT_TRUE(bins.empty());
}

TEST(ChunkListHeap, ChunksGrowGeometricallyAndReleaseKeepsOnlyTheBudget) {
  ChunkListHeap<MmapHeap> h;
  std::size_t last = 0;
  for (int i = 0; i < 5; ++i) {
    ChunkHeader *c = h.new_chunk(100);
    ASSERT_NE(c, nullptr);
    EXPECT_GT(c->bytes, last);
    last = c->bytes;
  }
  EXPECT_EQ(h.held_chunks(), 5u);
  const std::size_t before = h.held_bytes();
  h.release_all(last);  // room for the largest only
  EXPECT_EQ(h.spare_bytes(), last);
  EXPECT_EQ(h.held_bytes(), last);
  EXPECT_LT(h.held_bytes(), before);
  ChunkHeader *again = h.new_chunk(100);  // served from the spare
  EXPECT_EQ(again->bytes, last);
  EXPECT_EQ(h.spare_bytes(), 0u);
  h.release_everything();
  EXPECT_EQ(h.held_bytes(), 0u);
}

TEST(ChunkListHeap, ARequestLargerThanTheNextChunkGetsAChunkThatFitsIt) {
  ChunkListHeap<MmapHeap> h;
  ChunkHeader *c = h.new_chunk(3 * 1024 * 1024);
  ASSERT_NE(c, nullptr);
  EXPECT_GE(c->bytes - sizeof(ChunkHeader), 3u * 1024 * 1024);
  h.release_everything();
}

TEST(ChunkCache, ReleasedChunksAreReusedUpToTheLimit) {
  using Cache = ChunkCache<MmapHeap, 16384, 65536>;
  Cache c;
  Cache::set_limit(2 * 65536);
  void *a = c.get_chunk(65536);
  void *b = c.get_chunk(65536);
  void *d = c.get_chunk(65536);
  c.put_chunk(a, 65536);
  c.put_chunk(b, 65536);
  c.put_chunk(d, 65536);  // over the limit: unmapped
  EXPECT_EQ(Cache::cached_bytes(), 2u * 65536);
  void *x = c.get_chunk(65536);
  EXPECT_TRUE(x == a || x == b);
  c.put_chunk(x, 65536);
  c.trim();
  EXPECT_EQ(Cache::cached_bytes(), 0u);
}

// ---- MappingCache -------------------------------------------------------------

// A policy whose limit, largest kept mapping, delay and clock a test sets.
// Each test instantiates its own (Tag), so each has a cache of its own.
template <int Tag>
struct TestPolicy {
  static constexpr int kSlots = 4;
  static inline std::size_t lim = std::size_t{1} << 30;
  static inline std::size_t max = std::size_t{1} << 30;
  static inline std::int64_t delay = kNever;
  static inline std::int64_t clock = 0;
  static std::size_t limit() noexcept { return lim; }
  static std::size_t max_bytes() noexcept { return max; }
  static std::int64_t delay_ms() noexcept { return delay; }
  static std::int64_t now_ms() noexcept { return clock; }
};
template <int Tag>
using TestCache = MappingCache<AlignedMmapHeap<4096>, TestPolicy<Tag>>;

std::size_t pages(std::size_t n) { return n * os::page_size(); }
std::uint64_t os_maps() { return os::counters().maps.load(); }
std::uint64_t os_unmaps() { return os::counters().unmaps.load(); }
std::uint64_t os_remaps() { return os::counters().remaps.load(); }

// Fresh mappings of these page counts (the first byte of each holds its
// count), then put into the cache in this order.
template <class Cache>
std::vector<void *> cache_of(Cache &c, std::initializer_list<std::size_t> sizes) {
  std::vector<void *> v;
  for (std::size_t n : sizes) {
    void *p = os::map(pages(n));
    EXPECT_NE(p, nullptr);
    static_cast<char *>(p)[0] = static_cast<char>(n);
    v.push_back(p);
  }
  std::size_t i = 0;
  for (std::size_t n : sizes) c.put_chunk(v[i++], pages(n));
  return v;
}

TEST(MappingCache, TheSmallestMappingThatHoldsTheRequestIsTakenAsItIsWithinTwice) {
  TestCache<1> c;
  const std::vector<void *> v = cache_of(c, {3, 8, 5});
  EXPECT_EQ(TestCache<1>::cached_bytes(), pages(16));
  const std::uint64_t m = os_maps(), r = os_remaps();
  std::size_t got = 0;
  void *p = c.get_chunk(pages(4), &got);
  EXPECT_EQ(p, v[2]);            // 5 pages: the best fit, not the first or the largest
  EXPECT_EQ(got, pages(5));      // as it is: 5 <= 2 x 4
  EXPECT_EQ(static_cast<char *>(p)[0], 5) << "contents are left as they were";
  EXPECT_EQ(os_maps(), m);
  EXPECT_EQ(os_remaps(), r);
  EXPECT_EQ(TestCache<1>::hits(), 1u);
  EXPECT_EQ(TestCache<1>::resizes(), 0u);
  EXPECT_EQ(TestCache<1>::cached_bytes(), pages(11));
  c.put_chunk(p, got);
  c.expire(true);
}

TEST(MappingCache, AMappingMoreThanTwiceTheRequestIsSplitAndTheTailWaitsForItsHead) {
  TestCache<2> c;
  const std::vector<void *> v = cache_of(c, {10});
  auto *base = static_cast<char *>(v[0]);
  base[pages(9)] = 9;  // a page of the tail the last user touched
  const std::uint64_t m = os_maps(), r = os_remaps(), u = os_unmaps();
  std::size_t got = 0;
  void *p = c.get_chunk(pages(3), &got);
  EXPECT_EQ(p, v[0]);
  EXPECT_EQ(got, pages(6));  // the head: twice the request
  EXPECT_EQ(TestCache<2>::cached_bytes(), pages(4)) << "the tail stays cached";
  EXPECT_EQ(os_maps() + os_remaps() + os_unmaps(), m + r + u) << "a split makes no system call";
  EXPECT_EQ(TestCache<2>::resizes(), 0u);
  // The tail is nobody else's: a request it would hold maps afresh.
  std::size_t got2 = 0;
  void *q = c.get_chunk(pages(3), &got2);
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(q < base || q >= base + pages(10));
  EXPECT_EQ(os_maps(), m + 1);
  EXPECT_EQ(TestCache<2>::cached_bytes(), pages(4));
  c.put_chunk(q, got2);  // kept on its own
  EXPECT_EQ(TestCache<2>::cached_bytes(), pages(7));
  // The head comes back: joined with its tail, the whole mapping is cached
  // again, the tail's pages as they were.
  c.put_chunk(p, got);
  EXPECT_EQ(TestCache<2>::cached_bytes(), pages(13));
  void *w = c.get_chunk(pages(10), &got);
  EXPECT_EQ(w, v[0]);
  EXPECT_EQ(got, pages(10));
  EXPECT_EQ(base[pages(9)], 9);
  EXPECT_EQ(os_remaps(), r) << "taking the joined mapping whole resizes nothing";
  c.put_chunk(w, got);
  c.expire(true);
}

TEST(MappingCache, ATailLeftAloneGoesBackWithTheMappingsAgeAndTheHeadStaysMapped) {
  TestCache<10> c;
  using P = TestPolicy<10>;
  P::delay = 100;
  P::clock = 1000;
  const std::vector<void *> v = cache_of(c, {8});
  auto *base = static_cast<char *>(v[0]);
  P::clock = 1050;
  std::size_t got = 0;
  void *p = c.get_chunk(pages(2), &got);
  ASSERT_EQ(p, base);
  ASSERT_EQ(got, pages(4));
  const std::uint64_t u = os_unmaps();
  P::clock = 1099;
  c.expire(false);
  EXPECT_EQ(os_unmaps(), u) << "the tail is younger than the delay";
  P::clock = 1100;  // 100 ms since the whole mapping was freed, not since the split
  c.expire(false);
  EXPECT_EQ(os_unmaps(), u + 1);
  EXPECT_EQ(TestCache<10>::cached_bytes(), 0u);
  base[pages(4) - 1] = 1;  // the head is still mapped and writable
  EXPECT_EQ(c.claim_tail(base + pages(4)), 0u) << "no tail once it went back";
  c.put_chunk(p, got);  // the head alone
  EXPECT_EQ(TestCache<10>::cached_bytes(), pages(4));
  c.expire(true);
  P::delay = kNever;
}

TEST(MappingCache, AHolderClaimsItsTailToGrowInPlace) {
  TestCache<11> c;
  const std::vector<void *> v = cache_of(c, {12});
  std::size_t got = 0;
  void *p = c.get_chunk(pages(4), &got);
  ASSERT_EQ(p, v[0]);
  ASSERT_EQ(got, pages(8));
  EXPECT_EQ(c.claim_tail(static_cast<char *>(p) + pages(7)), 0u) << "only at the head's end";
  EXPECT_EQ(c.claim_tail(static_cast<char *>(p) + got), pages(4));
  EXPECT_EQ(TestCache<11>::cached_bytes(), 0u);
  static_cast<char *>(p)[pages(12) - 1] = 1;  // the claimed tail is mapped
  c.put_chunk(p, pages(12));
  EXPECT_EQ(TestCache<11>::cached_bytes(), pages(12));
  c.expire(true);
}

TEST(MappingCache, AHeldShrinksEndWaitsForItsMappingUnlessTooBig) {
  TestCache<12> c;
  using P = TestPolicy<12>;
  P::max = pages(4);
  auto *base = static_cast<char *>(os::map(pages(10)));
  ASSERT_NE(base, nullptr);
  base[pages(7)] = 7;
  const std::uint64_t calls = os_maps() + os_unmaps() + os_remaps();
  EXPECT_FALSE(c.hold_tail(base + pages(2), pages(8))) << "more than the cache keeps";
  EXPECT_TRUE(c.hold_tail(base + pages(6), pages(4)));
  EXPECT_EQ(TestCache<12>::cached_bytes(), pages(4));
  EXPECT_EQ(os_maps() + os_unmaps() + os_remaps(), calls);
  P::max = std::size_t{1} << 30;
  EXPECT_EQ(c.claim_tail(base + pages(6)), pages(4));
  EXPECT_EQ(base[pages(7)], 7) << "claimed, its pages as they were";
  EXPECT_TRUE(c.hold_tail(base + pages(6), pages(4)));
  c.put_chunk(base, pages(6));  // the mapping, joined with its end
  EXPECT_EQ(TestCache<12>::cached_bytes(), pages(10));
  c.expire(true);
}

TEST(MappingCache, FailingAFitTheLargestSmallerMappingIsGrownInPlace) {
  TestCache<3> c;
  cache_of(c, {2});
  // Make room after the mapping: map 16 pages, give back the last 12 (and
  // map nothing else until it grew, which could land in the gap).
  auto *base = static_cast<char *>(os::map(pages(16)));
  ASSERT_NE(base, nullptr);
  os::unmap(base + pages(4), pages(12));
  base[0] = 4;
  c.put_chunk(base, pages(4));
  std::size_t got = 0;
  void *p = c.get_chunk(pages(6), &got);
  EXPECT_EQ(p, base);  // the largest smaller one (4 pages), not the 2-page one
  EXPECT_EQ(got, pages(6));
  EXPECT_EQ(base[0], 4);
  base[pages(6) - 1] = 1;  // the grown tail is mapped
  EXPECT_EQ(TestCache<3>::resizes(), 1u);
  EXPECT_EQ(TestCache<3>::cached_bytes(), pages(2));
  c.put_chunk(p, got);
  c.expire(true);
}

TEST(MappingCache, AMappingThatCannotGrowStaysCachedAndAFreshOneIsMapped) {
  TestCache<4> c;
  auto *base = static_cast<char *>(os::map(pages(8)));
  ASSERT_NE(base, nullptr);
  os::unmap(base + pages(4), pages(4));
  // Occupy the page right after the mapping so that it cannot grow.
  void *blocker = ::mmap(base + pages(4), pages(1), PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(blocker, base + pages(4));
  c.put_chunk(base, pages(4));
  const std::uint64_t m = os_maps();
  std::size_t got = 0;
  void *p = c.get_chunk(pages(6), &got);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p, base);
  EXPECT_EQ(got, pages(6));
  EXPECT_EQ(os_maps(), m + 1);
  EXPECT_EQ(TestCache<4>::hits(), 0u);
  EXPECT_EQ(TestCache<4>::cached_bytes(), pages(4)) << "the one that could not grow is still there";
  c.put_chunk(p, got);
  c.expire(true);
  ::munmap(blocker, pages(1));
}

TEST(MappingCache, KeepsNothingPastItsLimitItsSlotsOrItsLargestSize) {
  TestCache<5> c;
  using P = TestPolicy<5>;
  P::lim = pages(12);
  P::max = pages(6);
  const std::uint64_t u = os_unmaps();
  cache_of(c, {5, 7, 5, 3});  // 7 is over the largest kept; 5 + 5 + 3 over the limit
  EXPECT_EQ(TestCache<5>::cached_bytes(), pages(10));
  EXPECT_EQ(os_unmaps(), u + 2);
  // Only 4 slots, however small the mappings.
  P::lim = pages(100);
  cache_of(c, {1, 1, 1});
  EXPECT_EQ(TestCache<5>::cached_bytes(), pages(12));
  EXPECT_EQ(os_unmaps(), u + 3);
  // Nothing is grown past the largest kept size: a fresh mapping instead.
  std::size_t got = 0;
  const std::uint64_t m = os_maps();
  void *p = c.get_chunk(pages(8), &got);
  EXPECT_EQ(os_maps(), m + 1);
  EXPECT_EQ(TestCache<5>::cached_bytes(), pages(12));
  c.put_chunk(p, got);  // over the largest kept: unmapped
  EXPECT_EQ(os_unmaps(), u + 4);
  c.expire(true);
  EXPECT_EQ(TestCache<5>::cached_bytes(), 0u);
  EXPECT_EQ(os_unmaps(), u + 8);
}

TEST(MappingCache, MappingsGoBackOnceTheyWaitedTheDelay) {
  TestCache<6> c;
  using P = TestPolicy<6>;
  P::delay = 100;
  P::clock = 1000;
  const std::uint64_t u = os_unmaps();
  cache_of(c, {2});
  P::clock = 1060;
  cache_of(c, {3});
  EXPECT_EQ(TestCache<6>::cached_bytes(), pages(5));
  P::clock = 1099;
  c.expire(false);
  EXPECT_EQ(os_unmaps(), u);
  P::clock = 1100;
  c.expire(false);  // the first waited 100 ms
  EXPECT_EQ(os_unmaps(), u + 1);
  EXPECT_EQ(TestCache<6>::cached_bytes(), pages(3));
  P::clock = 1170;
  cache_of(c, {1});  // a put expires too: the second waited 110 ms
  EXPECT_EQ(os_unmaps(), u + 2);
  EXPECT_EQ(TestCache<6>::cached_bytes(), pages(1));
  c.expire(true);  // trim: whatever their age
  EXPECT_EQ(os_unmaps(), u + 3);
  EXPECT_EQ(TestCache<6>::cached_bytes(), 0u);
}

// A source that refuses fresh mappings while `starved`, as the system does
// when the address space runs out, until something is given back.
struct StarvedSource : AlignedMmapHeap<4096> {
  static inline bool starved = false;
  void *get_chunk(std::size_t bytes) noexcept {
    if (starved) {
      errno = ENOMEM;
      return nullptr;
    }
    return AlignedMmapHeap<4096>::get_chunk(bytes);
  }
  void put_chunk(void *p, std::size_t bytes) noexcept {
    starved = false;
    AlignedMmapHeap<4096>::put_chunk(p, bytes);
  }
};

TEST(MappingCache, WhenTheSourceRefusesTheCacheIsEmptiedAndTheRequestTriedAgain) {
  using Cache = MappingCache<StarvedSource, TestPolicy<7>>;
  Cache c;
  TestPolicy<7>::max = pages(4);
  cache_of(c, {2, 3});
  StarvedSource::starved = true;
  errno = 1234;
  std::size_t got = 0;
  void *p = c.get_chunk(pages(16), &got);  // nothing cached can serve it
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(got, pages(16));
  EXPECT_EQ(errno, 1234) << "the failed first try must not leak into errno";
  EXPECT_EQ(Cache::cached_bytes(), 0u);
  c.put_chunk(p, got);
  StarvedSource::starved = true;
  EXPECT_EQ(c.get_fresh(pages(2)), nullptr) << "nothing cached: no second try";
  EXPECT_EQ(errno, ENOMEM);
  StarvedSource::starved = false;
}

TEST(MappingCache, ForkHooksLeaveTheLockUsable) {
  TestCache<8> c;
  TestCache<8>::prepare_fork();
  TestCache<8>::parent_after_fork();
  TestCache<8>::prepare_fork();
  TestCache<8>::child_after_fork();  // as in a child: reset, not unlocked by its holder
  cache_of(c, {1});
  EXPECT_EQ(TestCache<8>::cached_bytes(), pages(1));
  c.expire(true);
}

TEST(Os, MapAlignedHonoursLargeAlignments) {
  for (std::size_t a : {std::size_t{1} << 16, std::size_t{1} << 21, std::size_t{1} << 24}) {
    void *p = os::map_aligned(os::page_size() * 3, a);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % a, 0u);
    static_cast<char *>(p)[0] = 1;
    os::unmap(p, os::page_size() * 3);
  }
}

TEST(Os, RemapKeepsContentsAndAlignmentWhetherItMovesOrNot) {
  const std::size_t a = std::size_t{1} << 22, ps = os::page_size();
  auto *p = static_cast<unsigned char *>(os::map_aligned(ps * 4, a));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < ps * 4; ++i) p[i] = static_cast<unsigned char>(i * 7);
  // Occupy the pages right after the mapping so that growing must move.
  void *blocker = ::mmap(p + ps * 4, ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  const bool blocked = blocker == p + ps * 4;
  const std::uint64_t remaps = os::counters().remaps.load();
  errno = 1234;
  auto *q = static_cast<unsigned char *>(os::remap(p, ps * 4, ps * 1000, a));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(errno, 1234);  // a failed in-place attempt must not leak into errno
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % a, 0u);
  if (blocked) {
    EXPECT_NE(q, p);
  }
  for (std::size_t i = 0; i < ps * 4; ++i) ASSERT_EQ(q[i], static_cast<unsigned char>(i * 7)) << i;
  q[ps * 1000 - 1] = 1;  // the new tail is mapped and writable
  auto *r = static_cast<unsigned char *>(os::remap(q, ps * 1000, ps * 2, a));
  EXPECT_EQ(r, q);  // shrinking never moves
  EXPECT_EQ(r[ps + 5], static_cast<unsigned char>((ps + 5) * 7));
  EXPECT_EQ(os::counters().remaps.load(), remaps + 2);
  os::unmap(r, ps * 2);
  if (blocked) ::munmap(blocker, ps);
}

TEST(Os, ThreadRunnableOnTellsARunnableThreadsCpuFromABlockedOne) {
  errno = 4321;
  const int self = os::thread_runnable_on(os::thread_id());
  EXPECT_EQ(errno, 4321);
  if (self < 0) GTEST_SKIP() << "this system's /proc does not give a thread's state";
  EXPECT_LT(self, CPU_SETSIZE);
  EXPECT_EQ(os::thread_runnable_on(0), -1);
  EXPECT_EQ(os::thread_runnable_on(-1), -1);
  // A thread blocked in a read of an empty pipe sleeps (S): not runnable.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<int> tid{0};
  std::thread t([&] {
    tid = os::thread_id();
    char c;
    (void)!read(fds[0], &c, 1);
  });
  while (tid.load() == 0) std::this_thread::yield();
  bool blocked = false;
  for (int i = 0; i < 2000 && !blocked; ++i) {  // until it has entered the read: 2 s at most
    blocked = os::thread_runnable_on(tid.load()) < 0;
    if (!blocked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(blocked);
  // A thread that spins is running, or waiting for a CPU (R) either way.
  std::atomic<bool> stop{false};
  std::atomic<int> spinner{0};
  std::thread s([&] {
    spinner = os::thread_id();
    while (!stop.load()) {
    }
  });
  while (spinner.load() == 0) std::this_thread::yield();
  EXPECT_GE(os::thread_runnable_on(spinner.load()), 0);
  stop = true;
  s.join();
  EXPECT_EQ(os::thread_runnable_on(spinner.load()), -1);  // gone: no such thread
  (void)!write(fds[1], "x", 1);
  t.join();
  close(fds[0]);
  close(fds[1]);
  errno = 4321;
  os::step_aside(10);
  EXPECT_EQ(errno, 4321);
}

TEST(PtrSet, InsertEraseContainsAndIterateAcrossGrowth) {
  PtrSet s;
  std::vector<char> mem(100000);
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(s.insert(&mem[i * 4]));
  EXPECT_EQ(s.size(), 20000u);
  for (int i = 0; i < 20000; i += 2) ASSERT_TRUE(s.erase(&mem[i * 4]));
  EXPECT_FALSE(s.erase(&mem[0]));
  EXPECT_EQ(s.size(), 10000u);
  for (int i = 0; i < 20000; ++i) EXPECT_EQ(s.contains(&mem[i * 4]), i % 2 == 1);
  std::size_t n = 0;
  s.for_each([&](void *) { ++n; });
  EXPECT_EQ(n, 10000u);
  // churn: tombstones must not fill the table forever
  for (int r = 0; r < 50; ++r) {
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(s.insert(&mem[80000 + i]));
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(s.erase(&mem[80000 + i]));
  }
  EXPECT_EQ(s.size(), 10000u);
}

// ---- FitBins (fit_bins.hpp): the segregated-fit index on its own, over plain
// nodes, in the two geometries the allocators use: vam's large-object lists
// (best fit) and a reap's bins (first fit among eight).

namespace {

struct TestNode {
  std::size_t size;
  TestNode *next;
  TestNode *prev;
};

struct TestLinks {
  using Node = TestNode;
  static std::size_t size(TestNode *n) { return n->size; }
  static TestNode *next(TestNode *n) { return n->next; }
  static void set_links(TestNode *n, TestNode *nx, TestNode *pv) { n->next = nx; n->prev = pv; }
  static void get_links(TestNode *n, TestNode **nx, TestNode **pv) { *nx = n->next; *pv = n->prev; }
  static void set_next(TestNode *n, TestNode *nx) { n->next = nx; }
  static void set_prev(TestNode *n, TestNode *pv) { n->prev = pv; }
};

// vam's large-object geometry: 2048 exact lists below 32 KiB, then eight per
// power of two, best fit, sizes below 8 MiB (no clamp).
using BestBins = FitBins<TestLinks, BinGeometry<16, 0, 2048, 8, 2112, Fit::best, 0, std::size_t{1} << 22>>;
// A reap's geometry: 63 exact bins from 32 bytes, then four per power of two,
// first fit among eight, larger sizes clamped into the last bin.
using FirstBins = FitBins<TestLinks, BinGeometry<16, 32, 63, 4, 192, Fit::bounded_first, 8>>;

template <class Bins>
struct Pool {
  std::vector<TestNode> nodes = std::vector<TestNode>(64);
  int used = 0;
  TestNode *add(Bins &bins, std::size_t s) {
    TestNode *n = &nodes.at(used++);
    n->size = s;
    bins.insert(n, s);
    return n;
  }
};

}  // namespace

TEST(FitBins, BinsFollowTheGeometryExactThenRangedAndClampOnlyWhenSizesCanPassTheLastBin) {
  for (std::size_t s = 0; s < 32768; s += 16) ASSERT_EQ(BestBins::bin_of(s), int(s / 16)) << s;
  EXPECT_EQ(BestBins::bin_of(32768), 2048);
  EXPECT_EQ(BestBins::bin_of(32768 + 4095), 2048);  // eight bins per power of two: 4 KiB wide here
  EXPECT_EQ(BestBins::bin_of(32768 + 4096), 2049);
  EXPECT_EQ(BestBins::bin_of(65536), 2056);
  EXPECT_EQ(BestBins::bin_of((std::size_t{1} << 22) - 16), 2103);
  EXPECT_EQ(BestBins::bin_of((std::size_t{1} << 23) - 16), 2111);  // the last bin, reached unclamped
  for (std::size_t s = 32; s <= 1024; s += 16) ASSERT_EQ(FirstBins::bin_of(s), int(s / 16) - 2) << s;
  EXPECT_EQ(FirstBins::bin_of(1040), 63);
  EXPECT_EQ(FirstBins::bin_of(1280), 64);  // four per power of two: 256 bytes wide here
  EXPECT_EQ(FirstBins::bin_of(2048), 67);
  EXPECT_EQ(FirstBins::bin_of(std::size_t{1} << 50), FirstBins::kBins - 1);
  // The reaps' bins are exactly this geometry.
  for (std::size_t s = 32; s < (std::size_t{1} << 40); s = s * 9 / 8 + 16) {
    const std::size_t r = s & ~std::size_t{15};
    ASSERT_EQ(SegregatedBins::bin_of(r), FirstBins::bin_of(r)) << r;
  }
}

TEST(FitBins, AnExactBinHandsOutItsNewestBlockAndAMissSkipsToTheNextNonEmptyBin) {
  for (int round = 0; round < 2; ++round) {
    BestBins best;
    FirstBins first;
    Pool<BestBins> pb;
    Pool<FirstBins> pf;
    pb.add(best, 48);
    TestNode *b48 = pb.add(best, 48);
    pb.add(best, 64);
    // Far above, in another bitmap word (bin 2056 for vam, 70 for a reap).
    TestNode *bfar = pb.add(best, 65536);
    pf.add(first, 48);
    TestNode *f48 = pf.add(first, 48);
    TestNode *ffar = pf.add(first, 3000);
    EXPECT_EQ(best.find(48), b48);  // LIFO
    EXPECT_EQ(first.find(48), f48);
    EXPECT_EQ(best.find(80), bfar);  // bins 5 .. 2055 are empty
    EXPECT_EQ(first.find(80), ffar);
    EXPECT_EQ(best.find(65552), nullptr);
    EXPECT_EQ(first.find(3008), nullptr);
    // find leaves the block in place; take_fit takes it out.
    EXPECT_EQ(first.take_fit(80), ffar);
    EXPECT_EQ(first.take_fit(80), nullptr);
    EXPECT_FALSE(first.empty());
  }
}

TEST(FitBins, ARangedBinIsSearchedBestFitOrFirstFitAsTheGeometrySays) {
  BestBins best;
  Pool<BestBins> pb;
  // One ranged bin, [32 KiB, 36 KiB): the head is the worst fit.
  TestNode *good = pb.add(best, 34000);
  pb.add(best, 33008);  // too small for 33500
  TestNode *worse = pb.add(best, 36000);
  EXPECT_EQ(best.find(33500), good);
  EXPECT_EQ(best.find(33008), pb.nodes.data() + 1);
  EXPECT_EQ(best.find(36000), worse);
  EXPECT_EQ(best.find(36016), nullptr);  // nothing in the bin fits, nothing above

  FirstBins first;
  Pool<FirstBins> pf;
  // One ranged bin, [1280, 1536): first fit takes the head, not the tightest.
  TestNode *tight = pf.add(first, 1392);
  TestNode *head = pf.add(first, 1504);
  EXPECT_EQ(first.find(1300), head);
  first.remove(head);
  EXPECT_EQ(first.find(1300), tight);
  // Eight too-small blocks in front of the fitting one use up the budget: the
  // search moves to the next non-empty bin even though this one holds a fit.
  for (int i = 0; i < 8; ++i) pf.add(first, 1296);
  EXPECT_EQ(first.find(1300), nullptr);
  TestNode *above = pf.add(first, 1600);
  EXPECT_EQ(first.find(1300), above);
  first.remove(pf.nodes.data() + 9);  // one of the small ones: the fit is within reach again
  EXPECT_EQ(first.find(1300), tight);
}

TEST(FitBins, RemovingFromTheHeadMiddleAndTailKeepsListsAndBitmapRight) {
  BestBins best;
  Pool<BestBins> pb;
  TestNode *n[4];
  for (auto &x : n) x = pb.add(best, 4096);  // list: n3 n2 n1 n0
  TestNode *other = pb.add(best, 100000);
  best.remove(n[2]);  // middle
  EXPECT_EQ(n[3]->next, n[1]);
  EXPECT_EQ(n[1]->prev, n[3]);
  best.remove(n[3]);  // head
  EXPECT_EQ(best.find(4096), n[1]);
  EXPECT_EQ(n[1]->prev, nullptr);
  best.remove(n[0]);  // tail
  EXPECT_EQ(n[1]->next, nullptr);
  best.remove(n[1]);  // last one: its bin's bit goes, the search skips it
  EXPECT_EQ(best.find(4096), other);
  std::vector<TestNode *> seen;
  best.for_each([&](TestNode *x) { seen.push_back(x); });
  EXPECT_EQ(seen, std::vector<TestNode *>{other});
  best.remove(other);
  EXPECT_TRUE(best.empty());
  EXPECT_EQ(best.find(48), nullptr);
}

TEST(FitBins, ForEachVisitsEveryBlockInSizeOrderAndMayUnlinkTheOneItIsGiven) {
  FirstBins first;
  Pool<FirstBins> pf;
  const std::size_t sizes[] = {5000, 48, 1040, 48, 1 << 20, 64, 1040};
  for (std::size_t s : sizes) pf.add(first, s);
  std::vector<std::size_t> got;
  first.for_each([&](TestNode *x) {
    got.push_back(x->size);
    first.remove(x);
  });
  EXPECT_EQ(got, (std::vector<std::size_t>{48, 48, 64, 1040, 1040, 5000, 1 << 20}));
  EXPECT_TRUE(first.empty());
  pf.add(first, 64);
  first.clear();
  EXPECT_TRUE(first.empty());
  EXPECT_EQ(first.find(32), nullptr);
}

// ---- coalesce (coalesce.hpp): the merge step over a minimal tag layout —
// an array of blocks with size and in-use per header and the predecessor's
// size — counting what the hooks are told.

namespace {

struct ToyBlock {
  std::size_t size;  // in slots
  std::size_t prev;  // predecessor's size, 0 for the first
  bool in_use;
};

struct ToyTags {
  using Block = ToyBlock;
  std::vector<ToyBlock *> taken, buried, kept;
  static ToyBlock *after(ToyBlock *b, std::size_t s) { return b + s; }
  static bool is_free(ToyBlock *n) { return !n->in_use; }
  static std::size_t size(ToyBlock *n) { return n->size; }
  void keep(ToyBlock *n) { kept.push_back(n); }
  static ToyBlock *free_before(ToyBlock *b, std::size_t *ps) {
    if (b->prev == 0 || (b - b->prev)->in_use) return nullptr;
    *ps = b->prev;
    return b - b->prev;
  }
  void take(ToyBlock *x) { taken.push_back(x); }
  void bury(ToyBlock *h) { buried.push_back(h); }
};

// Blocks of sizes 2, 3, 1, 2 then a sentinel (size 0, in use).
struct ToyArea {
  ToyBlock b[9] = {};
  ToyBlock *at[5];
  explicit ToyArea(std::vector<bool> used) {
    const std::size_t sizes[] = {2, 3, 1, 2, 0};
    std::size_t off = 0, prev = 0;
    for (int i = 0; i < 5; ++i) {
      at[i] = &b[off];
      *at[i] = {sizes[i], prev, i == 4 ? true : bool(used[i])};
      prev = sizes[i];
      off += sizes[i];
    }
  }
};

}  // namespace

TEST(Coalesce, MergesWithAFreeSuccessorAndAFreePredecessorAndTellsTheHooks) {
  ToyArea a({false, true, false, true});  // free, freeing, free, in use
  ToyTags t;
  std::size_t s = a.at[1]->size;
  ToyBlock *m = coalesce(t, a.at[1], s);
  EXPECT_EQ(m, a.at[0]);
  EXPECT_EQ(s, 6u);  // 2 + 3 + 1
  EXPECT_EQ(t.taken, (std::vector<ToyBlock *>{a.at[2], a.at[0]}));   // successor first
  EXPECT_EQ(t.buried, (std::vector<ToyBlock *>{a.at[2], a.at[1]}));  // headers now inside
  EXPECT_TRUE(t.kept.empty());
}

TEST(Coalesce, InUseNeighboursStayAndTheSuccessorIsToldItsPredecessorIsFree) {
  ToyArea a({true, true, true, true});
  ToyTags t;
  std::size_t s = a.at[1]->size;
  EXPECT_EQ(coalesce(t, a.at[1], s), a.at[1]);
  EXPECT_EQ(s, 3u);
  EXPECT_TRUE(t.taken.empty());
  EXPECT_TRUE(t.buried.empty());
  EXPECT_EQ(t.kept, std::vector<ToyBlock *>{a.at[2]});

  // The first block has no predecessor; the last stops at the sentinel.
  ToyArea f({true, true, true, true});
  ToyTags u;
  s = f.at[0]->size;
  EXPECT_EQ(coalesce(u, f.at[0], s), f.at[0]);
  EXPECT_EQ(s, 2u);
  ToyArea l({true, true, false, true});
  ToyTags w;
  s = l.at[3]->size;
  EXPECT_EQ(coalesce(w, l.at[3], s), l.at[2]);
  EXPECT_EQ(s, 3u);
  EXPECT_EQ(w.kept, std::vector<ToyBlock *>{l.at[4]});
}
