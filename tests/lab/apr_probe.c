/* apr_probe — a program on APR pools with known requests, for apr_pools.sh:
 * 1000 iterations, each in a subpool of a request pool cleared every 100
 * iterations: apr_palloc, apr_pcalloc (the function), apr_pstrdup (through
 * apr_palloc in libapr) and apr_psprintf. 4 pool requests per iteration,
 * plus 2 in the request pool per clear cycle: 4,020 in all. Prints a digest
 * of what it wrote, which must not depend on who served the memory. */
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <stdio.h>
#include <string.h>

#undef apr_pcalloc
APR_DECLARE(void *) apr_pcalloc(apr_pool_t *p, apr_size_t size);

int main(void) {
  if (apr_initialize() != APR_SUCCESS) return 1;
  apr_pool_t *root, *request = NULL;
  if (apr_pool_create(&root, NULL) != APR_SUCCESS) return 1;
  unsigned long digest = 5381;
  for (int i = 0; i < 1000; i++) {
    if (i % 100 == 0) {
      if (request) apr_pool_clear(request);
      else apr_pool_create(&request, root);
      char *tag = apr_palloc(request, 32);
      snprintf(tag, 32, "cycle %d", i / 100);
      char *copy = apr_pstrdup(request, tag);
      for (const char *c = copy; *c; c++) digest = digest * 33 + (unsigned char)*c;
    }
    apr_pool_t *iter;
    apr_pool_create(&iter, request);
    int *n = apr_palloc(iter, 64 * sizeof *n);
    int *z = apr_pcalloc(iter, 16 * sizeof *z);
    for (int k = 0; k < 64; k++) n[k] = i * k;
    char *s = apr_psprintf(iter, "%d:%d:%d", i, n[63], z[15]);
    char *t = apr_pstrdup(iter, s);
    for (const char *c = t; *c; c++) digest = digest * 33 + (unsigned char)*c;
    apr_pool_destroy(iter);
  }
  apr_pool_destroy(root);
  apr_terminate();
  printf("digest %lu\n", digest);
  return 0;
}
