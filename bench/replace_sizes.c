// replace_sizes — objects of random sizes in a range replaced at random in a
// table of live ones, each written at both ends when made: the free-then-
// malloc pair over a spread of sizes, as a program's buffers, strings and
// hash tables of a few KiB come and go (vam: 1..64 KiB objects are large
// ones, docs/vam.md "Large objects").
//
//   replace_sizes [objects] [steps] [min_bytes] [max_bytes]
//     objects  live objects (default 1000, 1..1048576)
//     steps    replacements (default 2000000, 1..10^10)
//     min_bytes, max_bytes  size range (default 1024 and 32768, 1..2^30)
//
// Prints "checksum X" on standard output (a byte per object read back
// before its free: the same on every allocator) and "ms N" on standard
// error. Bad arguments exit 2.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;
static inline uint64_t next_random(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int parse(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

int main(int argc, char **argv) {
  unsigned long long n = 1000, steps = 2000000, lo = 1024, hi = 32768;
  if (argc > 5 || (argc > 1 && !parse(argv[1], 1, 1ull << 20, &n)) ||
      (argc > 2 && !parse(argv[2], 1, 10000000000ull, &steps)) || (argc > 3 && !parse(argv[3], 1, 1ull << 30, &lo)) ||
      (argc > 4 && !parse(argv[4], lo, 1ull << 30, &hi))) {
    fprintf(stderr, "usage: replace_sizes [objects 1..1048576] [steps 1..10^10] [min_bytes 1..2^30] [max_bytes min..2^30]\n");
    return 2;
  }
  unsigned char **slot = calloc(n, sizeof *slot);
  size_t *len = calloc(n, sizeof *len);
  if (!slot || !len) return perror("replace_sizes: table"), 1;
  uint64_t sum = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (unsigned long long k = 0; k < steps; k++) {
    const uint64_t r = next_random();
    const uint64_t i = r % n;
    if (slot[i]) sum += slot[i][len[i] - 1];
    free(slot[i]);
    const size_t size = lo + (size_t)((r >> 32) % (hi - lo + 1));
    if (!(slot[i] = malloc(size))) return perror("replace_sizes: object"), 1;
    slot[i][0] = (unsigned char)k;
    slot[i][size - 1] = (unsigned char)(k >> 8);
    len[i] = size;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  for (unsigned long long i = 0; i < n; i++) free(slot[i]);
  free(slot);
  free(len);
  const double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("checksum %016llx\n", (unsigned long long)sum);
  fprintf(stderr, "ms %.1f\n", ms);
  return 0;
}
