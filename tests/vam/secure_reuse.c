// secure_reuse.c — libvam-secure.so zeroes a freed object by stores at every
// size, run under LD_PRELOAD of it (vam.secure.large-reuse): an object of
// 256 KiB allocated, written and freed 2,000 times keeps its pages (a few
// hundred minor faults in all, where the pages given back to the kernel at
// each free faulted in again at each reuse, read then written: 252,004),
// and each new object still reads as zeroes where the freed one was written.
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "secure_preloaded.h"

#define kBytes ((size_t)256 << 10)
#define kRounds 2000
#define kMaxFaults 4000  // the first rounds' pages (256), and slack; the pages given back: 126 a round

static long minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

int main(void) {
  if (!secure_preloaded("secure_reuse")) return 1;

  int failures = 0;
  const long before = minor_faults();
  for (int r = 0; r < kRounds; ++r) {
    unsigned char *volatile b = malloc(kBytes);
    if (b == NULL) {
      fputs("secure_reuse: FAIL: malloc returned null\n", stderr);
      return 1;
    }
    // What a freed object held never reaches the next owner: zeroes at the
    // bytes every round writes.
    for (size_t i = 0; i < kBytes; i += 4096)
      if (b[i] != 0) {
        if (failures++ < 5)
          fprintf(stderr, "secure_reuse: FAIL: round %d: byte %zu of a new object is not zero\n", r, i);
        break;
      }
    for (size_t i = 0; i < kBytes; i += 4096) b[i] = (unsigned char)(r | 1);
    free(b);
  }
  const long faults = minor_faults() - before;
  printf("secure_reuse: %d rounds of a %zu-byte object: %ld minor faults (at most %d allowed)\n", kRounds, kBytes,
         faults, kMaxFaults);
  if (faults > kMaxFaults) {
    fputs("secure_reuse: FAIL: a freed object's pages fault in again at each reuse\n", stderr);
    ++failures;
  }
  if (failures) return 1;
  puts("secure_reuse: ok");
  return 0;
}
