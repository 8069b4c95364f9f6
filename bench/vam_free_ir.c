/* vam_free_ir — a fixed sequence of vam_malloc/vam_free calls whose
   instructions callgrind counts (deterministic; not a timing):

     valgrind --tool=callgrind --toggle-collect=vam_free   build/release/bench/vam_free_ir
     valgrind --tool=callgrind --toggle-collect=vam_malloc build/release/bench/vam_free_ir

   Instructions per call = the `totals` line of callgrind.out.* / the count
   printed. 20,000 rounds of 64 objects of 64 bytes, allocated (and written)
   then freed in the order allocated: after the first round every malloc pops
   the front block's free list and every free pushes onto it, the common
   case of the free path (segment check, block record checks, free-list
   check, push). The prefixed API, linked statically. */
#include <stdio.h>

#include "alloclab/vam.h"

int main(void) {
  enum { kObjects = 64, kRounds = 20000 };
  static void *v[kObjects];
  long calls = 0;
  for (int r = 0; r < kRounds; ++r) {
    for (int i = 0; i < kObjects; ++i) {
      v[i] = vam_malloc(64);
      *(long *)v[i] = i;
    }
    for (int i = 0; i < kObjects; ++i) vam_free(v[i]);
    calls += kObjects;
  }
  printf("vam_free_ir: %ld calls each of vam_malloc and vam_free\n", calls);
  return 0;
}
