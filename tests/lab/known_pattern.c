/* A program with a known allocation pattern: 1000 x 24 bytes and 10 x 5000
 * bytes live at once (peak 1010 objects, 74000 bytes), then everything freed.
 * No stdio, so libc adds no allocations of its own. */
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  static void *volatile small[1000], *volatile big[10];
  for (int i = 0; i < 1000; i++) small[i] = malloc(24);
  for (int i = 0; i < 10; i++) big[i] = malloc(5000);
  for (int i = 0; i < 10; i++) free(big[i]);
  for (int i = 0; i < 1000; i++) free(small[i]);
  return write(1, "ok\n", 3) == 3 ? 0 : 1;
}
