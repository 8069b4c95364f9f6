// fit_bins.hpp — FitBins<Links, Geometry>: a segregated-fit index of free
// blocks, the one both coalescing heaps use (a reap's CoalescingHeap through
// SegregatedBins, vam's LargeHeap for its region chunks).
//
// Free blocks sit on doubly linked LIFO lists ("bins") by size, and a bitmap
// says which bins are non-empty, so the first usable bin above a request is
// a few word scans away however many bins there are. The index never reads
// or writes a block except through Links, which is how each heap keeps its
// own block layout: a reap's links live in hidden payload bytes and are
// opened and closed for memory checkers around each access, vam's are plain
// fields of its chunk header.
//
// Geometry (BinGeometry) is fixed at compile time:
//   * exact bins: kExact bins kGrain bytes apart starting at kMinSize. Every
//     block in an exact bin has the same size, so its head fits a request of
//     that size at once;
//   * ranged bins: above them, each power of two [2^k, 2^(k+1)) is split into
//     kPerPow2 bins. A request that falls in a ranged bin searches that bin
//     (the fit policy below) and else takes the head of the next non-empty
//     bin, every block of which is larger;
//   * kBins bins in all. Sizes past the last ranged bin share the last one,
//     unless kMaxSize shows none can occur (then no clamp is compiled in).
//
// Fit policy inside a ranged bin:
//   * Fit::best — the smallest block that fits, the whole list scanned (the
//     paper's best fit for vam's large objects; lists are short because
//     ranged bins are narrow);
//   * Fit::bounded_first — the first block that fits among the first
//     kBudget of the list, so a long list of slightly-too-small blocks
//     cannot make a request slow (reaps).
//
// Links must provide a Node type (the block) and:
//   static std::size_t size(Node *);          block size, flags masked off
//   static Node *next(Node *);
//   static void set_links(Node *, Node *next, Node *prev);
//   static void get_links(Node *, Node **next, Node **prev);
//   static void set_next(Node *, Node *);
//   static void set_prev(Node *, Node *);
#pragma once

#include <cstddef>
#include <cstdint>

namespace alloclab {

enum class Fit { best, bounded_first };

template <std::size_t Grain, std::size_t MinSize, int Exact, int PerPow2, int Bins, Fit Policy,
          int Budget = 0, std::size_t MaxSize = ~std::size_t{0}>
struct BinGeometry {
  static_assert(Grain != 0 && (Grain & (Grain - 1)) == 0, "the grain is a power of two");
  static_assert(PerPow2 > 0 && (PerPow2 & (PerPow2 - 1)) == 0, "bins per power of two: a power of two");
  static_assert(MinSize % Grain == 0, "the smallest size is a whole number of grains");
  static_assert(Exact > 0 && Bins > Exact && Bins % 64 == 0, "whole bitmap words, some ranged bins");
  static_assert(Policy != Fit::bounded_first || Budget > 0, "a bounded first fit needs its budget");
  static constexpr std::size_t kGrain = Grain;
  static constexpr std::size_t kMinSize = MinSize;
  static constexpr int kExact = Exact;
  static constexpr int kPerPow2 = PerPow2;
  static constexpr int kBins = Bins;
  static constexpr Fit kFit = Policy;
  static constexpr int kBudget = Budget;
  static constexpr std::size_t kMaxSize = MaxSize;
};

template <class Links, class Geometry>
class FitBins {
 public:
  using Node = typename Links::Node;
  static constexpr int kExact = Geometry::kExact;
  static constexpr int kBins = Geometry::kBins;
  static constexpr int kWords = kBins / 64;

 private:
  static constexpr int log2_of(std::size_t x) noexcept { return x < 2 ? 0 : 1 + log2_of(x >> 1); }
  // First size past the exact bins; the ranged bins start at its power of two.
  static constexpr std::size_t kExactEnd = Geometry::kMinSize + std::size_t(kExact) * Geometry::kGrain;
  static constexpr int kFirstLog = log2_of(kExactEnd);
  static constexpr int kPerLog = log2_of(std::size_t(Geometry::kPerPow2));
  static_assert(kFirstLog >= kPerLog, "a ranged bin is at least one byte wide");
  // Exact bins hand out their head unchecked, so they must not overlap the
  // ranged ones: the last exact size lies below the first ranged bin's end.
  static_assert(kExactEnd - Geometry::kGrain < (std::size_t{1} << kFirstLog) +
                                                   ((std::size_t{1} << kFirstLog) >> kPerLog),
                "exact and ranged bins overlap");

  static constexpr int exact_bin(std::size_t s) noexcept {
    return static_cast<int>(s / Geometry::kGrain) - static_cast<int>(Geometry::kMinSize / Geometry::kGrain);
  }
  static constexpr int ranged_bin(std::size_t s) noexcept {
    const int k = 63 - __builtin_clzll(s);  // 2^k <= s < 2^(k+1), k >= kFirstLog
    return kExact + (k - kFirstLog) * Geometry::kPerPow2 +
           static_cast<int>((s >> (k - kPerLog)) & (Geometry::kPerPow2 - 1));
  }
  static constexpr bool kClamp = ranged_bin(Geometry::kMaxSize) >= kBins;

 public:
  // Bin of a block (or request) of s bytes, kMinSize <= s.
  static constexpr int bin_of(std::size_t s) noexcept {
    if (s < kExactEnd) return exact_bin(s);
    const int i = ranged_bin(s);
    if constexpr (kClamp) return i < kBins ? i : kBins - 1;
    return i;
  }

  bool empty() const noexcept {
    std::uint64_t any = 0;
    for (int w = 0; w < kWords; ++w) any |= bits_[w];
    return any == 0;
  }

  void insert(Node *b, std::size_t s) noexcept {
    const int i = bin_of(s);
    Node *h = heads_[i];
    Links::set_links(b, h, nullptr);
    if (h) Links::set_prev(h, b);
    heads_[i] = b;
    bits_[i >> 6] |= std::uint64_t{1} << (i & 63);
  }

  void remove(Node *b) noexcept {
    Node *n, *p;
    Links::get_links(b, &n, &p);
    if (p) {
      Links::set_next(p, n);
    } else {
      const int i = bin_of(Links::size(b));
      heads_[i] = n;
      if (!n) bits_[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
    }
    if (n) Links::set_prev(n, p);
  }

  // A free block of at least s bytes, left in its bin; nullptr if none.
  Node *find(std::size_t s) const noexcept {
    int i = bin_of(s);
    if (i >= kExact) {
      if (Node *b = fit_in_bin(i, s)) return b;
      ++i;
    }
    i = first_set_from(i);
    return i < 0 ? nullptr : heads_[i];
  }

  // The same, removed from its bin.
  Node *take_fit(std::size_t s) noexcept {
    Node *b = find(s);
    if (b) remove(b);
    return b;
  }

  void clear() noexcept {
    for (auto &w : bits_) w = 0;
    for (auto &h : heads_) h = nullptr;
  }

  // f(node) for every free block, bins in size order. f may change a block's
  // flags but not its size; it may not unlink blocks other than the one it
  // is given.
  template <class F>
  void for_each(F &&f) const {
    for (int w = 0; w < kWords; ++w) {
      for (std::uint64_t bits = bits_[w]; bits; bits &= bits - 1) {
        const int i = (w << 6) + __builtin_ctzll(bits);
        for (Node *b = heads_[i]; b;) {
          Node *n = Links::next(b);
          f(b);
          b = n;
        }
      }
    }
  }

 private:
  Node *fit_in_bin(int i, std::size_t s) const noexcept {
    if constexpr (Geometry::kFit == Fit::best) {
      Node *best = nullptr;
      std::size_t best_size = 0;
      for (Node *b = heads_[i]; b; b = Links::next(b)) {
        const std::size_t bs = Links::size(b);
        if (bs >= s && (!best || bs < best_size)) {
          best = b;
          best_size = bs;
        }
      }
      return best;
    } else {
      int budget = Geometry::kBudget;
      for (Node *b = heads_[i]; b && budget--; b = Links::next(b))
        if (Links::size(b) >= s) return b;
      return nullptr;
    }
  }

  int first_set_from(int i) const noexcept {
    if (i >= kBins) return -1;
    int w = i >> 6;
    std::uint64_t m = bits_[w] & (~std::uint64_t{0} << (i & 63));
    while (true) {
      if (m) return (w << 6) + __builtin_ctzll(m);
      if (++w == kWords) return -1;
      m = bits_[w];
    }
  }

  std::uint64_t bits_[kWords] = {};
  Node *heads_[kBins] = {};
};

}  // namespace alloclab
