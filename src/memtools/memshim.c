/* memshim.c — liballoclab_memshim.so, the heap shim for alloclab-mem.
 *
 * Preloaded in front of the allocator under test (LD_PRELOAD="shim alloc"),
 * it forwards every malloc-family call and C++ operator new/delete to the
 * next definition (dlsym(RTLD_NEXT)) and tells the Valgrind tool about the
 * object: after the allocator made it (ALM_ALLOC) and before the allocator
 * gets it back (ALM_FREE), so the allocator's own bookkeeping inside a block
 * is never mistaken for a use of the object.  Only the outermost call on a
 * thread reports, so an operator new that calls malloc counts once.
 * Outside Valgrind the requests cost a few instructions and do nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <valgrind/valgrind.h>

#include "memreq.h"

#define EXPORT __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_memalign)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static void *(*real_new)(size_t);
static void *(*real_new_arr)(size_t);
static void *(*real_new_al)(size_t, size_t);
static void *(*real_new_arr_al)(size_t, size_t);
static void (*real_delete)(void *);
static void (*real_delete_arr)(void *);
static void (*real_delete_al)(void *, size_t);
static void (*real_delete_arr_al)(void *, size_t);

/* dlsym may allocate while we resolve: serve it from here. */
static char boot_buf[1 << 14] __attribute__((aligned(64)));
static size_t boot_used;
static volatile int resolving;
static volatile int resolved;

static __thread int depth __attribute__((tls_model("initial-exec"))); /* > 0 inside our wrappers */

static void *boot_alloc(size_t n) {
  size_t at = (boot_used + 15) & ~(size_t)15;
  if (at + n > sizeof boot_buf) return NULL;
  boot_used = at + n;
  return boot_buf + at;
}

static int is_boot(const void *p) {
  return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof boot_buf;
}

static void die(const char *msg) {
  ssize_t r = write(2, msg, strlen(msg));
  (void)r;
  _exit(127);
}

#define RESOLVE(var, name) var = (__typeof__(var))dlsym(RTLD_NEXT, name)

static void resolve(void) {
  if (resolved) return;
  resolving = 1;
  RESOLVE(real_malloc, "malloc");
  RESOLVE(real_free, "free");
  RESOLVE(real_calloc, "calloc");
  RESOLVE(real_realloc, "realloc");
  RESOLVE(real_memalign, "memalign");
  RESOLVE(real_posix_memalign, "posix_memalign");
  RESOLVE(real_aligned_alloc, "aligned_alloc");
  RESOLVE(real_valloc, "valloc");
  RESOLVE(real_pvalloc, "pvalloc");
  RESOLVE(real_new, "_Znwm");
  RESOLVE(real_new_arr, "_Znam");
  RESOLVE(real_new_al, "_ZnwmSt11align_val_t");
  RESOLVE(real_new_arr_al, "_ZnamSt11align_val_t");
  RESOLVE(real_delete, "_ZdlPv");
  RESOLVE(real_delete_arr, "_ZdaPv");
  RESOLVE(real_delete_al, "_ZdlPvSt11align_val_t");
  RESOLVE(real_delete_arr_al, "_ZdaPvSt11align_val_t");
  resolving = 0;
  if (!real_malloc || !real_free || !real_calloc || !real_realloc)
    die("alloclab memshim: cannot find the allocator beneath\n");
  resolved = 1;
}

static inline void note_alloc(void *p, size_t n) {
  if (p && depth == 0) VALGRIND_DO_CLIENT_REQUEST_STMT(ALM_ALLOC, p, n, 0, 0, 0);
}

static inline void note_free(void *p) {
  if (p && depth == 0) VALGRIND_DO_CLIENT_REQUEST_STMT(ALM_FREE, p, 0, 0, 0, 0);
}

EXPORT void *malloc(size_t n) {
  void *p;
  if (!resolved) {
    if (resolving) return boot_alloc(n);
    resolve();
  }
  depth++;
  p = real_malloc(n);
  depth--;
  note_alloc(p, n);
  return p;
}

EXPORT void *calloc(size_t k, size_t n) {
  void *p;
  if (!resolved) {
    if (resolving) {
      if (n && k > SIZE_MAX / n) return NULL;
      return boot_alloc(k * n); /* static storage: already zero */
    }
    resolve();
  }
  depth++;
  p = real_calloc(k, n);
  depth--;
  note_alloc(p, k * n);
  return p;
}

EXPORT void free(void *p) {
  if (!p || is_boot(p)) return;
  if (!resolved) resolve();
  note_free(p);
  depth++;
  real_free(p);
  depth--;
}

EXPORT void cfree(void *p) { free(p); }

EXPORT void *realloc(void *old, size_t n) {
  void *p;
  if (old && is_boot(old)) {
    /* Move a bootstrap block into the real heap (its size is unknown: copy what fits). */
    size_t have = (size_t)(boot_buf + sizeof boot_buf - (char *)old);
    p = malloc(n);
    if (p) memcpy(p, old, have < n ? have : n);
    return p;
  }
  if (!resolved) resolve();
  if (!old) return malloc(n);
  depth++;
  p = real_realloc(old, n);
  depth--;
  if (depth == 0) {
    if (p) VALGRIND_DO_CLIENT_REQUEST_STMT(ALM_REALLOC, old, p, n, 0, 0);
    else if (n == 0) note_free(old); /* realloc(p, 0) freed p */
  }
  return p;
}

EXPORT void *reallocarray(void *old, size_t k, size_t n) {
  if (n && k > SIZE_MAX / n) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(old, k * n);
}

#define ALIGNED_WRAPPER(sig, call, size)        \
  {                                             \
    void *p;                                    \
    if (!resolved) resolve();                   \
    depth++;                                    \
    p = call;                                   \
    depth--;                                    \
    note_alloc(p, size);                        \
    return p;                                   \
  }

EXPORT void *memalign(size_t a, size_t n) ALIGNED_WRAPPER(, real_memalign(a, n), n)
EXPORT void *aligned_alloc(size_t a, size_t n) ALIGNED_WRAPPER(, real_aligned_alloc(a, n), n)
EXPORT void *valloc(size_t n) ALIGNED_WRAPPER(, real_valloc(n), n)
EXPORT void *pvalloc(size_t n) ALIGNED_WRAPPER(, real_pvalloc(n), n)

EXPORT int posix_memalign(void **out, size_t a, size_t n) {
  int r;
  if (!resolved) resolve();
  depth++;
  r = real_posix_memalign(out, a, n);
  depth--;
  if (r == 0) note_alloc(*out, n);
  return r;
}

/* C++: allocators such as tcmalloc define operator new without calling
   malloc, so it is wrapped too.  The throwing forms come from the allocator
   or libstdc++ beneath; the nothrow forms call them. */
static void *new_impl(void *(*fn)(size_t), size_t n) {
  void *p;
  if (!resolved) resolve();
  if (!fn) fn = real_malloc;
  depth++;
  p = fn(n);
  depth--;
  note_alloc(p, n);
  return p;
}

static void *new_al_impl(void *(*fn)(size_t, size_t), size_t n, size_t a) {
  void *p;
  if (!resolved) resolve();
  depth++;
  p = fn ? fn(n, a) : real_aligned_alloc(a, (n + a - 1) / a * a);
  depth--;
  note_alloc(p, n);
  return p;
}

static void delete_impl(void (*fn)(void *), void *p) {
  if (!p) return;
  if (!resolved) resolve();
  note_free(p);
  depth++;
  if (fn) fn(p);
  else real_free(p);
  depth--;
}

static void delete_al_impl(void (*fn)(void *, size_t), void *p, size_t a) {
  if (!p) return;
  if (!resolved) resolve();
  note_free(p);
  depth++;
  if (fn) fn(p, a);
  else real_free(p);
  depth--;
}

EXPORT void *_Znwm(size_t n) { return new_impl(real_new, n); }
EXPORT void *_Znam(size_t n) { return new_impl(real_new_arr, n); }
EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) {
  (void)nt;
  if (!resolved) resolve();
  return new_impl(real_malloc, n);
}
EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) {
  (void)nt;
  if (!resolved) resolve();
  return new_impl(real_malloc, n);
}
EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a) { return new_al_impl(real_new_al, n, a); }
EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a) { return new_al_impl(real_new_arr_al, n, a); }

EXPORT void _ZdlPv(void *p) { delete_impl(real_delete, p); }
EXPORT void _ZdaPv(void *p) { delete_impl(real_delete_arr, p); }
EXPORT void _ZdlPvm(void *p, size_t n) { (void)n; delete_impl(real_delete, p); }
EXPORT void _ZdaPvm(void *p, size_t n) { (void)n; delete_impl(real_delete_arr, p); }
EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; delete_impl(real_delete, p); }
EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; delete_impl(real_delete_arr, p); }
EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a) { delete_al_impl(real_delete_al, p, a); }
EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a) { delete_al_impl(real_delete_arr_al, p, a); }
EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) {
  (void)n;
  delete_al_impl(real_delete_al, p, a);
}
EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) {
  (void)n;
  delete_al_impl(real_delete_arr_al, p, a);
}
