// When libvam reuses memory instead of asking the OS again, and that what it
// keeps for reuse still goes back: the delayed discarding of free pages in
// the large-object regions (counted as they are, not as they were freed).
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

namespace {

vam_stats_t stats() {
  vam_stats_t s;
  vam_stats(&s);
  return s;
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

}  // namespace
