/* sites_pattern — four allocating functions with known totals, for
 * check_sites.py (built with -rdynamic so each is named by dladdr):
 *   make_small   1500 x malloc(100), each freed at once: 150,000 B, all temporaries
 *                (500 of them from a second thread, joined before the rest)
 *   make_big     5 x malloc(1 MiB), all live together: the heap's peak, 5 MiB
 *   grow_buffer  10 x realloc, 32 B .. 16 KiB: 32,736 B
 *   leak_some    10 x malloc(64), never freed: 640 B leaked */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

__attribute__((noinline)) void make_small(int n) {
  for (int i = 0; i < n; i++) {
    char *p = malloc(100);
    memset(p, 1, 100);
    sink = p;
    free(p);
  }
}

__attribute__((noinline)) void *make_big(void) {
  char *p = malloc(1 << 20);
  memset(p, 2, 1 << 20);
  return p;
}

__attribute__((noinline)) void grow_buffer(void) {
  char *p = NULL;
  for (int i = 1; i <= 10; i++) {
    p = realloc(p, (size_t)16 << i);
    p[0] = 1;
  }
  free(p);
}

__attribute__((noinline)) void leak_some(int n) {
  for (int i = 0; i < n; i++) sink = malloc(64);
}

static void *worker(void *arg) {
  (void)arg;
  make_small(500);
  return NULL;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  pthread_join(t, NULL);
  make_small(1000);
  void *b[5];
  for (int i = 0; i < 5; i++) b[i] = make_big();
  for (int i = 0; i < 5; i++) free(b[i]);
  grow_buffer();
  leak_some(10);
  return 0;
}
