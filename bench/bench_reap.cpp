// bench_reap — reaps against what they replace (issue targets in brackets):
//
//  (a) Region pattern: allocate many small objects, then release them all.
//      reap vs std::pmr::monotonic_buffer_resource vs a minimal bump
//      allocator.                                  [reap <= 1.05x monotonic]
//  (b) Sliding window with individual frees: allocate one, free the oldest.
//      reap vs std::pmr::unsynchronized_pool_resource vs malloc/free (glibc,
//      and jemalloc/mimalloc/tcmalloc when their libraries can be loaded).
//                                   [reap <= 0.8x pool, <= 0.7x glibc malloc]
//  (c) Producer-consumer footprint: a queue of messages, consumed in order.
//      Reap with frees vs the same code as a pure region (no frees); reports
//      peak footprint over live bytes.              [reap peak <= 2x live]
//
// Peers that are not installed are reported as such and skipped.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory_resource>
#include <string>
#include <vector>

#include "alloclab/reap.h"

namespace {

// Request sizes: a fixed pseudo-random sequence shared by every allocator.
std::vector<std::uint32_t> make_sizes(std::size_t n, std::uint32_t lo, std::uint32_t hi) {
  std::vector<std::uint32_t> v(n);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto &s : v) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    s = lo + static_cast<std::uint32_t>(x % (hi - lo + 1));
  }
  return v;
}

constexpr std::size_t kRegionObjects = 10000;
const std::vector<std::uint32_t> &region_sizes() {
  static const auto v = make_sizes(kRegionObjects, 8, 64);
  return v;
}

inline void touch(void *p) { *static_cast<volatile char *>(p) = 1; }

// ---------------------------------------------------------------- (a)
void BM_Region_Reap(benchmark::State &st) {
  const auto &sizes = region_sizes();
  reap_t *r = reap_create(nullptr);
  for (auto _ : st) {
    for (std::uint32_t s : sizes) touch(reap_malloc(r, s));
    reap_free_all(r);
  }
  reap_destroy(r);
  st.SetItemsProcessed(st.iterations() * sizes.size());
}

void BM_Region_Monotonic(benchmark::State &st) {
  const auto &sizes = region_sizes();
  std::pmr::monotonic_buffer_resource mono;
  for (auto _ : st) {
    for (std::uint32_t s : sizes) touch(mono.allocate(s, s >= 16 ? 16 : 8));
    mono.release();
  }
  st.SetItemsProcessed(st.iterations() * sizes.size());
}

// The simplest region there is: bump through 64 KiB slabs; release rewinds
// to the first slab and keeps every slab for the next round (the speed of
// light for a region: no headers, no frees, no system calls in steady state).
class MinimalBump {
 public:
  ~MinimalBump() {
    for (char *s : slabs_) std::free(s);
  }
  void *allocate(std::size_t n) {
    n = (n + 15) & ~std::size_t{15};
    if (__builtin_expect(static_cast<std::size_t>(end_ - cur_) < n, 0)) next_slab(n);
    char *p = cur_;
    cur_ += n;
    return p;
  }
  void release() {
    next_ = 0;
    cur_ = end_ = nullptr;
  }

 private:
  static constexpr std::size_t kSlab = 64 * 1024;
  void next_slab(std::size_t n) {
    if (n > kSlab) std::abort();  // the benchmark never asks for that much
    if (next_ == slabs_.size()) slabs_.push_back(static_cast<char *>(std::aligned_alloc(16, kSlab)));
    cur_ = slabs_[next_++];
    end_ = cur_ + kSlab;
  }
  std::vector<char *> slabs_;
  std::size_t next_ = 0;
  char *cur_ = nullptr, *end_ = nullptr;
};

void BM_Region_MinimalBump(benchmark::State &st) {
  const auto &sizes = region_sizes();
  MinimalBump b;
  for (auto _ : st) {
    for (std::uint32_t s : sizes) touch(b.allocate(s));
    b.release();
  }
  st.SetItemsProcessed(st.iterations() * sizes.size());
}

// ---------------------------------------------------------------- (b)
constexpr std::size_t kWindow = 1000;
constexpr std::size_t kSlideOps = 100000;
const std::vector<std::uint32_t> &window_sizes() {
  static const auto v = make_sizes(kSlideOps, 16, 256);
  return v;
}

template <class Alloc, class Free>
void slide(benchmark::State &st, Alloc &&alloc, Free &&release) {
  const auto &sizes = window_sizes();
  std::vector<void *> ring(kWindow, nullptr);
  for (auto _ : st) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      void *&slot = ring[i % kWindow];
      if (slot) release(slot, sizes[i >= kWindow ? i - kWindow : 0]);
      slot = alloc(sizes[i]);
      touch(slot);
    }
    for (std::size_t i = 0; i < kWindow; ++i) {
      void *&slot = ring[(sizes.size() + i) % kWindow];
      release(slot, sizes[sizes.size() - kWindow + i]);
      slot = nullptr;
    }
  }
  st.SetItemsProcessed(st.iterations() * sizes.size());
}

void BM_Window_Reap(benchmark::State &st) {
  reap_t *r = reap_create(nullptr);
  slide(st, [&](std::size_t n) { return reap_malloc(r, n); },
        [&](void *p, std::size_t) { reap_free(r, p); });
  reap_destroy(r);
}

void BM_Window_PoolResource(benchmark::State &st) {
  std::pmr::unsynchronized_pool_resource pool;
  // the pool needs the size back on deallocate; keep it beside the pointer
  slide(st,
        [&](std::size_t n) {
          auto *p = static_cast<std::size_t *>(pool.allocate(n + 16, 16));
          *p = n + 16;
          return static_cast<void *>(p + 2);
        },
        [&](void *q, std::size_t) {
          auto *p = static_cast<std::size_t *>(q) - 2;
          pool.deallocate(p, *p, 16);
        });
}

void BM_Window_GlibcMalloc(benchmark::State &st) {
  slide(st, [](std::size_t n) { return std::malloc(n); }, [](void *p, std::size_t) { std::free(p); });
}

// A peer malloc loaded privately (RTLD_LOCAL), called through its own
// prefixed entry points so it does not replace this process's malloc.
struct Peer {
  const char *name;
  const char *lib;
  const char *malloc_sym;
  const char *free_sym;
  void *(*do_malloc)(std::size_t) = nullptr;
  void (*do_free)(void *) = nullptr;
};

Peer peers[] = {
    {"jemalloc", "libjemalloc.so.2", "mallocx", "dallocx"},
    {"mimalloc", "libmimalloc.so.2", "mi_malloc", "mi_free"},
    {"tcmalloc", "libtcmalloc_minimal.so.4", "tc_malloc", "tc_free"},
};

// jemalloc's mallocx/dallocx take a flags argument.
void *(*je_mallocx)(std::size_t, int) = nullptr;
void (*je_dallocx)(void *, int) = nullptr;

void BM_Window_Peer(benchmark::State &st, Peer *peer) {
  if (je_mallocx && std::strcmp(peer->name, "jemalloc") == 0) {
    slide(st, [](std::size_t n) { return je_mallocx(n, 0); }, [](void *p, std::size_t) { je_dallocx(p, 0); });
    return;
  }
  slide(st, [&](std::size_t n) { return peer->do_malloc(n); },
        [&](void *p, std::size_t) { peer->do_free(p); });
}

void register_peers() {
  for (Peer &p : peers) {
    void *h = dlopen(p.lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "bench_reap: %s not installed (%s): skipped\n", p.name, p.lib);
      continue;
    }
    void *m = dlsym(h, p.malloc_sym);
    void *f = dlsym(h, p.free_sym);
    if (!m || !f) {
      std::fprintf(stderr, "bench_reap: %s lacks %s/%s: skipped\n", p.name, p.malloc_sym, p.free_sym);
      continue;
    }
    if (std::strcmp(p.name, "jemalloc") == 0) {
      je_mallocx = reinterpret_cast<void *(*)(std::size_t, int)>(m);
      je_dallocx = reinterpret_cast<void (*)(void *, int)>(f);
    } else {
      p.do_malloc = reinterpret_cast<void *(*)(std::size_t)>(m);
      p.do_free = reinterpret_cast<void (*)(void *)>(f);
    }
    benchmark::RegisterBenchmark((std::string("BM_Window_") + p.name).c_str(), BM_Window_Peer, &p);
  }
}

// ---------------------------------------------------------------- (c)
// Producer-consumer: messages of 32..1024 bytes, each consumed 2000
// messages after it was produced (the 2002 paper's Apache + bc pattern).
template <bool kFree>
void BM_ProducerConsumer(benchmark::State &st) {
  const auto sizes = make_sizes(200000, 32, 1024);
  constexpr std::size_t kInFlight = 2000;
  reap_stats_t s{};
  std::size_t max_live = 0;
  for (auto _ : st) {
    reap_t *r = reap_create(nullptr);
    std::vector<void *> q(kInFlight, nullptr);
    max_live = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      void *&slot = q[i % kInFlight];
      if (slot && kFree) reap_free(r, slot);
      slot = reap_malloc(r, sizes[i]);
      std::memset(slot, 1, 16);
      if (i % 1024 == 0) {
        reap_stats(r, &s);
        if (s.live_bytes > max_live) max_live = s.live_bytes;
      }
    }
    reap_stats(r, &s);
    if (kFree && s.live_bytes > max_live) max_live = s.live_bytes;
    if (!kFree) {  // the region keeps everything; live data is still the window
      std::size_t live = 0;
      for (std::size_t i = sizes.size() - kInFlight; i < sizes.size(); ++i) live += sizes[i];
      max_live = live;
    }
    reap_destroy(r);
  }
  st.counters["peak_footprint_bytes"] = static_cast<double>(s.peak_footprint_bytes);
  st.counters["live_bytes"] = static_cast<double>(max_live);
  st.counters["peak_over_live"] = static_cast<double>(s.peak_footprint_bytes) / static_cast<double>(max_live);
}

}  // namespace

BENCHMARK(BM_Region_Reap);
BENCHMARK(BM_Region_Monotonic);
BENCHMARK(BM_Region_MinimalBump);
BENCHMARK(BM_Window_Reap);
BENCHMARK(BM_Window_PoolResource);
BENCHMARK(BM_Window_GlibcMalloc);
BENCHMARK(BM_ProducerConsumer<true>)->Name("BM_ProducerConsumer_ReapWithFrees")->Iterations(3);
BENCHMARK(BM_ProducerConsumer<false>)->Name("BM_ProducerConsumer_PureRegion")->Iterations(3);

int main(int argc, char **argv) {
  // jemalloc keeps its thread state in initial-exec TLS, which a dlopen
  // can only place with spare static TLS: ask the loader for some, once.
  if (!std::getenv("ALLOCLAB_BENCH_REEXEC")) {
    setenv("ALLOCLAB_BENCH_REEXEC", "1", 1);
    setenv("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=65536", 1);
    execv("/proc/self/exe", argv);  // on failure, carry on without jemalloc
  }
  register_peers();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
