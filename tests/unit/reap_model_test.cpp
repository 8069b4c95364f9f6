// Randomized model-based test of libreap: drives every call of the API
// against a shadow model and checks contents, alignment, usable sizes, the
// absence of overlap, and the reaps' statistics.
//
//   reap_model_test [operations] [seed]      (default 1000000, 1)
//
// Runs the same under REAP_MODE=malloc (emulator) and REAP_CHECK=1.
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "alloclab/reap.h"

namespace {

struct Obj {
  std::size_t size;
  unsigned char fill;
  int reap;  // index into reaps
};

struct ReapNode {
  reap_t *r;
  int parent;  // -1 for the root
  bool alive;
};

std::map<std::uintptr_t, Obj> objs;  // start address -> object
std::vector<ReapNode> reaps;
std::mt19937_64 rng;
std::uint64_t checks = 0;

[[noreturn]] void fail(const char *what, std::uint64_t op) {
  std::fprintf(stderr, "reap_model_test: FAILED at operation %" PRIu64 ": %s\n", op, what);
  std::exit(1);
}

std::size_t pick_size() {
  const unsigned k = rng() % 1000;
  if (k < 700) return rng() % 129;              // small
  if (k < 950) return 129 + rng() % 2000;       // medium
  if (k < 995) return 2129 + rng() % 60000;     // up to chunk scale
  return 100000 + rng() % 400000;               // large objects
}

void fill(void *p, std::size_t n, unsigned char v) { std::memset(p, v, n); }

void verify(std::uintptr_t a, const Obj &o, std::uint64_t op) {
  const auto *p = reinterpret_cast<const unsigned char *>(a);
  // check the ends and a sample inside (whole check for small objects)
  const std::size_t n = o.size;
  if (n <= 256) {
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] != o.fill) fail("object contents changed", op);
  } else {
    for (std::size_t i = 0; i < 64; ++i)
      if (p[i] != o.fill || p[n - 1 - i] != o.fill) fail("object contents changed", op);
    for (int k = 0; k < 16; ++k)
      if (p[rng() % n] != o.fill) fail("object contents changed", op);
  }
  ++checks;
}

void check_new(void *p, std::size_t n, std::size_t align, int ri, std::uint64_t op) {
  if (!p) fail("allocation failed", op);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::size_t need = align > 16 ? align : (n >= 16 ? 16 : 8);
  if (a % need) fail("misaligned object", op);
  if (reap_usable_size(reaps[ri].r, p) < n) fail("usable size smaller than the request", op);
  // no overlap with the neighbours
  auto it = objs.lower_bound(a);
  const std::size_t span = n ? n : 1;
  if (it != objs.end() && it->first < a + span) fail("overlaps the next object", op);
  if (it != objs.begin()) {
    --it;
    if (it->first + (it->second.size ? it->second.size : 1) > a) fail("overlaps the previous object", op);
  }
}

int random_live_reap() {
  for (;;) {
    int i = static_cast<int>(rng() % reaps.size());
    if (reaps[i].alive) return i;
  }
}

bool descends(int i, int ancestor) {
  for (; i >= 0; i = reaps[i].parent)
    if (i == ancestor) return true;
  return false;
}

// Forget the objects of every reap for which pred holds.
template <class Pred>
void drop_objects(Pred pred) {
  for (auto it = objs.begin(); it != objs.end();) {
    if (pred(it->second.reap)) it = objs.erase(it);
    else ++it;
  }
}

void check_stats(std::uint64_t op) {
  std::vector<std::size_t> count(reaps.size());
  for (auto &kv : objs) ++count[kv.second.reap];
  for (std::size_t i = 0; i < reaps.size(); ++i) {
    if (!reaps[i].alive) continue;
    reap_stats_t s;
    reap_stats(reaps[i].r, &s);
    if (s.live_objects != count[i]) fail("live object count differs from the model", op);
    if (s.peak_footprint_bytes < s.footprint_bytes) fail("peak footprint below footprint", op);
  }
}

std::uintptr_t random_object() {
  auto it = objs.lower_bound(static_cast<std::uintptr_t>(rng()) & 0x7fffffffffff);
  if (it == objs.end()) it = objs.begin();
  return it->first;
}

}  // namespace

int main(int argc, char **argv) {
  const std::uint64_t ops = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  rng.seed(seed);
  reaps.push_back({reap_create(nullptr), -1, true});
  if (!reaps[0].r) fail("reap_create", 0);

  for (std::uint64_t op = 0; op < ops; ++op) {
    const unsigned k = rng() % 1000;
    if (k < 400 || objs.empty()) {  // malloc
      const int ri = random_live_reap();
      const std::size_t n = pick_size();
      void *p = reap_malloc(reaps[ri].r, n);
      check_new(p, n, 0, ri, op);
      const auto f = static_cast<unsigned char>(rng());
      fill(p, n, f);
      objs[reinterpret_cast<std::uintptr_t>(p)] = {n, f, ri};
    } else if (k < 450) {  // calloc
      const int ri = random_live_reap();
      const std::size_t n = 1 + rng() % 64, m = 1 + rng() % 64;
      auto *p = static_cast<unsigned char *>(reap_calloc(reaps[ri].r, n, m));
      check_new(p, n * m, 0, ri, op);
      for (std::size_t i = 0; i < n * m; ++i)
        if (p[i]) fail("calloc memory not zeroed", op);
      objs[reinterpret_cast<std::uintptr_t>(p)] = {n * m, 0, ri};
    } else if (k < 490) {  // memalign
      const int ri = random_live_reap();
      const std::size_t align = std::size_t{1} << (rng() % 13);  // 1 .. 4096
      const std::size_t n = pick_size();
      void *p = reap_memalign(reaps[ri].r, align, n);
      check_new(p, n, align, ri, op);
      const auto f = static_cast<unsigned char>(rng());
      fill(p, n, f);
      objs[reinterpret_cast<std::uintptr_t>(p)] = {n, f, ri};
    } else if (k < 820) {  // free
      const std::uintptr_t a = random_object();
      const Obj o = objs[a];
      verify(a, o, op);
      objs.erase(a);
      reap_free(reaps[o.reap].r, reinterpret_cast<void *>(a));
    } else if (k < 960) {  // realloc
      const std::uintptr_t a = random_object();
      Obj o = objs[a];
      verify(a, o, op);
      objs.erase(a);
      const std::size_t n = rng() % 4 == 0 ? pick_size() : o.size / 2 + rng() % (o.size + 64);
      void *p = reap_realloc(reaps[o.reap].r, reinterpret_cast<void *>(a), n);
      check_new(p, n, 0, o.reap, op);
      const std::size_t keep = n < o.size ? n : o.size;
      const auto *q = static_cast<unsigned char *>(p);
      for (std::size_t i = 0; i < keep && i < 512; ++i)
        if (q[i] != o.fill) fail("realloc lost contents", op);
      fill(p, n, o.fill);
      o.size = n;
      objs[reinterpret_cast<std::uintptr_t>(p)] = o;
    } else if (k < 975) {  // a new child reap
      if (reaps.size() < 64) {
        const int pi = random_live_reap();
        reap_t *c = reap_create(reaps[pi].r);
        if (!c) fail("reap_create", op);
        reaps.push_back({c, pi, true});
      }
    } else if (k < 985) {  // destroy a child reap and its descendants
      const int ri = random_live_reap();
      if (ri != 0) {
        reap_destroy(reaps[ri].r);
        for (std::size_t i = 0; i < reaps.size(); ++i)
          if (reaps[i].alive && descends(static_cast<int>(i), ri)) reaps[i].alive = false;
        drop_objects([&](int i) { return descends(i, ri); });
      }
    } else if (k < 990) {  // clear a reap: its objects and its descendants go
      const int ri = random_live_reap();
      reap_free_all(reaps[ri].r);
      for (std::size_t i = 0; i < reaps.size(); ++i)
        if (static_cast<int>(i) != ri && reaps[i].alive && descends(static_cast<int>(i), ri))
          reaps[i].alive = false;
      drop_objects([&](int i) { return descends(i, ri); });
    } else {  // verify a few objects and the statistics
      for (int j = 0; j < 8 && !objs.empty(); ++j) {
        const std::uintptr_t a = random_object();
        verify(a, objs[a], op);
        if (reap_usable_size(reaps[objs[a].reap].r, reinterpret_cast<void *>(a)) < objs[a].size)
          fail("usable size shrank", op);
      }
      if (rng() % 16 == 0) check_stats(op);
    }
    // keep the live set moderate: a region-style wipe now and then
    if (objs.size() > 20000) {
      reap_free_all(reaps[0].r);
      for (std::size_t i = 1; i < reaps.size(); ++i) reaps[i].alive = false;
      reaps.resize(1);
      objs.clear();
    }
  }
  check_stats(ops);
  for (auto &kv : objs) verify(kv.first, kv.second, ops);
  reap_destroy(reaps[0].r);
  std::printf("reap_model_test: %" PRIu64 " operations, %" PRIu64 " object checks, seed %" PRIu64 ": ok\n",
              ops, checks, seed);
  return 0;
}
