// secure_scrub.c — libvam-secure.so's zeroing of freed objects and its
// check of them when they leave the quarantine, at every size where the
// stores and loads change shape (1 to 160 bytes, and some larger ones), run
// under LD_PRELOAD of it (vam.secure.scrub):
//   * every byte of a freed object reads zero;
//   * a byte written after free (the first, the last, one in the middle) is
//     found when the object leaves the quarantine: here at the process's
//     exit, which checks every waiting object whole, in a child that must
//     abort saying so (a write into the middle of an object over 128 bytes
//     went unseen while the exit checked only the ends, as an object
//     leaving the ring is checked).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secure_preloaded.h"

static int failures;

static int zeroed_at_free(size_t n) {
  volatile unsigned char *p = malloc(n);  // volatile: the reads after free are not optimised away
  if (p == NULL) return 0;
  memset((void *)p, 0xff, n);
  free((void *)p);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) {
      fprintf(stderr, "secure_scrub: FAIL: byte %zu of a freed object of %zu bytes reads %d\n", i, n, p[i]);
      return 0;
    }
  return 1;
}

struct write_at {
  size_t n, at;
};

static void write_after_free(const void *arg) {
  const struct write_at *w = arg;
  volatile unsigned char *p = malloc(w->n);
  if (p == NULL) _exit(3);
  free((void *)p);
  p[w->at] = 1;
}

// A write into byte `at` of a freed object of n bytes: the child must abort
// at its exit, which checks the objects waiting in the quarantine, naming a
// write after free.
static void write_after_free_caught(size_t n, size_t at) {
  const struct write_at w = {n, at};
  char said[512];
  if (!child_aborts_saying(write_after_free, &w, 1, "write after free", said, sizeof said)) {
    fprintf(stderr, "secure_scrub: FAIL: a write into byte %zu of a freed object of %zu bytes was not caught: %s\n",
            at, n, said);
    ++failures;
  }
}

int main(void) {
  if (!secure_preloaded("secure_scrub")) return 1;
  for (size_t n = 1; n <= 600; ++n)
    if (!zeroed_at_free(n)) ++failures;
  if (!zeroed_at_free(4096) || !zeroed_at_free(70000)) ++failures;
  if (failures == 0) puts("secure_scrub: freed objects of 1 to 600 bytes, 4 KiB and 70,000 bytes read zero");

  static const size_t larger[] = {200, 255, 256, 1000, 4096, 262144};
  for (size_t n = 1; n <= 160 + sizeof larger / sizeof larger[0]; ++n) {
    const size_t size = n <= 160 ? n : larger[n - 161];
    write_after_free_caught(size, 0);
    write_after_free_caught(size, size - 1);
    write_after_free_caught(size, size / 2);
  }
  write_after_free_caught(262144, 65537);  // hardened_malloc's test: one byte past its first 64 KiB
  if (failures != 0) return 1;
  puts("secure_scrub: ok");
  return 0;
}
