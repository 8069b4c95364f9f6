// xthread_rss — does memory freed across threads go back to the system?
// (issue 15 §3.) Not a timing: it prints resident set sizes.
//
//   xthread_rss [threads] [total MiB] [object bytes] [rounds]   (16 1024 200 10)
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
// Run it under LD_PRELOAD of each allocator, one at a time:
//   LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 build/release/bench/xthread_rss
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

long rss_kib() {
  std::FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS:", 6) == 0) {
      kib = std::strtol(line + 6, nullptr, 10);
      break;
    }
  std::fclose(f);
  return kib;
}

long arg(int argc, char **argv, int i, long dflt, long lo, long hi, const char *what) {
  if (argc <= i) return dflt;
  char *end = nullptr;
  errno = 0;
  const long v = std::strtol(argv[i], &end, 10);
  if (errno || end == argv[i] || *end || v < lo || v > hi) {
    std::fprintf(stderr, "xthread_rss: %s must be an integer in %ld..%ld: '%s'\n", what, lo, hi, argv[i]);
    std::fprintf(stderr, "usage: xthread_rss [threads] [total MiB] [object bytes] [rounds]   (16 1024 200 10)\n");
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

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: xthread_rss [threads] [total MiB] [object bytes] [rounds]   (16 1024 200 10)\n");
    return 0;
  }
  const long threads = arg(argc, argv, 1, 16, 1, 256, "threads");
  const long total_mib = arg(argc, argv, 2, 1024, 1, 1 << 20, "total MiB");
  const long size = arg(argc, argv, 3, 200, 1, 1 << 20, "object bytes");
  const long rounds = arg(argc, argv, 4, 10, 0, 1000, "rounds");
  const std::size_t per_thread = (static_cast<std::size_t>(total_mib) << 20) / static_cast<std::size_t>(threads) /
                                 static_cast<std::size_t>(size);

  const long start = rss_kib();
  std::vector<void **> arrays(static_cast<std::size_t>(threads));
  for (auto &a : arrays) a = map_array(per_thread);
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
