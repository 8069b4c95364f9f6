/* memshim.c — liballoclab_memshim.so, the heap shim for alloclab-mem.
 *
 * Preloaded in front of the allocator under test (LD_PRELOAD="shim alloc"),
 * it forwards every malloc-family call and C++ operator new/delete to the
 * next definition and tells the Valgrind tool about the object: after the
 * allocator made it (ALM_ALLOC) and before the allocator gets it back
 * (ALM_FREE), so the allocator's own bookkeeping inside a block is never
 * mistaken for a use of the object. Outside Valgrind the requests cost a few
 * instructions and do nothing.
 *
 * The malloc family, the lookup of the allocator beneath, the bootstrap
 * arena, the reentrancy guard (only the outermost call on a thread reports,
 * so an operator new that calls malloc counts once) and fork safety are the
 * lab's interposition core (src/lab/interpose.h); this file supplies its
 * hooks and adds operator new/delete.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include <valgrind/valgrind.h>

#include "lab/interpose.h"
#include "memreq.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- the hooks of the interposition core */
const char ip_shim_name[] = "alloclab memshim";

void ip_hook_alloc(void *p, size_t n) { VALGRIND_DO_CLIENT_REQUEST_STMT(ALM_ALLOC, p, n, 0, 0, 0); }

void ip_hook_free(void *p) { VALGRIND_DO_CLIENT_REQUEST_STMT(ALM_FREE, p, 0, 0, 0, 0); }

size_t ip_hook_realloc_begin(void *old) {
  (void)old;
  return 0;
}

void ip_hook_realloc_end(void *old, void *p, size_t n, size_t token) {
  (void)token;
  if (p) VALGRIND_DO_CLIENT_REQUEST_STMT(ALM_REALLOC, old, p, n, 0, 0);
  else if (n == 0) ip_hook_free(old); /* realloc(p, 0) freed p */
}

/* ---- C++: allocators such as tcmalloc define operator new without calling
   malloc, so it is wrapped too. The throwing forms come from the allocator
   or libstdc++ beneath; when there are none (a C program), malloc and free
   serve. The nothrow forms call malloc. */
static void *(*real_new)(size_t);
static void *(*real_new_arr)(size_t);
static void *(*real_new_al)(size_t, size_t);
static void *(*real_new_arr_al)(size_t, size_t);
static void (*real_delete)(void *);
static void (*real_delete_arr)(void *);
static void (*real_delete_al)(void *, size_t);
static void (*real_delete_arr_al)(void *, size_t);

#define LOOKUP(var, name) (*(void **)&(var) = dlsym(RTLD_NEXT, name))

void ip_shim_resolved(void) {
  LOOKUP(real_new, "_Znwm");
  LOOKUP(real_new_arr, "_Znam");
  LOOKUP(real_new_al, "_ZnwmSt11align_val_t");
  LOOKUP(real_new_arr_al, "_ZnamSt11align_val_t");
  LOOKUP(real_delete, "_ZdlPv");
  LOOKUP(real_delete_arr, "_ZdaPv");
  LOOKUP(real_delete_al, "_ZdlPvSt11align_val_t");
  LOOKUP(real_delete_arr_al, "_ZdaPvSt11align_val_t");
}

static void *new_impl(void *(*fn)(size_t), size_t n) {
  if (!ip_ready()) return ip_boot_alloc(16, n);
  if (!fn) fn = ip_next.malloc;
  const int outer = ip_enter();
  void *p = fn(n);
  ip_leave();
  if (outer && p) ip_hook_alloc(p, n);
  return p;
}

static void *new_al_impl(void *(*fn)(size_t, size_t), size_t n, size_t a) {
  if (!ip_ready()) return ip_boot_alloc(a, n);
  const int outer = ip_enter();
  void *p = NULL;
  if (fn) p = fn(n, a);
  else if (ip_next.posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, n) != 0) p = NULL;
  ip_leave();
  if (outer && p) ip_hook_alloc(p, n);
  return p;
}

static void delete_impl(void (*fn)(void *), void *p) {
  if (!p || ip_in_boot(p) || !ip_ready()) return;
  if (!fn) fn = ip_next.free;
  const int outer = ip_enter();
  if (outer) ip_hook_free(p);
  fn(p);
  ip_leave();
}

static void delete_al_impl(void (*fn)(void *, size_t), void *p, size_t a) {
  if (!p || ip_in_boot(p) || !ip_ready()) return;
  const int outer = ip_enter();
  if (outer) ip_hook_free(p);
  if (fn) fn(p, a);
  else ip_next.free(p);
  ip_leave();
}

/* Each wrapper reads its real_* pointer only after ip_ready() made sure the
   lookup ran (the comma operator orders the two). */
#define NEW_CALL(var, n) (ip_ready(), new_impl(var, n))
#define NEW_AL_CALL(var, n, a) (ip_ready(), new_al_impl(var, n, a))

EXPORT void *_Znwm(size_t n) { return NEW_CALL(real_new, n); }
EXPORT void *_Znam(size_t n) { return NEW_CALL(real_new_arr, n); }
EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) {
  (void)nt;
  return new_impl(NULL, n);
}
EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) {
  (void)nt;
  return new_impl(NULL, n);
}
EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a) { return NEW_AL_CALL(real_new_al, n, a); }
EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a) { return NEW_AL_CALL(real_new_arr_al, n, a); }

#define DELETE_CALL(var, p) (ip_ready(), delete_impl(var, p))
#define DELETE_AL_CALL(var, p, a) (ip_ready(), delete_al_impl(var, p, a))

EXPORT void _ZdlPv(void *p) { DELETE_CALL(real_delete, p); }
EXPORT void _ZdaPv(void *p) { DELETE_CALL(real_delete_arr, p); }
EXPORT void _ZdlPvm(void *p, size_t n) {
  (void)n;
  DELETE_CALL(real_delete, p);
}
EXPORT void _ZdaPvm(void *p, size_t n) {
  (void)n;
  DELETE_CALL(real_delete_arr, p);
}
EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) {
  (void)nt;
  DELETE_CALL(real_delete, p);
}
EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) {
  (void)nt;
  DELETE_CALL(real_delete_arr, p);
}
EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a) { DELETE_AL_CALL(real_delete_al, p, a); }
EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a) { DELETE_AL_CALL(real_delete_arr_al, p, a); }
EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) {
  (void)n;
  DELETE_AL_CALL(real_delete_al, p, a);
}
EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) {
  (void)n;
  DELETE_AL_CALL(real_delete_arr_al, p, a);
}
