// Reaps in many threads (one thread per reap, shared caches) and fork.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "alloclab/reap.h"

namespace {

// Each thread churns its own reaps; the chunk cache and the cache of large
// objects' mappings (one in 400 objects is large) are shared by all. No
// call here goes to the process's malloc (the live list is on the stack),
// so a forked child depends only on libreap's own fork safety — not on the
// sanitizer runtime's allocator in the asan build.
void churn(int seed, int rounds, std::atomic<int> *errors) {
  unsigned x = 2463534242u + seed;
  auto rnd = [&] { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x; };
  for (int round = 0; round < rounds; ++round) {
    reap_t *r = reap_create(nullptr);
    reap_t *c = reap_create(r);
    std::pair<unsigned char *, std::size_t> live[2000];
    std::size_t nlive = 0;
    for (int i = 0; i < 2000; ++i) {
      reap_t *on = (i & 1) ? r : c;
      std::size_t n = i % 400 == 7 ? 140000 + rnd() % 500000 : rnd() % 3000;
      auto *p = static_cast<unsigned char *>(reap_malloc(on, n));
      if (!p) { ++*errors; continue; }
      std::memset(p, seed & 0xFF, n);
      if (on == r) live[nlive++] = {p, n};
      if (i % 3 == 0 && nlive > 0) {
        auto [q, m] = live[--nlive];
        for (std::size_t k = 0; k < m; ++k)
          if (q[k] != (seed & 0xFF)) { ++*errors; break; }
        reap_free(r, q);
      }
    }
    if (round % 2) reap_free_all(r);
    reap_destroy(r);
  }
}

TEST(ReapThreads, ReapsInDifferentThreadsDoNotInterfere) {
  std::atomic<int> errors{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) ts.emplace_back(churn, t + 1, 60, &errors);
  for (auto &t : ts) t.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST(ReapThreads, AChildProcessCanUseReapsAfterAForkDuringConcurrentUse) {
  std::atomic<int> errors{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&, t] {
      while (!stop.load()) churn(t + 10, 1, &errors);
    });
  for (int k = 0; k < 20; ++k) {
    pid_t pid = fork();
    ASSERT_NE(pid, -1);
    if (pid == 0) {
      std::atomic<int> child_errors{0};
      churn(99, 3, &child_errors);  // would hang if a lock were inherited held
      _exit(child_errors.load() == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  stop = true;
  for (auto &t : ts) t.join();
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
