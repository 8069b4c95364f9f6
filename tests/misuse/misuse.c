/* misuse.c — one heap misuse per run, for the misuse matrix (misuse_matrix.py).
 *
 *   misuse CLASS SIZE
 *
 * does the misuse CLASS on an object of SIZE bytes, then what a program would
 * do next (free it, allocate the same size again, a few times), and exits 0.
 * An allocator *catches* the misuse when the run does not get to exit 0: it
 * aborts with a message, or the process dies of a signal (zero-after-free:
 * exits 1 when the freed object reads as zeroes). A run that exits 0
 * was not caught — the misuse went unnoticed, whatever it corrupted.
 * Exit 2: bad arguments. Built with -O0 -fno-builtin: an optimiser would drop
 * writes into an object freed right after (they are dead to it). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

/* What a program does after the misuse: the heap is used on. */
static void carry_on(size_t n) {
  void *keep[8];
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 8; i++) {
      keep[i] = malloc(n);
      if (keep[i]) memset(keep[i], 0x5a, n);
    }
    for (int i = 0; i < 8; i++) free(keep[i]);
  }
}

static char *object(size_t n) {
  char *p = malloc(n);
  if (!p) exit(3);
  memset(p, 0x11, n);
  return p;
}

/* The bytes a memcpy copies from: outside the heap, so that the copy's own
 * source never extends the mapping the overflow runs into. */
static char source[(1 << 20) + (1 << 18)];

static void overflow(size_t n, size_t by, int via_memcpy) {
  char *p = object(n);
  char *neighbour = object(n);
  if (via_memcpy) {
    memset(source, 0x77, n + by);
    memcpy(p, source, n + by);
  } else {
    for (size_t i = 0; i < by; i++) p[n + i] = 0x77;
  }
  free(p);
  free(neighbour);
  carry_on(n);
}

static void underflow(size_t n, size_t by, int via_memcpy) {
  char *p = object(n);
  if (via_memcpy) {
    memset(source, 0x77, by);
    memcpy(p - by, source, by);
  } else {
    for (size_t i = 1; i <= by; i++) p[-(ptrdiff_t)i] = 0x77;
  }
  free(p);
  carry_on(n);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: misuse CLASS SIZE\n");
    return 2;
  }
  const char *c = argv[1];
  const size_t n = strtoull(argv[2], NULL, 10);
  if (n == 0 || n > (1 << 18)) return 2;
  if (!strcmp(c, "overflow-1")) overflow(n, 1, 0);
  else if (!strcmp(c, "overflow-32")) overflow(n, 32, 0);
  else if (!strcmp(c, "overflow-1m")) overflow(n, 1 << 20, 0);
  else if (!strcmp(c, "memcpy-overflow-1")) overflow(n, 1, 1);
  else if (!strcmp(c, "memcpy-overflow-32")) overflow(n, 32, 1);
  else if (!strcmp(c, "memcpy-overflow-1m")) overflow(n, 1 << 20, 1);
  else if (!strcmp(c, "underflow-1")) underflow(n, 1, 0);
  else if (!strcmp(c, "underflow-32")) underflow(n, 32, 0);
  else if (!strcmp(c, "underflow-1m")) underflow(n, 1 << 20, 0);
  else if (!strcmp(c, "memcpy-underflow-1")) underflow(n, 1, 1);
  else if (!strcmp(c, "memcpy-underflow-32")) underflow(n, 32, 1);
  else if (!strcmp(c, "zero-size-write")) {
    /* SIZE is ignored: malloc(0), then SIZE bytes written to it */
    char *p = malloc(0);
    for (size_t i = 0; i < (n < 64 ? n : 64); i++) p[i] = 0x77;
    free(p);
    carry_on(16);
  } else if (!strcmp(c, "write-after-free")) {
    char *p = object(n);
    free(p);
    p[n / 2] = 0x77;
    p[0] = 0x77;
    carry_on(n);
  } else if (!strcmp(c, "zero-after-free")) {
    /* what the object held must not be readable once it is freed: caught when
     * every byte reads zero (exit 1), as the public suite's zero_after_free */
    char *p = object(n);
    free(p);
    for (size_t i = 0; i < n; i++)
      if (p[i] != 0) return 0;
    return 1;
  } else if (!strcmp(c, "double-free")) {
    char *p = object(n);
    free(p);
    free(p);
    carry_on(n);
  } else if (!strcmp(c, "double-free-later")) {
    char *p = object(n);
    free(p);
    char *q[4];
    for (int i = 0; i < 4; i++) q[i] = object(n);
    for (int i = 0; i < 4; i++) free(q[i]);
    free(p);
    carry_on(n);
  } else if (!strcmp(c, "interior-free")) {
    char *p = object(n);
    free(p + 16);
    carry_on(n);
  } else if (!strcmp(c, "foreign-free")) {
    static char not_heap[1 << 19] __attribute__((aligned(64)));
    free(not_heap + 64);
    carry_on(n);
  } else if (!strcmp(c, "realloc-after-free")) {
    char *p = object(n);
    free(p);
    sink = realloc(p, n / 2 ? n / 2 : 1);
    carry_on(n);
  } else {
    fprintf(stderr, "misuse: unknown class %s\n", c);
    return 2;
  }
  return 0;
}
