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
#include "bench_util.h"

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
  const struct timespec t0 = bench_now();
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
  const struct timespec t1 = bench_now();
  bench_free_table(slot, len, n);
  bench_report(sum, bench_ms(t0, t1));
  return 0;
}
