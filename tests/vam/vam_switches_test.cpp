// vam_switches_test <mode> — Vam's design switches (docs/vam.md, "Design
// switches") change what they say, seen through the prefixed API. ctest runs
// each mode with its VAM_* option in the environment, and the default modes
// without it, so a switch that did nothing fails its mode.
//
//   classes-fine     (default) a 40-byte request gets 48 bytes, 100 -> 112
//   classes-coarse   VAM_CLASSES=coarse: powers of two, 40 -> 64, 100 -> 128, 513 -> 1024
//                    (with VAM_PAGE_MAX=8192: 1025 -> 2048, 5000 -> 8192, each
//                    with the 64 bytes of a page class whose size is a multiple
//                    of 1 KiB: size_classes.hpp, page_stride)
//   alloc-bump       (default) a fresh block hands out objects upwards, one size apart
//   alloc-lifo       VAM_BLOCK_ALLOC=lifo: downwards (the block was threaded, last object on top)
//   headers-off      (default) objects of one class sit one size apart
//   headers-on       VAM_HEADERS=on: 16 bytes further apart, the header before each
//                    object holds its usable size; alignment 16 (and memalign's) kept
//   pages-N          VAM_BLOCK_PAGES=N with VAM_BLOCK_OBJECTS=1 (blocks of a
//                    fixed size): 64 fresh 1000-byte objects fill 16, 4 or 1
//                    block(s) for N = 1, 4, 16
//   objects-N        VAM_BLOCK_OBJECTS=N (objects-32: the default): a block of
//                    the 1008-, 496- and 240-byte classes doubles from four
//                    pages until it holds N objects (up to 16 pages)
//   page-max-N       VAM_PAGE_MAX=N (page-max-1024: the default): requests up
//                    to N bytes get a page-block class, eight per power of two
//                    above 1 KiB (3000 -> 3072, fresh objects one slot apart;
//                    a slot of a class that is a multiple of 1 KiB is 64 bytes
//                    more, so 3000 gets 3136);
//                    bigger ones a large chunk of the request, 16-aligned
// Prints "vam_switches <mode> ok" or the first mismatch.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>

#include "alloclab/vam.h"

static int failures = 0;

static void expect(bool ok, const char *what, long got, long want) {
  if (ok) return;
  printf("vam_switches: %s: got %ld, expected %ld\n", what, got, want);
  ++failures;
}

static long gap(void *a, void *b) { return static_cast<long>(reinterpret_cast<intptr_t>(b) - reinterpret_cast<intptr_t>(a)); }

static void usable(size_t n, long want) {
  void *p = vam_malloc(n);
  char what[64];
  snprintf(what, sizeof what, "usable size of malloc(%zu)", n);
  expect(static_cast<long>(vam_usable_size(p)) == want, what, static_cast<long>(vam_usable_size(p)), want);
  vam_free(p);
}

// Successive objects of a class never used before: the steps between them.
static void steps(size_t n, int count, long *out) {
  void *prev = vam_malloc(n);
  for (int i = 0; i < count; ++i) {
    void *p = vam_malloc(n);
    out[i] = gap(prev, p);
    prev = p;
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "classes-fine") == 0) {
    usable(40, 48);
    usable(100, 112);
    usable(513, 528);
  } else if (strcmp(mode, "classes-coarse") == 0) {
    usable(40, 64);
    usable(100, 128);
    usable(513, 1024);
    // Up to VAM_PAGE_MAX, set to 8192 for this mode; a slot of a multiple of
    // 1 KiB gets page_stride's 64 bytes more, one with a header is none.
    const char *h = getenv("VAM_HEADERS");
    const size_t pad = h && strcmp(h, "on") == 0 ? 0 : 64;
    usable(1025, 2048 + pad);
    usable(5000, 8192 + pad);
    usable(8, 8);
    usable(16, 16);
    // memalign of a coarse class's own size (a power of two): the objects of
    // its blocks lie their stride apart, 64 bytes more than the class, so
    // the class must not serve it (the stress tests found it did).
    for (size_t a : {2048, 4096, 8192}) {
      void *ps[40];
      for (void *&p : ps) {
        p = vam_memalign(a, a);
        expect(p && reinterpret_cast<uintptr_t>(p) % a == 0, "memalign of a coarse class's size: misaligned",
               static_cast<long>(reinterpret_cast<uintptr_t>(p) % a), 0);
      }
      for (void *p : ps) vam_free(p);
    }
    // Coarse classes go through malloc's out-of-line path (the inline one
    // computes only the default classes), which writes a header only with
    // VAM_HEADERS=on: the object before the next one keeps its last bytes.
    for (size_t n : {24, 64, 100, 1000}) {
      auto *a = static_cast<unsigned char *>(vam_malloc(n));
      memset(a, 0xab, n);
      auto *b = static_cast<unsigned char *>(vam_malloc(n));
      long kept = 0;
      for (size_t i = 0; i < n; ++i) kept += a[i] == 0xab;
      expect(kept == static_cast<long>(n), "bytes of an object kept when the next is allocated", kept, static_cast<long>(n));
      vam_free(b);
      vam_free(a);
    }
  } else if (strcmp(mode, "alloc-bump") == 0 || strcmp(mode, "alloc-lifo") == 0) {
    const long want = strcmp(mode, "alloc-bump") == 0 ? 720 : -720;
    long s[8];
    steps(720, 8, s);
    for (long v : s) expect(v == want, "step between successive 720-byte objects", v, want);
  } else if (strcmp(mode, "headers-off") == 0 || strcmp(mode, "headers-on") == 0) {
    const bool on = strcmp(mode, "headers-on") == 0;
    long s[8];
    steps(200, 8, s);
    for (long v : s) expect(v == (on ? 224 : 208), "step between successive 200-byte objects", v, on ? 224 : 208);
    usable(200, 208);
    for (size_t n : {1, 8, 16, 24, 40, 200, 1024}) {
      void *p = vam_malloc(n);
      const long align = n > 8 ? 16 : 8;
      expect(reinterpret_cast<uintptr_t>(p) % align == 0, "alignment", static_cast<long>(reinterpret_cast<uintptr_t>(p) % align), 0);
      if (on) {
        const long h = static_cast<long>(static_cast<size_t *>(p)[-2]);
        expect(h == static_cast<long>(vam_usable_size(p)), "header word before the object", h,
               static_cast<long>(vam_usable_size(p)));
      }
      memset(p, 0xab, vam_usable_size(p));  // the neighbours' headers must survive (next checks)
    }
    for (size_t a : {32, 64, 256, 4096}) {
      void *p = vam_memalign(a, 100);
      expect(p && reinterpret_cast<uintptr_t>(p) % a == 0, "memalign alignment", static_cast<long>(a), 0);
      vam_free(p);
    }
  } else if (strncmp(mode, "pages-", 6) == 0) {
    const long pages = atol(mode + 6);
    const long per = pages * 4096 / 1008;  // 1000 bytes -> the 1008-byte class
    const long blocks = (64 + per - 1) / per;
    long s[63];
    steps(1000, 63, s);
    long jumps = 0;
    for (long v : s) jumps += v != 1008;
    expect(jumps == blocks - 1, "block changes over 64 fresh 1000-byte objects", jumps, blocks - 1);
  } else if (strncmp(mode, "objects-", 8) == 0) {
    const long want = atol(mode + 8);
    // Sizes that leave a gap at a block's end, so a block change shows as a step.
    for (long size : {1008L, 496L, 240L}) {
      long bytes = 4 * 4096;
      while (bytes < 16 * 4096 && bytes / size < want) bytes *= 2;
      const long per = bytes / size;
      // Twice a block's objects, plus one: two block changes.
      const int count = static_cast<int>(2 * per);
      long *s = static_cast<long *>(malloc(sizeof(long) * count));
      steps(static_cast<size_t>(size), count, s);
      long jumps = 0;
      for (int i = 0; i < count; ++i) jumps += s[i] != size;
      free(s);
      char what[96];
      snprintf(what, sizeof what, "block changes over %d fresh %ld-byte objects (%ld a block)", count + 1,
               size, per);
      expect(jumps == 2, what, jumps, 2);
    }
  } else if (strncmp(mode, "page-max-", 9) == 0) {
    const long max = atol(mode + 9);
    // The smallest class above 1 KiB, one in each power of two, the largest.
    for (long n : {1025L, 1152L, 3000L, 5000L, 8192L}) {
      long cls = n <= 2048 ? (n + 127) / 128 * 128 : n <= 4096 ? (n + 255) / 256 * 256 : (n + 511) / 512 * 512;
      if (cls % 1024 == 0) cls += 64;  // the slot of a class that is a multiple of 1 KiB
      void *p = vam_malloc(static_cast<size_t>(n));
      const long got = static_cast<long>(vam_usable_size(p));
      char what[96];
      snprintf(what, sizeof what, "usable size of malloc(%ld), VAM_PAGE_MAX=%ld", n, max);
      const long want = n <= max ? cls : (n + 15) / 16 * 16;  // a chunk: the request, 16-aligned
      expect(got == want, what, got, want);
      vam_free(p);
      if (n > max) continue;
      long st[4];
      steps(static_cast<size_t>(n), 4, st);
      snprintf(what, sizeof what, "step between fresh %ld-byte objects, VAM_PAGE_MAX=%ld", n, max);
      for (long v : st) expect(v == cls, what, v, cls);
    }
  } else {
    printf("vam_switches: unknown mode %s\n", mode);
    return 2;
  }
  if (failures) return 1;
  printf("vam_switches %s ok\n", mode);
  return 0;
}
