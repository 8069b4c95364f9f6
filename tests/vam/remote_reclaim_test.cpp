// remote_reclaim_test.cpp — remote frees into the heap of a thread that is
// alive but makes no call come back without it (remote_reclaim.cpp), and
// the reclaims leave a heap whose thread is working intact.
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"
#include "layers/os.hpp"
#include "vam/clock.hpp"
#include "vam/heap.hpp"
#include "vam/layout.hpp"
#include "vam/remote.hpp"

namespace {

using namespace vam_test;
using namespace alloclab::vam;

// Threads that wait for main's word, one step at a time.
struct Steps {
  std::mutex m;
  std::condition_variable cv;
  int done = 0;   // threads that finished the current step
  int step = 0;   // the step main has allowed
  void finished() {
    std::lock_guard<std::mutex> lock(m);
    ++done;
    cv.notify_all();
  }
  void wait_for(int s) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return step >= s; });
  }
  void wait_all(int threads) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return done == threads; });
    done = 0;
  }
  void allow(int s) {
    {
      std::lock_guard<std::mutex> lock(m);
      step = s;
    }
    cv.notify_all();
  }
};

// A producer: fills `mine` with `count` objects of `size` (written with 1s),
// says so, waits for main's word (step 1), and fills it again (with 2s).
void produce_twice(Steps &steps, void **mine, size_t count, size_t size) {
  for (size_t i = 0; i < count; ++i) {
    mine[i] = vam_malloc(size);
    memset(mine[i], 1, size);
  }
  steps.finished();
  steps.wait_for(1);
  for (size_t i = 0; i < count; ++i) {
    mine[i] = vam_malloc(size);
    memset(mine[i], 2, size);
  }
}

// Wake the producers (step 1), wait for them to refill `ptrs`, and check
// that no address came back twice.
void wake_and_check(Steps &steps, std::vector<std::thread> &ts, const std::vector<void *> &ptrs) {
  steps.allow(1);
  for (auto &t : ts) t.join();
  std::vector<void *> sorted(ptrs);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

// Main's side of a working owner's test. Once the owner has allocated
// `handed`, main frees its first three quarters (its last batches sent by
// vam_collect) with g_reclaim_always set, so that every threshold reclaims
// while the owner works (the rules that spare a working owner have their
// own tests: here the reclaims must race it); then sets `drain`, and the
// owner also makes calls that drain (applying the reclaims' records) while
// main frees the rest under the rules and more reclaims may run; then main
// tells the owner it is done and waits for it to exit. Returns how much
// `reclaimed` grew over the first part.
std::uint64_t free_handed_over(Steps &steps, const std::vector<void *> &handed, std::atomic<bool> &drain,
                               std::atomic<bool> &freed, std::thread &owner,
                               const std::atomic<std::uint64_t> &reclaimed) {
  steps.wait_all(1);
  const std::uint64_t before = reclaimed.load();
  const size_t part = handed.size() * 3 / 4;
  g_reclaim_always = true;
  for (size_t i = 0; i < part; ++i) vam_free(handed[i]);
  vam_collect();
  g_reclaim_always = false;
  const std::uint64_t got = reclaimed.load() - before;
  drain = true;
  for (size_t i = part; i < handed.size(); ++i) vam_free(handed[i]);
  vam_collect();
  freed = true;
  owner.join();
  return got;
}

// A new thread (which adopts the heap a working owner left at its exit)
// mallocs `count` objects of `size`: none may be one of `kept`, nor come
// back twice.
void expect_no_address_twice(size_t count, size_t size, const std::vector<void *> &kept) {
  std::thread again([&] {
    std::vector<void *> got(count);
    for (auto &g : got) g = vam_malloc(size);
    std::vector<void *> all(got);
    all.insert(all.end(), kept.begin(), kept.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
    for (void *g : got) vam_free(g);
  });
  again.join();
}

TEST(VamMemoryBack, IdleProducersMemoryComesBackWithoutThem) {
  // Four threads allocate 16 MiB each of 200-byte objects and wait, alive,
  // calling nothing; main frees every object. The frees go onto the four
  // heaps' remote stacks, which their threads do not drain: the reclaims
  // main's batches set off give the pages back (docs/vam.md, "Threads").
  // Then the threads wake, apply the records, and allocate as much again:
  // their heaps work, with no address handed out twice.
  if (g_layout.header != 0) GTEST_SKIP() << "no reclaim with VAM_HEADERS (docs/vam.md, Threads)";
  constexpr int kThreads = 4;
  constexpr size_t kSize = 200;
  constexpr size_t kCount = (size_t{16} << 20) / kSize;
  const size_t table = kThreads * kCount * sizeof(void *);
  auto **ptrs = static_cast<void **>(mmap(nullptr, table, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(ptrs, MAP_FAILED);
  vam_free(vam_malloc(64));  // main's heap exists (its remote frees go in batches)
  const size_t rss0 = rss_bytes();
  Steps steps;
  int twice = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      void **mine = ptrs + t * kCount;
      produce_twice(steps, mine, kCount, kSize);
      std::vector<void *> sorted(mine, mine + kCount);
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        std::lock_guard<std::mutex> lock(steps.m);
        ++twice;
      }
      for (size_t i = 0; i < kCount; ++i) vam_free(mine[i]);
    });
  steps.wait_all(kThreads);
  const size_t rss1 = rss_bytes();
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)  // as below: shadow memory moves it
  ASSERT_GT(rss1, rss0 + kThreads * kCount * kSize * 3 / 4);
#endif
  const std::uint64_t before = g_reclaimed_blocks.load();
  for (size_t i = 0; i < kThreads * kCount; ++i) vam_free(ptrs[i]);
  const size_t rss2 = rss_bytes();
  const std::uint64_t reclaimed = g_reclaimed_blocks.load() - before;
  printf("rss: before %zu MB, allocated %zu MB, after main freed %zu MB; %llu blocks reclaimed\n", rss0 >> 20,
         rss1 >> 20, rss2 >> 20, static_cast<unsigned long long>(reclaimed));
  // 16 MiB a thread in blocks of 16 KiB: 1,024 blocks each, of which only
  // those whose objects were still queued under the threshold stay.
  EXPECT_GT(reclaimed, kThreads * 1024u * 3 / 4);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)  // their shadow memory stays resident
  EXPECT_LT(rss2, rss0 + kThreads * kCount * kSize / 4);  // was all 64 MiB
#endif
  steps.allow(1);
  for (auto &t : ts) t.join();
  munmap(ptrs, table);
  EXPECT_EQ(twice, 0);
  vam_collect();
  EXPECT_LT(stats().small_live_bytes, size_t{1} << 20);
}

TEST(VamMemoryBack, IdleProducersLargeObjectsGiveTheirInsidesBack) {
  // The same with 32 KiB objects (large: above VAM_PAGE_MAX): the first
  // reclaim to meet an object gives back every page inside it but its first
  // and last (the tags' pages) and pushes it back for the owner; the next
  // frees it into the owner's heap (IdleProducersMidSized... below). Left
  // resident: the objects under the last threshold, and two of nine pages
  // of those the last reclaim met first. The bound allows for a run in one
  // process with the whole suite (vam.page-max-8k: threads adopt the heaps
  // earlier tests left); all of it stayed without reclaims.
  constexpr int kThreads = 2;
  constexpr size_t kSize = size_t{32} << 10;
  constexpr size_t kCount = (size_t{16} << 20) / kSize;
  std::vector<void *> ptrs(kThreads * kCount);
  vam_free(vam_malloc(64));
  const size_t rss0 = rss_bytes();
  Steps steps;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (size_t i = 0; i < kCount; ++i) {
        ptrs[t * kCount + i] = vam_malloc(kSize);
        memset(ptrs[t * kCount + i], 1, kSize);
      }
      steps.finished();
      steps.wait_for(1);
      // Awake: the drain frees the objects; the heap serves as much again.
      for (size_t i = 0; i < kCount; ++i) {
        ptrs[t * kCount + i] = vam_malloc(kSize);
        memset(ptrs[t * kCount + i], 2, kSize);
      }
    });
  steps.wait_all(kThreads);
  const size_t rss1 = rss_bytes();
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  // Under a sanitizer the process's resident size also moves with its shadow
  // memory and with what earlier tests' heaps give back meanwhile, so neither
  // this nor the check below measures the reclaim there; the test then checks
  // only that no object is handed out twice.
  ASSERT_GT(rss1, rss0 + kThreads * kCount * kSize * 3 / 4);
#endif
  for (void *p : ptrs) vam_free(p);
  const size_t rss2 = rss_bytes();
  printf("rss: before %zu MB, allocated %zu MB, after main freed %zu MB\n", rss0 >> 20, rss1 >> 20, rss2 >> 20);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(rss2, rss0 + kThreads * kCount * kSize * 6 / 10);  // was all 32 MiB
#endif
  wake_and_check(steps, ts, ptrs);
  for (void *p : ptrs) vam_free(p);
}

TEST(VamMemoryBack, ReclaimsLeaveAWorkingOwnersObjectsAlone) {
  // The owner keeps working while another thread frees what it handed
  // over: fast-path mallocs and frees of another class and, once main has
  // freed most of it (free_handed_over), objects of the handed-over class it
  // keeps, written with a pattern, whose slow paths drain. The reclaims must
  // give back only what was freed: every kept object keeps its pattern, and
  // none is handed out twice.
  if (g_layout.header != 0) GTEST_SKIP() << "no reclaim with VAM_HEADERS (docs/vam.md, Threads)";
  constexpr size_t kSize = 96;
  const size_t count = 4 * static_cast<size_t>(kReclaimObjects);
  std::vector<void *> handed(count);
  std::vector<unsigned char *> kept;
  Steps steps;
  vam_free(vam_malloc(64));
  // Alive and working until main's frees are over (an owner that exited
  // would be an orphan, whose frees are not reclaimed).
  std::atomic<bool> drain{false};
  std::atomic<bool> freed{false};
  std::thread owner([&] {
    for (auto &p : handed) p = vam_malloc(kSize);
    vam_free(vam_malloc(48));  // the other class's front exists: its calls below stay on the fast paths
    steps.finished();
    for (int round = 0; round < 400 || !freed.load(); ++round) {
      for (int i = 0; i < 64; ++i) vam_free(vam_malloc(48));
      if (drain.load() && round % 8 == 0) {
        auto *p = static_cast<unsigned char *>(vam_malloc(kSize));
        memset(p, static_cast<int>(kept.size() & 0xff) | 1, kSize);
        kept.push_back(p);
      }
      if (round % 50 == 0) std::this_thread::yield();
    }
  });
  EXPECT_GT(free_handed_over(steps, handed, drain, freed, owner, g_reclaimed_blocks), 0u);
  for (size_t i = 0; i < kept.size(); ++i)
    for (size_t j = 0; j < kSize; ++j)
      ASSERT_EQ(kept[i][j], static_cast<unsigned char>((i & 0xff) | 1)) << "object " << i << " byte " << j;
  // The owner's exit applied the records (its heap's last drain).
  expect_no_address_twice(count, kSize, std::vector<void *>(kept.begin(), kept.end()));
  for (void *p : kept) vam_free(p);
}

TEST(VamMemoryBack, AnOwnerThatDrainedSinceTheLastThresholdIsNotReclaimed) {
  // An owner that drains its remote stack is working: it will reuse the
  // pages of what it drains, and a reclaim would only make it fault them in
  // again (the public suite's rptest did, at every burst of remote frees;
  // its xmalloc-test, whose producers wait on a full queue for a moment,
  // at every such wait). So a threshold reached after the owner drained
  // takes nothing, nor does one reached within kOwnerWorkingMs of its last
  // drain of frees; the next past that time reclaims. Four steps, each of
  // just over a threshold's frees by main, sent whole (vam_collect):
  //   1. whatever the heap's past, the count has been reached once;
  //   2. after a drain by the owner (a large malloc aligned to more than 16
  //      bytes drains whenever its stack holds anything): no reclaim;
  //   3. no drain since step 2's threshold, but the owner's last drain is
  //      recent (its time set ahead, so that the step's own length cannot
  //      make it old): no reclaim;
  //   4. the last drain older than kOwnerWorkingMs: the blocks come back.
  if (g_layout.header != 0) GTEST_SKIP() << "no reclaim with VAM_HEADERS (docs/vam.md, Threads)";
  constexpr size_t kSize = 96;
  const size_t step = static_cast<size_t>(kReclaimObjects) + 64;
  std::vector<void *> handed(4 * step);
  Steps steps;
  std::atomic<Heap *> owner_heap{nullptr};
  vam_free(vam_malloc(64));  // main's heap exists (its remote frees go in batches)
  std::thread owner([&] {
    for (auto &p : handed) p = vam_malloc(kSize);
    owner_heap.store(t_heap);
    steps.finished();
    steps.wait_for(1);
    vam_free(vam_aligned_alloc(64, g_layout.page_max + 4096));
    steps.finished();
    steps.wait_for(2);
  });
  auto free_step = [&](size_t k) {
    for (size_t i = k * step; i < (k + 1) * step; ++i) vam_free(handed[i]);
    vam_collect();
  };
  steps.wait_all(1);
  free_step(0);
  steps.allow(1);
  steps.wait_all(1);
  Heap *h = owner_heap.load();
  ASSERT_NE(h, nullptr);
  EXPECT_NE(h->drained_ms.load(), 0) << "the owner's drain of frees is timed";
  const std::uint64_t before = g_reclaimed_blocks.load();
  free_step(1);
  const std::uint64_t after_drain = g_reclaimed_blocks.load() - before;
  h->drained_ms.store(now_ms() + 60000);
  free_step(2);
  const std::uint64_t after_recent = g_reclaimed_blocks.load() - before - after_drain;
  h->drained_ms.store(now_ms() - kOwnerWorkingMs - 1);
  free_step(3);
  const std::uint64_t after_idle = g_reclaimed_blocks.load() - before - after_drain - after_recent;
  printf("blocks reclaimed: %llu after the owner drained, %llu within kOwnerWorkingMs of its drain, "
         "%llu past it\n",
         static_cast<unsigned long long>(after_drain), static_cast<unsigned long long>(after_recent),
         static_cast<unsigned long long>(after_idle));
  EXPECT_EQ(after_drain, 0u);
  EXPECT_EQ(after_recent, 0u);
  EXPECT_GT(after_idle, 0u);
  steps.allow(2);
  owner.join();
  expect_no_address_twice(handed.size(), kSize, {});
}

TEST(VamMemoryBack, AnOwnerWaitingForTheCpuIsGivenItBeforeAReclaim) {
  // With fewer CPUs than threads, a working owner can make no drain across
  // two thresholds only because it waited for the CPU the freeing thread
  // held: the public suite's rptest on one CPU was reclaimed at nearly every
  // threshold and faulted its objects back in. A reclaim that finds its
  // owner runnable (state R) on its own CPU first steps aside for a moment;
  // an owner that then drains is spared. Here both threads share one CPU,
  // the owner drains at every call (a large malloc aligned to more than 16
  // bytes drains whenever its stack holds anything), and main frees four
  // thresholds' worth without blocking: the owner is spared after main
  // stepped aside, and, on a machine with nothing else to run, no block
  // comes back (the tree before gave back 194). Another process on the
  // same CPU can hold it through main's pauses, which are bounded (1 ms):
  // then a reclaim may go on, and only the first claim is asserted.
  // The owner's last drain of frees is made to look older than
  // kOwnerWorkingMs before each threshold (the owner cannot run between that
  // store and main's next push, but for a preemption), so that the step
  // aside is what spares it, not the time of its drain.
  if (g_layout.header != 0) GTEST_SKIP() << "no reclaim with VAM_HEADERS (docs/vam.md, Threads)";
  if (alloclab::os::thread_runnable_on(alloclab::os::thread_id()) < 0)
    GTEST_SKIP() << "this system's /proc does not give a thread's state";
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);  // main, and the owner it starts
  constexpr size_t kSize = 96;
  const size_t step = static_cast<size_t>(kReclaimObjects) + 64;
  std::vector<void *> handed(4 * step);
  Steps steps;
  std::atomic<bool> done{false};
  std::atomic<Heap *> owner_heap{nullptr};
  vam_free(vam_malloc(64));  // main's heap exists (its remote frees go in batches)
  std::thread owner([&] {
    for (auto &p : handed) p = vam_malloc(kSize);
    owner_heap.store(t_heap);
    steps.finished();
    while (!done.load()) vam_free(vam_aligned_alloc(64, g_layout.page_max + 4096));
  });
  steps.wait_all(1);
  Heap *h = owner_heap.load();
  const std::uint64_t before = g_reclaimed_blocks.load();
  const std::uint64_t aside_before = g_reclaims_stepped_aside.load();
  for (size_t k = 0; k < 4; ++k) {
    for (size_t i = k * step; i < (k + 1) * step - 64; ++i) vam_free(handed[i]);
    h->drained_ms.store(now_ms() - kOwnerWorkingMs - 1);
    for (size_t i = (k + 1) * step - 64; i < (k + 1) * step; ++i) vam_free(handed[i]);
    vam_collect();
  }
  const std::uint64_t reclaimed = g_reclaimed_blocks.load() - before;
  const std::uint64_t aside = g_reclaims_stepped_aside.load() - aside_before;
  done = true;
  owner.join();
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
  printf("reclaims spared after stepping aside: %llu; blocks reclaimed: %llu\n",
         static_cast<unsigned long long>(aside), static_cast<unsigned long long>(reclaimed));
  EXPECT_GT(aside, 0u);
  expect_no_address_twice(handed.size(), kSize, {});
}

TEST(VamMemoryBack, IdleProducersMidSizedLargeObjectsComeBackWhole) {
  // 3,000-byte objects by default (large, but with no page of their own: a
  // page holds the tags of one or two): the reclaims take the owner's large lock and
  // free them as the owner would, merged with their free neighbours, and the
  // merged chunks' pages go back. Giving back only the pages inside each
  // object left all of them resident. The statistics see the frees made for
  // the owner at once; the owners then wake and allocate as much again.
  if (g_layout.header != 0) GTEST_SKIP() << "no reclaim with VAM_HEADERS (docs/vam.md, Threads)";
  constexpr int kThreads = 2;
  const size_t kSize = g_layout.page_max + 1976;  // large: 3,000 bytes by default
  const size_t kCount = (size_t{16} << 20) / kSize;
  const size_t kTotal = kThreads * kCount * kSize;
  std::vector<void *> ptrs(kThreads * kCount);
  vam_free(vam_malloc(64));  // main's heap exists
  const size_t rss0 = rss_bytes();
  const size_t large0 = stats().large_live_bytes;
  Steps steps;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] { produce_twice(steps, ptrs.data() + t * kCount, kCount, kSize); });
  steps.wait_all(kThreads);
  // Every object was written, so all of kTotal is resident now, though
  // less of it may be new since rss0 (in a run of the whole suite in one
  // process, earlier tests leave free pages resident that these reuse).
  const size_t rss1 = rss_bytes();
  const std::uint64_t before = g_reclaimed_large.load();
  for (void *p : ptrs) vam_free(p);
  const size_t rss2 = rss_bytes();
  const std::uint64_t freed = g_reclaimed_large.load() - before;
  const size_t large2 = stats().large_live_bytes;
  printf("rss: before %zu MB, allocated %zu MB, after main freed %zu MB; %llu objects freed by reclaims; "
         "large live %zu MB\n",
         rss0 >> 20, rss1 >> 20, rss2 >> 20, static_cast<unsigned long long>(freed), (large2 - large0) >> 20);
  // All but those queued under the last threshold and those the last
  // reclaim met for the first time (4 MiB a heap at most).
  EXPECT_GT(freed, kThreads * kCount * 3 / 4);
  EXPECT_LT(large2, large0 + kTotal / 4);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)  // shadow memory moves it
  EXPECT_LT(rss2 + kTotal * 2 / 3, rss1);  // two thirds of it given back; none was
#endif
  wake_and_check(steps, ts, ptrs);
  for (size_t i = 0; i < ptrs.size(); ++i)
    ASSERT_EQ(static_cast<unsigned char *>(ptrs[i])[kSize - 1], 2) << "object " << i;
  for (void *p : ptrs) vam_free(p);
}

TEST(VamMemoryBack, ReclaimsLeaveAWorkingOwnersLargeObjectsAlone) {
  // The owner keeps making large calls while main frees the large objects
  // (3,000 bytes by default) it handed over, and the reclaims free them into the owner's
  // heap under its large lock. The objects it keeps lie between the ones it
  // handed over (one every 16), so the reclaims' merges write the tags next
  // to them while the owner shrinks and grows them in place with realloc,
  // and, once main has freed most of them (free_handed_over), now and then
  // frees one and mallocs another (a malloc that misses the quick lists
  // drains the stack). Every kept object keeps its pattern, and no address
  // is handed out twice.
  if (g_layout.header != 0) GTEST_SKIP() << "no reclaim with VAM_HEADERS (docs/vam.md, Threads)";
  const size_t kSize = g_layout.page_max + 1976;  // large: 3,000 bytes by default
  const size_t units = (kSize >> kLargeUnitShift) + 1;  // what each counts towards a reclaim
  const size_t count = 8 * static_cast<size_t>(kReclaimObjects) / units + 1;  // 8 reclaims' worth
  std::vector<void *> handed(count);
  struct Kept {
    unsigned char *p;
    size_t n;
    size_t cap;  // its size when allocated: realloc grows it back that far
    unsigned char v;
  };
  std::vector<Kept> kept;
  Steps steps;
  vam_free(vam_malloc(64));
  std::atomic<bool> drain{false};
  std::atomic<bool> freed{false};
  std::thread owner([&] {
    unsigned x = 12345;
    auto fresh = [&](unsigned char v) {
      x = x * 1103515245u + 12345u;
      const size_t n = 1500 + (x >> 8) % 20000;
      auto *p = static_cast<unsigned char *>(vam_malloc(n));
      memset(p, v, n);
      return Kept{p, n, n, v};
    };
    for (size_t i = 0; i < count; ++i) {
      handed[i] = vam_malloc(kSize);
      if (i % 16 == 0) kept.push_back(fresh(static_cast<unsigned char>(kept.size() | 1)));
    }
    steps.finished();
    for (int round = 0; round < 20000 || !freed.load(); ++round) {
      x = x * 1103515245u + 12345u;
      Kept &k = kept[(x >> 4) % kept.size()];
      if (drain.load() && round % 256 == 0) {
        vam_free(k.p);
        k = fresh(static_cast<unsigned char>(round | 1));
      } else {
        // Shrink (the tail goes back to the lists, merged with a free
        // neighbour) or grow back (into that free tail): in place.
        const size_t m = (x & 1) ? k.n - (x >> 12) % (k.n / 2) : k.cap;
        auto *q = static_cast<unsigned char *>(vam_realloc(k.p, m));
        const size_t keep = m < k.n ? m : k.n;
        for (size_t j = 0; j < keep; j += 251) ASSERT_EQ(q[j], k.v) << "realloc lost byte " << j;
        memset(q, k.v, m);
        k.p = q;
        k.n = m;
      }
      if (round % 64 == 0) std::this_thread::yield();
    }
  });
  EXPECT_GT(free_handed_over(steps, handed, drain, freed, owner, g_reclaimed_large), 0u);
  std::vector<void *> all;
  for (const Kept &k : kept) {
    for (size_t j = 0; j < k.n; ++j) ASSERT_EQ(k.p[j], k.v) << "byte " << j << " of " << k.n;
    all.push_back(k.p);
  }
  expect_no_address_twice(count, kSize, all);  // the owner's exit freed what was left on its stack
  for (const Kept &k : kept) vam_free(k.p);
}

}  // namespace
