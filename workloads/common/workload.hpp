// workload.hpp — what every bundled workload shares: the command line
// (`--alloc custom|reap|malloc`, `--scale N`, `--quick`), a seeded PRNG, a
// running checksum, and the footprint line the study reads from stderr.
//
// Every workload is one program that can run three ways, picked at run time:
//   custom  its own allocator, written as the original program wrote it;
//   reap    libreap in place of the custom allocator;
//   malloc  naive allocation — each object to malloc/free, and region frees
//           through libreap's region emulator (REAP_MODE=malloc), as in the
//           reaps paper §3.1 and the "littering" paper's Table 4.
// All three print the same `checksum` line on stdout; stdout holds nothing
// that depends on addresses, time or the allocator.
#pragma once

#include <alloclab/reap.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace wl {

enum class Alloc { Custom, Reap, Malloc };

inline const char *alloc_name(Alloc a) {
  switch (a) {
    case Alloc::Custom: return "custom";
    case Alloc::Reap: return "reap";
    case Alloc::Malloc: return "malloc";
  }
  return "?";
}

struct Options {
  Alloc alloc = Alloc::Custom;
  double scale = 1.0;  // multiplies the amount of work; fractions allowed
};

[[noreturn]] inline void usage(const char *prog, const char *about, int status) {
  std::FILE *out = status == 0 ? stdout : stderr;
  std::fprintf(out,
               "usage: %s [--alloc custom|reap|malloc] [--scale N] [--quick]\n"
               "  %s\n"
               "  --alloc   custom: the program's own allocator (default)\n"
               "            reap:   libreap replaces it\n"
               "            malloc: every object to malloc/free; regions emulated\n"
               "  --scale N multiply the work by N (0 < N <= 1000, default 1)\n"
               "  --quick   same as --scale 0.02 (for tests)\n",
               prog, about);
  std::exit(status);
}

inline bool parse_alloc(std::string_view v, Alloc &out) {
  if (v == "custom") out = Alloc::Custom;
  else if (v == "reap") out = Alloc::Reap;
  else if (v == "malloc") out = Alloc::Malloc;
  else return false;
  return true;
}

inline bool parse_scale(const char *v, double &out) {
  char *end = nullptr;
  errno = 0;
  const double d = std::strtod(v, &end);
  if (errno || end == v || *end != '\0' || !(d > 0.0) || d > 1000.0) return false;
  out = d;
  return true;
}

// Parses the command line; on a bad argument prints why and exits with 2.
// In malloc mode it also turns on the region emulator before any reap exists
// (libreap reads REAP_MODE once, at the first reap_create).
inline Options parse_options(int argc, char **argv, const char *about) {
  Options o;
  const char *prog = argc > 0 ? argv[0] : "workload";
  auto bad = [&](const char *what, const char *arg) {
    std::fprintf(stderr, "%s: %s: '%s'\n", prog, what, arg);
    usage(prog, about, 2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    const char *value = nullptr;
    std::string_view key = a;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      key = a.substr(0, eq);
      value = argv[i] + eq + 1;
    }
    auto take = [&]() -> const char * {
      if (value) return value;
      if (i + 1 >= argc) bad("missing value for", argv[i]);
      return argv[++i];
    };
    if (key == "--help" || key == "-h") usage(prog, about, 0);
    else if (key == "--alloc") {
      const char *v = take();
      if (!parse_alloc(v, o.alloc)) bad("unknown allocator (want custom, reap or malloc)", v);
    } else if (key == "--scale") {
      const char *v = take();
      if (!parse_scale(v, o.scale)) bad("scale must be a number in (0, 1000]", v);
    } else if (key == "--quick" && !value) o.scale = 0.02;
    else bad("unknown argument", argv[i]);
  }
  if (o.alloc == Alloc::Malloc) setenv("REAP_MODE", "malloc", 1);
  return o;
}

// `base` units of work scaled, never below `floor`.
inline long scaled(const Options &o, long base, long floor = 1) {
  const long long v = std::llround(static_cast<double>(base) * o.scale);
  return v < floor ? floor : static_cast<long>(v);
}

[[noreturn]] inline void out_of_memory(const char *where) {
  std::fprintf(stderr, "out of memory (%s)\n", where);
  std::exit(1);
}

inline void *check(void *p, const char *where) {
  if (!p) out_of_memory(where);
  return p;
}

inline reap_t *new_reap(reap_t *parent) {
  return static_cast<reap_t *>(check(reap_create(parent), "reap_create"));
}

// splitmix64: small, fast, and the same on every machine.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // uniform in [0, n), n > 0 (the tiny modulo bias does not matter here)
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
  // uniform in [lo, hi]
  int range(int lo, int hi) { return lo + static_cast<int>(below(static_cast<std::uint32_t>(hi - lo + 1))); }
  bool chance(unsigned percent) { return below(100) < percent; }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t s_;
};

inline std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

// An order-sensitive running checksum (FNV-1a over 64-bit words and bytes).
class Checksum {
 public:
  void add(std::uint64_t v) {
    h_ ^= v;
    h_ *= 0x100000001b3ull;
  }
  void add_bytes(const void *data, std::size_t n) {
    const auto *p = static_cast<const unsigned char *>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ull;
    }
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

inline void print_checksum(std::uint64_t v) { std::printf("checksum %016" PRIx64 "\n", v); }

// Stats go to stderr so stdout stays identical across variants.
inline void print_footprint(std::size_t peak_bytes) {
  std::fprintf(stderr, "footprint_peak_bytes %zu\n", peak_bytes);
}

}  // namespace wl
