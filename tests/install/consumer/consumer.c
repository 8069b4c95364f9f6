/* A user of the installed libreap. */
#include <alloclab/reap.h>
#include <stdio.h>

int main(void) {
  reap_t *r = reap_create(NULL);
  reap_t *c = reap_create(r);
  int *a = reap_malloc(c, 3 * sizeof(int));
  a[0] = 1; a[1] = 1; a[2] = 1;
  reap_stats_t s;
  reap_stats(c, &s);
  printf("reap ok %d\n", (int)(a[0] + a[1] + a[2]) * (int)s.live_objects);
  reap_destroy(r);
  return 0;
}
