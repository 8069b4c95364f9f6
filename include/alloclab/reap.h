/* alloclab/reap.h — reaps: regions that can also free individual objects.
 *
 * A reap allocates like a region (bumping a pointer through growing chunks)
 * until objects are freed; freed objects go onto the reap's own heap and are
 * reused, and the whole reap can still be cleared or destroyed at once.
 * Reaps nest: destroying or clearing a reap destroys every reap below it.
 *
 * Alignment: 16 bytes for every object (malloc's guarantee on x86-64).
 * Errors: allocation functions return NULL and set errno to ENOMEM when
 * memory runs out or a size overflows, and to EINVAL for a bad alignment.
 * Threads: one thread uses a given reap at a time (as with APR pools and
 * regions); different reaps may be used by different threads at once.
 *
 * Environment (read once, at the first reap_create):
 *   REAP_MODE=malloc   region emulator: every object comes from malloc and
 *                      is tracked out of band (A/B runs on any allocator)
 *   REAP_CHECK=1       abort with a message on double, foreign or wrong-reap
 *                      frees (always on in debug builds)
 *   REAP_CACHE_KB=N    process-wide cache of released chunks (default 8192)
 */
#ifndef ALLOCLAB_REAP_H
#define ALLOCLAB_REAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REAP_API __attribute__((visibility("default")))

typedef struct reap reap_t;

typedef struct reap_stats {
  size_t live_objects;    /* objects allocated and not yet freed */
  size_t live_bytes;      /* their usable bytes */
  size_t footprint_bytes; /* memory the reap holds from the system now */
  size_t peak_footprint_bytes;
  size_t chunks;          /* chunks held, the first one included */
  size_t large_objects;   /* objects with a mapping of their own */
  int emulated;           /* 1 when REAP_MODE=malloc serves this reap */
} reap_stats_t;

/* NULL parent: a top-level reap. NULL on out-of-memory. */
REAP_API reap_t *reap_create(reap_t *parent);
/* Frees every object and every descendant reap, then the reap itself. */
REAP_API void reap_destroy(reap_t *r);
/* Clear: frees every object and destroys the descendants; r stays usable. */
REAP_API void reap_free_all(reap_t *r);

REAP_API void *reap_malloc(reap_t *r, size_t size)
    __attribute__((malloc, alloc_size(2)));
REAP_API void *reap_calloc(reap_t *r, size_t n, size_t size)
    __attribute__((malloc, alloc_size(2, 3)));
/* Keeps the contents; NULL p acts as reap_malloc. A size of 0 keeps a
 * minimal object (it does not free). On failure p is left untouched. */
REAP_API void *reap_realloc(reap_t *r, void *p, size_t size) __attribute__((alloc_size(3)));
/* alignment: a power of two, at most 1 GiB (else NULL with EINVAL). */
REAP_API void *reap_memalign(reap_t *r, size_t alignment, size_t size)
    __attribute__((malloc, alloc_size(3)));
/* Individual free; NULL is a no-op. p must come from r (not a child). */
REAP_API void reap_free(reap_t *r, void *p);
REAP_API size_t reap_usable_size(const reap_t *r, const void *p);
REAP_API void reap_stats(const reap_t *r, reap_stats_t *out);

#ifdef __cplusplus
}
#endif

#endif /* ALLOCLAB_REAP_H */
