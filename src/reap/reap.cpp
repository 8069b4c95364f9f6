// reap.cpp — libreap: the C API over the reap composition (reap_heap.hpp).
//
// Fast paths (reap_malloc, reap_free) test one flag and go straight to the
// layers. Everything unusual — the region emulator, checked mode, memory
// checkers, large objects, aligned requests — is out of line below them.
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>

#include "alloclab/reap.h"
#include "layers/spin_lock.hpp"
#include "layers/tool_hooks.hpp"
#include "reap/options.hpp"
#include "reap/reap_heap.hpp"

namespace {

using alloclab::tag::Block;
namespace tag = alloclab::tag;
namespace tools = alloclab::tools;
using alloclab::reap_impl::ChunkSource;
using alloclab::reap_impl::LargeSource;
using alloclab::reap_impl::kHomeChunk;
using alloclab::reap_impl::kLargeBlock;

constexpr std::size_t kMaxAlign = std::size_t{1} << 30;

// ---------------------------------------------------------------------------
// Registry of live reaps (checked mode only), to tell "wrong reap" from
// "foreign pointer".
alloclab::SpinLock g_registry_lock;
reap *g_registry = nullptr;

void register_reap(reap *r) {
  alloclab::SpinGuard g(g_registry_lock);
  r->reg_prev = nullptr;
  r->reg_next = g_registry;
  if (g_registry) g_registry->reg_prev = r;
  g_registry = r;
}

void unregister_reap(reap *r) {
  alloclab::SpinGuard g(g_registry_lock);
  if (r->reg_prev) r->reg_prev->reg_next = r->reg_next;
  else g_registry = r->reg_next;
  if (r->reg_next) r->reg_next->reg_prev = r->reg_prev;
}

void fork_prepare() {
  g_registry_lock.lock();
  ChunkSource::prepare_fork();
  LargeSource::prepare_fork();
}
void fork_parent() {
  LargeSource::parent_after_fork();
  ChunkSource::parent_after_fork();
  g_registry_lock.unlock();
}
void fork_child() {
  LargeSource::child_after_fork();
  ChunkSource::child_after_fork();
  g_registry_lock.reset();
}

void setup_once() {
  const auto &o = alloclab::reap_options::get();
  ChunkSource::set_limit(o.cache_bytes);
  tools::init();
  ::pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void ensure_setup() {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  ::pthread_once(&once, setup_once);
}

// ---------------------------------------------------------------------------
// Faults found in checked mode: say what and where, then abort.
[[noreturn]] void fault(const char *what, const reap *r, const void *p, const char *extra = "") {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, "alloclab reap: %s: pointer %p, reap %p%s\n", what, p,
                        static_cast<const void *>(r), extra);
  if (n > 0) {
    ssize_t w = ::write(2, buf, static_cast<std::size_t>(n) < sizeof buf ? n : sizeof buf - 1);
    (void)w;
  }
  std::abort();
}

bool in_home(const reap *r, const void *p) {
  return p >= r->home_lo && p < r->home_hi;
}

// Does r hand out p (a live object or not)? Regions of r only, not children.
bool region_contains(const reap *r, const void *p) {
  if (r->emulated) return r->objects && r->objects->contains(p);
  return in_home(r, p) || r->contains(p) || r->large.owns(p);
}

// Checked mode: p must be a live object of r.
void verify(const reap *r, const void *p, const char *op) {
  const bool mine = region_contains(r, p);
  if (!mine) {
    const reap *owner = nullptr;
    {
      alloclab::SpinGuard g(g_registry_lock);
      for (const reap *o = g_registry; o; o = o->reg_next)
        if (o != r && region_contains(o, p)) owner = o;
    }
    char extra[96];
    if (owner) {
      std::snprintf(extra, sizeof extra, " (it belongs to reap %p) in %s",
                    static_cast<const void *>(owner), op);
      fault("free into the wrong reap", r, p, extra);
    }
    std::snprintf(extra, sizeof extra, " in %s", op);
    if (r->emulated) fault("pointer not allocated by this reap, or freed twice", r, p, extra);
    fault("foreign pointer (not allocated by this reap)", r, p, extra);
  }
  if (r->emulated) return;
  if (reinterpret_cast<std::uintptr_t>(p) % tag::kGrain != 0)
    fault("pointer into the middle of an object", r, p, op);
  if (r->large.owns(p)) return;
  Block *b = tag::block_of(p);
  if (tools::active()) tools::reveal(b, tag::kHeader);
  // beyond the bump pointer of the current area: returned already
  const bool above_top = b >= r->top() && b < r->limit();
  if (above_top || !tag::in_use(b)) {
    char extra[64];
    std::snprintf(extra, sizeof extra, " in %s", op);
    fault("double free (object already freed)", r, p, extra);
  }
  const std::size_t s = tag::size(b);
  if (s < tag::kMinBlock || s % tag::kGrain != 0 || (tag::word(b) & tag::LARGE))
    fault("corrupt object header (overflow from the object before?)", r, p, op);
}

// ---------------------------------------------------------------------------
// The region emulator (REAP_MODE=malloc): objects from malloc, tracked out
// of band so clear and destroy can free them.

void *emu_track(reap *r, void *p) {
  if (!p) return nullptr;
  if (!r->objects->insert(p)) {
    std::free(p);
    errno = ENOMEM;
    return nullptr;
  }
  const std::size_t u = ::malloc_usable_size(p);
  ++r->live_objects;
  r->live_bytes += u;
  r->add_external(u, 0);
  return p;
}

void emu_forget(reap *r, void *p) {
  const std::size_t u = ::malloc_usable_size(p);
  r->objects->erase(p);
  --r->live_objects;
  r->live_bytes -= u;
  r->add_external(0, u);
}

void emu_free_all(reap *r) {
  r->objects->for_each([](void *p) { std::free(p); });
  r->add_external(0, r->live_bytes);
  r->objects->clear();
  r->live_objects = 0;
  r->live_bytes = 0;
}

// ---------------------------------------------------------------------------
// Reap memory proper.

void account_alloc(reap *r, Block *b) {
  ++r->live_objects;
  r->live_bytes += tag::usable(b);
}

void *large_alloc(reap *r, std::size_t n, std::size_t align) {
  void *p = r->large.alloc(n, align);
  if (!p) {
    errno = ENOMEM;
    return nullptr;
  }
  const std::size_t u = r->large.usable(p);
  ++r->live_objects;
  r->live_bytes += u;
  if (tools::active()) tools::object_alloc(r, p, u);
  return p;
}

std::size_t large_footprint(const reap *r) { return r->large.held_bytes(); }

void large_free(reap *r, void *p) {
  const std::size_t u = r->large.usable(p);
  --r->live_objects;
  r->live_bytes -= u;
  if (tools::active()) tools::object_free(r, p, u);
  r->large.free(p);
}

void *small_alloc(reap *r, std::size_t s) {
  Block *b = r->alloc_block(s);
  if (!b) {
    errno = ENOMEM;
    return nullptr;
  }
  account_alloc(r, b);
  if (tools::active()) tools::object_alloc(r, tag::payload(b), tag::usable(b));
  return tag::payload(b);
}

void small_free(reap *r, void *p) {
  Block *b = tag::block_of(p);
  --r->live_objects;
  r->live_bytes -= tag::usable(b);
  if (tools::active()) tools::object_free(r, p, tag::usable(b));
  r->free_block_now(b);
}

// Keep the large-object bytes inside the footprint the chunk list reports.
struct LargeAccount {
  reap *r;
  std::size_t before;
  explicit LargeAccount(reap *rr) : r(rr), before(large_footprint(rr)) {}
  ~LargeAccount() {
    const std::size_t after = large_footprint(r);
    r->add_external(after, before);
  }
};

[[gnu::noinline]] void *malloc_slow(reap *r, std::size_t n) {
  if (n > tag::kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  if (r->emulated) return emu_track(r, std::malloc(n ? n : 1));
  const std::size_t s = tag::block_size(n);
  if (s > kLargeBlock) {
    LargeAccount acct(r);
    return large_alloc(r, n, tag::kGrain);
  }
  return small_alloc(r, s);
}

[[gnu::noinline]] void free_slow(reap *r, void *p) {
  if (r->checked) verify(r, p, "reap_free");
  if (r->emulated) {
    emu_forget(r, p);
    std::free(p);
    return;
  }
  if (tools::active()) tools::reveal(tag::block_of(p), tag::kHeader);
  if (tag::word(tag::block_of(p)) & tag::LARGE) {
    LargeAccount acct(r);
    return large_free(r, p);
  }
  small_free(r, p);
}

// The keep budget for a clear: enough chunks to refill a typical cycle
// without system calls, never a spike's worth (reaps: clear gives back).
std::size_t keep_budget(reap *r) {
  const std::size_t used = r->held_bytes() - r->spare_bytes();
  const std::size_t typical = r->cleared_once ? r->typical_use : used;
  r->typical_use = (typical * 3 + used) / 4;
  r->cleared_once = true;
  const std::size_t twice = typical * 2;
  return used < twice ? used : twice;
}

void reset_home_area(reap *r) {
  r->set_area(r->home_lo, r->home_hi);
}

void clear_objects(reap *r) {
  if (r->emulated) {
    emu_free_all(r);
    return;
  }
  // Memory checkers first: destroying the pool marks every object it still
  // records inaccessible, which must happen before that memory is given
  // back (a cached chunk must not stay poisoned for its next owner).
  if (tools::active()) {
    tools::pool_destroy(r);
    tools::pool_create(r);
  }
  {
    LargeAccount acct(r);
    r->large.release_all();
  }
  r->forget_heap();
  r->release_all(keep_budget(r));
  reset_home_area(r);
  r->live_objects = 0;
  r->live_bytes = 0;
}

void destroy_one(reap *r) {
  r->detach();
  if (r->checked) unregister_reap(r);
  if (tools::active()) tools::pool_destroy(r);  // before any memory goes back (see clear_objects)
  if (r->emulated) {
    emu_free_all(r);
    r->objects->~PtrSet();
  } else {
    r->large.release_all();
  }
  r->release_everything();
  if (tools::active()) tools::reveal(r, kHomeChunk);
  ChunkSource source;
  r->~reap();
  source.put_chunk(r, kHomeChunk);
}

void destroy_descendants(reap *r) {
  r->destroy_descendants([](alloclab::reap_impl::RegionCore *c) {
    destroy_one(static_cast<reap *>(c));
  });
}

void *memalign_small(reap *r, std::size_t align, std::size_t n) {
  // Over-allocate, then give the misaligned head and the unused tail back.
  const std::size_t s = tag::block_size(n + align + tag::kMinBlock);
  void *raw = small_alloc(r, s);
  if (!raw) return nullptr;
  Block *b = tag::block_of(raw);
  auto p = reinterpret_cast<std::uintptr_t>(raw);
  std::uintptr_t q = (p + align - 1) & ~(std::uintptr_t{align} - 1);
  if (q != p && q - p < tag::kMinBlock) q += align;
  if (q != p) {
    const std::size_t gap = q - p;
    const std::size_t total = tag::size(b);
    Block *nb = b + gap;
    --r->live_objects;
    r->live_bytes -= total - tag::kHeader;
    if (tools::active()) {
      tools::object_free(r, raw, total - tag::kHeader);
      tools::reveal(nb, tag::kHeader);
    }
    // the new block first (its predecessor still counts as in use), then
    // free the head, which clears nb's PREV_INUSE or merges leftwards
    tag::word(nb) = (total - gap) | tag::INUSE | tag::PREV_INUSE;
    tag::word(b) = gap | tag::INUSE | (tag::word(b) & tag::PREV_INUSE);
    r->free_block_now(b);
    account_alloc(r, nb);
    if (tools::active()) tools::object_alloc(r, tag::payload(nb), tag::usable(nb));
    b = nb;
  }
  const std::size_t need = tag::block_size(n);
  const std::size_t have = tag::size(b);
  if (have - need >= tag::kMinBlock) {
    if (tools::active()) tools::object_resize(r, tag::payload(b), have - tag::kHeader, need - tag::kHeader);
    r->live_bytes -= have - need;
    r->shrink_block(b, need);
  }
  return tag::payload(b);
}

}  // namespace

// ===========================================================================
// The C API.

extern "C" {

reap_t *reap_create(reap_t *parent) {
  ensure_setup();
  const auto &o = alloclab::reap_options::get();
  ChunkSource source;
  void *m = source.get_chunk(kHomeChunk);
  if (!m) {
    errno = ENOMEM;
    return nullptr;
  }
  if (tools::active()) tools::reveal(m, kHomeChunk);
  reap *r = ::new (m) reap();
  r->emulated = o.emulate;
  r->checked = o.check;
  r->slow = r->emulated || r->checked || tools::active();
  char *lo = static_cast<char *>(m) + sizeof(reap);
  r->home_lo = lo;
  r->home_hi = static_cast<char *>(m) + kHomeChunk;
  r->add_external(kHomeChunk, 0);
  if (r->emulated) {
    static_assert(sizeof(alloclab::PtrSet) <= 64, "PtrSet fits before the home area");
    r->objects = ::new (lo) alloclab::PtrSet();
    r->home_lo = lo + 64;
  }
  reset_home_area(r);
  if (tools::active()) tools::pool_create(r);
  if (parent) r->attach_to(parent);
  if (r->checked) register_reap(r);
  return r;
}

void reap_destroy(reap_t *r) {
  if (!r) return;
  destroy_descendants(r);
  destroy_one(r);
}

void reap_free_all(reap_t *r) {
  destroy_descendants(r);
  clear_objects(r);
}

void *reap_malloc(reap_t *r, size_t n) {
  if (__builtin_expect(!r->slow && n <= kLargeBlock - tag::kHeader, 1)) {
    if (Block *b = r->try_alloc_block(tag::block_size(n))) {
      account_alloc(r, b);
      return tag::payload(b);
    }
  }
  return malloc_slow(r, n);
}

void reap_free(reap_t *r, void *p) {
  if (!p) return;
  if (__builtin_expect(!r->slow, 1)) {
    Block *b = tag::block_of(p);
    if (__builtin_expect(!(tag::word(b) & tag::LARGE), 1)) {
      --r->live_objects;
      r->live_bytes -= tag::usable(b);
      r->free_block(b);
      return;
    }
  }
  free_slow(r, p);
}

void *reap_calloc(reap_t *r, size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void *p = reap_malloc(r, bytes);
  if (p) std::memset(p, 0, bytes);
  return p;
}

void *reap_memalign(reap_t *r, size_t align, size_t n) {
  if (align == 0 || (align & (align - 1)) != 0 || align > kMaxAlign) {
    errno = EINVAL;
    return nullptr;
  }
  if (align <= tag::kGrain) return reap_malloc(r, n);
  if (n > tag::kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  if (r->emulated) {
    void *p = nullptr;
    const int e = ::posix_memalign(&p, align, n ? n : 1);
    if (e) {
      errno = e;
      return nullptr;
    }
    return emu_track(r, p);
  }
  if (tag::block_size(n) + align + tag::kMinBlock > kLargeBlock) {
    LargeAccount acct(r);
    return large_alloc(r, n, align);
  }
  return memalign_small(r, align, n);
}

void *reap_realloc(reap_t *r, void *p, size_t n) {
  if (!p) return reap_malloc(r, n);
  if (n > tag::kMaxRequest) {
    errno = ENOMEM;
    return nullptr;
  }
  if (r->checked) verify(r, p, "reap_realloc");
  if (r->emulated) {
    const std::size_t old_u = ::malloc_usable_size(p);
    const auto old_addr = reinterpret_cast<std::uintptr_t>(p);  // a key, never dereferenced
    void *q = std::realloc(p, n ? n : 1);
    if (!q) return nullptr;
    if (reinterpret_cast<std::uintptr_t>(q) != old_addr) {
      r->objects->erase(reinterpret_cast<void *>(old_addr));
      if (!r->objects->insert(q)) {
        // could not record it: hand it back unrecorded rather than lose it
        errno = ENOMEM;
        std::free(q);
        --r->live_objects;
        r->live_bytes -= old_u;
        r->add_external(0, old_u);
        return nullptr;
      }
    }
    const std::size_t new_u = ::malloc_usable_size(q);
    r->live_bytes = r->live_bytes - old_u + new_u;
    r->add_external(new_u, old_u);
    return q;
  }
  if (tools::active()) tools::reveal(tag::block_of(p), tag::kHeader);
  const bool large = tag::word(tag::block_of(p)) & tag::LARGE;
  const std::size_t old_u = large ? r->large.usable(p) : tag::usable(tag::block_of(p));
  const std::size_t need = tag::block_size(n);
  if (large) {
    if (n <= old_u && n >= old_u / 2) return p;  // fits, and not wastefully
  } else if (need <= kLargeBlock) {
    Block *b = tag::block_of(p);
    const std::size_t have = tag::size(b);
    if (need <= have) {
      if (have - need >= tag::kMinBlock) {
        if (tools::active()) tools::object_resize(r, p, old_u, need - tag::kHeader);
        r->live_bytes -= have - need;
        r->shrink_block(b, need);
      }
      return p;
    }
    if (r->grow_in_place(b, need)) {
      const std::size_t new_u = tag::usable(b);
      r->live_bytes += new_u - old_u;
      if (tools::active()) tools::object_resize(r, p, old_u, new_u);
      return p;
    }
  }
  void *q = reap_malloc(r, n);
  if (!q) return nullptr;
  std::memcpy(q, p, old_u < n ? old_u : n);
  reap_free(r, p);
  return q;
}

size_t reap_usable_size(const reap_t *r, const void *p) {
  if (!p) return 0;
  if (r->emulated) return ::malloc_usable_size(const_cast<void *>(p));
  Block *b = tag::block_of(p);
  if (tools::active()) tools::reveal(b, tag::kHeader);
  if (tag::word(b) & tag::LARGE) return decltype(r->large)::usable(p);
  return tag::usable(b);
}

void reap_stats(const reap_t *r, reap_stats_t *out) {
  if (!out) return;
  out->live_objects = r->live_objects;
  out->live_bytes = r->live_bytes;
  out->footprint_bytes = r->footprint();
  out->peak_footprint_bytes = r->peak_footprint();
  out->chunks = 1 + r->held_chunks();
  out->large_objects = r->large.count();
  out->emulated = r->emulated ? 1 : 0;
}

}  // extern "C"
