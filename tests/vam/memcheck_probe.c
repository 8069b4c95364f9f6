/* memcheck_probe.c — three errors memcheck finds on vam's heap when libvam-memcheck.so
 * tells it about vam's objects (memcheck_client.sh): a read after free, a branch on an
 * uninitialised byte, and two objects leaked. Exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void leak(void) {
  void *volatile q = malloc(40);
  memset(q, 1, 40);
  q = 0;
}

int main(void) {
  char *p = malloc(100);
  memset(p, 1, 100);
  free(p);
  volatile char after_free = p[50]; /* error 1: beyond the 16 bytes vam keeps */
  (void)after_free;
  char *u = malloc(64);
  if (u[5] == 7) puts("seven");     /* error 2: u[5] was never written */
  free(u);
  for (int i = 0; i < 3; i++) leak(); /* error 3: 3 x 40 bytes; the last may stay reachable */
  char *r = malloc(3000);
  memset(r, 2, 3000);
  r = realloc(r, 9000);             /* moved: its first 3000 bytes stay defined */
  if (r[2999] != 2) return 1;
  free(r);
  return 0;
}
