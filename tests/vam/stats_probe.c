/* stats_probe.c — a known allocation history for the VAM_STATS report
 * (stats_report.sh): a huge object reallocated into a small one (its mapping,
 * too big for the huge cache to keep, is unmapped: the counting build must
 * read the old object's size before the realloc), then
 * 1000 mallocs of 100 bytes, 400 of them freed, then 10 callocs and 5
 * reallocs of live objects. Prints nothing itself. */
#include <stdlib.h>

int main(void) {
  static void *volatile keep[1000];
  void *volatile huge = malloc(6000000);
  free(realloc(huge, 100));
  for (int i = 0; i < 1000; i++) keep[i] = malloc(100);
  for (int i = 0; i < 400; i++) free(keep[i]);
  for (int i = 0; i < 10; i++) keep[i] = calloc(1, 100);
  for (int i = 0; i < 5; i++) keep[500 + i] = realloc(keep[500 + i], 200);
  return 0;
}
