/* interpose.c — the malloc-interposition core of the preload shims; see
 * interpose.h for what it provides and what a shim supplies. */
#define _GNU_SOURCE
#include "lab/interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IP_EXPORT __attribute__((visibility("default")))
#define IP_UNLIKELY(x) __builtin_expect(!!(x), 0)

struct ip_next ip_next;
int ip_state = IP_UNRESOLVED;
__thread unsigned ip_depth __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------- the arena
 * Blocks are carved with an atomic bump pointer and never reused, so every
 * block is zero when handed out (calloc needs nothing more). Each block's
 * requested size sits in the 8 bytes just before it. */
static char ip_boot[IP_BOOT_BYTES] __attribute__((aligned(IP_BOOT_MAX_ALIGN)));
static size_t ip_boot_top;

void *ip_boot_alloc(size_t align, size_t n) {
  if (align < 16) align = 16;
  if (align > IP_BOOT_MAX_ALIGN || (align & (align - 1)) != 0 || n > IP_BOOT_BYTES) return NULL;
  /* room for the size word in front, the worst-case padding and the block */
  const size_t need = ((n + 15) & ~(size_t)15) + align + 16;
  const size_t at = __atomic_fetch_add(&ip_boot_top, need, __ATOMIC_RELAXED);
  if (at + need > sizeof ip_boot || at + need < at) return NULL;
  const uintptr_t base = (uintptr_t)(ip_boot + at);
  char *p = (char *)((base + 16 + align - 1) & ~(uintptr_t)(align - 1));
  memcpy(p - sizeof n, &n, sizeof n);
  return p;
}

int ip_in_boot(const void *p) {
  const char *c = (const char *)p;
  return c >= ip_boot && c < ip_boot + sizeof ip_boot;
}

size_t ip_boot_size(const void *p) {
  size_t n;
  memcpy(&n, (const char *)p - sizeof n, sizeof n);
  return n;
}

size_t ip_boot_used(void) {
  const size_t top = __atomic_load_n(&ip_boot_top, __ATOMIC_RELAXED);
  return top < sizeof ip_boot ? top : sizeof ip_boot;
}

/* ---------------------------------------------------------------- resolution */
static void ip_die(const char *what) {
  static const char tail[] = ": cannot find the allocator beneath (dlsym RTLD_NEXT failed)\n";
  (void)!write(2, what, strlen(what));
  (void)!write(2, tail, sizeof tail - 1);
  syscall(SYS_exit_group, 127); /* not _exit: a shim may interpose on it */
  __builtin_unreachable();
}

#define IP_LOOKUP(slot, name) (*(void **)&(slot) = dlsym(RTLD_NEXT, name))

/* C++'s operators beneath: the allocator's own (jemalloc, mimalloc,
 * tcmalloc and libvam define them, and their operator new never calls
 * malloc, so a shim that wrapped only the C family would miss every object a
 * C++ program makes with new) or libstdc++'s; NULL in a C program. */
static struct {
  void *(*new_)(size_t);
  void *(*new_arr)(size_t);
  void *(*new_al)(size_t, size_t);
  void *(*new_arr_al)(size_t, size_t);
  void (*delete_)(void *);
  void (*delete_arr)(void *);
  void (*delete_al)(void *, size_t);
  void (*delete_arr_al)(void *, size_t);
} ip_cxx;

static void ip_resolve_cxx(void) {
  IP_LOOKUP(ip_cxx.new_, "_Znwm");
  IP_LOOKUP(ip_cxx.new_arr, "_Znam");
  IP_LOOKUP(ip_cxx.new_al, "_ZnwmSt11align_val_t");
  IP_LOOKUP(ip_cxx.new_arr_al, "_ZnamSt11align_val_t");
  IP_LOOKUP(ip_cxx.delete_, "_ZdlPv");
  IP_LOOKUP(ip_cxx.delete_arr, "_ZdaPv");
  IP_LOOKUP(ip_cxx.delete_al, "_ZdlPvSt11align_val_t");
  IP_LOOKUP(ip_cxx.delete_arr_al, "_ZdaPvSt11align_val_t");
}

/* A child forked while another thread was resolving would wait for ever. */
static void ip_after_fork_child(void) {
  int resolving = IP_RESOLVING;
  __atomic_compare_exchange_n(&ip_state, &resolving, IP_UNRESOLVED, 0, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  ip_depth = 0;
}

static int ip_same_object(void *fn, const Dl_info *base) {
  Dl_info info;
  return fn && base->dli_fbase && dladdr(fn, &info) != 0 && info.dli_fbase == base->dli_fbase;
}

int ip_resolve_slow(void) {
  int expected = IP_UNRESOLVED;
  if (!__atomic_compare_exchange_n(&ip_state, &expected, IP_RESOLVING, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    return expected == IP_READY; /* resolving (here, inside dlsym, or elsewhere) */
  IP_LOOKUP(ip_next.malloc, "malloc");
  IP_LOOKUP(ip_next.free, "free");
  IP_LOOKUP(ip_next.calloc, "calloc");
  IP_LOOKUP(ip_next.realloc, "realloc");
  IP_LOOKUP(ip_next.posix_memalign, "posix_memalign");
  IP_LOOKUP(ip_next.memalign, "memalign");
  IP_LOOKUP(ip_next.aligned_alloc, "aligned_alloc");
  IP_LOOKUP(ip_next.usable_size, "malloc_usable_size");
  if (!ip_next.malloc || !ip_next.free || !ip_next.calloc || !ip_next.realloc ||
      !ip_next.posix_memalign)
    ip_die(ip_shim_name);
  Dl_info base;
  if (!dladdr(*(void **)&ip_next.malloc, &base)) base.dli_fbase = NULL;
  if (!ip_same_object(*(void **)&ip_next.memalign, &base)) ip_next.memalign = NULL;
  if (!ip_same_object(*(void **)&ip_next.aligned_alloc, &base)) ip_next.aligned_alloc = NULL;
  if (!ip_same_object(*(void **)&ip_next.usable_size, &base)) ip_next.usable_size = NULL;
  ip_resolve_cxx();
  pthread_atfork(NULL, NULL, ip_after_fork_child);
  ip_shim_resolved();
  __atomic_store_n(&ip_state, IP_READY, __ATOMIC_RELEASE);
  return 1;
}

/* ---------------------------------------------------------------- the family */
/* Calls the allocator beneath as expr, under the guard; reports to the
 * shim when this was the outermost call. */
#define IP_FORWARD_ALLOC(expr, n)    \
  do {                               \
    const int outer_ = ip_enter();   \
    void *p_ = (expr);               \
    ip_leave();                      \
    if (outer_ && p_) ip_hook_alloc(p_, (n)); \
    return p_;                       \
  } while (0)

IP_EXPORT void *malloc(size_t n) {
  if (IP_UNLIKELY(!ip_ready())) return ip_boot_alloc(16, n);
  IP_FORWARD_ALLOC(ip_next.malloc(n), n);
}

IP_EXPORT void *calloc(size_t k, size_t size) {
  size_t n;
  if (__builtin_mul_overflow(k, size, &n)) {
    errno = ENOMEM;
    return NULL;
  }
  if (IP_UNLIKELY(!ip_ready())) return ip_boot_alloc(16, n); /* arena blocks are zero */
  IP_FORWARD_ALLOC(ip_next.calloc(k, size), n);
}

IP_EXPORT void free(void *p) {
  if (!p || IP_UNLIKELY(ip_in_boot(p))) return; /* arena blocks are never reused */
  if (IP_UNLIKELY(!ip_ready())) return;          /* not ours: cannot come before resolution */
  /* The allocator will read the object's header: start that load now, so
   * its miss overlaps whatever the hook touches. */
  __builtin_prefetch((char *)p - 16, 1);
  const int outer = ip_enter();
  if (outer) ip_hook_free(p);
  ip_next.free(p);
  ip_leave();
}

IP_EXPORT void cfree(void *p) { free(p); }

IP_EXPORT void *realloc(void *old, size_t n) {
  if (!old) return malloc(n);
  if (IP_UNLIKELY(ip_in_boot(old))) {
    /* Out of the arena: exactly the block's bytes move (never what lies
     * after it), into a block the shim sees as a new allocation. */
    void *p = malloc(n);
    if (p) {
      const size_t had = ip_boot_size(old);
      memcpy(p, old, had < n ? had : n);
    }
    return p;
  }
  if (IP_UNLIKELY(!ip_ready())) return NULL; /* not ours: cannot come before resolution */
  const int outer = ip_enter();
  const size_t token = outer ? ip_hook_realloc_begin(old) : 0;
  void *p = ip_next.realloc(old, n);
  ip_leave();
  if (outer) ip_hook_realloc_end(old, p, n, token);
  return p;
}

IP_EXPORT void *reallocarray(void *old, size_t k, size_t size) {
  size_t n;
  if (__builtin_mul_overflow(k, size, &n)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(old, n);
}

/* Every aligned form: the allocator's own function when it has one, else its
 * posix_memalign. errno as the C functions set it. */
static void *ip_aligned(size_t align, size_t n, void *(*fn)(size_t, size_t)) {
  if (IP_UNLIKELY(!ip_ready())) {
    void *p = ip_boot_alloc(align, n);
    if (!p) errno = ENOMEM;
    return p;
  }
  const int outer = ip_enter();
  void *p = NULL;
  if (fn) p = fn(align, n);
  else {
    const int r = ip_next.posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n);
    if (r != 0) {
      errno = r;
      p = NULL;
    }
  }
  ip_leave();
  if (outer && p) ip_hook_alloc(p, n);
  return p;
}

static size_t ip_page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

IP_EXPORT void *memalign(size_t align, size_t n) {
  return ip_aligned(align, n, ip_ready() ? ip_next.memalign : NULL);
}

IP_EXPORT void *aligned_alloc(size_t align, size_t n) {
  return ip_aligned(align, n, ip_ready() ? ip_next.aligned_alloc : NULL);
}

IP_EXPORT void *valloc(size_t n) { return ip_aligned(ip_page(), n, NULL); }

IP_EXPORT void *pvalloc(size_t n) {
  const size_t page = ip_page();
  const size_t rounded = n ? (n + page - 1) & ~(page - 1) : page;
  if (rounded < n) {
    errno = ENOMEM;
    return NULL;
  }
  return ip_aligned(page, rounded, NULL);
}

IP_EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || (align & (align - 1)) != 0) return EINVAL;
  if (IP_UNLIKELY(!ip_ready())) {
    void *p = ip_boot_alloc(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
  }
  const int outer = ip_enter();
  const int r = ip_next.posix_memalign(out, align, n);
  ip_leave();
  if (outer && r == 0 && *out) ip_hook_alloc(*out, n);
  return r;
}

IP_EXPORT size_t malloc_usable_size(void *p) {
  if (!p) return 0;
  if (ip_in_boot(p)) return ip_boot_size(p);
  if (!ip_ready() || !ip_next.usable_size) return 0;
  return ip_next.usable_size(p);
}

/* ---------------------------------------------------------------- C++
 * operator new/delete, forwarded to the operators beneath (ip_cxx) under the
 * guard, so libstdc++'s operator new calling malloc counts once. The throwing
 * forms: the operator beneath, or malloc and free when there is none (a C
 * program). The nothrow forms call malloc (a failed throwing new would throw
 * through them). */
static void *ip_new(void *(*fn)(size_t), size_t n) {
  if (IP_UNLIKELY(!ip_ready())) return ip_boot_alloc(16, n);
  if (!fn) fn = ip_next.malloc;
  IP_FORWARD_ALLOC(fn(n), n);
}

static void *ip_new_aligned(void *(*fn)(size_t, size_t), size_t n, size_t a) {
  if (IP_UNLIKELY(!ip_ready())) return ip_boot_alloc(a, n);
  const int outer = ip_enter();
  void *p = NULL;
  if (fn) p = fn(n, a);
  else if (ip_next.posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, n) != 0) p = NULL;
  ip_leave();
  if (outer && p) ip_hook_alloc(p, n);
  return p;
}

static void ip_delete(void (*fn)(void *), void *p) {
  if (!p || IP_UNLIKELY(ip_in_boot(p)) || IP_UNLIKELY(!ip_ready())) return;
  if (!fn) fn = ip_next.free;
  const int outer = ip_enter();
  if (outer) ip_hook_free(p);
  fn(p);
  ip_leave();
}

static void ip_delete_aligned(void (*fn)(void *, size_t), void *p, size_t a) {
  if (!p || IP_UNLIKELY(ip_in_boot(p)) || IP_UNLIKELY(!ip_ready())) return;
  const int outer = ip_enter();
  if (outer) ip_hook_free(p);
  if (fn) fn(p, a);
  else ip_next.free(p);
  ip_leave();
}

/* Each reads its ip_cxx pointer only after ip_ready() made sure the lookup
 * ran (the comma operator orders the two). */
#define IP_NEW(fn, n) (ip_ready(), ip_new(ip_cxx.fn, n))
#define IP_NEW_AL(fn, n, a) (ip_ready(), ip_new_aligned(ip_cxx.fn, n, a))
#define IP_DELETE(fn, p) (ip_ready(), ip_delete(ip_cxx.fn, p))
#define IP_DELETE_AL(fn, p, a) (ip_ready(), ip_delete_aligned(ip_cxx.fn, p, a))

IP_EXPORT void *_Znwm(size_t n) { return IP_NEW(new_, n); }
IP_EXPORT void *_Znam(size_t n) { return IP_NEW(new_arr, n); }
IP_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return ip_new(NULL, n); }
IP_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return ip_new(NULL, n); }
IP_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a) { return IP_NEW_AL(new_al, n, a); }
IP_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a) { return IP_NEW_AL(new_arr_al, n, a); }

IP_EXPORT void _ZdlPv(void *p) { IP_DELETE(delete_, p); }
IP_EXPORT void _ZdaPv(void *p) { IP_DELETE(delete_arr, p); }
IP_EXPORT void _ZdlPvm(void *p, size_t n) { (void)n; IP_DELETE(delete_, p); }
IP_EXPORT void _ZdaPvm(void *p, size_t n) { (void)n; IP_DELETE(delete_arr, p); }
IP_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; IP_DELETE(delete_, p); }
IP_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; IP_DELETE(delete_arr, p); }
IP_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a) { IP_DELETE_AL(delete_al, p, a); }
IP_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a) { IP_DELETE_AL(delete_arr_al, p, a); }
IP_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n; IP_DELETE_AL(delete_al, p, a); }
IP_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n; IP_DELETE_AL(delete_arr_al, p, a); }
