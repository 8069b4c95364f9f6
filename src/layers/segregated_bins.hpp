// segregated_bins.hpp — SegregatedBins: the free blocks of a reap's heap, the
// FitBins index (fit_bins.hpp) over boundary-tagged blocks.
//
// Bins 0..62 hold exactly one block size each (32, 48, ... 1024 bytes: the
// 16-byte grain). Above 1024 bytes every power of two is split into four
// bins, and sizes past the last one share it. Blocks in an exact bin always
// fit a request of that size; in a ranged bin the first eight blocks are
// searched first-fit, and every block in a higher bin fits. Lists are LIFO:
// the block freed last is reused first (it is the one most likely still in
// cache).
//
// Links live in the free blocks themselves (after the header word), in
// payload bytes that memory checkers see as unaddressable: TagLinks opens
// them around each access and closes them again.
#pragma once

#include <cstddef>

#include "layers/boundary_tag.hpp"
#include "layers/fit_bins.hpp"
#include "layers/tool_hooks.hpp"

namespace alloclab {

struct TagLinks {
  using Node = tag::Block;

  static std::size_t size(Node *b) noexcept { return tag::size(b); }
  static void set_links(Node *b, Node *n, Node *p) noexcept {
    open(b); at(b)->next = n; at(b)->prev = p; close(b);
  }
  static void get_links(Node *b, Node **n, Node **p) noexcept {
    open(b); *n = at(b)->next; *p = at(b)->prev; close(b);
  }
  static void set_next(Node *b, Node *n) noexcept {
    open(b); at(b)->next = n; close(b);
  }
  static void set_prev(Node *b, Node *p) noexcept {
    open(b); at(b)->prev = p; close(b);
  }
  static Node *next(Node *b) noexcept {
    open(b); Node *n = at(b)->next; close(b);
    return n;
  }

 private:
  struct Pair {
    Node *next;
    Node *prev;
  };
  static Pair *at(Node *b) noexcept { return reinterpret_cast<Pair *>(b + tag::kHeader); }
  static void open(Node *b) noexcept {
    if (tools::active()) tools::reveal(at(b), sizeof(Pair));
  }
  static void close(Node *b) noexcept {
    if (tools::active()) tools::hide(at(b), sizeof(Pair));
  }
};

using SegregatedBins =
    FitBins<TagLinks, BinGeometry</*grain*/ tag::kGrain, /*smallest*/ tag::kMinBlock, /*exact*/ 63,
                                  /*per power of two*/ 4, /*bins*/ 192, Fit::bounded_first,
                                  /*budget*/ 8>>;

}  // namespace alloclab
