// threads_test.cpp — thread heaps (threads.cpp): a heap per thread on its first
// malloc, none for a thread that only frees, adoption of exited threads' heaps,
// and threads freeing each other's objects.
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

TEST(VamHardening, DoubleFreeIntoAnExitedThreadsHeapAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *p = nullptr;
        std::thread([&] { p = vam_malloc(64); }).join();
        vam_free(p);  // remote frees into the abandoned heap
        vam_free(p);
        vam_stats_t s;
        vam_stats(&s);  // applies them
      },
      "vam: free\\(\\): double free detected");
}

// A thread's heap pointer starts at a shared empty heap (api.hpp) whose
// class fronts are all null, so malloc's inline path tests no pointer: the
// first malloc of every kind misses and gets the thread a real heap, and a
// thread that only frees (remotely) or collects never gets one, nor puts
// anything into the empty heap.
TEST(VamThreads, AThreadsFirstMallocOfEveryKindGetsItAHeap) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{8}, size_t{9}, size_t{100}, alloclab::vam::kSmallMax,
                   alloclab::vam::kSmallMax + 1, size_t{3000}, size_t{70000}, size_t{2} << 20}) {
    bool ok = false;
    std::thread([&] {
      char *p = static_cast<char *>(vam_malloc(n));  // the thread's first call
      if (!p || vam_usable_size(p) < n) return;
      fill(p, n, 5);
      char *q = static_cast<char *>(vam_malloc(n));  // its heap serves the next one
      ok = q != nullptr && q != p && check(p, n, 5);
      vam_free(q);
      vam_free(p);
    }).join();
    EXPECT_TRUE(ok) << n;
  }
  int err = 0;
  std::thread([&] {
    void *p = vam_malloc(SIZE_MAX - 4096);  // the thread's first call, impossible
    err = p == nullptr ? errno : -1;
  }).join();
  EXPECT_EQ(err, ENOMEM);
}

TEST(VamThreads, AThreadThatOnlyFreesAndCollectsGetsNoHeap) {
  std::vector<void *> v;
  for (int i = 0; i < 100; ++i) v.push_back(vam_malloc(48));
  // Set up before the frees: this binary's operator new is vam's, and a
  // std::set's nodes (48-byte objects) would take some of them first.
  std::vector<void *> freed(v.begin(), v.end());
  std::sort(freed.begin(), freed.end());
  std::vector<void *> w;
  w.reserve(4000);
  size_t live_before = 0, live_after = 0;
  std::thread([&] {
    const vam_stats_t b = stats();
    vam_collect();  // no heap to collect
    for (void *p : v) vam_free(p);  // remote frees: no segment is the empty heap's
    vam_collect();
    const vam_stats_t a = stats();
    live_before = b.heaps - b.abandoned_heaps;
    live_after = a.heaps - a.abandoned_heaps;
  }).join();
  EXPECT_EQ(live_after, live_before);
  // The frees went to main's heap: its slow path drains them and reuses them.
  // Not necessarily within the next few hundred mallocs: in a run of the
  // whole suite in one process, main's heap may hold that many free slots
  // of the class already, which come first.
  int reused = 0;
  for (int i = 0; i < 4000; ++i) {
    w.push_back(vam_malloc(48));
    reused += std::binary_search(freed.begin(), freed.end(), w.back());
  }
  EXPECT_GT(reused, 90);
  for (void *p : w) vam_free(p);
}

TEST(VamThreads, HeapOfAnExitedThreadIsAdoptedNotLeaked) {
  std::thread([] {
    void *p = vam_malloc(100);
    vam_free(p);
  }).join();
  const size_t heaps = stats().heaps;
  for (int i = 0; i < 5; ++i) {
    std::thread([] {
      std::vector<void *> v;
      for (int k = 0; k < 100; ++k) v.push_back(vam_malloc(32 + k));
      for (void *p : v) vam_free(p);
    }).join();
  }
  EXPECT_EQ(stats().heaps, heaps);  // one after another: the same heap every time
}

// A TLS destructor of a key created after vam's runs after vam's own
// destructor has abandoned the thread's heap; one that frees and mallocs
// again (and re-arms itself, as caches of per-thread buffers do) must not
// keep a heap alive after the thread is gone: 2000 such threads left 2001.
pthread_key_t g_rearming_key;
std::atomic<int> g_destructor_runs{0};
void rearming_destructor(void *v) {
  g_destructor_runs.fetch_add(1);
  vam_free(v);
  void *q = vam_malloc(100);
  pthread_setspecific(g_rearming_key, q);  // glibc runs destructors up to 4 rounds
}
pthread_key_t g_once_key;
void once_destructor(void *v) {
  vam_free(v);
  vam_free(vam_malloc(3000));
  vam_free(vam_malloc(40));
}

TEST(VamThreads, HeapsOfThreadsWhoseTlsDestructorsAllocateAllComeBack) {
  vam_free(vam_malloc(8));  // vam's key exists before ours
  ASSERT_EQ(pthread_key_create(&g_rearming_key, rearming_destructor), 0);
  ASSERT_EQ(pthread_key_create(&g_once_key, once_destructor), 0);
  std::thread([] { vam_free(vam_malloc(8)); }).join();
  const size_t heaps = stats().heaps;
  for (int i = 0; i < 2000; ++i) {
    std::thread([] {
      pthread_setspecific(g_rearming_key, vam_malloc(64));
      pthread_setspecific(g_once_key, vam_malloc(64));
    }).join();
  }
  EXPECT_GE(g_destructor_runs.load(), 2000);
  const vam_stats_t s = stats();
  EXPECT_LE(s.heaps, heaps + 1);  // plus one heap shared by threads on their way out
  EXPECT_LE(s.heaps - s.abandoned_heaps, 2u);  // main's and that one; was 2001
  pthread_key_delete(g_rearming_key);
  pthread_key_delete(g_once_key);
}

TEST(VamThreads, FreesIntoAnExitedThreadsHeapAreReclaimed) {
  std::vector<void *> v;
  v.reserve(2000);
  std::thread([&] {
    for (int i = 0; i < 2000; ++i) v.push_back(vam_malloc(i % 2 ? 3000 : 100));
  }).join();
  const vam_stats_t before = stats();
  for (void *p : v) vam_free(p);  // remote frees into an abandoned heap
  const vam_stats_t after = stats();  // statistics apply them first
  EXPECT_LE(after.live_bytes + 1000 * 3000 + 1000 * 100, before.live_bytes + 4096);
}

// An object of the threads test below: its size at the front, a byte made
// from the size at the end. Whoever frees it reads both back first.
void *make_sized(size_t n) {
  auto *p = static_cast<unsigned char *>(vam_malloc(n));
  if (!p) return nullptr;
  memcpy(p, &n, sizeof n);
  p[n - 1] = static_cast<unsigned char>(n * 31 + 7);
  return p;
}
bool intact(const void *v) {
  const auto *p = static_cast<const unsigned char *>(v);
  size_t n;
  memcpy(&n, p, sizeof n);
  return n > sizeof n && n <= 200100 && vam_usable_size(v) >= n &&
         p[n - 1] == static_cast<unsigned char>(n * 31 + 7);
}

TEST(VamThreads, ManyThreadsAllocateAndFreeEachOthersObjects) {
  constexpr int kThreads = 4;
  constexpr int kPer = 20000;
  std::vector<std::atomic<void *>> slots(kThreads * 64);
  for (auto &s : slots) s.store(nullptr);
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      uint64_t x = 0x9E3779B97F4A7C15ull * (t + 1);
      for (int i = 0; i < kPer; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t n = 16 + x % (x % 16 == 0 ? 200000 : 2000);  // room for the size and the end byte
        void *p = make_sized(n);
        ASSERT_NE(p, nullptr);
        void *old = slots[x % slots.size()].exchange(p);
        if (old) {
          if (!intact(old)) bad.fetch_add(1);  // overwritten while it was live
          vam_free(old);
        }
      }
    });
  }
  for (auto &t : ts) t.join();
  for (auto &s : slots) {
    void *p = s.load();
    if (p && !intact(p)) bad.fetch_add(1);
    vam_free(p);
  }
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
