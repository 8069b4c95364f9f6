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
 * lab's interposition core (src/lab/interpose.h), which interposes C++'s
 * operator new/delete too; this file supplies its hooks.
 */
#include <stddef.h>
#include <stdint.h>

#include <valgrind/valgrind.h>

#include "lab/interpose.h"
#include "memreq.h"

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

void ip_shim_resolved(void) {}
