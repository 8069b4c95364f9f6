/* gslice_count.c — liballoclab_gslice.so: how many requests GLib's slice
 * allocator (GSlice) served from its own slabs in one run of a program. An
 * LD_PRELOAD shim, for a counted run on glibc (it forwards malloc and calloc
 * to glibc's own entry points).
 *
 *   ALLOCLAB_GSLICE_LOG   append the run's line here (default: stderr):
 *                         "gslice: pid=N slab_ops=S malloc_ops=M"
 *                         S: requests GSlice served from its slabs,
 *                         M: requests it passed on to malloc.
 *
 * Why not count the calls: with G_SLICE=always-malloc (or above the slab's
 * largest chunk) g_slice_alloc is still called, and hands the request to
 * g_malloc, that is malloc. So a request counts as served by the slab when
 * the block it returns is not a block malloc returned during the same call.
 * (GSlice's own bookkeeping may call malloc or calloc in a call the slab
 * serves, once per thread: that block is not the one returned.)
 *
 * What is seen: the calls that reach GLib through the dynamic linker —
 * g_slice_alloc, g_slice_alloc0 and g_slice_copy from GObject, GStreamer and
 * the program. Debian's libglib binds its own calls to g_slice_alloc inside
 * itself (-Bsymbolic-functions), so GLib's lists and trees are not counted:
 * S is a lower bound of what the slab served, and 0 when it served nothing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>

#include "library_shim.h"

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);

static unsigned long long g_slab_ops, g_malloc_ops;

static void *(*real_alloc)(size_t);
static void *(*real_alloc0)(size_t);
static void *(*real_copy)(size_t, const void *);

/* Per thread: inside an interposed slice call, and the last block malloc or
 * calloc returned during it. initial-exec: reading it never allocates. */
static __thread int t_depth __attribute__((tls_model("initial-exec")));
static __thread void *t_from_malloc __attribute__((tls_model("initial-exec")));

static void *next(const char *name) {
  return shim_next(name, "liballoclab_gslice.so: libglib-2.0 is not loaded in this program\n");
}

EXPORT void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  if (t_depth) t_from_malloc = p;
  return p;
}

EXPORT void *calloc(size_t n, size_t size) {
  void *p = __libc_calloc(n, size);
  if (t_depth) t_from_malloc = p;
  return p;
}

static void begin(void) {
  if (t_depth++ == 0) t_from_malloc = NULL;
}

static void *end(void *mem) {
  if (--t_depth == 0 && mem) {
    unsigned long long *n = mem == t_from_malloc ? &g_malloc_ops : &g_slab_ops;
    __atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
  }
  return mem;
}

/* Resolved at the first call, which may come from another library's
 * constructor before this one's would have run. */
static void resolve(void) {
  if (__atomic_load_n(&real_copy, __ATOMIC_ACQUIRE)) return;
  real_alloc = next("g_slice_alloc");
  real_alloc0 = next("g_slice_alloc0");
  __atomic_store_n(&real_copy, next("g_slice_copy"), __ATOMIC_RELEASE);
}

EXPORT void *g_slice_alloc(size_t size) {
  resolve();
  begin();
  return end(real_alloc(size));
}

EXPORT void *g_slice_alloc0(size_t size) {
  resolve();
  begin();
  return end(real_alloc0(size));
}

EXPORT void *g_slice_copy(size_t size, const void *from) {
  resolve();
  begin();
  return end(real_copy(size, from));
}

__attribute__((destructor)) static void gslice_count_fini(void) {
  char line[160];
  const int n = snprintf(line, sizeof line, "gslice: pid=%d slab_ops=%llu malloc_ops=%llu\n", (int)getpid(),
                         __atomic_load_n(&g_slab_ops, __ATOMIC_RELAXED),
                         __atomic_load_n(&g_malloc_ops, __ATOMIC_RELAXED));
  shim_log("ALLOCLAB_GSLICE_LOG", line, n);
}
