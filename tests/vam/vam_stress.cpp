// vam_stress — a multi-threaded torture test for an allocator.
//
//   vam_stress [threads] [rounds] [ops]      (defaults: 4 4 20000)
//
// Each round starts `threads` fresh threads (so threads end and are replaced
// and their heaps get handed on). Each thread does `ops` random operations:
// malloc of 16 B .. 4 MiB, realloc, posix_memalign/aligned_alloc, local
// frees, and hand-offs through a shared table of slots, where another thread
// later verifies the object and frees it (a remote free). Every object is
// filled with a pattern derived from its size and a seed and verified before
// it is freed or reallocated. In each round the main thread forks while the
// workers run; the child allocates, verifies, frees, and exits 0.
//
// Built twice: linked with libvam.a (real malloc override), and with
// -DVAM_STRESS_PREFIXED against vam_malloc & co., which also runs under ASan.
// A big run:  vam_stress 8 50 1000000
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#ifdef VAM_STRESS_PREFIXED
#include "alloclab/vam.h"
#define X_MALLOC vam_malloc
#define X_FREE vam_free
#define X_REALLOC vam_realloc
#define X_POSIX_MEMALIGN vam_posix_memalign
#define X_ALIGNED_ALLOC vam_aligned_alloc
#define X_CALLOC vam_calloc
#else
#define X_MALLOC malloc
#define X_FREE free
#define X_REALLOC realloc
#define X_POSIX_MEMALIGN posix_memalign
#define X_ALIGNED_ALLOC aligned_alloc
#define X_CALLOC calloc
#endif

namespace {

constexpr uint32_t kMagic = 0x5EEDF00D;
constexpr size_t kSlots = 4096;
std::atomic<unsigned char *> g_slots[kSlots];
std::atomic<long> g_failures{0};
std::atomic<long> g_ops{0};

struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

inline unsigned char pat(uint32_t seed, size_t i) { return static_cast<unsigned char>((seed >> (i & 7)) + i * 31); }

// Header: size (8 bytes), seed (4), magic (4); then the pattern.
void stamp(unsigned char *p, size_t n, uint32_t seed) {
  memcpy(p, &n, 8);
  memcpy(p + 8, &seed, 4);
  memcpy(p + 12, &kMagic, 4);
  for (size_t i = 16; i < n; ++i) p[i] = pat(seed, i);
}

// Verify all of a small object, and samples of a big one.
bool verify(const unsigned char *p, size_t limit = SIZE_MAX) {
  size_t n;
  uint32_t seed, magic;
  memcpy(&n, p, 8);
  memcpy(&seed, p + 8, 4);
  memcpy(&magic, p + 12, 4);
  if (magic != kMagic) return false;
  if (limit < n) n = limit;
  const size_t step = n > 65536 ? 61 : 1;
  for (size_t i = 16; i < n; i += step)
    if (p[i] != pat(seed, i)) return false;
  if (n > 16 && p[n - 1] != pat(seed, n - 1)) return false;
  return true;
}

void fail(const char *what) {
  g_failures.fetch_add(1);
  static std::atomic<int> printed{0};
  if (printed.fetch_add(1) < 10) {
    (void)!write(2, what, strlen(what));
    (void)!write(2, "\n", 1);
  }
}

size_t random_size(Rng &r) {
  const uint64_t x = r.next();
  switch (x % 100) {
    case 0: return 1048576 + (x >> 8) % (3 * 1048576);  // 1..4 MiB
    case 1: case 2: case 3: return 65536 + (x >> 8) % 983040;  // 64 KiB..1 MiB
    default:
      if (x % 100 < 30) return 1025 + (x >> 8) % 64511;  // 1 KiB..64 KiB
      return 16 + (x >> 8) % 1009;                       // 16..1024
  }
}

unsigned char *make(Rng &r, size_t n) {
  const uint64_t kind = r.next() % 10;
  unsigned char *p = nullptr;
  if (kind == 0) {
    size_t a = size_t{16} << (r.next() % 13);  // 16 .. 64 KiB
    void *q = nullptr;
    if (X_POSIX_MEMALIGN(&q, a, n) != 0) return nullptr;
    if (reinterpret_cast<uintptr_t>(q) & (a - 1)) fail("posix_memalign misaligned");
    p = static_cast<unsigned char *>(q);
  } else if (kind == 1) {
    size_t a = size_t{32} << (r.next() % 8);
    p = static_cast<unsigned char *>(X_ALIGNED_ALLOC(a, n));
    if (p && (reinterpret_cast<uintptr_t>(p) & (a - 1))) fail("aligned_alloc misaligned");
  } else if (kind == 2 && n < 100000) {
    p = static_cast<unsigned char *>(X_CALLOC(1, n));
    if (p) {
      for (size_t i = 0; i < n; ++i)
        if (p[i]) { fail("calloc not zero"); break; }
    }
  } else {
    p = static_cast<unsigned char *>(X_MALLOC(n));
  }
  if (!p) { fail("allocation failed"); return nullptr; }
  stamp(p, n, static_cast<uint32_t>(r.next()));
  return p;
}

void worker(unsigned id, long ops) {
  Rng r{0x9E3779B97F4A7C15ull ^ (uint64_t(id) * 0xD1B54A32D192ED03ull) ^ uint64_t(time(nullptr))};
  std::vector<unsigned char *> mine;
  mine.reserve(256);
  for (long i = 0; i < ops; ++i) {
    const uint64_t op = r.next() % 100;
    if (op < 40 || mine.empty()) {
      if (unsigned char *p = make(r, random_size(r))) mine.push_back(p);
    } else if (op < 60) {
      const size_t k = r.next() % mine.size();
      if (!verify(mine[k])) fail("corrupt before free");
      X_FREE(mine[k]);
      mine[k] = mine.back();
      mine.pop_back();
    } else if (op < 75) {
      const size_t k = r.next() % mine.size();
      size_t old;
      memcpy(&old, mine[k], 8);
      const size_t n = random_size(r);
      auto *q = static_cast<unsigned char *>(X_REALLOC(mine[k], n));
      if (!q) { fail("realloc failed"); continue; }
      if (!verify(q, n < old ? n : old)) fail("realloc lost contents");
      stamp(q, n, static_cast<uint32_t>(r.next()));
      mine[k] = q;
    } else {
      // Hand an object to whoever visits this slot next; free what was there.
      const size_t k = r.next() % mine.size();
      unsigned char *old = g_slots[r.next() % kSlots].exchange(mine[k]);
      mine[k] = mine.back();
      mine.pop_back();
      if (old) {
        if (!verify(old)) fail("corrupt object from another thread");
        X_FREE(old);
      }
    }
    if (mine.size() > 200) {
      for (size_t k = 0; k < 100; ++k) {
        if (!verify(mine.back())) fail("corrupt before free");
        X_FREE(mine.back());
        mine.pop_back();
      }
    }
  }
  for (unsigned char *p : mine) {
    if (!verify(p)) fail("corrupt at thread end");
    X_FREE(p);
  }
  g_ops.fetch_add(ops);
}

// In the child of a fork taken while workers were allocating. Only the
// allocator under test is called here: with the prefixed API the process's
// own malloc belongs to someone else (the sanitizer runtime in the asan
// build), and its locks may have been held by a parent thread at the fork.
int child_work() {
  Rng r{12345};
  static unsigned char *v[2000];
  for (auto &slot : v) {
    slot = make(r, random_size(r) % 300000 + 16);
    if (!slot) return 2;
  }
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // The child can also start threads that allocate. Not under ASan: its
  // pthread_create interceptor allocates from the sanitizer's allocator,
  // which this toolchain's runtime does not make fork-safe. Not under TSan,
  // which does not support threads started after a multi-threaded fork.
  std::thread t([] {
    for (int i = 0; i < 1000; ++i) X_FREE(X_MALLOC(64 + i));
  });
  t.join();
#endif
  for (unsigned char *p : v) {
    if (!verify(p)) return 3;
    X_FREE(p);
  }
  return g_failures.load() ? 4 : 0;
}

}  // namespace

int main(int argc, char **argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 4;
  const int rounds = argc > 2 ? atoi(argv[2]) : 4;
  const long ops = argc > 3 ? atol(argv[3]) : 20000;
  int forks = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) ts.emplace_back(worker, round * threads + t, ops);
    usleep(2000);
    const pid_t pid = fork();
    if (pid == 0) _exit(child_work());
    if (pid < 0) {
      fail("fork failed");
    } else {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fork child failed: status %d\n", status);
        g_failures.fetch_add(1);
      }
      ++forks;
    }
    for (auto &t : ts) t.join();
  }
  long left = 0;
  for (auto &s : g_slots) {
    if (unsigned char *p = s.exchange(nullptr)) {
      if (!verify(p)) fail("corrupt object in slot at end");
      X_FREE(p);
      ++left;
    }
  }
  printf("vam_stress: %u threads x %d rounds x %ld ops = %ld ops, %d forks, %ld handed-off objects freed at end, %ld failures\n",
         threads, rounds, ops, g_ops.load(), forks, left, g_failures.load());
  return g_failures.load() == 0 ? 0 : 1;
}
