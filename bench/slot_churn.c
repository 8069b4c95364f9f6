// slot_churn — a table of slots; each step picks one and frees its object if
// it holds one, else allocates an object of a random size and writes it
// whole. Slots are picked with a skew toward the low ones (some objects live
// long, others come and go), sizes with a skew toward the small (a power-of-
// two range first, then a size in it). The table settles at about half
// full; unlike replace_sizes, a step's free and the next step's malloc are
// of unrelated sizes, so most frees land in blocks allocation filled long
// ago: the pattern of allocation benchmarks that churn a table of mixed
// sizes (mimalloc-bench's alloc-test is one).
//
//   slot_churn [slots] [steps] [min_bytes] [max_bytes]
//     slots    table size (default 262144, 1..16777216)
//     steps    picks (default 10000000, 1..10^10)
//     min_bytes, max_bytes  size range (default 9 and 1024, 1..2^24)
//
// Prints "checksum X" on standard output (the last byte of each object read
// back before its free: the same on every allocator) and "ms N" on standard
// error. Bad arguments exit 2.
#include <string.h>

#include "bench_util.h"

// A size in [lo, hi]: a power-of-two range [2^e, 2^(e+1)) picked uniformly
// among those that meet [lo, hi], then a size in it, clipped to [lo, hi].
static size_t pick_size(uint64_t r, unsigned elo, unsigned ehi, size_t lo, size_t hi) {
  const unsigned e = elo + (unsigned)(r % (ehi - elo + 1));
  size_t s = ((size_t)1 << e) + (size_t)((r >> 16) % ((uint64_t)1 << e));
  if (s < lo) s = lo;
  if (s > hi) s = hi;
  return s;
}

int main(int argc, char **argv) {
  unsigned long long n = 262144, steps = 10000000, lo = 9, hi = 1024;
  if (argc > 5 || (argc > 1 && !parse(argv[1], 1, 1ull << 24, &n)) ||
      (argc > 2 && !parse(argv[2], 1, 10000000000ull, &steps)) || (argc > 3 && !parse(argv[3], 1, 1ull << 24, &lo)) ||
      (argc > 4 && !parse(argv[4], lo, 1ull << 24, &hi))) {
    fprintf(stderr, "usage: slot_churn [slots 1..16777216] [steps 1..10^10] [min_bytes 1..2^24] [max_bytes min..2^24]\n");
    return 2;
  }
  const unsigned elo = 63 - (unsigned)__builtin_clzll(lo), ehi = 63 - (unsigned)__builtin_clzll(hi);
  unsigned char **slot = calloc(n, sizeof *slot);
  size_t *len = calloc(n, sizeof *len);
  if (!slot || !len) return perror("slot_churn: table"), 1;
  uint64_t sum = 0;
  const struct timespec t0 = bench_now();
  for (unsigned long long k = 0; k < steps; k++) {
    const uint64_t r = next_random();
    // The product of two uniform fractions of the table: low slots likelier.
    const uint64_t i = ((r & 0xffffffffu) % n) * ((r >> 32) % n) / n;
    if (slot[i]) {
      sum += slot[i][len[i] - 1];
      free(slot[i]);
      slot[i] = NULL;
      continue;
    }
    const size_t size = pick_size(next_random(), elo, ehi, lo, hi);
    if (!(slot[i] = malloc(size))) return perror("slot_churn: object"), 1;
    memset(slot[i], (int)(k + size), size);
    len[i] = size;
  }
  const struct timespec t1 = bench_now();
  bench_free_table(slot, len, n);
  bench_report(sum, bench_ms(t0, t1));
  return 0;
}
