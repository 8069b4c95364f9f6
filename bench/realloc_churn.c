// realloc_churn — big buffers reallocated to random sizes, each realloc as
// likely to shrink a buffer as to grow it, every page of the new size written
// after it: image and frame buffers resized, arrays shrunk to fit and grown
// again. Where a shrink gives its pages back at once, the next growth faults
// them in again (docs/vam.md, "Huge objects").
//
//   realloc_churn [buffers] [steps] [min_kib] [max_kib]
//     buffers           buffers reallocated at random (default 8, 1..1024)
//     steps             reallocs in all (default 20000, 1..10000000)
//     min_kib, max_kib  the sizes' range in KiB (default 256..6144,
//                       1..1048576, min_kib <= max_kib)
//
// Prints "checksum X" on standard output (a byte per page read back before
// each realloc: the same on every allocator) and "ms N" on standard error.
// Bad arguments exit 2.
#include <string.h>

#include "bench_util.h"

int main(int argc, char **argv) {
  unsigned long long k = 8, steps = 20000, lo = 256, hi = 6144;
  if (argc > 5 || (argc > 1 && !parse(argv[1], 1, 1024, &k)) ||
      (argc > 2 && !parse(argv[2], 1, 10000000, &steps)) || (argc > 3 && !parse(argv[3], 1, 1048576, &lo)) ||
      (argc > 4 && !parse(argv[4], 1, 1048576, &hi)) || lo > hi) {
    fprintf(stderr, "usage: realloc_churn [buffers 1..1024] [steps 1..10000000] [min_kib] [max_kib]\n");
    return 2;
  }
  unsigned char **buf = calloc(k, sizeof *buf);
  size_t *len = calloc(k, sizeof *len);
  if (!buf || !len) return perror("realloc_churn: table"), 1;
  const size_t page = 4096;
  uint64_t sum = 0;
  const struct timespec t0 = bench_now();
  for (unsigned long long s = 0; s < steps; s++) {
    const size_t i = (size_t)(next_random() % k);
    const size_t n = (size_t)(lo + next_random() % (hi - lo + 1)) * 1024;
    // What the buffer holds, read back where the realloc keeps it.
    const size_t kept = len[i] < n ? len[i] : n;
    for (size_t at = 0; at < kept; at += page) sum = sum * 31 + buf[i][at];
    unsigned char *q = realloc(buf[i], n);
    if (!q) return perror("realloc_churn: realloc"), 1;
    for (size_t at = 0; at < n; at += page) q[at] = (unsigned char)(s + at / page);
    buf[i] = q;
    len[i] = n;
  }
  const struct timespec t1 = bench_now();
  bench_free_table(buf, len, k);
  bench_report(sum, bench_ms(t0, t1));
  return 0;
}
