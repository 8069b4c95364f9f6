// When libvam reuses memory instead of asking the OS again, and that what it
// keeps for reuse still goes back: the huge-object cache (mappings reused
// across sizes, bounded, expired after VAM_DISCARD_DELAY_MS, dropped when
// the address space runs out), the delayed discarding of free pages in the
// large-object regions (counted as they are, not as they were freed), and
// the empty pages an exiting thread leaves to the next (a shared budget).
// Prefixed API; runs in every build, the sanitizers' included.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "layers/os.hpp"  // call counters of the OS layer libvam maps through
#include "vam/huge.hpp"    // the huge cache's hit counters

namespace {

vam_stats_t stats() {
  vam_stats_t s;
  vam_stats(&s);
  return s;
}

std::uint64_t maps() { return alloclab::os::counters().maps.load(); }
std::uint64_t unmaps() { return alloclab::os::counters().unmaps.load(); }
// Every call through the OS seam: maps, unmaps, resizes (failed in-place
// ones included) and discards.
std::uint64_t system_calls() {
  auto &c = alloclab::os::counters();
  return c.maps.load() + c.unmaps.load() + c.remaps.load() + c.failed_resizes.load() + c.discards.load();
}

// Another thread that owns a heap for the lifetime of this object: libvam
// then applies VAM_DISCARD_THRESHOLD (256 pages), not the lone thread's one.
class SecondHeap {
 public:
  SecondHeap()
      : t_([this] {
          vam_free(vam_malloc(16));
          phase_ = 1;
          while (phase_.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }) {
    while (phase_.load() != 1) std::this_thread::yield();
  }
  ~SecondHeap() {
    phase_ = 2;
    t_.join();
  }

 private:
  std::atomic<int> phase_{0};
  std::thread t_;
};

// ---- huge objects ----------------------------------------------------------

// A huge object of n bytes, written and freed into an emptied cache: its
// mapping is the only one the cache holds.
char *cached_huge(std::size_t n) {
  vam_collect();
  char *p = static_cast<char *>(vam_malloc(n));
  if (p != nullptr) {
    memset(p, 1, n);
    vam_free(p);
  }
  return p;
}

TEST(VamHugeReuse, ASmallerRequestReusesAFreedMappingWithoutANewOne) {
  char *p = cached_huge(900000);
  ASSERT_NE(p, nullptr);
  const std::uint64_t m = maps();
  // Far smaller: the mapping is split at twice the request; the tail stays
  // in the cache, mapped, and no system call is made.
  const std::uint64_t rm = alloclab::os::counters().remaps.load();
  const std::uint64_t um = alloclab::os::counters().unmaps.load();
  char *q = static_cast<char *>(vam_malloc(300000));
  EXPECT_EQ(q, p);
  EXPECT_EQ(maps(), m);
  EXPECT_EQ(alloclab::os::counters().remaps.load(), rm);
  EXPECT_EQ(alloclab::os::counters().unmaps.load(), um);
  EXPECT_GE(vam_usable_size(q), 590000u);
  EXPECT_LT(vam_usable_size(q), 620000u);
  EXPECT_GE(alloclab::vam::huge_cached_pages(), 70);  // the tail: 900000 - 2 x 300000 bytes
  memset(q, 2, 300000);
  vam_free(q);
  // Freed, the head joins its tail: a request of half the whole takes all
  // of it as it is, the pages the first user touched with it.
  char *r = static_cast<char *>(vam_malloc(450000));
  EXPECT_EQ(r, p);
  EXPECT_EQ(maps(), m);
  EXPECT_EQ(alloclab::os::counters().remaps.load(), rm);
  EXPECT_GE(vam_usable_size(r), 900000u);
  EXPECT_EQ(r[899999], 1);
  vam_free(r);
  vam_collect();
}

// link-grammar's parser, once per sentence: a pool of 768 KiB, freed, then
// one of 2 MiB, freed. Each took the other's mapping, and the cache shrank
// it for the first and grew it back for the second: two mremaps a sentence
// (1,200 in a run of 600 sentences). Split and joined, none.
TEST(VamHugeReuse, BuffersOfTwoSizesInTurnShareOneMappingWithNoSystemCall) {
  char *p = cached_huge(2097160);
  ASSERT_NE(p, nullptr);
  const std::uint64_t before = system_calls();
  for (int i = 0; i < 100; ++i) {
    char *a = static_cast<char *>(vam_malloc(786440));
    ASSERT_EQ(a, p);
    memset(a, 3, 786440);
    vam_free(a);
    char *b = static_cast<char *>(vam_malloc(2097160));
    ASSERT_EQ(b, p);
    memset(b, 4, 2097160);
    vam_free(b);
  }
  EXPECT_EQ(system_calls() - before, 0u);
  vam_collect();
  EXPECT_EQ(alloclab::vam::huge_cached_pages(), 0);
}

// A realloc of a split head takes its tail back first: it grows into the
// pages it came from, in place; only the end past the new size, 24 pages,
// waits in the cache (a shrink's tail: the next test).
TEST(VamHugeReuse, ReallocOfASplitHeadGrowsOverItsTail) {
  char *p = cached_huge(1600000);
  ASSERT_NE(p, nullptr);
  char *q = static_cast<char *>(vam_malloc(400000));
  ASSERT_EQ(q, p);
  memset(q, 5, 400000);
  const std::uint64_t m = maps();
  char *r = static_cast<char *>(vam_realloc(q, 1500000));
  EXPECT_EQ(r, p) << "grown where it is";
  EXPECT_EQ(maps(), m);
  EXPECT_EQ(r[399999], 5);
  memset(r, 6, 1500000);
  EXPECT_LE(alloclab::vam::huge_cached_pages(), 25);
  vam_free(r);
  vam_collect();
}

// A realloc that shrinks a huge object leaves the cut-off end mapped in the
// cache, with its pages: a grow back takes it with no system call and no
// page faulted in again (a buffer shrunk and grown in turn, with four such
// buffers in four threads, took 48 M faults and 54 s where glibc took
// 19 s). Freeing the object joins them; left alone, the end goes back after
// the delay (CachedMappingsGoBackAfterTheDelay's rule).
TEST(VamHugeReuse, AShrinkKeepsItsEndForAGrowBack) {
  char *p = cached_huge(4000000);
  ASSERT_NE(p, nullptr);
  char *q = static_cast<char *>(vam_malloc(3900000));
  ASSERT_EQ(q, p);
  memset(q, 7, 3900000);
  const std::int64_t cached = alloclab::vam::huge_cached_pages();
  const std::uint64_t before = system_calls();
  char *r = static_cast<char *>(vam_realloc(q, 1000000));
  EXPECT_EQ(r, p);
  EXPECT_LT(vam_usable_size(r), 1010000u);
  EXPECT_GE(alloclab::vam::huge_cached_pages(), cached + 700) << "the end waits in the cache";
  char *w = static_cast<char *>(vam_realloc(r, 3800000));
  EXPECT_EQ(w, p) << "grown back over its end";
  EXPECT_EQ(w[3799999], 7) << "the end's pages as they were";
  EXPECT_EQ(system_calls() - before, 0u) << "neither the shrink nor the grow made a system call";
  // What is left in the cache: the mapping's pages past the 3,800,000 bytes
  // (49), a shrink's end again.
  EXPECT_LE(alloclab::vam::huge_cached_pages(), cached + 50);
  vam_free(vam_realloc(w, 500000));
  EXPECT_GE(alloclab::vam::huge_cached_pages(), 970) << "freed, the object joins its end";
  vam_collect();
  EXPECT_EQ(alloclab::vam::huge_cached_pages(), 0);
}

// A big buffer's end is held too, above the largest freed mapping the cache
// keeps (4 MiB by default), within the budget; and a buffer grown by realloc
// alone sets the budget's live peak as a malloc does. Held only to 4 MiB,
// and with the peak left at the first malloc's size (forgotten after the
// delay), bench/realloc_churn made 2.7 M faults in 5 s; now 15 K in 0.2 s.
TEST(VamHugeReuse, ABigBufferGrownByReallocKeepsItsShrinksEnd) {
  vam_collect();
  char *p = static_cast<char *>(vam_malloc(300000));
  ASSERT_NE(p, nullptr);
  usleep(150 * 1000);  // the malloc's peak is older than the delay (100 ms)
  char *q = static_cast<char *>(vam_realloc(p, size_t{20} << 20));
  ASSERT_NE(q, nullptr);
  memset(q, 8, size_t{20} << 20);
  const std::uint64_t before = system_calls();
  char *r = static_cast<char *>(vam_realloc(q, size_t{2} << 20));
  EXPECT_EQ(r, q);
  EXPECT_GE(alloclab::vam::huge_cached_pages(), (18 << 20) / 4096 - 1) << "the 18 MiB end is held";
  char *w = static_cast<char *>(vam_realloc(r, size_t{19} << 20));
  EXPECT_EQ(w, q) << "grown back over its end";
  EXPECT_EQ(w[(size_t{19} << 20) - 1], 8);
  EXPECT_EQ(system_calls() - before, 0u);
  vam_free(w);
  vam_collect();
  EXPECT_EQ(alloclab::vam::huge_cached_pages(), 0);
}

TEST(VamHugeReuse, ARequestOfAtLeastHalfTheMappingTakesItAsItIs) {
  char *p = cached_huge(1000000);
  ASSERT_NE(p, nullptr);
  const std::uint64_t m = maps();
  const std::uint64_t r = alloclab::os::counters().remaps.load();
  // 60% of it: shrinking would give back pages just touched, and the next,
  // bigger request would grow the mapping onto fresh ones again.
  char *q = static_cast<char *>(vam_malloc(600000));
  EXPECT_EQ(q, p);
  EXPECT_EQ(maps(), m);
  EXPECT_EQ(alloclab::os::counters().remaps.load(), r);  // was one mremap (a shrink)
  EXPECT_GE(vam_usable_size(q), 1000000u);
  vam_free(q);
  vam_collect();
}

TEST(VamHugeReuse, ManySizesInALoopNeedFewMappings) {
  // The mstress pattern: random sizes from 256 KiB to 1 MiB, a few live.
  vam_collect();
  const std::uint64_t m = maps();
  const std::uint64_t r = alloclab::os::counters().remaps.load();
  std::uint64_t x = 12345;
  void *live[4] = {};
  for (int i = 0; i < 400; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const size_t n = 256 * 1024 + (x >> 33) % (768 * 1024);
    void *&slot = live[i % 4];
    vam_free(slot);
    slot = vam_malloc(n);
    ASSERT_NE(slot, nullptr);
    static_cast<char *>(slot)[n - 1] = 1;
  }
  for (void *p : live) vam_free(p);
  // Mapping each anew takes 400 mappings; a cache that hands out only a
  // near-size match (at most a quarter larger) took 52.
  printf("400 huge objects of random sizes: %llu new mappings, %llu remaps\n",
         static_cast<unsigned long long>(maps() - m),
         static_cast<unsigned long long>(alloclab::os::counters().remaps.load() - r));
  EXPECT_LT(maps() - m, 20u);
  vam_collect();
}

TEST(VamHugeReuse, HitsAreCountedAndASplitResizesNothing) {
  char *p = cached_huge(900000);
  ASSERT_NE(p, nullptr);
  const std::uint64_t h = alloclab::vam::huge_cache_hits();
  const std::uint64_t z = alloclab::vam::huge_cache_resizes();
  EXPECT_GE(alloclab::vam::huge_cached_pages(), 219);  // 900000 bytes and the header: 220 pages
  void *q = vam_malloc(300000);  // split at twice the request
  EXPECT_EQ(q, p);
  EXPECT_EQ(alloclab::vam::huge_cache_hits(), h + 1);
  EXPECT_EQ(alloclab::vam::huge_cache_resizes(), z);
  vam_free(q);
  void *r = vam_malloc(450000);  // the whole, joined again, as it is
  EXPECT_EQ(r, p);
  EXPECT_EQ(alloclab::vam::huge_cache_hits(), h + 2);
  EXPECT_EQ(alloclab::vam::huge_cache_resizes(), z);
  vam_free(r);
  vam_collect();
  EXPECT_EQ(alloclab::vam::huge_cached_pages(), 0);
}

TEST(VamHugeReuse, ARequestAlignedBeyondASegmentGetsAFreshMappingNotACachedOne) {
  // Cached mappings are only known to be segment-aligned (4 MiB).
  char *p = cached_huge(1000000);
  ASSERT_NE(p, nullptr);
  const std::uint64_t m = maps();
  void *q = vam_aligned_alloc(size_t{8} << 20, 1000000);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % (size_t{8} << 20), 0u);
  EXPECT_EQ(maps(), m + 1);
  memset(q, 1, 1000000);
  // The cached mapping is still there for the next plain request.
  char *r = static_cast<char *>(vam_malloc(900000));
  EXPECT_EQ(r, p);
  EXPECT_EQ(maps(), m + 1);
  vam_free(r);
  vam_free(q);
  vam_collect();
}

// Buffers above half of VAM_HUGE_CACHE (8 MiB: 4 MiB) are refused at first;
// one freed and mapped again within the delay grows what the cache keeps
// (if a test before, in the same process, has not grown it already).
TEST(VamHugeReuse, ABufferAboveTheCacheSizeIsKeptOnceTheProgramMapsItsSizeAgain) {
  const size_t n = size_t{12} << 20;
  vam_collect();
  char *p = static_cast<char *>(vam_malloc(n));
  ASSERT_NE(p, nullptr);
  memset(p, 1, n);
  vam_free(p);  // refused: unmapped (run alone)
  char *q = static_cast<char *>(vam_malloc(n));  // a miss right after the refusal: the cache grows
  ASSERT_NE(q, nullptr);
  memset(q, 2, n);
  vam_free(q);  // kept now
  EXPECT_GE(alloclab::vam::huge_cached_pages(), static_cast<std::int64_t>(n / 4096));
  const std::uint64_t h = alloclab::vam::huge_cache_hits();
  const std::uint64_t m = maps();
  char *r = static_cast<char *>(vam_malloc(n - 100000));
  EXPECT_EQ(r, q);
  EXPECT_EQ(maps(), m);
  EXPECT_EQ(alloclab::vam::huge_cache_hits(), h + 1);
  EXPECT_EQ(r[0], 2);  // the same pages, not faulted in anew
  vam_free(r);
  vam_collect();  // and they still go back
  EXPECT_EQ(alloclab::vam::huge_cached_pages(), 0);
}

TEST(VamHugeReuse, ABufferAboveTheCeilingIsNeverKept) {
  const size_t n = size_t{40} << 20;  // above the 32 MiB the cache grows to at most
  vam_collect();
  for (int i = 0; i < 3; ++i) {
    char *p = static_cast<char *>(vam_malloc(n));
    ASSERT_NE(p, nullptr);
    p[0] = p[n - 1] = 1;
    vam_free(p);
    EXPECT_EQ(alloclab::vam::huge_cached_pages(), 0) << i;
  }
}

TEST(VamHugeReuse, ARefusalOlderThanTheDelayDoesNotGrowTheCache) {
  const size_t n = size_t{20} << 20;  // above whatever the tests before grew the cache to
  vam_collect();
  char *p = static_cast<char *>(vam_malloc(n));
  ASSERT_NE(p, nullptr);
  p[0] = 1;
  vam_free(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // VAM_DISCARD_DELAY_MS: 100
  char *q = static_cast<char *>(vam_malloc(n));
  ASSERT_NE(q, nullptr);
  q[0] = 1;
  vam_free(q);
  EXPECT_EQ(alloclab::vam::huge_cached_pages(), 0);
}

TEST(VamHugeReuse, CachedMappingsGoBackAfterTheDelay) {
  vam_collect();
  void *p = vam_malloc(600000);
  void *q = vam_malloc(700000);
  vam_free(p);  // cached
  const vam_stats_t cached = stats();
  const std::uint64_t u = unmaps();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // VAM_DISCARD_DELAY_MS is 100
  vam_free(q);  // cached in turn; frees look at the cache's age: p's mapping goes
  EXPECT_EQ(unmaps(), u + 1);
  EXPECT_LE(stats().pages_in_use + 140, cached.pages_in_use);  // 600000 bytes are 147 pages
  vam_collect();
}

TEST(VamHugeReuse, CollectEmptiesTheCache) {
  void *p = vam_malloc(600000);
  vam_free(p);
  const vam_stats_t before = stats();
  vam_collect();
  EXPECT_LE(stats().pages_in_use + 140, before.pages_in_use);  // 600000 bytes are 147 pages
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
size_t mapped_bytes() {
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long v = 0;
  const int n = fscanf(f, "%lu", &v);
  fclose(f);
  return n == 1 ? v * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

[[noreturn]] void huge_object_after_cached_ones_under_ulimit() {
  void *a = vam_malloc(size_t{5} << 19);  // 2.5 MiB each: three fit the 8 MiB cache
  void *b = vam_malloc(size_t{5} << 19);
  void *c = vam_malloc(size_t{5} << 19);
  if (!a || !b || !c) _exit(3);
  vam_free(a);
  vam_free(b);
  vam_free(c);
  const size_t limit = mapped_bytes() + (size_t{4} << 20);
  const rlimit lim{limit, limit};
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(4);
  // 5 MiB fits only once the cache's 7.5 MiB of address space is given back.
  void *big = vam_malloc(size_t{5} << 20);
  if (!big) _exit(5);
  memset(big, 1, size_t{5} << 20);
  vam_free(big);
  _exit(0);
}
#endif

TEST(VamHugeReuse, RunningOutOfAddressSpaceEmptiesTheCacheFirst) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "RLIMIT_AS cannot be used under a sanitizer";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(huge_object_after_cached_ones_under_ulimit(), ::testing::ExitedWithCode(0), "");
#endif
}

// ---- large objects: delayed discarding ---------------------------------------

TEST(VamDiscardBudget, FreeingAndReallocatingAtTheSamePaceDiscardsNothing) {
  SecondHeap other;  // the 256-page threshold applies
  std::vector<void *> v;
  v.reserve(64);
  for (int i = 0; i < 64; ++i) {
    v.push_back(vam_malloc(40000));  // ten pages each, in a large region
    memset(v.back(), 1, 40000);
  }
  const size_t calls = stats().discard_calls;
  // Each free leaves about nine free pages; the next allocation takes them
  // again. Counted as pages freed since the last sweep, 30 frees reached
  // the threshold and discarded pages about to be reused: 66 sweeps here.
  for (int i = 0; i < 2000; ++i) {
    void *&slot = v[static_cast<size_t>(i) * 7 % 64];
    vam_free(slot);
    slot = vam_malloc(40000);
    memset(slot, 2, 40000);
  }
  EXPECT_LE(stats().discard_calls - calls, 2u);
  for (void *p : v) vam_free(p);
}

// A busy heap always holds some empty pages, so the delay comes due again
// and again while it runs. The delay's sweep used to discard them all,
// pages freed a moment before and about to be reused with them, which the
// program then faulted straight back in (mstress: 14,400 page faults a run,
// 6,400 with VAM_DISCARD=off). It now discards only pages that stayed empty
// from one such sweep to the next. In a fresh process (a death test's), so
// that no earlier test's free chunks are in the heap.
long minor_faults() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Allocates and frees n objects of `size` bytes; frees them in reverse.
void fill_and_empty(std::vector<void *> &v, size_t n, size_t size, long *faults) {
  v.clear();
  const long before = minor_faults();
  for (size_t i = 0; i < n; ++i) {
    v.push_back(vam_malloc(size));
    memset(v.back(), 1, size);
  }
  if (faults) *faults += minor_faults() - before;
  while (!v.empty()) {
    vam_free(v.back());
    v.pop_back();
  }
}

void reuse_within_the_delay() {
  SecondHeap other;  // the 256-page threshold applies
  std::vector<void *> v;
  v.reserve(4096);
  // One block that stays empty, so the heap is never without empty pages, as
  // a busy one is not (the delay runs from when it last had none): two
  // one-page blocks of 16-byte objects, one stays its class's, the other
  // empties, and no block of the classes below (four pages) reuses it.
  fill_and_empty(v, 600, 16, nullptr);
  // Each round fills 16 blocks of 64-byte objects and empties them (15 go
  // on the heap's empty list, 60 pages); 10 ms later an unrelated block
  // empties, which is when the delay is checked, and the next round takes
  // the 15 back. About 400 ms: four delays.
  long faults = 0;
  fill_and_empty(v, 4096, 64, nullptr);  // the first round touches them
  for (int round = 0; round < 40; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    fill_and_empty(v, 600, 160, nullptr);  // another class: a block empties
    fill_and_empty(v, 4096, 64, &faults);
  }
  fprintf(stderr, "page faults while busy: %ld\n", faults);
  exit(faults < 24 ? 0 : 1);  // 51 when the delay's sweep discarded every empty page (4 now)
}

TEST(VamDiscardBudget, PagesReusedWithinTheDelayAreNotDiscardedWhenItComesDue) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults count the sanitizer's shadow memory too (70 under TSan with VAM_DISCARD=off)";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(reuse_within_the_delay(), ::testing::ExitedWithCode(0), "page faults while busy");
}

TEST(VamDiscardBudget, FreedLargeObjectsStillGoBackPastTheBudget) {
  SecondHeap other;
  std::vector<void *> v;
  v.reserve(1600);
  for (int i = 0; i < 1600; ++i) {
    v.push_back(vam_malloc(40000));  // 64 MB
    memset(v.back(), 1, 40000);
  }
  const vam_stats_t full = stats();
  for (void *p : v) vam_free(p);
  const vam_stats_t empty = stats();
  // At most the largest budget (eight times 256 pages) stays resident:
  // emptied regions are unmapped, the one kept is discarded.
  EXPECT_LE(empty.pages_in_use + 16000 - 8 * 256, full.pages_in_use);
}

// ---- thread exit --------------------------------------------------------------

// A thread frees 20 objects of 40000 bytes (about 200 empty pages, under the
// 256-page threshold) and exits.
void allocate_free_and_exit() {
  std::thread([] {
    std::vector<void *> v;
    v.reserve(20);
    for (int i = 0; i < 20; ++i) {
      v.push_back(vam_malloc(40000));
      memset(v.back(), 1, 40000);
    }
    for (void *p : v) vam_free(p);
  }).join();
}

TEST(VamThreadChurn, AnExitingThreadLeavesItsEmptyPagesToTheNextOne) {
  vam_free(vam_malloc(16));
  const vam_stats_t before = stats();
  allocate_free_and_exit();
  const vam_stats_t after = stats();
  // Discarded at every exit, the next thread to adopt the heap faulted them
  // all in again (thread-per-task programs, mstress).
  EXPECT_EQ(after.discard_calls, before.discard_calls);
  EXPECT_GE(after.pages_in_use, before.pages_in_use + 190);
}

TEST(VamThreadChurn, TheEmptyPagesOfAnExitedThreadGoBackAfterTheDelay) {
  vam_free(vam_malloc(16));
  const vam_stats_t before = stats();
  allocate_free_and_exit();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // VAM_DISCARD_DELAY_MS is 100
  const vam_stats_t after = stats();  // applies the abandoned heaps' frees, and their delays
  EXPECT_GT(after.discard_calls, before.discard_calls);
  EXPECT_LE(after.pages_in_use, before.pages_in_use + 20);
}

TEST(VamThreadChurn, ExitedThreadsKeepNoMoreThanTheSharedBudget) {
  // Eight threads each leave about 2500 empty pages (10 MiB, under a heap's
  // largest budget) and wait for each other, so no heap is adopted again:
  // together they may keep 4096 pages (VAM_DISCARD_THRESHOLD_ALONE).
  vam_free(vam_malloc(16));
  const vam_stats_t before = stats();
  std::atomic<int> done{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&done] {
      std::vector<void *> v;
      v.reserve(250);
      for (int i = 0; i < 250; ++i) {
        v.push_back(vam_malloc(40000));
        memset(v.back(), 1, 40000);
      }
      for (void *p : v) vam_free(p);
      done.fetch_add(1);
      while (done.load() < 8) std::this_thread::yield();
    });
  for (auto &t : ts) t.join();
  const vam_stats_t after = stats();
  EXPECT_LE(after.pages_in_use, before.pages_in_use + 4096 + 8 * 64);  // plus segment headers
}

// ---- huge buffers of changing sizes, replaced in a loop (huge.cpp: the budget's recent peak)

TEST(VamHugeChurn, ReplacingBuffersOfChangingSizesMakesFewSystemCalls) {
  vam_collect();
  constexpr int kLive = 4, kSteps = 4000;
  void *live[kLive] = {};
  std::uint64_t x = 88172645463325252ull;  // xorshift: the same sizes every run
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  const std::uint64_t before = system_calls();
  for (int i = 0; i < kSteps; ++i) {
    const std::size_t n = (std::size_t{1} << 20) + next() % (std::size_t{7} << 20);  // 1..8 MiB
    const int k = static_cast<int>(next() % kLive);
    vam_free(live[k]);
    live[k] = vam_malloc(n);
    ASSERT_NE(live[k], nullptr);
    memset(live[k], 1, 4096);
    static_cast<char *>(live[k])[n - 1] = 1;
  }
  const std::uint64_t calls = system_calls() - before;
  for (void *p : live) vam_free(p);
  // One call in five replacements at most (about one in nine here; it was
  // more than one in two: a take resized a mapping, failed to grow one, or
  // mapped afresh).
  EXPECT_LT(calls, static_cast<std::uint64_t>(kSteps / 5)) << calls << " system calls";
  vam_collect();
  vam_stats_t s;
  vam_stats(&s);
  EXPECT_EQ(s.huge_live_bytes, 0u);
}

}  // namespace
