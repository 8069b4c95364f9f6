// rng.hpp — the seeded PRNG of the bundled workloads and of the thread
// benchmarks (bench/threads): splitmix64, small, fast and the same on every
// machine, so a seed gives the same run (and the same checksum) everywhere.
// Both take it from here (CMake target alloclab_rng): a change to a draw
// changes every workload's and benchmark's checksum at once.
#pragma once

#include <cstdint>
#include <type_traits>

namespace alloclab {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // uniform in [0, n), n > 0 (the tiny modulo bias does not matter here)
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }

  // uniform in [lo, hi], in the common type of the bounds (int, std::size_t, ...)
  template <class A, class B>
  std::common_type_t<A, B> range(A lo_, B hi_) {
    using T = std::common_type_t<A, B>;
    const T lo = static_cast<T>(lo_), hi = static_cast<T>(hi_);
    return lo + static_cast<T>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

  bool chance(unsigned percent) { return below(100) < percent; }

  // uniform in [0, 1)
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t s_;
};

}  // namespace alloclab
