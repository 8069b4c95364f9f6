// size_sweep — allocate a batch of objects of one size, free them all, and
// again for the next size of a sweep: forwards, backwards, then evens before
// odds, as SmartHeap's sh6bench does (after its published description). Every
// block a batch fills is emptied and reused for the next sizes, so objects
// are handed out from blocks that held other sizes before.
//
//   size_sweep [threads] [rounds] [batch]
//     threads  threads, each sweeping on its own (default 1, 1..64)
//     rounds   sweeps of sizes 1..1000 by 37, each size with a spread of 7 (default 300, 1..10^6)
//     batch    objects per batch (default 1000, 1..100000)
//
// Prints "checksum X" on standard output (each object's first byte read
// back before its free: the same on every allocator) and "ms N" on standard
// error. Bad arguments exit 2.
#include <pthread.h>

#include "bench_util.h"

static unsigned long long rounds = 300, batch = 1000;

static void *sweep(void *arg) {
  uint64_t sum = (uintptr_t)arg;
  unsigned char **v = malloc(batch * sizeof *v);
  if (!v) return perror("size_sweep: table"), exit(1), NULL;
  for (unsigned long long r = 0; r < rounds; r++) {
    for (size_t size = 1; size < 1000; size += 37) {
      for (size_t i = 0; i < batch; i++) {
        if (!(v[i] = malloc(size + i % 7))) return perror("size_sweep: object"), exit(1), NULL;
        v[i][0] = (unsigned char)(i + size);
      }
      if (r % 3 == 0) {
        for (size_t i = 0; i < batch; i++) sum += v[i][0], free(v[i]);
      } else if (r % 3 == 1) {
        for (size_t i = batch; i-- > 0;) sum += v[i][0], free(v[i]);
      } else {
        for (size_t i = 0; i < batch; i += 2) sum += v[i][0], free(v[i]);
        for (size_t i = 1; i < batch; i += 2) sum += v[i][0], free(v[i]);
      }
    }
  }
  free(v);
  return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv) {
  unsigned long long threads = 1;
  if (argc > 4 || (argc > 1 && !parse(argv[1], 1, 64, &threads)) ||
      (argc > 2 && !parse(argv[2], 1, 1000000, &rounds)) || (argc > 3 && !parse(argv[3], 1, 100000, &batch))) {
    fprintf(stderr, "usage: size_sweep [threads 1..64] [rounds 1..1000000] [batch 1..100000]\n");
    return 2;
  }
  pthread_t t[64];
  const struct timespec t0 = bench_now();
  for (unsigned long long i = 0; i < threads; i++)
    if (pthread_create(&t[i], NULL, sweep, (void *)(uintptr_t)i)) return fprintf(stderr, "size_sweep: thread\n"), 1;
  uint64_t sum = 0;
  for (unsigned long long i = 0; i < threads; i++) {
    void *r;
    pthread_join(t[i], &r);
    sum += (uintptr_t)r;
  }
  const struct timespec t1 = bench_now();
  bench_report(sum, bench_ms(t0, t1));
  return 0;
}
