/* spin_cpu MS [SLEEP_MS] — uses MS milliseconds of CPU time, then sleeps
 * SLEEP_MS (default 0): for litter_cpu.sh, whose shim must tell the two apart. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  const double want = (argc > 1 ? atof(argv[1]) : 200) / 1000.0;
  const long nap = argc > 2 ? atol(argv[2]) : 0;
  volatile unsigned long x = 0;
  while ((double)clock() / CLOCKS_PER_SEC < want) x++;
  struct timespec ts = {nap / 1000, (nap % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  return 0;
}
