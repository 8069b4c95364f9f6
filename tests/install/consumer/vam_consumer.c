/* A user of the installed libvam: malloc must be libvam's, as its
 * statistics show. */
#include <alloclab/vam.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  struct vam_stats_t before, after;
  vam_stats(&before);
  void *p[100];
  for (int i = 0; i < 100; ++i) p[i] = malloc(40);
  vam_stats(&after);
  const long grew = (long)(after.live_objects - before.live_objects);
  for (int i = 0; i < 100; ++i) free(p[i]);
  printf("vam ok %ld\n", grew);
  return 0;
}
