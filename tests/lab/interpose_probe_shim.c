/* interpose_probe_shim.c — a test shim on the lab's interposition core
 * (src/lab/interpose.c), the same core the profile and memory shims use.
 *
 * Its hooks count what reaches them. While the core resolves the allocator
 * beneath (ip_shim_resolved, the state in which dlsym's own requests come
 * back into malloc) it makes the requests dlsym would, and a fork, and
 * leaves what it saw in probe_state for interpose_probe.c to check:
 *   - a dlsym that fails (its error message is allocated: dlsym recursion);
 *   - bootstrap blocks: one of 3000 bytes with a pattern, its neighbour
 *     filled with 0xEE, a calloc, a 256-aligned posix_memalign;
 *   - a fork, whose child must resolve again rather than serve from the
 *     arena for ever (its status is recorded).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab/interpose.h"

struct probe_state {
  int resolutions;         /* times ip_shim_resolved ran in this process */
  size_t arena_before_dlsym, arena_after_dlsym;
  void *block;             /* 3000 bytes, byte i = 'A' + i % 26 */
  void *neighbour;         /* 500 bytes of 0xEE, right after block in the arena */
  void *zeroed;            /* calloc(10, 10) */
  void *aligned;           /* posix_memalign(256, 100) */
  int aligned_rc;
  int fork_child_status;   /* exit status of the child forked while resolving */
  unsigned long allocs, frees;
  size_t last_alloc_size;
};

__attribute__((visibility("default"))) struct probe_state probe_state;

/* For the program: is p a block of the bootstrap arena? */
__attribute__((visibility("default"))) int probe_in_arena(const void *p) { return ip_in_boot(p); }

const char ip_shim_name[] = "interpose probe";

void ip_hook_alloc(void *p, size_t n) {
  (void)p;
  probe_state.allocs++;
  probe_state.last_alloc_size = n;
}

void ip_hook_free(void *p) {
  (void)p;
  probe_state.frees++;
}

size_t ip_hook_realloc_begin(void *old) {
  ip_hook_free(old);
  return 0;
}

void ip_hook_realloc_end(void *old, void *p, size_t n, size_t token) {
  (void)old;
  (void)token;
  if (p) ip_hook_alloc(p, n);
}

static int probing;

void ip_shim_resolved(void) {
  struct probe_state *s = &probe_state;
  s->resolutions++;
  if (probing) return; /* the forked child resolving again */
  probing = 1;

  s->arena_before_dlsym = ip_boot_used();
  (void)dlsym(RTLD_NEXT, "alloclab_interpose_probe_no_such_symbol");
  s->arena_after_dlsym = ip_boot_used();

  char *b = malloc(3000);
  char *n = malloc(500);
  if (b) for (int i = 0; i < 3000; ++i) b[i] = (char)('A' + i % 26);
  if (n) memset(n, 0xEE, 500);
  s->block = b;
  s->neighbour = n;
  s->zeroed = calloc(10, 10);
  s->aligned_rc = posix_memalign(&s->aligned, 256, 100);

  const pid_t child = fork();
  if (child == 0) {
    void *p = malloc(10);
    syscall(SYS_exit_group, p == NULL ? 4 : ip_in_boot(p) ? 3 : 0);
  }
  int status = -1;
  if (child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status))
    s->fork_child_status = WEXITSTATUS(status);
  else
    s->fork_child_status = -1;
}
