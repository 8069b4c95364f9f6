/* vam.h — the public face of libvam, a locality-improving malloc.
 *
 * libvam replaces malloc/free/... when preloaded (LD_PRELOAD=libvam.so) or
 * linked statically (libvam.a). The vam_* functions below are the same
 * allocator under prefixed names: they work in every build, including the
 * sanitizer build, where libvam does not define malloc at all.
 *
 * Options come from the environment (VAM_*); see docs/vam.md or
 * src/vam/options.hpp for the table with defaults.
 */
#ifndef ALLOCLAB_VAM_H
#define ALLOCLAB_VAM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VAM_API __attribute__((visibility("default")))
#else
#define VAM_API
#endif

/* Number of page-block (headerless, BIBOP) size classes: 8, 16, 32, ..., 1024
 * (16 bytes apart), then 1152, 1280, ..., 8192 (eight per power of two).
 * Classes above VAM_PAGE_MAX are unused: class_size 0. */
#define VAM_NUM_CLASSES 89

/* A snapshot of the allocator's state, summed over every thread heap.
 * Counters are read without stopping other threads, so a snapshot taken
 * while others allocate is approximate. */
struct vam_stats_t {
  size_t live_bytes;        /* usable bytes of live objects (small+large+huge) */
  size_t live_objects;      /* number of live objects */
  size_t small_live_bytes;  /* of which in page blocks (<= VAM_PAGE_MAX, default 1024) */
  size_t large_live_bytes;  /* of which in shared coalescing regions */
  size_t huge_live_bytes;   /* of which mapped on their own */
  size_t pages_in_use;      /* pages handed out by the OS, touched, not discarded */
  size_t pages_discarded;   /* pages given back with discard (cumulative) */
  size_t discard_calls;     /* discard system calls made (cumulative) */
  size_t huge_remaps;       /* reallocs of huge objects done by remapping pages, no copy (cumulative) */
  size_t segments;          /* 4 MiB areas currently mapped (small + large) */
  size_t hugepage_segments; /* of which advised to use transparent huge pages (VAM_HUGEPAGES) */
  size_t heaps;             /* thread heaps ever created (reused after thread exit) */
  size_t abandoned_heaps;   /* heaps of exited threads waiting for a new thread */
  double fragmentation;     /* pages_in_use / live pages (paper §4.4); 0 if nothing live */
  size_t class_size[VAM_NUM_CLASSES];  /* object size of each page-block class */
  size_t class_live[VAM_NUM_CLASSES];  /* live objects of each class */
  size_t class_blocks[VAM_NUM_CLASSES];/* page blocks currently assigned to each class */
};

/* Fill *out with a snapshot. */
VAM_API void vam_stats(struct vam_stats_t *out);
/* Write a human-readable report to file descriptor fd (write(2), no stdio). */
VAM_API void vam_print_stats(int fd);
/* Send this thread's batched frees of other threads' objects to their heaps,
   apply the frees other threads made into this thread's heap, discard every
   empty page this thread's heap holds now, and unmap the cached huge mappings
   (whatever VAM_DISCARD says). */
VAM_API void vam_collect(void);

/* The allocator under prefixed names. Same contracts as the C functions. */
VAM_API void *vam_malloc(size_t size);
VAM_API void vam_free(void *p);
VAM_API void *vam_calloc(size_t n, size_t size);
VAM_API void *vam_realloc(void *p, size_t size);
VAM_API void *vam_reallocarray(void *p, size_t n, size_t size);
VAM_API void *vam_memalign(size_t alignment, size_t size);
VAM_API void *vam_aligned_alloc(size_t alignment, size_t size);
VAM_API int vam_posix_memalign(void **out, size_t alignment, size_t size);
VAM_API void *vam_valloc(size_t size);
VAM_API void *vam_pvalloc(size_t size);
VAM_API size_t vam_usable_size(const void *p);
VAM_API void vam_free_sized(void *p, size_t size);
VAM_API void vam_free_aligned_sized(void *p, size_t alignment, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ALLOCLAB_VAM_H */
