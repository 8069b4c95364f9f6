// bench_util.h — what the plain C bench programs share: the random numbers,
// the argument parser and the timer. Header-only; each program includes it
// once.
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// xorshift64: the same sequence on every allocator and every run.
static uint64_t bench_rng = 0x2545f4914f6cdd1dull;
static inline uint64_t next_random(void) {
  bench_rng ^= bench_rng << 13;
  bench_rng ^= bench_rng >> 7;
  bench_rng ^= bench_rng << 17;
  return bench_rng;
}

// An unsigned decimal in [lo, hi] into *out; 0 (and *out unchanged) for
// anything else: a sign, trailing characters, overflow, out of range.
static inline int parse(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static inline struct timespec bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t;
}
static inline double bench_ms(struct timespec t0, struct timespec t1) {
  return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

// The result as the programs that compare outputs expect it: the checksum,
// the same on every allocator, on standard output; the time on standard error.
static inline void bench_report(uint64_t sum, double ms) {
  printf("checksum %016llx\n", (unsigned long long)sum);
  fprintf(stderr, "ms %.1f\n", ms);
}

// A table of n objects (some null) and their lengths, made with calloc: every
// object freed, then the table. After the timed loop, as a program's exit would.
static inline void bench_free_table(unsigned char **obj, size_t *len, unsigned long long n) {
  for (unsigned long long i = 0; i < n; i++) free(obj[i]);
  free(obj);
  free(len);
}
