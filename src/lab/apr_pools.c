/* apr_pools.c — liballoclab_apr.so: the region emulator of the reaps paper
 * (2002, §3.1), applied to a real program's APR pools, and the count of the
 * requests its pools serve. An LD_PRELOAD shim over libapr-1.
 *
 *   ALLOCLAB_APR=count    every pool request goes to APR, and is counted;
 *   ALLOCLAB_APR=emulate  every pool request is served by malloc, one object
 *                         each, recorded out of band with its pool; clearing
 *                         or destroying a pool frees its objects and those of
 *                         every pool below it (APR destroys those inside);
 *   ALLOCLAB_APR_LOG      append the run's line here (default: stderr):
 *                         "apr: pid=N pool_ops=P malloc_ops=M"
 *                         P: requests APR's pools served, M: requests malloc
 *                         served in their place (the emulator's coverage).
 *
 * The entry points that take memory from a pool: apr_palloc and apr_pcalloc
 * (libapr's own calls to them go through its PLT, so they reach this shim
 * too), and apr_pvsprintf / apr_psprintf, which format straight into the
 * pool's block and are rebuilt here on vsnprintf. A pool created before
 * this shim saw it (none, when preloaded) is left to APR and counted in P.
 *
 * The emulator's own records live in mappings, never in the heap under test.
 * One mutex guards them: svn and its kind use pools from one thread at a time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <apr_pools.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "library_shim.h"

#undef apr_pcalloc  /* the header's macro over apr_palloc: the function is defined here */

#define EXPORT __attribute__((visibility("default")))

static int g_emulate;
static unsigned long long g_pool_ops, g_malloc_ops;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void *(*real_palloc)(apr_pool_t *, apr_size_t);
static void *(*real_pcalloc)(apr_pool_t *, apr_size_t);
static char *(*real_pvsprintf)(apr_pool_t *, const char *, va_list);
static void (*real_clear)(apr_pool_t *);
static void (*real_destroy)(apr_pool_t *);
static apr_status_t (*real_create_ex)(apr_pool_t **, apr_pool_t *, apr_abortfunc_t, apr_allocator_t *);

static void *next(const char *name) {
  return shim_next(name, "liballoclab_apr.so: libapr-1 is not loaded in this program\n");
}

static void *map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) shim_die("liballoclab_apr.so: out of memory for its records\n");
  return p;
}

/* ---- the emulator's records: a pool, its parent and children, its objects.
 * Records never move (links point at them); a hash from the APR pool to its
 * record finds them, with backward-shift deletion, so pools made and
 * destroyed per iteration leave no tombstones behind. */
struct pool {
  apr_pool_t *apr;
  struct pool *parent, *child, *sibling, *next_free;
  void **objects;
  size_t count, cap;
};

enum { kRecordsPerBlock = 1024 };
static struct pool *g_free_records;

static struct pool *new_record(void) {
  if (!g_free_records) {
    struct pool *block = map(kRecordsPerBlock * sizeof *block);
    for (int i = kRecordsPerBlock - 1; i >= 0; i--) {
      block[i].next_free = g_free_records;
      g_free_records = &block[i];
    }
  }
  struct pool *r = g_free_records;
  g_free_records = r->next_free;
  memset(r, 0, sizeof *r);
  return r;
}

struct entry {
  apr_pool_t *key;  /* NULL: empty */
  struct pool *rec;
};
static struct entry *g_table;
static size_t g_cap, g_count;

static size_t slot_of(const apr_pool_t *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static void place(struct entry *t, size_t cap, struct entry e) {
  size_t k = slot_of(e.key, cap);
  while (t[k].key) k = (k + 1) & (cap - 1);
  t[k] = e;
}

static struct pool *find(const apr_pool_t *p) {
  if (!g_cap || !p) return NULL;
  for (size_t k = slot_of(p, g_cap);; k = (k + 1) & (g_cap - 1)) {
    if (g_table[k].key == p) return g_table[k].rec;
    if (!g_table[k].key) return NULL;
  }
}

static void forget(const apr_pool_t *p) {
  const size_t mask = g_cap - 1;
  size_t k = slot_of(p, g_cap);
  for (; g_table[k].key != p; k = (k + 1) & mask)
    if (!g_table[k].key) return;
  size_t hole = k;
  for (size_t j = (k + 1) & mask; g_table[j].key; j = (j + 1) & mask) {
    const size_t home = slot_of(g_table[j].key, g_cap);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      g_table[hole] = g_table[j];
      hole = j;
    }
  }
  g_table[hole].key = NULL;
  g_count--;
}

static struct pool *add(apr_pool_t *p, apr_pool_t *parent) {
  if (2 * (g_count + 1) > g_cap) {
    const size_t cap = g_cap ? 2 * g_cap : 1024;
    struct entry *t = map(cap * sizeof *t);
    for (size_t i = 0; i < g_cap; i++)
      if (g_table[i].key) place(t, cap, g_table[i]);
    if (g_table) munmap(g_table, g_cap * sizeof *g_table);
    g_table = t;
    g_cap = cap;
  }
  struct pool *r = new_record();
  r->apr = p;
  place(g_table, g_cap, (struct entry){p, r});
  g_count++;
  struct pool *up = find(parent);
  if (up) {
    r->parent = up;
    r->sibling = up->child;
    up->child = r;
  }
  return r;
}

/* Object arrays of retired pools, kept for the next pool: programs create and
 * destroy a pool per iteration, and a mapping per pool would cost more than
 * the requests it records. */
static void **g_spare[64];
static size_t g_spare_cap[64];
static int g_spares;

static void free_objects(struct pool *r) {
  for (size_t i = 0; i < r->count; i++) free(r->objects[i]);
  r->count = 0;
}

static void retire(struct pool *r) {
  free_objects(r);
  if (r->objects) {
    if (g_spares < 64) {
      g_spare[g_spares] = r->objects;
      g_spare_cap[g_spares++] = r->cap;
    } else {
      munmap(r->objects, r->cap * sizeof(void *));
    }
  }
  forget(r->apr);
  r->next_free = g_free_records;
  g_free_records = r;
}

static void drop_subtree(struct pool *r) {
  for (struct pool *c = r->child, *n; c; c = n) {
    n = c->sibling;
    drop_subtree(c);
    retire(c);
  }
  r->child = NULL;
}

static void unlink_from_parent(struct pool *r) {
  if (!r->parent) return;
  for (struct pool **at = &r->parent->child; *at; at = &(*at)->sibling) {
    if (*at == r) {
      *at = r->sibling;
      break;
    }
  }
}

static void remember(struct pool *r, void *obj) {
  if (!r->objects && g_spares > 0) {
    r->objects = g_spare[--g_spares];
    r->cap = g_spare_cap[g_spares];
  }
  if (r->count == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 512;
    void **a = map(cap * sizeof *a);
    if (r->objects) {
      memcpy(a, r->objects, r->count * sizeof *a);
      munmap(r->objects, r->cap * sizeof *a);
    }
    r->objects = a;
    r->cap = cap;
  }
  r->objects[r->count++] = obj;
}

/* A pool request served by malloc, or NULL when the pool is not known. */
static void *emulated(apr_pool_t *p, size_t size, int zero) {
  pthread_mutex_lock(&g_lock);
  struct pool *r = find(p);
  void *obj = NULL;
  if (r) {
    obj = zero ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
    if (obj) {
      remember(r, obj);
      g_malloc_ops++;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return obj;
}

/* Depth of interposed requests on this thread: libapr's apr_pcalloc and
 * apr_pvsprintf may call apr_palloc inside, which is the same request. */
static __thread int t_depth;

static void count_pool_op(void) {
  if (t_depth == 0) __atomic_add_fetch(&g_pool_ops, 1, __ATOMIC_RELAXED);
}

/* ---- the interposed entry points */
EXPORT void *apr_palloc(apr_pool_t *p, apr_size_t size) {
  if (g_emulate) {
    void *obj = emulated(p, size, 0);
    if (obj) return obj;
  }
  count_pool_op();
  return real_palloc(p, size);
}

EXPORT void *apr_pcalloc(apr_pool_t *p, apr_size_t size) {
  if (g_emulate) {
    void *obj = emulated(p, size, 1);
    if (obj) return obj;
  }
  count_pool_op();
  t_depth++;
  void *obj = real_pcalloc(p, size);
  t_depth--;
  return obj;
}

EXPORT char *apr_pvsprintf(apr_pool_t *p, const char *fmt, va_list ap) {
  if (g_emulate) {
    va_list again;
    va_copy(again, ap);
    const int n = vsnprintf(NULL, 0, fmt, again);
    va_end(again);
    char *s = n >= 0 ? emulated(p, (size_t)n + 1, 0) : NULL;
    if (s) {
      vsnprintf(s, (size_t)n + 1, fmt, ap);
      return s;
    }
  }
  count_pool_op();
  t_depth++;
  char *s = real_pvsprintf(p, fmt, ap);
  t_depth--;
  return s;
}

EXPORT char *apr_psprintf(apr_pool_t *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = apr_pvsprintf(p, fmt, ap);
  va_end(ap);
  return s;
}

EXPORT apr_status_t apr_pool_create_ex(apr_pool_t **newpool, apr_pool_t *parent, apr_abortfunc_t abort_fn,
                                       apr_allocator_t *allocator) {
  const apr_status_t st = real_create_ex(newpool, parent, abort_fn, allocator);
  if (g_emulate && st == APR_SUCCESS) {
    pthread_mutex_lock(&g_lock);
    add(*newpool, parent);
    pthread_mutex_unlock(&g_lock);
  }
  return st;
}

/* APR clears and destroys the pools below inside these calls (not through
 * here): after the real call, their objects go too. Cleanups run inside the
 * real call, while the objects they may read still exist. */
EXPORT void apr_pool_clear(apr_pool_t *p) {
  real_clear(p);
  if (!g_emulate) return;
  pthread_mutex_lock(&g_lock);
  struct pool *r = find(p);
  if (r) {
    drop_subtree(r);
    free_objects(r);
  }
  pthread_mutex_unlock(&g_lock);
}

EXPORT void apr_pool_destroy(apr_pool_t *p) {
  real_destroy(p);
  if (!g_emulate) return;
  pthread_mutex_lock(&g_lock);
  struct pool *r = find(p);
  if (r) {
    drop_subtree(r);
    unlink_from_parent(r);
    retire(r);
  }
  pthread_mutex_unlock(&g_lock);
}

/* ---- start and end */
__attribute__((constructor)) static void apr_shim_init(void) {
  const char *mode = getenv("ALLOCLAB_APR");
  if (mode && strcmp(mode, "emulate") == 0) {
    g_emulate = 1;
  } else if (mode && *mode && strcmp(mode, "count") != 0) {
    shim_die("liballoclab_apr.so: ALLOCLAB_APR must be count or emulate\n");
  }
  real_palloc = next("apr_palloc");
  real_pcalloc = next("apr_pcalloc");
  real_pvsprintf = next("apr_pvsprintf");
  real_clear = next("apr_pool_clear");
  real_destroy = next("apr_pool_destroy");
  real_create_ex = next("apr_pool_create_ex");
}

__attribute__((destructor)) static void apr_shim_fini(void) {
  char line[160];
  const int n = snprintf(line, sizeof line, "apr: pid=%d pool_ops=%llu malloc_ops=%llu\n", (int)getpid(),
                         __atomic_load_n(&g_pool_ops, __ATOMIC_RELAXED), g_malloc_ops);
  shim_log("ALLOCLAB_APR_LOG", line, n);
}
