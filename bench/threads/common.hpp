// common.hpp — what the thread benchmarks share: the command line
// (`<bench> [threads] [scale]`, --help), a seeded PRNG, the size
// distributions, and the result line.
//
// Every benchmark prints, as its last line on stdout,
//   checksum <16 hex digits> ops <allocations done>
// The checksum is a commutative sum of values written into objects and read
// back by whichever thread frees them, so it does not depend on the
// interleaving: a wrong object freed, or an object's contents overwritten
// while it was live, changes it. A benchmark that notices a mismatch itself
// (freed sum differs from allocated sum) says so on stderr and exits 1.
#pragma once

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "rng.hpp"

namespace tb {

struct Args {
  int threads = 2;
  double scale = 1.0;
};

[[noreturn]] inline void usage(const char *prog, const char *about, const char *extra, int status) {
  std::FILE *out = status == 0 ? stdout : stderr;
  std::fprintf(out,
               "usage: %s [threads] [scale]\n"
               "  %s\n"
               "  threads  worker threads (1..256, default 2)\n"
               "  scale    multiply the work by this (0 < scale <= 1000, default 1;\n"
               "           the default runs for about a second on two cores)\n"
               "%s"
               "Prints `checksum <hex> ops <n>` last; exits 1 when an object came back wrong.\n",
               prog, about, extra ? extra : "");
  std::exit(status);
}

inline Args parse(int argc, char **argv, const char *about, const char *extra = nullptr) {
  Args a;
  const char *prog = argc > 0 ? argv[0] : "bench";
  int pos = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view s = argv[i];
    if (s == "--help" || s == "-h") usage(prog, about, extra, 0);
    char *end = nullptr;
    errno = 0;
    if (pos == 0) {
      const long v = std::strtol(argv[i], &end, 10);
      if (errno || end == argv[i] || *end || v < 1 || v > 256) {
        std::fprintf(stderr, "%s: threads must be an integer in 1..256: '%s'\n", prog, argv[i]);
        usage(prog, about, extra, 2);
      }
      a.threads = static_cast<int>(v);
    } else if (pos == 1) {
      const double v = std::strtod(argv[i], &end);
      if (errno || end == argv[i] || *end || !(v > 0.0) || v > 1000.0) {
        std::fprintf(stderr, "%s: scale must be a number in (0, 1000]: '%s'\n", prog, argv[i]);
        usage(prog, about, extra, 2);
      }
      a.scale = v;
    } else {
      std::fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[i]);
      usage(prog, about, extra, 2);
    }
    ++pos;
  }
  return a;
}

// `base` units of work times the scale, at least `floor`.
inline long scaled(const Args &a, double base, long floor = 1) {
  const long long v = std::llround(base * a.scale);
  return v < floor ? floor : static_cast<long>(v);
}

// The seeded PRNG the workloads use too (workloads/common/rng.hpp).
using Rng = alloclab::SplitMix64;

// Sizes skewed towards the small end, as in the allocation traces these
// benchmarks imitate: most objects 8..128 bytes, fewer up to `max`.
inline std::size_t skewed_size(Rng &r, std::size_t max) {
  const unsigned pick = r.below(100);
  if (pick < 70) return r.range(8, 128);
  if (pick < 93) return r.range(129, max < 1024 ? max : 1024);
  return r.range(8, max);
}

// Every object starts with this: the value the checksum adds, and room for a
// link when the object travels through a queue.
struct Obj {
  Obj *next;
  std::uint64_t value;
  std::uint32_t size;
};

inline Obj *make(std::size_t size, std::uint64_t value) {
  if (size < sizeof(Obj)) size = sizeof(Obj);
  auto *o = static_cast<Obj *>(std::malloc(size));
  if (!o) {
    std::fprintf(stderr, "out of memory (%zu bytes)\n", size);
    std::exit(1);
  }
  o->next = nullptr;
  o->value = value;
  o->size = static_cast<std::uint32_t>(size);
  // touch the last byte too, as a program filling its object would
  static_cast<unsigned char *>(static_cast<void *>(o))[size - 1] = static_cast<unsigned char>(value);
  return o;
}

// Reads the object back (header and last byte) and frees it; returns what
// it adds to the checksum.
inline std::uint64_t take(Obj *o) {
  const std::uint64_t v = o->value;
  const unsigned char last = static_cast<unsigned char *>(static_cast<void *>(o))[o->size - 1];
  std::uint64_t add = v;
  if (last != static_cast<unsigned char>(v)) add ^= 0xdeadbeefull;  // shows up as a wrong checksum
  std::free(o);
  return add;
}

// An object that is its bytes alone (glibc_thread, larson: sizes from 4 or
// 8 bytes, smaller than an Obj): its slot keeps its size and value beside
// it, and its first and last bytes hold the value's low byte.
struct BareSlot {
  unsigned char *p = nullptr;
  std::uint32_t size = 0;
  std::uint64_t value = 0;
};

// Checks the slot's object's first and last bytes and frees it; returns
// what it adds to the checksum (0 for an empty slot).
inline std::uint64_t release(BareSlot &s) {
  if (!s.p) return 0;
  const auto b = static_cast<unsigned char>(s.value);
  std::uint64_t add = s.value;
  if (s.p[0] != b || s.p[s.size - 1] != b) add ^= 0xdeadbeefull;  // shows up as a wrong checksum
  std::free(s.p);
  s.p = nullptr;
  return add;
}

inline std::uint64_t value_of(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t h = seed * 0x9e3779b97f4a7c15ull + i;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

// Sums both ways: `made` on allocation, `freed` on free; equal at the end.
struct Tally {
  std::atomic<std::uint64_t> made{0}, freed{0}, ops{0};
  // One thread's share, added once when it ends (the sums are order-free).
  void add(std::uint64_t m, std::uint64_t f, long steps) {
    made += m;
    freed += f;
    ops += static_cast<std::uint64_t>(steps);
  }
};

inline int finish(const char *name, const Tally &t) {
  const std::uint64_t made = t.made.load(), freed = t.freed.load();
  if (made != freed) {
    std::fprintf(stderr, "%s: objects came back wrong: allocated sum %016" PRIx64 ", freed sum %016" PRIx64 "\n",
                 name, made, freed);
    std::printf("checksum %016" PRIx64 " ops %" PRIu64 "\n", freed, t.ops.load());
    return 1;
  }
  std::printf("checksum %016" PRIx64 " ops %" PRIu64 "\n", made, t.ops.load());
  return 0;
}

}  // namespace tb
