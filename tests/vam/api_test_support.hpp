// api_test_support.hpp — what the files of the API suite (vam_api_test, one
// file per part of src/vam) share: byte patterns, statistics, process sizes,
// and the block set-ups several parts' tests start from.
//
// The suite runs in one process, in the order CMake lists its files, and
// some tests take the state the ones before left (blocks with room in a
// class). ctest runs it whole with VAM_ORDER=fifo and VAM_PAGE_MAX=8192 too.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "vam/api.hpp"
#include "vam/heap.hpp"
#include "vam/size_classes.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VAM_SANITIZED 1
#endif

namespace vam_test {

inline bool aligned(const void *p, size_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; }

// A byte pattern from a seed, and whether it is still there.
inline void fill(void *p, size_t n, unsigned char seed) {
  auto *b = static_cast<unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(seed + i * 7);
}
inline bool check(const void *p, size_t n, unsigned char seed) {
  auto *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(seed + i * 7)) return false;
  return true;
}

inline vam_stats_t stats() {
  vam_stats_t s;
  vam_stats(&s);
  return s;
}

// Resident and mapped sizes of this process, in bytes (/proc/self/statm).
inline size_t statm_field(int i) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long v[2] = {0, 0};
  const int n = fscanf(f, "%lu %lu", &v[0], &v[1]);
  fclose(f);
  return n == 2 ? v[i] * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}
inline size_t rss_bytes() { return statm_field(1); }
inline size_t mapped_bytes() { return statm_field(0); }

// Objects of an n-byte request that fit in one page block.
inline size_t per_block(size_t n) {
  const unsigned c = alloclab::vam::size_class(n);
  return alloclab::vam::class_block_bytes(c) / alloclab::vam::class_size(c);
}

// VAM_ORDER=recent makes a full block that regains space its class's
// front; =fifo puts it at the end of the class's available blocks; =auto
// (the default) does either, by the class's state. ctest runs the suite
// each way; the tests that build a state with the recent order's moves
// skip under the others and say so.
inline bool order_recent() {
  const char *v = getenv("VAM_ORDER");
  return v != nullptr && strcmp(v, "recent") == 0;
}
inline bool order_fifo() {
  const char *v = getenv("VAM_ORDER");
  return v != nullptr && strcmp(v, "fifo") == 0;
}
#define SKIP_UNLESS_RECENT_ORDER() \
  if (!vam_test::order_recent()) GTEST_SKIP() << "VAM_ORDER is not recent: a regained block may join the back (VamReap.ARegainedBlock*)"

// vam_free, then the class's hot list back to its blocks: the block-order
// tests follow every free into its block, as a free does whenever the hot
// list is full. The hot list has tests of its own (VamHot).
inline void free_to_block(void *p) {
  alloclab::vam::Segment *s = alloclab::vam::segment_of(p);
  vam_free(p);
  alloclab::vam::hot_return_all(s->owner);
}

// Three blocks of class cls all of whose objects one run of mallocs made
// (full, and not the front), found among sixteen blocks' worth: full[i] is the first of block
// i's objects in address order, the rest follow it in objs. No container:
// its own allocations could share the class. n < 3 when the tests before
// left too many blocks of the class with room.
struct ClassBlocks {
  static constexpr std::size_t kMaxSlots = 512;  // slots of a 4 KiB block of 8-byte objects
  static inline char *objs[16 * kMaxSlots];
  char *const *full[3] = {};
  int n = 0;
  std::size_t slots = 0;
  explicit ClassBlocks(unsigned cls) {
    using namespace alloclab::vam;
    const std::size_t size = layout_usable(cls);
    objs[0] = static_cast<char *>(vam_malloc(size));
    const Block *first = block_of(segment_of(objs[0]), objs[0]);
    slots = static_cast<std::size_t>(first->end - first->start) / first->size;
    const std::size_t count = 16 * slots;
    for (std::size_t i = 1; i < count; ++i) objs[i] = static_cast<char *>(vam_malloc(size));
    std::sort(objs, objs + count);
    for (std::size_t i = 0; i + slots <= count && n < 3;) {
      std::size_t k = i;
      while (k < count && block(objs[k]) == block(objs[i])) ++k;
      if (k - i == slots && block(objs[i])->state == alloclab::vam::BlockState::full) full[n++] = &objs[i];
      i = k;
    }
  }
  static alloclab::vam::Block *block(const void *p) {
    return alloclab::vam::block_of(alloclab::vam::segment_of(p), p);
  }
  alloclab::vam::Block *record(int i) const { return block(full[i][0]); }
  // Each block regained in turn (free_to_block: into the block, not onto
  // the hot list) by a free of its first object: the third is the front,
  // the second heads the waiting list in state front, the first waits.
  void regain_all() const {
    for (char *const *f : full) free_to_block(f[0]);
  }
};

// Full blocks A, B and C of 1024-byte objects (32 per 32 KiB block), then
// frees that leave A third in the class's list: one object freed while A
// was still in state front (its LIFO list), two freed out of address order
// once it waits (pending, and the first of them moves A's list there too:
// all three come back in address order). A full block
// that regains space becomes the front and the block it displaces stays in
// state front, second; the one behind that waits. C's freed object is
// handed out again at once, leaving C, used up, at the front and B second.
// The tests that use it are of the recent order.
struct TwoBlocks {
  std::vector<char *> all, a, b, c;
  char *again = nullptr;  // c[0] again
  static constexpr uintptr_t kBlock = alloclab::vam::class_block_bytes(alloclab::vam::size_class(1024));
  static constexpr size_t kPer = kBlock / 1024;
  static uintptr_t block(const char *p) { return reinterpret_cast<uintptr_t>(p) & ~(kBlock - 1); }
  TwoBlocks() {
    std::map<uintptr_t, std::vector<char *>> blocks;
    for (size_t i = 0; i < 6 * kPer; ++i) {
      all.push_back(static_cast<char *>(vam_malloc(1024)));
      blocks[block(all.back())].push_back(all.back());
    }
    std::vector<std::vector<char *>> full;
    for (auto &kv : blocks)
      if (kv.second.size() == kPer && kv.first != block(all.back())) full.push_back(kv.second);
    if (full.size() < 3) return;
    a = full[0];
    b = full[1];
    c = full[2];
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::sort(c.begin(), c.end());
    free_to_block(a[9]);   // A was full: the front
    free_to_block(b[3]);   // B too: B is the front, A second (still LIFO)
    free_to_block(c[0]);   // C: the front, B second, A waits
    again = static_cast<char *>(vam_malloc(1024));  // c[0]: C is used up
    free_to_block(a[12]);  // A waits: pending
    free_to_block(a[1]);
  }
  std::vector<char *> next4() {
    std::vector<char *> got;
    for (int i = 0; i < 4; ++i) got.push_back(static_cast<char *>(vam_malloc(1024)));
    return got;
  }
  void release(const std::vector<char *> &got) {
    for (char *p : all)
      if (p != a[9] && p != b[3] && p != a[12] && p != a[1] && p != c[0]) vam_free(p);
    for (char *p : got) vam_free(p);
    vam_free(again);
  }
};

// A full block of 1024-byte objects, not the front, in a segment free's fast
// path already knows (a free and a malloc of the front's last object): a
// free into it takes the fast path's hot list (hot_list.hpp).
struct FullBlock {
  std::vector<char *> all, objs;
  static constexpr uintptr_t kBlock = TwoBlocks::kBlock;
  // Three blocks' worth of objects, more if the tests before left blocks
  // with room that take them (VAM_ORDER=fifo keeps more such blocks).
  FullBlock() {
    for (int round = 0; round < 4 && objs.empty(); ++round) {
      for (size_t i = 0; i < 3 * TwoBlocks::kPer; ++i) all.push_back(static_cast<char *>(vam_malloc(1024)));
      char *last = all.back();
      vam_free(last);
      if (vam_malloc(1024) != last) return;
      std::map<uintptr_t, std::vector<char *>> blocks;
      for (char *p : all) blocks[TwoBlocks::block(p)].push_back(p);
      for (auto &kv : blocks)
        if (kv.second.size() == TwoBlocks::kPer && kv.first != TwoBlocks::block(last)) {
          objs = kv.second;
          return;
        }
    }
  }
  alloclab::vam::Block *record() const {
    alloclab::vam::Segment *s = alloclab::vam::segment_of(objs[0]);
    return alloclab::vam::block_of(s, objs[0]);
  }
  alloclab::vam::Heap *heap() const { return alloclab::vam::segment_of(objs[0])->owner; }
};

}  // namespace vam_test
