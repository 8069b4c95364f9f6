// region.hpp — one region interface over every way the workloads can serve
// their region calls: the same five calls the reap variant makes
// (create with a parent, malloc, free, clear, destroy), answered by
//
//   reap      libreap (reap_create / reap_malloc / reap_free / ...)
//   emulator  libreap under REAP_MODE=malloc (workload.hpp sets it)
//   malloc    naive allocation as the 2026 paper's Table 4 builds it for
//             region allocators: the region keeps its chunk list, but every
//             chunk holds exactly one object from malloc, so a bulk free is a
//             walk of that list calling free; an individual free unlinks the
//             chunk and frees it (the list is doubly linked for that)
//   talloc    a talloc context per region (talloc_new under the parent's)
//   apr       an APR pool per region (apr_pool_create under the parent's);
//             APR has no individual free, so area_free does nothing
//   pmr       a std::pmr resource per region: std::pmr::monotonic_buffer_resource
//             when the workload only frees in bulk (PmrKind::Monotonic), an
//             std::pmr::unsynchronized_pool_resource when it also frees one
//             object at a time (PmrKind::Pool); both draw from
//             new_delete_resource, so they end in the allocator under test
//
// Nesting: clearing or destroying a region destroys the regions created
// under it, as reaps, talloc and APR do; the adapter keeps the list of
// children itself so every backend behaves alike.
//
// Footprint (for the server's stderr line): the bytes a region holds now and
// its peak since it was created or cleared — libreap's own statistics for
// reap and emulator, the counted bytes for the others (malloc: the chunks'
// usable sizes, only when area_track_footprint(true); talloc: object sizes;
// apr: every byte allocated, since a pool never gives any back; pmr: what the
// resource took from its upstream).
#pragma once

#include "workload.hpp"

#include <malloc.h>

#include <cstddef>
#include <memory_resource>
#include <new>

#ifdef WL_HAVE_TALLOC
#include <talloc.h>
#endif
#ifdef WL_HAVE_APR
#include <apr_general.h>
#include <apr_pools.h>
#endif

namespace wl {

enum class PmrKind { Monotonic, Pool };

namespace region_detail {

// The naive backend's one-object chunk: a header in front of the object.
struct Chunk {
  Chunk *next;
  Chunk *prev;
};
static_assert(sizeof(Chunk) == 16, "objects stay 16-byte aligned");

// Counts what a pmr resource takes from new_delete_resource.
class CountingResource final : public std::pmr::memory_resource {
 public:
  std::size_t held = 0, peak = 0;

 private:
  void *do_allocate(std::size_t n, std::size_t align) override {
    void *p = std::pmr::new_delete_resource()->allocate(n, align);
    held += n;
    if (held > peak) peak = held;
    return p;
  }
  void do_deallocate(void *p, std::size_t n, std::size_t align) override {
    held -= n;
    std::pmr::new_delete_resource()->deallocate(p, n, align);
  }
  bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override { return this == &o; }
};

struct State {
  Alloc backend = Alloc::Reap;
  PmrKind pmr = PmrKind::Monotonic;
  bool track = false;
  bool apr_ready = false;
};
inline State &state() {
  static State s;
  return s;
}

}  // namespace region_detail

class Area {
 public:
  Area *parent = nullptr;
  Area *first_child = nullptr, *next_sibling = nullptr, *prev_sibling = nullptr;
  std::size_t held = 0, peak = 0;  // counted bytes (not for reap/emulator)

  reap_t *reap = nullptr;
  region_detail::Chunk *chunks = nullptr;  // malloc backend
#ifdef WL_HAVE_TALLOC
  void *ctx = nullptr;
#endif
#ifdef WL_HAVE_APR
  apr_pool_t *pool = nullptr;
#endif
  region_detail::CountingResource upstream;
  std::pmr::memory_resource *res = nullptr;
  alignas(std::max_align_t) unsigned char res_storage[sizeof(std::pmr::unsynchronized_pool_resource) >
                                                              sizeof(std::pmr::monotonic_buffer_resource)
                                                          ? sizeof(std::pmr::unsynchronized_pool_resource)
                                                          : sizeof(std::pmr::monotonic_buffer_resource)];
};

// Picks the backend for every region of this run; call once, before the
// first area_create. `pmr` says which std::pmr resource stands for a region
// in this workload; `track_footprint` turns on the malloc backend's count.
inline void area_setup(Alloc backend, PmrKind pmr = PmrKind::Monotonic, bool track_footprint = false) {
  auto &s = region_detail::state();
  s.backend = backend == Alloc::Emulator ? Alloc::Reap : backend;  // libreap reads REAP_MODE itself
  s.pmr = pmr;
  s.track = track_footprint;
#ifdef WL_HAVE_APR
  if (backend == Alloc::Apr && !s.apr_ready) {
    if (apr_initialize() != APR_SUCCESS) out_of_memory("apr_initialize");
    std::atexit(apr_terminate);
    s.apr_ready = true;
  }
#endif
}

namespace region_detail {

inline void note(Area *a, std::size_t n) {
  a->held += n;
  if (a->held > a->peak) a->peak = a->held;
}

// The backend's own region: made, emptied, ended.
inline void open(Area *a) {
  const State &s = state();
  switch (s.backend) {
    case Alloc::Reap:
      a->reap = static_cast<reap_t *>(check(reap_create(a->parent ? a->parent->reap : nullptr), "reap_create"));
      return;
    case Alloc::Talloc:
#ifdef WL_HAVE_TALLOC
      a->ctx = check(talloc_new(a->parent ? a->parent->ctx : nullptr), "talloc_new");
#endif
      return;
    case Alloc::Apr:
#ifdef WL_HAVE_APR
      if (apr_pool_create(&a->pool, a->parent ? a->parent->pool : nullptr) != APR_SUCCESS)
        out_of_memory("apr_pool_create");
#endif
      return;
    case Alloc::Pmr:
      if (s.pmr == PmrKind::Pool)
        a->res = new (a->res_storage) std::pmr::unsynchronized_pool_resource(&a->upstream);
      else
        a->res = new (a->res_storage) std::pmr::monotonic_buffer_resource(&a->upstream);
      return;
    default:
      return;  // malloc: an empty chunk list
  }
}

inline void empty(Area *a) {  // frees every object of a; a stays usable
  const State &s = state();
  switch (s.backend) {
    case Alloc::Reap: reap_free_all(a->reap); return;
    case Alloc::Talloc:
#ifdef WL_HAVE_TALLOC
      talloc_free_children(a->ctx);
#endif
      return;
    case Alloc::Apr:
#ifdef WL_HAVE_APR
      apr_pool_clear(a->pool);
#endif
      return;
    case Alloc::Pmr:
      if (s.pmr == PmrKind::Pool) static_cast<std::pmr::unsynchronized_pool_resource *>(a->res)->release();
      else static_cast<std::pmr::monotonic_buffer_resource *>(a->res)->release();
      return;
    default:
      for (Chunk *c = a->chunks; c;) {  // Table 4: bulk free walks the chunk list
        Chunk *next = c->next;
        std::free(c);
        c = next;
      }
      a->chunks = nullptr;
      return;
  }
}

inline void close(Area *a) {
  const State &s = state();
  switch (s.backend) {
    case Alloc::Reap: reap_destroy(a->reap); return;
    case Alloc::Talloc:
#ifdef WL_HAVE_TALLOC
      talloc_free(a->ctx);
#endif
      return;
    case Alloc::Apr:
#ifdef WL_HAVE_APR
      apr_pool_destroy(a->pool);
#endif
      return;
    case Alloc::Pmr: a->res->~memory_resource(); return;  // releases everything
    default: empty(a); return;
  }
}

// Area records are recycled, so making a region costs each backend only
// its own work.
inline Area *&spare_areas() {
  static Area *spare = nullptr;
  return spare;
}

inline void destroy_children(Area *a);

inline void end(Area *a) {
  destroy_children(a);
  close(a);
  if (a->parent) {  // unlink from the parent's children
    if (a->prev_sibling) a->prev_sibling->next_sibling = a->next_sibling;
    else a->parent->first_child = a->next_sibling;
    if (a->next_sibling) a->next_sibling->prev_sibling = a->prev_sibling;
  }
  a->upstream.~CountingResource();
  a->next_sibling = spare_areas();
  spare_areas() = a;
}

inline void destroy_children(Area *a) {
  while (a->first_child) end(a->first_child);
}

}  // namespace region_detail

// A new region under `parent` (nullptr: top level).
inline Area *area_create(Area *parent) {
  using namespace region_detail;
  Area *a = spare_areas();
  if (a) spare_areas() = a->next_sibling;
  else a = static_cast<Area *>(check(std::malloc(sizeof(Area)), "area"));
  a = new (a) Area();
  a->parent = parent;
  if (parent) {
    a->next_sibling = parent->first_child;
    if (parent->first_child) parent->first_child->prev_sibling = a;
    parent->first_child = a;
  }
  open(a);
  return a;
}

// Frees every object and every region below, then the region.
inline void area_destroy(Area *a) { region_detail::end(a); }

// Frees every object and destroys the regions below; the region stays usable.
inline void area_clear(Area *a) {
  region_detail::destroy_children(a);
  region_detail::empty(a);
  a->held = a->peak = 0;
}

inline void *area_alloc(Area *a, std::size_t n) {
  using namespace region_detail;
  const State &s = state();
  void *p = nullptr;
  switch (s.backend) {
    case Alloc::Reap: return reap_malloc(a->reap, n);
    case Alloc::Talloc:
#ifdef WL_HAVE_TALLOC
      p = talloc_size(a->ctx, n);
      note(a, n);
#endif
      return p;
    case Alloc::Apr:
#ifdef WL_HAVE_APR
      p = apr_palloc(a->pool, n);
      note(a, n);
#endif
      return p;
    case Alloc::Pmr:
      if (s.pmr == PmrKind::Pool) {  // the pool's deallocate needs the size back
        auto *h = static_cast<std::size_t *>(a->res->allocate(n + 16, 16));
        *h = n;
        p = reinterpret_cast<char *>(h) + 16;
      } else {
        p = a->res->allocate(n, 16);
      }
      a->held = a->upstream.held;
      a->peak = a->upstream.peak;
      return p;
    default: {
      auto *c = static_cast<Chunk *>(std::malloc(sizeof(Chunk) + n));
      if (!c) return nullptr;
      c->prev = nullptr;
      c->next = a->chunks;
      if (a->chunks) a->chunks->prev = c;
      a->chunks = c;
      if (s.track) note(a, malloc_usable_size(c));
      return c + 1;
    }
  }
}

// An individual free of an object of `a` (nullptr: nothing).
inline void area_free(Area *a, void *p) {
  using namespace region_detail;
  if (!p) return;
  const State &s = state();
  switch (s.backend) {
    case Alloc::Reap: reap_free(a->reap, p); return;
    case Alloc::Talloc:
#ifdef WL_HAVE_TALLOC
      a->held -= talloc_get_size(p);
      talloc_free(p);
#endif
      return;
    case Alloc::Apr: return;  // a pool cannot take an object back
    case Alloc::Pmr:
      if (s.pmr == PmrKind::Pool) {
        auto *h = reinterpret_cast<std::size_t *>(static_cast<char *>(p) - 16);
        a->res->deallocate(h, *h + 16, 16);
        a->held = a->upstream.held;
      }
      return;  // monotonic: nothing comes back before release()
    default: {
      Chunk *c = static_cast<Chunk *>(p) - 1;
      if (c->prev) c->prev->next = c->next;
      else a->chunks = c->next;
      if (c->next) c->next->prev = c->prev;
      if (s.track) a->held -= malloc_usable_size(c);
      std::free(c);
      return;
    }
  }
}

// Bytes the region holds now and at most (see the header comment).
inline std::size_t area_footprint(const Area *a) {
  if (region_detail::state().backend == Alloc::Reap) {
    reap_stats_t st;
    reap_stats(a->reap, &st);
    return st.footprint_bytes;
  }
  return a->held;
}
inline std::size_t area_peak_footprint(const Area *a) {
  if (region_detail::state().backend == Alloc::Reap) {
    reap_stats_t st;
    reap_stats(a->reap, &st);
    return st.peak_footprint_bytes;
  }
  return a->peak;
}

}  // namespace wl
