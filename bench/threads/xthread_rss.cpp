// xthread_rss — does memory freed across threads go back to the system?
// (issue 15 §3.) Not a timing: it prints resident set sizes.
//
//   xthread_rss [threads] [total MiB] [object bytes] [rounds] [exit|idle] [max %]
//   (16 1024 200 10 exit)
//
// `threads` threads each allocate total/threads MiB of objects of one size,
// write every byte, and exit. The main thread then frees every object (the
// frees go into the heaps, arenas or caches of threads that no longer exist),
// and afterwards does `rounds` rounds of small work of its own: 1 MiB of
// 64..256-byte objects allocated, written and freed, then a 20 ms pause, so
// an allocator that returns memory after a delay has the chance to. VmRSS
// (/proc/self/status) is read at the start, after the threads exited, after
// main's frees, after the first round and after the last. The pointers live
// in mmap'd arrays that are unmapped before the later readings, so the
// numbers are the allocator's memory, not the benchmark's.
//
// `idle`: the threads stay alive after allocating, blocked on a condition
// variable, never calling the allocator again until the end; main frees
// every object (into the heaps of live threads that will not come back to
// them), then sleeps 1 s with no allocator call of its own, and VmRSS is
// read then ("after 1s"); no rounds. With `max %`, the run fails (exit 1)
// when more than that share of the total is resident 1 s after the frees,
// over the start. RSS is read with read(2), which allocates nothing.
//
// Run it under LD_PRELOAD of each allocator, one at a time:
//   LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 build/release/bench/xthread_rss
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

long rss_kib() {
  const int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return -1;
  char buf[8192];
  std::size_t n = 0;
  for (ssize_t r; n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0;) n += static_cast<std::size_t>(r);
  close(fd);
  buf[n] = '\0';
  const char *line = std::strstr(buf, "VmRSS:");
  return line ? std::strtol(line + 6, nullptr, 10) : -1;
}

long arg(int argc, char **argv, int i, long dflt, long lo, long hi, const char *what) {
  if (argc <= i) return dflt;
  char *end = nullptr;
  errno = 0;
  const long v = std::strtol(argv[i], &end, 10);
  if (errno || end == argv[i] || *end || v < lo || v > hi) {
    std::fprintf(stderr, "xthread_rss: %s must be an integer in %ld..%ld: '%s'\n", what, lo, hi, argv[i]);
    std::fprintf(stderr, "usage: xthread_rss [threads] [total MiB] [object bytes] [rounds] [exit|idle] [max %%]   (16 1024 200 10 exit)\n");
    std::exit(2);
  }
  return v;
}

void **map_array(std::size_t n) {
  void *m = mmap(nullptr, n * sizeof(void *), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    std::perror("xthread_rss: mmap");
    std::exit(1);
  }
  return static_cast<void **>(m);
}

// Small work of the main thread's own: 1 MiB of 64..256-byte objects.
void small_round(unsigned round) {
  constexpr std::size_t kCount = 8192;
  void **v = map_array(kCount);
  unsigned x = 2463534242u + round;
  for (std::size_t i = 0; i < kCount; ++i) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    const std::size_t n = 64 + (x % 193);
    v[i] = std::malloc(n);
    if (!v[i]) std::abort();
    std::memset(v[i], static_cast<int>(i), n);
  }
  for (std::size_t i = 0; i < kCount; ++i) std::free(v[i]);
  munmap(v, kCount * sizeof(void *));
  const timespec pause{0, 20 * 1000 * 1000};
  nanosleep(&pause, nullptr);
}

// The producers allocate, then wait, alive and idle, until main has read
// the resident set 1 s after its frees.
int idle_run(std::vector<void **> &arrays, std::size_t per_thread, std::size_t size, long total_mib, long start,
             long max_percent) {
  std::mutex m;
  std::condition_variable cv;
  std::size_t ready = 0;
  bool finish = false;
  std::vector<std::thread> ts;
  for (std::size_t t = 0; t < arrays.size(); ++t)
    ts.emplace_back([&, t] {
      void **a = arrays[t];
      for (std::size_t i = 0; i < per_thread; ++i) {
        a[i] = std::malloc(size);
        if (!a[i]) std::abort();
        std::memset(a[i], static_cast<int>(t + i), size);
      }
      std::unique_lock<std::mutex> lock(m);
      ++ready;
      cv.notify_all();
      cv.wait(lock, [&] { return finish; });
    });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return ready == arrays.size(); });
  }
  const long allocated = rss_kib();
  for (void **a : arrays) {
    for (std::size_t i = 0; i < per_thread; ++i) std::free(a[i]);
    munmap(a, per_thread * sizeof(void *));
  }
  const long freed = rss_kib();
  const timespec second{1, 0};
  nanosleep(&second, nullptr);
  const long after = rss_kib();
  {
    std::lock_guard<std::mutex> lock(m);
    finish = true;
  }
  cv.notify_all();
  for (auto &t : ts) t.join();
  const double share = 100.0 * static_cast<double>(after - start) / static_cast<double>(total_mib * 1024);
  std::printf("xthread_rss: threads %zu total %ld MiB objects %zu B (%zu per thread) idle\n", arrays.size(), total_mib,
              size, per_thread);
  std::printf("rss MiB: start %.1f allocated %.1f freed %.1f after1s %.1f (%.1f%% of the total over the start)\n",
              start / 1024.0, allocated / 1024.0, freed / 1024.0, after / 1024.0, share);
  if (max_percent >= 0 && share > static_cast<double>(max_percent)) {
    std::printf("xthread_rss: more than %ld%% of the total resident 1 s after the frees\n", max_percent);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: xthread_rss [threads] [total MiB] [object bytes] [rounds] [exit|idle] [max %%]   (16 1024 200 10 exit)\n");
    return 0;
  }
  const long threads = arg(argc, argv, 1, 16, 1, 256, "threads");
  const long total_mib = arg(argc, argv, 2, 1024, 1, 1 << 20, "total MiB");
  const long size = arg(argc, argv, 3, 200, 1, 1 << 20, "object bytes");
  const long rounds = arg(argc, argv, 4, 10, 0, 1000, "rounds");
  const bool idle = argc > 5 && std::strcmp(argv[5], "idle") == 0;
  if (argc > 5 && !idle && std::strcmp(argv[5], "exit") != 0) {
    std::fprintf(stderr, "xthread_rss: the mode must be exit or idle: '%s'\n", argv[5]);
    return 2;
  }
  const long max_percent = arg(argc, argv, 6, -1, 0, 100, "max %");
  const std::size_t per_thread = (static_cast<std::size_t>(total_mib) << 20) / static_cast<std::size_t>(threads) /
                                 static_cast<std::size_t>(size);

  const long start = rss_kib();
  std::vector<void **> arrays(static_cast<std::size_t>(threads));
  for (auto &a : arrays) a = map_array(per_thread);
  if (idle) return idle_run(arrays, per_thread, static_cast<std::size_t>(size), total_mib, start, max_percent);
  {
    std::vector<std::thread> ts;
    for (long t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        void **a = arrays[static_cast<std::size_t>(t)];
        for (std::size_t i = 0; i < per_thread; ++i) {
          a[i] = std::malloc(static_cast<std::size_t>(size));
          if (!a[i]) std::abort();
          std::memset(a[i], static_cast<int>(t + i), static_cast<std::size_t>(size));
        }
      });
    for (auto &t : ts) t.join();
  }
  const long allocated = rss_kib();
  for (void **a : arrays) {
    for (std::size_t i = 0; i < per_thread; ++i) std::free(a[i]);
    munmap(a, per_thread * sizeof(void *));
  }
  const long freed = rss_kib();
  long first = freed;
  for (long r = 0; r < rounds; ++r) {
    small_round(static_cast<unsigned>(r));
    if (r == 0) first = rss_kib();
  }
  const long last = rss_kib();
  std::printf("xthread_rss: threads %ld total %ld MiB objects %ld B (%zu per thread) rounds %ld\n", threads,
              total_mib, size, per_thread, rounds);
  std::printf("rss MiB: start %.1f allocated %.1f freed %.1f round1 %.1f round%ld %.1f\n", start / 1024.0,
              allocated / 1024.0, freed / 1024.0, first / 1024.0, rounds, last / 1024.0);
  return 0;
}
