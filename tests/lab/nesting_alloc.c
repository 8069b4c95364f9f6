/* nesting_alloc.c — an "allocator" whose calloc calls malloc through the
 * PLT, as some allocators' calloc or operator new do. Preloaded after a shim,
 * that inner malloc comes back into the shim, which must not count it. */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>

void *malloc(size_t n);

void *calloc(size_t k, size_t n) {
  size_t bytes;
  if (__builtin_mul_overflow(k, n, &bytes)) return NULL;
  char *p = malloc(bytes);
  if (p) memset(p, 0, bytes);
  return p;
}
