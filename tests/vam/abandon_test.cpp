// abandon_test.cpp — memory of exited threads' heaps back without another
// thread's help (abandon.cpp, threads.cpp).
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

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

}  // namespace
