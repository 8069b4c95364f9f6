/* interpose.h — the one malloc-interposition core the preload shims build on.
 *
 * A shim that wants to see every heap object (the profile shim, the memory
 * tools' shim) compiles interpose.c into itself and gets, from it:
 *
 *   - the C malloc family, exported: malloc, free, calloc, realloc,
 *     reallocarray, posix_memalign, aligned_alloc, memalign, valloc, pvalloc,
 *     malloc_usable_size, cfree. Each forwards to the allocator beneath;
 *   - C++'s operator new/delete (plain, array, sized, aligned, nothrow),
 *     forwarded to the allocator's own operators where it has them (their
 *     new does not call malloc) or libstdc++'s;
 *   - symbol resolution: the allocator beneath is found once, with
 *     dlsym(RTLD_NEXT), at the first call (which can come before any
 *     constructor runs). memalign, aligned_alloc and malloc_usable_size are
 *     used only when they come from the same object as malloc, so an
 *     allocator that lacks one never has glibc's mixed into its heap (its
 *     posix_memalign serves instead; usable size 0, unknown);
 *   - a bootstrap arena: dlsym may allocate (error messages, its per-thread
 *     state) while we resolve. Those requests, and any another thread makes
 *     meanwhile, are served from a static arena whose blocks record their
 *     size, so a later free (a no-op), realloc (moves exactly the block's
 *     bytes) or malloc_usable_size of a bootstrap block is exact;
 *   - a reentrancy guard: only the outermost call on a thread reaches the
 *     shim's hooks, so an allocator whose calloc or operator new calls
 *     malloc through the PLT is seen once, with the caller's request;
 *   - fork handling: a child forked while another thread was resolving
 *     resolves again instead of serving from the arena for ever.
 *
 * The shim supplies the hooks below (called only for the outermost call,
 * never for a bootstrap block) and may resolve more symbols of its own in
 * ip_shim_resolved(). Nothing in the core allocates through malloc.
 * C and C++ both include this header; every name is hidden in the shim.
 */
#ifndef ALLOCLAB_LAB_INTERPOSE_H
#define ALLOCLAB_LAB_INTERPOSE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(hidden)

/* The allocator beneath. The first five are always set once ip_ready()
 * returned true; the last three are NULL when the allocator beneath lacks
 * its own. */
struct ip_next {
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*calloc)(size_t, size_t);
  void *(*realloc)(void *, size_t);
  int (*posix_memalign)(void **, size_t, size_t);
  void *(*memalign)(size_t, size_t);
  void *(*aligned_alloc)(size_t, size_t);
  size_t (*usable_size)(void *);
};
extern struct ip_next ip_next;

enum { IP_UNRESOLVED = 0, IP_RESOLVING = 1, IP_READY = 2 };
extern int ip_state;

/* Resolves on first use; false while resolution is under way (in this
 * thread, from inside dlsym, or in another): serve from the arena then. */
int ip_resolve_slow(void);
static inline int ip_ready(void) {
  if (__builtin_expect(__atomic_load_n(&ip_state, __ATOMIC_ACQUIRE) == IP_READY, 1)) return 1;
  return ip_resolve_slow();
}

/* Depth of interposed calls on this thread. */
extern __thread unsigned ip_depth __attribute__((tls_model("initial-exec")));
/* Enter a call to the allocator beneath; true when it is the outermost. */
static inline int ip_enter(void) { return ip_depth++ == 0; }
static inline void ip_leave(void) { --ip_depth; }

/* ---- the bootstrap arena */
#define IP_BOOT_BYTES (64 * 1024)
#define IP_BOOT_MAX_ALIGN 4096
/* A zeroed block of n bytes aligned to align (a power of two <= 4096);
 * NULL when the arena is full. */
void *ip_boot_alloc(size_t align, size_t n);
int ip_in_boot(const void *p);
/* The size a bootstrap block was asked for. */
size_t ip_boot_size(const void *p);
/* Bytes of the arena handed out so far (for tests and messages). */
size_t ip_boot_used(void);

/* ---- what each shim supplies */
/* Its name, for the message printed when the allocator beneath is missing. */
extern const char ip_shim_name[];
/* Runs once at the end of resolution, before any hook, while requests are
 * still served from the arena: look up more symbols, read options. */
void ip_shim_resolved(void);
/* A new object p (not NULL) of n requested bytes came from the allocator. */
void ip_hook_alloc(void *p, size_t n);
/* p (not NULL) is about to go back to the allocator. */
void ip_hook_free(void *p);
/* realloc(old, n), old not NULL: begin runs before the allocator is called
 * and returns a token given back to end, which runs after with the result
 * (NULL: failed, or freed old when n was 0). */
size_t ip_hook_realloc_begin(void *old);
void ip_hook_realloc_end(void *old, void *p, size_t n, size_t token);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* ALLOCLAB_LAB_INTERPOSE_H */
