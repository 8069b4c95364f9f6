/* preload_probe — run with LD_PRELOAD=libvam.so: checks that every entry
 * point of the C library's malloc family reaches libvam and keeps its
 * contract. Prints "preload_probe: ok" and exits 0, else names the failure. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                  \
  do {                                                            \
    if (!(c)) {                                                   \
      fprintf(stderr, "preload_probe: failed: %s (line %d)\n", #c, __LINE__); \
      ++failures;                                                 \
    }                                                             \
  } while (0)

void *volatile sink;

int main(void) {
  /* libvam is the malloc in use: its statistics move with our malloc. */
  struct stats_prefix { size_t live_bytes; } s1, s2;
  void (*stats)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "vam_stats");
  CHECK(stats != NULL);
  if (stats) {
    char buf1[4096], buf2[4096];
    stats(buf1);
    void *big = malloc(200000);
    sink = big;
    stats(buf2);
    memcpy(&s1, buf1, sizeof s1);
    memcpy(&s2, buf2, sizeof s2);
    CHECK(s2.live_bytes >= s1.live_bytes + 200000);
    free(big);
  }

  void *a = malloc(0), *b = malloc(0);
  CHECK(a && b && a != b);
  free(a);
  free(b);

  void *p = (void *)0x99;
  CHECK(posix_memalign(&p, 3, 8) == EINVAL && p == (void *)0x99);
  CHECK(posix_memalign(&p, 1 << 21, 8) == 0 && ((uintptr_t)p & ((1 << 21) - 1)) == 0);
  free(p);

  errno = 0;
  sink = malloc(SIZE_MAX);
  CHECK(sink == NULL && errno == ENOMEM);
  errno = 0;
  sink = calloc(SIZE_MAX / 2, 4);
  CHECK(sink == NULL && errno == ENOMEM);

  char *s = malloc(8);
  strcpy(s, "abcdefg");
  errno = 0;
  CHECK(realloc(s, SIZE_MAX - 8192) == NULL && errno == ENOMEM);
  CHECK(strcmp(s, "abcdefg") == 0);
  s = realloc(s, 100000);
  CHECK(s && strcmp(s, "abcdefg") == 0);
  CHECK(malloc_usable_size(s) >= 100000);
  free(s);

  p = aligned_alloc(4096, 10);
  CHECK(p && ((uintptr_t)p & 4095) == 0);
  free(p);
  p = pvalloc(1);
  CHECK(p && malloc_usable_size(p) >= 4096);
  free(p);
  p = memalign(64, 3);
  CHECK(p && ((uintptr_t)p & 63) == 0);
  free(p);
  p = valloc(5);
  CHECK(p && ((uintptr_t)p & 4095) == 0);
  free(p);
  int *z = calloc(1000, sizeof(int));
  int allzero = 1;
  for (int i = 0; i < 1000; ++i) allzero &= z[i] == 0;
  CHECK(allzero);
  free(z);
  /* strdup, printf buffers and friends: the C library's own allocations. */
  char *d = strdup("libc allocates through libvam");
  CHECK(d && strlen(d) == 29);
  free(d);

  /* libvam.so needs the C library alone: preloaded into a C program it
   * brings no C++ runtime with it (loading one costs every exec). */
  CHECK(dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD) == NULL);

  if (failures) return 1;
  printf("preload_probe: ok\n");
  return 0;
}
