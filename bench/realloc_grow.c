/* realloc_grow — a buffer grown by half again until it holds 256 MiB, as a
 * vector or a string builder does, its new part written each time; ten
 * rounds. Run under LD_PRELOAD to compare allocators: an allocator that
 * copies on every growth moves ~3x the final size per round, one that
 * remaps pages (glibc's mmapped chunks, libvam's huge objects) moves none.
 *
 *   realloc_grow [rounds] [max_mib]      prints a checksum of the contents
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 10;
  const size_t max = (argc > 2 ? (size_t)atol(argv[2]) : 256) << 20;
  if (rounds < 1 || max < (1u << 20)) {
    fprintf(stderr, "usage: realloc_grow [rounds >= 1] [max_mib >= 1]\n");
    return 2;
  }
  unsigned long sum = 0;
  for (int r = 0; r < rounds; ++r) {
    size_t have = 64 << 10;
    unsigned char *p = malloc(have);
    if (!p) return 1;
    memset(p, r, have);
    while (have < max) {
      size_t n = have + have / 2;
      unsigned char *q = realloc(p, n);
      if (!q) {
        free(p);
        fprintf(stderr, "realloc_grow: out of memory at %zu bytes\n", n);
        return 1;
      }
      p = q;
      memset(p + have, (int)(n & 0xff), n - have);
      have = n;
    }
    for (size_t i = 0; i < have; i += 4096) sum += p[i];
    free(p);
  }
  printf("%lu\n", sum);
  return 0;
}
