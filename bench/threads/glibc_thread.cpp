// glibc_thread — after glibc's thread benchmark for malloc (bench-malloc-thread,
// as the public allocator benchmark suite runs it): every thread keeps a
// working set of 1024 slots; each step frees the object in a slot and
// allocates a new one there, of a size drawn from an inverse-square
// distribution over 4..32768 bytes, and writes every byte of it. Slots and
// sizes come from two tables made once and shared by all threads (4096
// slot numbers, 8000 sizes), walked in order by each thread from the start,
// as the original walks its tables. Nothing is shared between threads but
// the tables.
//
// What the pattern holds that a one-size loop does not: half the requests
// are 4..8 bytes and the rest spread over every class up to 1 KiB and, one
// in 250, beyond; the class changes from one malloc to the next in no
// order, and a free lands in any of a thousand live objects, not the one
// freed 64 steps ago. GLIBC_THREAD_SIZE=N makes every request N bytes
// instead (the distribution's shape left out, to tell its cost apart).
#include <cmath>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kWorkingSet = 1024;
constexpr int kSizes = 8000;
constexpr int kOffsets = 4 * kWorkingSet;
constexpr double kMinSize = 4, kMaxSize = 32768;

struct Tables {
  std::vector<std::uint32_t> size, offset;
};

// The original's inverse-square draw: a uniform r in [0, 1] mapped through
// the inverse of the distribution function of p(s) ~ s^-2 on [4, 32768].
Tables make_tables(std::size_t fixed) {
  Tables t;
  tb::Rng rng(88);
  const double lo = 1.0 / kMinSize, hi = 1.0 / kMaxSize;
  for (int i = 0; i < kSizes; ++i) {
    const double r = static_cast<double>(rng.below(1u << 30)) / static_cast<double>(1u << 30);
    const auto s = static_cast<std::uint32_t>(1.0 / (lo - (lo - hi) * r));
    t.size.push_back(fixed ? static_cast<std::uint32_t>(fixed) : s);
  }
  for (int i = 0; i < kOffsets; ++i) t.offset.push_back(rng.below(kWorkingSet));
  return t;
}

void work(int id, long steps, const Tables &t, tb::Tally &tally) {
  // Objects are bare (most are smaller than a tb::Obj), every byte written.
  std::vector<tb::BareSlot> set(kWorkingSet);
  std::uint64_t made = 0, freed = 0;
  const std::uint64_t seed = 7000 + static_cast<std::uint64_t>(id);
  std::size_t oi = 0, si = 0;
  for (long i = 0; i < steps; ++i) {
    tb::BareSlot &s = set[t.offset[oi]];
    oi = oi + 1 == t.offset.size() ? 0 : oi + 1;
    const std::uint32_t size = t.size[si];
    si = si + 1 == t.size.size() ? 0 : si + 1;
    freed += tb::release(s);
    s.p = static_cast<unsigned char *>(std::malloc(size));
    if (!s.p) {
      std::fprintf(stderr, "out of memory (%u bytes)\n", size);
      std::exit(1);
    }
    s.size = size;
    s.value = tb::value_of(seed, static_cast<std::uint64_t>(i));
    std::memset(s.p, static_cast<unsigned char>(s.value), size);
    made += s.value;
  }
  for (tb::BareSlot &s : set) freed += tb::release(s);
  tally.add(made, freed, steps);
}

}  // namespace

int main(int argc, char **argv) {
  const char *env = std::getenv("GLIBC_THREAD_SIZE");
  const tb::Args a = tb::parse(argc, argv,
                               "glibc thread benchmark pattern: per thread 1024 slots, each step frees one and "
                               "allocates 4..32768 B (inverse square) in its place, every byte written",
                               "  GLIBC_THREAD_SIZE=N  every request N bytes instead (1..65536)\n");
  std::size_t fixed = 0;
  if (env) {
    char *end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end == env || *end || v < 1 || v > 65536) {
      std::fprintf(stderr, "glibc_thread: GLIBC_THREAD_SIZE must be in 1..65536: '%s'\n", env);
      return 2;
    }
    fixed = static_cast<std::size_t>(v);
  }
  const Tables t = make_tables(fixed);
  const long steps = tb::scaled(a, 40000000.0 / a.threads, 10);
  tb::Tally tally;
  std::vector<std::thread> ws;
  for (int i = 0; i < a.threads; ++i) ws.emplace_back([i, steps, &t, &tally] { work(i, steps, t, tally); });
  for (auto &w : ws) w.join();
  return tb::finish("glibc_thread", tally);
}
