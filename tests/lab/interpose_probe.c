/* interpose_probe.c — run with LD_PRELOAD="liblab_interpose_probe.so
 * liblab_nesting_alloc.so": checks the bootstrap paths of the lab's
 * interposition core (src/lab/interpose.c) through the test shim's
 * probe_state. Prints "ok" or the first failure, exit status 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct probe_state {
  int resolutions;
  size_t arena_before_dlsym, arena_after_dlsym;
  void *block;
  void *neighbour;
  void *zeroed;
  void *aligned;
  int aligned_rc;
  int fork_child_status;
  unsigned long allocs, frees;
  size_t last_alloc_size;
};

static int failures;
#define CHECK(cond, ...)                            \
  do {                                              \
    if (!(cond)) {                                  \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);   \
      printf(__VA_ARGS__);                          \
      printf("\n");                                 \
      failures++;                                   \
    }                                               \
  } while (0)

int main(void) {
  free(malloc(1)); /* the shim resolves at its first call, if nothing called it yet */
  struct probe_state *s = dlsym(RTLD_DEFAULT, "probe_state");
  int (*in_arena)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "probe_in_arena");
  if (!s || !in_arena) {
    printf("FAIL: run me with the probe shim preloaded\n");
    return 1;
  }
  CHECK(s->resolutions == 1, "resolved %d times in this process, want 1", s->resolutions);

  /* dlsym recursion: the failing lookup allocated, through our own malloc,
   * while we were resolving; the arena served it and dlsym returned. */
  CHECK(s->arena_after_dlsym > s->arena_before_dlsym,
        "a failing dlsym while resolving did not allocate from the arena (%zu -> %zu bytes)",
        s->arena_before_dlsym, s->arena_after_dlsym);

  /* Bootstrap blocks know their size. */
  unsigned char *b = s->block, *nb = s->neighbour;
  CHECK(b && in_arena(b) && nb && in_arena(nb), "bootstrap blocks not from the arena");
  if (!b || !nb) return 1;
  CHECK(malloc_usable_size(b) == 3000, "usable size of a 3000-byte bootstrap block: %zu",
        malloc_usable_size(b));
  CHECK(s->zeroed && in_arena(s->zeroed) && malloc_usable_size(s->zeroed) == 100,
        "calloc(10, 10) while resolving");
  for (int i = 0; s->zeroed && i < 100; ++i)
    if (((unsigned char *)s->zeroed)[i]) { CHECK(0, "calloc bootstrap block not zero at %d", i); break; }
  CHECK(s->aligned_rc == 0 && s->aligned && in_arena(s->aligned) &&
            ((uintptr_t)s->aligned & 255) == 0 && malloc_usable_size(s->aligned) == 100,
        "posix_memalign(256, 100) while resolving: rc %d, %p", s->aligned_rc, s->aligned);

  /* realloc of a bootstrap block moves exactly its bytes into the real heap,
   * as a new allocation the shim sees. */
  const unsigned long allocs = s->allocs, frees = s->frees;
  unsigned char *r = realloc(b, 8000);
  CHECK(r && !in_arena(r), "realloc of a bootstrap block stayed in the arena");
  if (!r) return 1;
  for (int i = 0; i < 3000; ++i)
    if (r[i] != (unsigned char)('A' + i % 26)) { CHECK(0, "realloc lost byte %d of the block", i); break; }
  int run = 0, longest = 0;
  for (int i = 3000; i < 8000; ++i) {
    run = r[i] == 0xEE ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  CHECK(longest < 64, "realloc copied the arena beyond the block (a run of %d neighbour bytes)", longest);
  CHECK(s->allocs == allocs + 1 && s->last_alloc_size == 8000 && s->frees == frees,
        "the moved block: %lu allocations (want 1) of %zu, %lu frees (want 0)",
        s->allocs - allocs, s->last_alloc_size, s->frees - frees);

  /* Shrinking a bootstrap block copies only what is asked for. */
  unsigned char *small = realloc(nb, 10);
  CHECK(small && !in_arena(small) && small[0] == 0xEE && small[9] == 0xEE, "realloc(bootstrap, 10)");

  /* free of a bootstrap block is a no-op that the shim never sees. */
  const unsigned long frees_before = s->frees;
  free(s->zeroed);
  free(s->aligned);
  CHECK(s->frees == frees_before, "free of a bootstrap block reached the shim's hook");
  free(r);
  free(small);
  CHECK(s->frees == frees_before + 2, "frees of real blocks: %lu, want 2", s->frees - frees_before);

  /* The reentrancy guard: the allocator's calloc calls malloc; only the
   * outermost call is seen, once, with the caller's request. */
  const unsigned long before = s->allocs;
  void *c = calloc(7, 9);
  CHECK(c && s->allocs == before + 1 && s->last_alloc_size == 63,
        "calloc over a malloc-calling allocator seen %lu times (last size %zu), want once (63)",
        s->allocs - before, s->last_alloc_size);
  free(c);

  /* Fork while resolving: the child resolved again and allocated for real. */
  CHECK(s->fork_child_status == 0, "child forked while resolving: status %d (3: still in the arena)",
        s->fork_child_status);

  if (failures) return 1;
  printf("ok\n");
  return 0;
}
