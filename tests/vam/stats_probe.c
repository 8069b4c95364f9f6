/* stats_probe.c — a known allocation history for the VAM_STATS report
 * (stats_report.sh): 1000 mallocs of 100 bytes, 400 of them freed, then 10
 * callocs and 5 reallocs of live objects. Prints nothing itself. */
#include <stdlib.h>

int main(void) {
  static void *volatile keep[1000];
  for (int i = 0; i < 1000; i++) keep[i] = malloc(100);
  for (int i = 0; i < 400; i++) free(keep[i]);
  for (int i = 0; i < 10; i++) keep[i] = calloc(1, 100);
  for (int i = 0; i < 5; i++) keep[500 + i] = realloc(keep[500 + i], 200);
  return 0;
}
