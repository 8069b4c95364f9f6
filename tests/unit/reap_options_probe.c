/* reap_options_probe — creates a reap and prints how the REAP_* options set it:
 * "emulated E check C". Used by reap_options_warnings.sh. */
#include <alloclab/reap.h>
#include <stdio.h>

int main(void) {
  reap_t *r = reap_create(NULL);
  if (!r) return 1;
  reap_stats_t s;
  reap_stats(r, &s);
  printf("emulated %d\n", s.emulated);
  reap_destroy(r);
  return 0;
}
