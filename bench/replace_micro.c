// replace_micro — one free and one malloc of 16 bytes per step, at a random
// slot of a table of live objects, and nothing else: the cost of the pair
// when the object freed is the one the allocator hands out next.
//
//   replace_micro [objects] [steps] [read]
//     objects  live 16-byte objects (default 4096, 1..16777216)
//     steps    replacements timed (default 20000000, 1..10^10)
//     read     1: read the object before freeing it (default 0)
//
// With every object of a class live in full blocks, each free lands in a
// full block; vam then makes that block the front (paper 2005, section
// 3.5), and the next malloc hands the object back (docs/vam.md, "Reap
// allocation and ordering"). freelist_micro is this pattern with a program
// around it; here the allocator's share is all that is timed.
//
// Prints "ns_per_step N checksum X": each object stores its slot's number
// (masked with the step that made it), and the checksum sums what is read
// back, so it is the same on every allocator, and an object handed out
// twice while live changes it. Bad arguments exit 2.
#include "bench_util.h"

static const uint64_t kMix = 0x9e3779b97f4a7c15ull;
int main(int argc, char **argv) {
  unsigned long long n = 4096, steps = 20000000, read = 0;
  if (argc > 4 || (argc > 1 && !parse(argv[1], 1, 1ull << 24, &n)) ||
      (argc > 2 && !parse(argv[2], 1, 10000000000ull, &steps)) || (argc > 3 && !parse(argv[3], 0, 1, &read))) {
    fprintf(stderr, "usage: replace_micro [objects 1..16777216] [steps 1..10^10] [read 0|1]\n");
    return 2;
  }
  uint64_t **slot = malloc(n * sizeof *slot);
  if (!slot) return perror("replace_micro: table"), 1;
  for (unsigned long long i = 0; i < n; i++) {
    if (!(slot[i] = malloc(16))) return perror("replace_micro: object"), 1;
    slot[i][0] = 0;
    slot[i][1] = i;
  }
  uint64_t sum = 0;
  const struct timespec t0 = bench_now();
  for (unsigned long long k = 0; k < steps; k++) {
    const uint64_t i = next_random() % n;
    uint64_t *o = slot[i];
    if (read) sum += o[1] ^ (o[0] * kMix);  // i, unless another slot's object is here
    free(o);
    if (!(o = malloc(16))) return perror("replace_micro: object"), 1;
    o[0] = k + 1;
    o[1] = i ^ ((k + 1) * kMix);
    slot[i] = o;
  }
  const struct timespec t1 = bench_now();
  for (unsigned long long i = 0; i < n; i++) {
    sum = sum * 31 + (slot[i][1] ^ (slot[i][0] * kMix));
    free(slot[i]);
  }
  free(slot);
  const double ns = bench_ms(t0, t1) * 1e6 / (double)steps;
  printf("ns_per_step %.2f checksum %016llx\n", ns, (unsigned long long)sum);
  return 0;
}
