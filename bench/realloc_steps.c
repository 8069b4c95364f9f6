// realloc_steps — buffers grown a few bytes at a time by realloc, in turn,
// as an interpreter's string buffers and arrays grow when the program does
// not reserve ahead: each growth that cannot happen in place copies the
// whole buffer (docs/vam.md, "Limits and known gaps": realloc's slack).
//
//   realloc_steps [rounds] [buffers] [steps]
//     rounds   times the whole thing is done (default 200, 1..10^6)
//     buffers  buffers grown in turn (default 64, 1..4096)
//     steps    growths per buffer, each of 1..16 bytes (default 400, 1..100000)
//
// Prints "checksum X" on standard output (a byte per buffer read back: the
// same on every allocator) and "ms N" on standard error. Bad arguments exit 2.
#include <string.h>

#include "bench_util.h"

int main(int argc, char **argv) {
  unsigned long long rounds = 200, k = 64, steps = 400;
  if (argc > 4 || (argc > 1 && !parse(argv[1], 1, 1000000, &rounds)) ||
      (argc > 2 && !parse(argv[2], 1, 4096, &k)) || (argc > 3 && !parse(argv[3], 1, 100000, &steps))) {
    fprintf(stderr, "usage: realloc_steps [rounds 1..1000000] [buffers 1..4096] [steps 1..100000]\n");
    return 2;
  }
  unsigned char **buf = malloc(k * sizeof *buf);
  size_t *len = malloc(k * sizeof *len);
  if (!buf || !len) return perror("realloc_steps: table"), 1;
  uint64_t x = 1, sum = 0;
  const struct timespec t0 = bench_now();
  for (unsigned long long r = 0; r < rounds; r++) {
    memset(buf, 0, k * sizeof *buf);
    memset(len, 0, k * sizeof *len);
    for (unsigned long long s = 0; s < steps; s++) {
      for (unsigned long long i = 0; i < k; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const size_t add = 1 + (size_t)(x >> 60);
        unsigned char *q = realloc(buf[i], len[i] + add);
        if (!q) return perror("realloc_steps: realloc"), 1;
        memset(q + len[i], (int)(i + s), add);
        buf[i] = q;
        len[i] += add;
      }
    }
    for (unsigned long long i = 0; i < k; i++) {
      sum = sum * 31 + buf[i][len[i] / 2];
      free(buf[i]);
    }
  }
  const struct timespec t1 = bench_now();
  free(buf);
  free(len);
  bench_report(sum, bench_ms(t0, t1));
  return 0;
}
