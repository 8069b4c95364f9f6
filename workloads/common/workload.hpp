// workload.hpp — what every bundled workload shares: the command line
// (`--alloc custom|reap|malloc`, `--scale N`, `--quick`), a seeded PRNG
// (rng.hpp), a running checksum, and the footprint line the study reads from
// stderr.
//
// Every workload is one program that can run several ways, picked at run time:
//   malloc    naive allocation, built as the 2026 paper's Table 4 builds it
//             (regions keep a list of one-object chunks from malloc, so bulk
//             free walks it; everything else calls malloc/free directly);
//   custom    its own allocator, written as the original program wrote it;
//   reap      libreap in place of the custom allocator;
//   emulator  the reap calls under libreap's region emulator
//             (REAP_MODE=malloc), the reaps paper's §3.1;
//   talloc, apr, pmr   the same region calls served by talloc, APR pools or
//             std::pmr (region.hpp), the allocators of like semantics.
// A workload names the variants it accepts; `--variants` prints them.
// All print the same `checksum` line on stdout; stdout holds nothing that
// depends on addresses, time or the allocator.
#pragma once

#include <alloclab/reap.h>

#include "rng.hpp"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace wl {

enum class Alloc { Malloc, Custom, Reap, Emulator, Talloc, Apr, Pmr };

inline constexpr Alloc kAllAllocs[] = {Alloc::Malloc, Alloc::Custom, Alloc::Reap, Alloc::Emulator,
                                       Alloc::Talloc, Alloc::Apr,    Alloc::Pmr};

inline const char *alloc_name(Alloc a) {
  switch (a) {
    case Alloc::Malloc: return "malloc";
    case Alloc::Custom: return "custom";
    case Alloc::Reap: return "reap";
    case Alloc::Emulator: return "emulator";
    case Alloc::Talloc: return "talloc";
    case Alloc::Apr: return "apr";
    case Alloc::Pmr: return "pmr";
  }
  return "?";
}

// Whether this build can serve a variant: talloc and APR need their
// libraries at build time (WL_HAVE_TALLOC, WL_HAVE_APR from CMake).
inline bool alloc_built(Alloc a) {
#ifndef WL_HAVE_TALLOC
  if (a == Alloc::Talloc) return false;
#endif
#ifndef WL_HAVE_APR
  if (a == Alloc::Apr) return false;
#endif
  (void)a;
  return true;
}

// The variants a workload accepts (a bit per Alloc), naive first when printed.
using AllocSet = unsigned;
constexpr AllocSet alloc_bit(Alloc a) { return 1u << static_cast<unsigned>(a); }
inline constexpr AllocSet kBasicAllocs = alloc_bit(Alloc::Malloc) | alloc_bit(Alloc::Custom) | alloc_bit(Alloc::Reap);
inline constexpr AllocSet kRegionLikeAllocs =
    alloc_bit(Alloc::Talloc) | alloc_bit(Alloc::Apr) | alloc_bit(Alloc::Pmr);

inline bool accepts(AllocSet set, Alloc a) { return (set & alloc_bit(a)) && alloc_built(a); }

struct Options {
  Alloc alloc = Alloc::Custom;
  double scale = 1.0;  // multiplies the amount of work; fractions allowed
  double live = 1.0;   // multiplies the live set, where the program has one to size (--live)
};

inline void print_variants(std::FILE *out, AllocSet set, const char *sep) {
  bool first = true;
  for (Alloc a : kAllAllocs)
    if (accepts(set, a)) {
      std::fprintf(out, "%s%s", first ? "" : sep, alloc_name(a));
      first = false;
    }
}

[[noreturn]] inline void usage(const char *prog, const char *about, AllocSet set, int status, bool live = false) {
  std::FILE *out = status == 0 ? stdout : stderr;
  std::fprintf(out, "usage: %s [--alloc ", prog);
  print_variants(out, set, "|");
  std::fprintf(out, "] [--scale N] [--quick] [--variants]\n  %s\n", about);
  const char *lead = "  --alloc    ";
  for (Alloc a : kAllAllocs) {
    if (!accepts(set, a)) continue;
    const char *what = "";
    switch (a) {
      case Alloc::Malloc: what = "naive allocation (2026 paper, Table 4)"; break;
      case Alloc::Custom: what = "the program's own allocator (default)"; break;
      case Alloc::Reap: what = "libreap replaces the custom allocator"; break;
      case Alloc::Emulator: what = "the reap calls under REAP_MODE=malloc"; break;
      case Alloc::Talloc: what = "the region calls through talloc"; break;
      case Alloc::Apr: what = "the region calls through APR pools"; break;
      case Alloc::Pmr: what = "the region calls through std::pmr"; break;
    }
    std::fprintf(out, "%s%-9s %s\n", lead, alloc_name(a), what);
    lead = "             ";
  }
  if (live)
    std::fprintf(out, "  --live N   multiply the objects live at once by N (0 < N <= 100000, default 1)\n");
  std::fprintf(out,
               "  --scale N  multiply the work by N (0 < N <= 1000, default 1)\n"
               "  --quick    same as --scale 0.02 (for tests)\n"
               "  --variants print the --alloc values this program accepts and exit\n");
  std::exit(status);
}

inline bool parse_alloc(std::string_view v, AllocSet set, Alloc &out) {
  for (Alloc a : kAllAllocs)
    if (v == alloc_name(a) && accepts(set, a)) {
      out = a;
      return true;
    }
  return false;
}

inline bool parse_scale(const char *v, double &out, double most = 1000.0) {
  char *end = nullptr;
  errno = 0;
  const double d = std::strtod(v, &end);
  if (errno || end == v || *end != '\0' || !(d > 0.0) || d > most) return false;
  out = d;
  return true;
}

// Parses the command line; on a bad argument prints why and exits with 2.
// For the emulator it also turns on REAP_MODE=malloc before any reap exists
// (libreap reads REAP_MODE once, at the first reap_create).
// LIVE: the program sizes its live set by --live (only those accept it).
inline Options parse_options(int argc, char **argv, const char *about, AllocSet set = kBasicAllocs,
                             bool live = false) {
  Options o;
  const char *prog = argc > 0 ? argv[0] : "workload";
  auto bad = [&](const char *what, const char *arg) {
    std::fprintf(stderr, "%s: %s: '%s'\n", prog, what, arg);
    usage(prog, about, set, 2, live);
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
    if (key == "--help" || key == "-h") usage(prog, about, set, 0, live);
    else if (key == "--variants" && !value) {
      print_variants(stdout, set, "\n");
      std::printf("\n");
      std::exit(0);
    } else if (key == "--alloc") {
      const char *v = take();
      if (!parse_alloc(v, set, o.alloc)) bad("unknown allocator (see --variants)", v);
    } else if (key == "--scale") {
      const char *v = take();
      if (!parse_scale(v, o.scale)) bad("scale must be a number in (0, 1000]", v);
    } else if (key == "--live" && live) {
      const char *v = take();
      if (!parse_scale(v, o.live, 1e5)) bad("live must be a number in (0, 100000]", v);
    } else if (key == "--quick" && !value) o.scale = 0.02;
    else bad("unknown argument", argv[i]);
  }
  if (o.alloc == Alloc::Emulator) setenv("REAP_MODE", "malloc", 1);
  return o;
}

// `base` units of work scaled, never below `floor`.
inline long scaled(const Options &o, long base, long floor = 1) {
  const long long v = std::llround(static_cast<double>(base) * o.scale);
  return v < floor ? floor : static_cast<long>(v);
}

// `base` objects of the live set sized by --live, never below `floor`.
inline long sized(const Options &o, long base, long floor = 1) {
  const long long v = std::llround(static_cast<double>(base) * o.live);
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

// A block a custom allocator takes from malloc for itself, linked to the one taken before it.
struct HeldBlock {
  HeldBlock *prev;
  std::size_t size;  // bytes in data
  alignas(16) char data[];
};

// A block of n bytes from malloc, pushed on `list`.
inline HeldBlock *hold_block(HeldBlock *&list, std::size_t n, const char *where) {
  auto *b = static_cast<HeldBlock *>(check(std::malloc(sizeof(HeldBlock) + n), where));
  b->size = n;
  b->prev = list;
  list = b;
  return b;
}

// Frees every block on `list`.
inline void release_blocks(HeldBlock *&list) {
  while (list) {
    HeldBlock *b = list;
    list = b->prev;
    std::free(b);
  }
}

inline reap_t *new_reap(reap_t *parent) {
  return static_cast<reap_t *>(check(reap_create(parent), "reap_create"));
}

// The seeded PRNG (rng.hpp), shared with the thread benchmarks.
using Rng = alloclab::SplitMix64;

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
