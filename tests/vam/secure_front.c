// secure_front.c — libvam-secure.so's check of an object's front (the size
// word and its seal, the 16 bytes just before the object), run under
// LD_PRELOAD of it (vam.secure.front). Each change below, made to a live
// object's front in a child process, must make free abort naming the bytes
// before the object, at sizes of 1 B to 256 KiB and at several objects of
// each (each object's front is mixed with its own address):
//   * one bit of the size word flipped (the size asked, or the pad);
//   * both words changed by the same xor, at one byte or at all but the
//     byte next to the object (a stray read-modify-write of both);
//   * both words incremented by the same amount;
//   * another live object's front copied over this one's.
// A seal that mixed the size word linearly (a rotation of the key alone)
// lets the same xor or, once in four, the same increment through.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "secure_preloaded.h"

enum Change { kFlipSize, kFlipPad, kXorByte, kXorWide, kAddOne, kAddMany, kCopied, kChanges };
static const char *const kNames[kChanges] = {"a bit of the size flipped",   "a bit of the pad flipped",
                                             "both words xored at one byte", "both words xored widely",
                                             "both words incremented by 1",  "both words incremented by 4096",
                                             "another object's front copied"};

struct Cell {
  size_t n;
  int change;
};

// The front's two words, read and written in place (both 8-byte aligned),
// never through the library's checked memcpy.
static volatile uint64_t *front_of(unsigned char *p) { return (volatile uint64_t *)(uintptr_t)((uintptr_t)p - 16); }

static void misuse(const void *arg) {
  const struct Cell *cell = arg;
  unsigned char *other = malloc(cell->n + 24);  // another size: another size word
  unsigned char *p = malloc(cell->n);
  if (p == NULL || other == NULL) exit(1);
  volatile uint64_t *front = front_of(p);  // [0]: the size word, [1]: its seal
  volatile unsigned char *bytes = (volatile unsigned char *)front;
  switch (cell->change) {
    case kFlipSize: front[0] ^= (uint64_t)1 << 6; break;
    case kFlipPad: front[0] ^= 1; break;
    case kXorByte:
      bytes[2] ^= 0x41;
      bytes[8 + 2] ^= 0x41;
      break;
    case kXorWide:
      front[0] ^= 0x0011223344556677ull;
      front[1] ^= 0x0011223344556677ull;
      break;
    case kAddOne:
      front[0] += 1;
      front[1] += 1;
      break;
    case kAddMany:
      front[0] += 4096;
      front[1] += 4096;
      break;
    case kCopied: {
      volatile uint64_t *from = front_of(other);
      front[0] = from[0];
      front[1] = from[1];
      break;
    }
  }
  free(p);
}

int main(void) {
  if (!secure_preloaded("secure_front")) return 1;
  static const size_t sizes[] = {1, 8, 24, 100, 4096, 70000, 262144};
  int failures = 0, cells = 0;
  char said[512];
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    for (int change = 0; change < kChanges; ++change) {
      // Several children: each child's object lies at another address (a
      // different number of objects made before it), so its key differs.
      for (int trial = 0; trial < 8; ++trial) {
        void *before[8];
        for (int i = 0; i < trial; ++i) before[i] = malloc(sizes[s]);
        const struct Cell cell = {sizes[s], change};
        ++cells;
        if (!child_aborts_saying(misuse, &cell, 0, "the bytes before the object were overwritten", said,
                                 sizeof said)) {
          fprintf(stderr, "secure_front: FAIL: %s at %zu B (trial %d) was not caught: %s\n", kNames[change],
                  sizes[s], trial, said[0] ? said : "(nothing said)");
          ++failures;
        }
        for (int i = 0; i < trial; ++i) free(before[i]);
      }
    }
  }
  if (failures != 0) {
    fprintf(stderr, "secure_front: %d of %d cells not caught\n", failures, cells);
    return 1;
  }
  printf("secure_front: ok (%d cells)\n", cells);
  return 0;
}
