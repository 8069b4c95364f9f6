// segregated_bins.hpp — SegregatedBins: the free blocks of a heap, kept on
// doubly linked lists by size, with a bitmap of non-empty lists so a fit is
// found in a few instructions.
//
// Bins 0..62 hold exactly one block size each (32, 48, ... 1024 bytes: the
// 16-byte grain). Above 1024 bytes every power of two is split into four
// bins. Blocks in an exact bin always fit a request of that size; in a
// ranged bin the list is searched first-fit, and every block in a higher bin
// fits. Lists are LIFO: the block freed last is reused first (it is the
// one most likely still in cache).
//
// Links live in the free blocks themselves (after the header word), opened
// and closed for memory checkers by the accessors below.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/boundary_tag.hpp"

namespace alloclab {

class SegregatedBins {
 public:
  static constexpr int kExact = 63;            // 32 .. 1024 step 16
  static constexpr int kBins = 192;
  static constexpr int kWords = kBins / 64;

  static int bin_of(std::size_t s) noexcept {
    if (s <= 1024) return static_cast<int>(s >> 4) - 2;
    const int k = 63 - __builtin_clzll(s);  // 2^k <= s < 2^(k+1), k >= 10
    const int i = kExact + (k - 10) * 4 + static_cast<int>((s >> (k - 2)) & 3);
    return i < kBins ? i : kBins - 1;
  }

  bool empty() const noexcept { return (bits_[0] | bits_[1] | bits_[2]) == 0; }

  void insert(tag::Block *b, std::size_t s) noexcept {
    const int i = bin_of(s);
    tag::Block *h = heads_[i];
    set_links(b, h, nullptr);
    if (h) set_prev(h, b);
    heads_[i] = b;
    bits_[i >> 6] |= std::uint64_t{1} << (i & 63);
  }

  void remove(tag::Block *b) noexcept {
    tag::Block *n, *p;
    get_links(b, &n, &p);
    if (p) set_next(p, n);
    else {
      const int i = bin_of(tag::size(b));
      heads_[i] = n;
      if (!n) bits_[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
    }
    if (n) set_prev(n, p);
  }

  // A free block of at least s bytes, removed from its bin; nullptr if none.
  tag::Block *take_fit(std::size_t s) noexcept {
    int i = bin_of(s);
    if (i >= kExact) {
      // Ranged bin: first fit among a few, else move up.
      int budget = 8;
      for (tag::Block *b = heads_[i]; b && budget--; b = next_of(b)) {
        if (tag::size(b) >= s) {
          remove(b);
          return b;
        }
      }
      ++i;
    }
    i = first_set_from(i);
    if (i < 0) return nullptr;
    tag::Block *b = heads_[i];
    remove(b);
    return b;
  }

  void clear() noexcept {
    for (auto &w : bits_) w = 0;
    for (auto &h : heads_) h = nullptr;
  }

 private:
  struct Links {
    tag::Block *next;
    tag::Block *prev;
  };
  static Links *links(tag::Block *b) noexcept {
    return reinterpret_cast<Links *>(b + tag::kHeader);
  }
  static void open(tag::Block *b) noexcept {
    if (tools::active()) tools::reveal(links(b), sizeof(Links));
  }
  static void close(tag::Block *b) noexcept {
    if (tools::active()) tools::hide(links(b), sizeof(Links));
  }
  static void set_links(tag::Block *b, tag::Block *n, tag::Block *p) noexcept {
    open(b); links(b)->next = n; links(b)->prev = p; close(b);
  }
  static void get_links(tag::Block *b, tag::Block **n, tag::Block **p) noexcept {
    open(b); *n = links(b)->next; *p = links(b)->prev; close(b);
  }
  static void set_next(tag::Block *b, tag::Block *n) noexcept {
    open(b); links(b)->next = n; close(b);
  }
  static void set_prev(tag::Block *b, tag::Block *p) noexcept {
    open(b); links(b)->prev = p; close(b);
  }
  static tag::Block *next_of(tag::Block *b) noexcept {
    open(b); tag::Block *n = links(b)->next; close(b);
    return n;
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
  tag::Block *heads_[kBins] = {};
};

}  // namespace alloclab
