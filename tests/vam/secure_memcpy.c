// secure_memcpy.c — libvam-secure.so's guarded memcpy, run under LD_PRELOAD
// of it (vam.secure.memcpy):
//   * copies that stay within an object, at every offset and length near its
//     ends, into objects of 1 B to 2 MiB packed next to each other, and into
//     memory that is no object (the stack, static data), are made and land;
//   * a copy that starts at an object and runs past its end, or starts within
//     32 bytes before an object and reaches it, aborts before the program
//     frees anything, naming the misuse: each in a child process, at 8 B,
//     4 KiB and 256 KiB (the copies of the public suite's memcpy programs,
//     which never free the object; free's canary checks cannot catch them).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secure_preloaded.h"

// The exported memcpy, never the compiler's inline copy.
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

static unsigned char source[(1 << 21) + 64];
static unsigned char stack_like[4096];

static int failures;

static void fail(const char *what, size_t n, size_t off, size_t len) {
  fprintf(stderr, "secure_memcpy: FAIL: %s (object %zu B, offset %zu, length %zu)\n", what, n, off, len);
  ++failures;
}

// Copies from the first and the last offsets of each of three neighbouring
// objects of n bytes, of every short length and the longest ones: each must
// land.
static void copies_within(size_t n) {
  unsigned char *p[3];
  for (int i = 0; i < 3; ++i) {
    p[i] = malloc(n);
    if (p[i] == NULL) {
      fail("malloc", n, 0, 0);
      return;
    }
    memset(p[i], 0x3c, n);
  }
  const size_t ends = n > 65536 ? 6 : 40;  // offsets tried at each end (fewer for big objects: each copy is long)
  for (int i = 0; i < 3; ++i) {
    for (size_t off = 0; off < n; ++off) {
      if (off == ends && n > 2 * ends) off = n - ends;
      const size_t max = n - off;
      for (size_t len = 1; len <= max; ++len) {
        if (len == 48 && max > 96) len = max - 16;  // the short lengths, and the longest ones
        copy(p[i] + off, source + 1, len);
        if (p[i][off] != source[1] || p[i][off + len - 1] != source[len]) {
          fail("a copy within the object did not land", n, off, len);
          return;
        }
      }
    }
  }
  for (int i = 0; i < 3; ++i) free(p[i]);
}

struct misuse {
  const char *how;
  size_t n;
};

static void copy_misuse(const void *arg) {
  const struct misuse *m = arg;
  unsigned char *p = malloc(m->n);
  if (p == NULL) _exit(3);
  if (strcmp(m->how, "past-end-1") == 0) copy(p, source, m->n + 1);
  else if (strcmp(m->how, "past-end-32") == 0) copy(p, source, m->n + 32);
  else if (strcmp(m->how, "before-1") == 0) copy(p - 1, source, 1);
  else if (strcmp(m->how, "before-32") == 0) copy(p - 32, source, 32);
  else if (strcmp(m->how, "before-into") == 0) copy(p - 20, source, 24);  // from the canaries into the object
}

// The misuse `how` on a fresh object of n bytes, in a child that never frees
// it: it must abort, its message holding `want`.
static void must_abort(const char *how, size_t n, const char *want) {
  const struct misuse m = {how, n};
  char said[512];
  if (!child_aborts_saying(copy_misuse, &m, 0, want, said, sizeof said)) {
    fprintf(stderr, "secure_memcpy: FAIL: %s on %zu B was not caught as \"%s\": %s\n", how, n, want, said);
    ++failures;
  }
}

int main(void) {
  if (!secure_preloaded("secure_memcpy")) return 1;
  for (size_t i = 0; i < sizeof source; ++i) source[i] = (unsigned char)(i * 7 + 1);

  static const size_t sizes[] = {1, 7, 8, 15, 16, 17, 31, 32, 33, 48, 100, 1000, 4096, 70000, 300000, 2 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) copies_within(sizes[i]);
  unsigned char on_stack[256];
  for (size_t off = 0; off < 64; ++off) {
    copy(on_stack + off, source, sizeof on_stack - off);
    copy(stack_like + off, source, sizeof stack_like - off);
  }
  if (failures == 0) puts("secure_memcpy: copies within objects and outside the heap land");

  static const size_t misuse_sizes[] = {8, 4096, 262144};
  for (size_t i = 0; i < 3; ++i) {
    const size_t n = misuse_sizes[i];
    must_abort("past-end-1", n, "memcpy past the end of the object");
    must_abort("past-end-32", n, "memcpy past the end of the object");
    must_abort("before-1", n, "memcpy into the bytes before an object");
    must_abort("before-32", n, "memcpy into the bytes before an object");
    must_abort("before-into", n, "memcpy into the bytes before an object");
  }
  if (failures != 0) return 1;
  puts("secure_memcpy: ok");
  return 0;
}
