// stats_test.cpp — statistics (stats.cpp): live bytes, fragmentation, per-class
// counts and the printed report.
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

TEST(VamOrdered, PerClassCountsTrackLiveObjects) {
  const unsigned cls = 600 / 16 + 1;  // 608-byte class
  const size_t before = stats().class_live[cls];
  std::vector<void *> v;
  for (int i = 0; i < 10; ++i) v.push_back(vam_malloc(600));
  EXPECT_EQ(stats().class_live[cls], before + 10);
  EXPECT_EQ(stats().class_size[cls], 608u);
  for (void *p : v) vam_free(p);
  EXPECT_EQ(stats().class_live[cls], before);
}

TEST(VamOrdered, PerClassCountsCoverFullWaitingAndFrontBlocksAndOtherThreads) {
  // 176-byte objects, 40 blocks' worth, then every third freed, so some
  // blocks are full, many wait with pending frees and one is the front. The
  // counts come from the block records.
  const unsigned cls = 176 / 16;
  const size_t before = stats().class_live[cls];
  std::vector<void *> v;
  for (size_t i = 0; i < per_block(176) * 40; ++i) v.push_back(vam_malloc(170));
  size_t live = v.size();
  for (size_t i = 0; i < v.size(); i += 3, --live) {
    vam_free(v[i]);
    v[i] = nullptr;
  }
  EXPECT_EQ(stats().class_live[cls], before + live);
  // A thread that owns objects of the class and is still running.
  std::atomic<int> phase{0};
  std::thread t([&] {
    std::vector<void *> mine;
    for (int i = 0; i < 100; ++i) mine.push_back(vam_malloc(176));
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
    for (void *p : mine) vam_free(p);
  });
  while (phase.load() != 1) std::this_thread::yield();
  EXPECT_EQ(stats().class_live[cls], before + live + 100);
  phase = 2;
  t.join();
  for (void *p : v) vam_free(p);
  EXPECT_EQ(stats().class_live[cls], before);
}

TEST(VamStats, LiveBytesAndFragmentationFollowAllocations) {
  const vam_stats_t a = stats();
  void *p = vam_malloc(size_t{8} << 20);
  const vam_stats_t b = stats();
  EXPECT_GE(b.live_bytes, a.live_bytes + (size_t{8} << 20));
  EXPECT_GE(b.huge_live_bytes, size_t{8} << 20);
  EXPECT_GT(b.fragmentation, 0.0);
  vam_free(p);
  EXPECT_EQ(stats().huge_live_bytes, a.huge_live_bytes);
}

TEST(VamStats, PrintStatsWritesAReport) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  vam_print_stats(fds[1]);
  close(fds[1]);
  char buf[256] = {};
  ASSERT_GT(read(fds[0], buf, sizeof buf - 1), 0);
  close(fds[0]);
  EXPECT_NE(strstr(buf, "live bytes"), nullptr);
}

}  // namespace
