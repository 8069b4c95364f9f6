// buffer_replace — buffers of several MiB replaced at random, each written in
// full when made, as a program that reads files or builds big strings and
// arrays into fresh buffers does: what an allocator costs when every such
// request is above its size classes (vam: a huge object, a mapping of its
// own; docs/vam.md, "Huge objects").
//
//   buffer_replace [buffers] [steps] [min_mib] [max_mib]
//     buffers  live buffers (default 20, 1..1024)
//     steps    replacements (default 500, 1..10^7)
//     min_mib, max_mib  size range in MiB (default 5 and 25, 1..1024)
//
// Each step frees a random buffer and mallocs one of a random size in the
// range, then writes every byte of it. Prints "checksum X" on standard
// output, the same on every allocator (it sums one byte per buffer read back
// before its free), and "ms N" on standard error, so that a runner that
// compares outputs (alloclab compare) sees one output. Bad arguments exit 2.
#include <string.h>

#include "bench_util.h"

// Through a volatile pointer, so that no compiler turns malloc + memset
// into calloc, which an allocator may answer with pages it knows are zero.
static void *(*volatile fill)(void *, int, size_t) = memset;

int main(int argc, char **argv) {
  unsigned long long n = 20, steps = 500, lo = 5, hi = 25;
  if (argc > 5 || (argc > 1 && !parse(argv[1], 1, 1024, &n)) ||
      (argc > 2 && !parse(argv[2], 1, 10000000ull, &steps)) || (argc > 3 && !parse(argv[3], 1, 1024, &lo)) ||
      (argc > 4 && !parse(argv[4], lo, 1024, &hi))) {
    fprintf(stderr, "usage: buffer_replace [buffers 1..1024] [steps 1..10^7] [min_mib 1..1024] [max_mib min..1024]\n");
    return 2;
  }
  unsigned char **buf = calloc(n, sizeof *buf);
  size_t *len = calloc(n, sizeof *len);
  if (!buf || !len) return perror("buffer_replace: table"), 1;
  const size_t min = (size_t)lo << 20, span = (size_t)(hi - lo) << 20;
  uint64_t sum = 0;
  const struct timespec t0 = bench_now();
  for (unsigned long long k = 0; k < steps; k++) {
    const uint64_t i = next_random() % n;
    if (buf[i]) sum += buf[i][len[i] / 2];
    free(buf[i]);
    const size_t size = min + (span ? next_random() % (span + 1) : 0);
    if (!(buf[i] = malloc(size))) return perror("buffer_replace: buffer"), 1;
    fill(buf[i], (int)(k & 0xff), size);
    len[i] = size;
  }
  const struct timespec t1 = bench_now();
  bench_free_table(buf, len, n);
  bench_report(sum, bench_ms(t0, t1));
  return 0;
}
