// mempool_iter — a sculpting brush over a vertex pool that is iterated while
// elements are allocated and freed.
//
// Models Blender's BLI_mempool as used by sculpting (the 2026 "littering"
// study's `sculpt` benchmark, a hybrid allocator in its Table 1): a pool of
// fixed-size elements in chunks, freed elements on a LIFO free list for the
// next allocation, and iteration over every live element that stays valid
// while the loop body allocates new elements and frees the current one.
//
// The program: a grid mesh of vertices; brush strokes made of dabs. Each dab
// iterates over all vertices, pushes those under the brush, splits strongly
// displaced ones (a new vertex: allocation during iteration) and collapses
// some tall ones (freeing the current element). Every decision depends only
// on the vertex itself, so the result does not depend on iteration order and
// the checksum (an order-free sum) is the same for all variants.
//
//   --alloc custom  the mempool: chunks of 512 elements, free list, and a
//                   "free word" tag in freed elements so iteration skips them
//   --alloc reap    each vertex from one reap (reap_free to free), kept on an
//                   intrusive list for iteration; the pool dies in one call
//   --alloc malloc  malloc/free per vertex on the same intrusive list, freed
//                   one by one at the end (littering Table 4 tracks live
//                   objects in a hash set; a list does the same job here)
//   --alloc talloc|apr|pmr  the reap variant's one pool as a talloc context, an
//                   APR pool (frees dropped until the pool dies) or an
//                   std::pmr::unsynchronized_pool_resource (frees are single)
#include "region.hpp"
#include "workload.hpp"

#include <cstddef>
#include <new>
#include <vector>

namespace {

struct Vert {
  float co[3];
  float no[3];
  float mask;
  std::uint32_t id;
  std::uint32_t born;   // the dab that created it: not visited by that dab
  std::uint32_t flags;  // generation: 0 for the starting mesh
};

// ---- the custom variant: a BLI_mempool-like pool --------------------------
class MemPool {
 public:
  static constexpr std::size_t kPerChunk = 512;
  ~MemPool() {
    for (Elem *c : chunks_) std::free(c);
  }
  Vert *alloc() {
    if (!free_) add_chunk();
    Elem *e = free_;
    free_ = e->free.next;
    e->free.tag = 0;
    ++live_;
    return &e->vert;
  }
  void free(Vert *v) {
    Elem *e = reinterpret_cast<Elem *>(v);
    e->free.next = free_;
    e->free.tag = kFreeWord;
    free_ = e;
    --live_;
  }
  // Visits chunks in order; elements freed or taken during the walk are fine.
  template <class F>
  void for_each(F &&f) {
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      Elem *chunk = chunks_[c];
      for (std::size_t i = 0; i < kPerChunk; ++i)
        if (chunk[i].free.tag != kFreeWord) f(&chunk[i].vert);
    }
  }
  std::size_t live() const { return live_; }

 private:
  // As floats this would put co[2] and no[0] at 3.4e38: no live vertex has it.
  static constexpr std::uint64_t kFreeWord = 0x7f7f7f7f7f7f7f7full;
  union Elem {
    struct {
      Elem *next;
      std::uint64_t tag;  // overlays co[2]/no[0]; kFreeWord only when free
    } free;
    Vert vert;
  };
  void add_chunk() {
    auto *chunk = static_cast<Elem *>(wl::check(std::malloc(sizeof(Elem) * kPerChunk), "mempool chunk"));
    for (std::size_t i = kPerChunk; i-- > 0;) {  // thread the chunk so that it is used in order
      chunk[i].free.next = free_;
      chunk[i].free.tag = kFreeWord;
      free_ = &chunk[i];
    }
    chunks_.push_back(chunk);
  }
  std::vector<Elem *> chunks_;
  Elem *free_ = nullptr;
  std::size_t live_ = 0;
};

// ---- the reap and malloc variants: objects on an intrusive list ------------
class ListPool {
 public:
  explicit ListPool(wl::Alloc mode) {
    if (mode != wl::Alloc::Malloc) {
      wl::area_setup(mode, wl::PmrKind::Pool);  // collapsed vertices are freed singly
      area_ = wl::area_create(nullptr);
    }
  }
  ~ListPool() {
    if (area_) {
      wl::area_destroy(area_);  // bulk free
      return;
    }
    for (Node *n = head_; n;) {
      Node *next = n->next;
      std::free(n);
      n = next;
    }
  }
  Vert *alloc() {
    void *p = area_ ? wl::area_alloc(area_, sizeof(Node)) : std::malloc(sizeof(Node));
    Node *n = static_cast<Node *>(wl::check(p, "vertex"));
    n->next = nullptr;
    n->prev = tail_;
    (tail_ ? tail_->next : head_) = n;
    tail_ = n;
    ++live_;
    return &n->vert;
  }
  void free(Vert *v) {
    Node *n = reinterpret_cast<Node *>(reinterpret_cast<char *>(v) - offsetof(Node, vert));
    if (n == cursor_) cursor_ = n->next;
    (n->prev ? n->prev->next : head_) = n->next;
    (n->next ? n->next->prev : tail_) = n->prev;
    --live_;
    if (area_) wl::area_free(area_, n);
    else std::free(n);
  }
  template <class F>
  void for_each(F &&f) {
    for (Node *n = head_; n;) {
      cursor_ = n->next;  // survives a free of n (or of the next node)
      f(&n->vert);
      n = cursor_;
    }
    cursor_ = nullptr;
  }
  std::size_t live() const { return live_; }

 private:
  struct Node {
    Node *prev, *next;
    Vert vert;
  };
  wl::Area *area_ = nullptr;  // reap, talloc, apr, pmr; none for malloc
  Node *head_ = nullptr, *tail_ = nullptr, *cursor_ = nullptr;
  std::size_t live_ = 0;
};

// ---- the sculpting session ------------------------------------------------
constexpr int kGrid = 256;           // vertices per side of the starting mesh
constexpr std::size_t kCap = 120000;  // splitting stops above this many

std::uint32_t hash32(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>(wl::mix((static_cast<std::uint64_t>(a) << 32) | b));
}

template <class Pool>
struct Session {
  Pool &pool;
  std::uint64_t splits = 0, collapses = 0, visits = 0;

  void build_mesh() {
    for (int y = 0; y < kGrid; ++y)
      for (int x = 0; x < kGrid; ++x) {
        Vert *v = pool.alloc();
        *v = Vert{{static_cast<float>(x), static_cast<float>(y), 0.0f}, {0.0f, 0.0f, 1.0f}, 0.0f,
                  static_cast<std::uint32_t>(y * kGrid + x), 0, 0};
      }
  }

  void dab(std::uint32_t n, float cx, float cy, float radius, float strength) {
    const bool may_split = pool.live() < kCap;
    const float r2 = radius * radius;
    pool.for_each([&](Vert *v) {
      if (v->born == n) return;  // made by this very dab
      ++visits;
      const float dx = v->co[0] - cx, dy = v->co[1] - cy;
      const float d2 = dx * dx + dy * dy;
      if (d2 >= r2) return;
      const float falloff = 1.0f - d2 / r2;
      v->co[2] += strength * falloff * falloff * (1.0f - v->mask);
      v->no[0] = dx / radius;
      v->no[1] = dy / radius;
      v->mask = v->mask * 0.98f + 0.01f;
      const std::uint32_t h = hash32(v->id, n);
      if (v->co[2] > 1.5f && (h & 3) == 0) {
        ++collapses;
        pool.free(v);
        return;
      }
      if (may_split && falloff > 0.3f && (h % 5) == 0) {
        Vert *c = pool.alloc();
        *c = *v;
        c->co[0] += 0.25f * (static_cast<float>(h >> 8 & 255) / 255.0f - 0.5f);
        c->co[1] += 0.25f * (static_cast<float>(h >> 16 & 255) / 255.0f - 0.5f);
        c->id = h | 0x80000000u;
        c->born = n;
        c->flags = v->flags + 1;  // generation
        ++splits;
      }
    });
  }

  std::uint64_t digest() {
    std::uint64_t sum = 0;  // commutative: independent of iteration order
    pool.for_each([&](Vert *v) {
      std::uint64_t h = v->id;
      for (float f : v->co) h = wl::mix(h ^ static_cast<std::uint64_t>(std::llround(f * 4096.0f)));
      sum += h;
    });
    return sum;
  }
};

template <class Pool>
void run(Pool &pool, long strokes, wl::Checksum &sum) {
  Session<Pool> s{pool};
  s.build_mesh();
  wl::Rng rng(1000);
  std::uint32_t n = 0;
  for (long k = 0; k < strokes; ++k) {
    // a straight stroke across the mesh, one dab per step
    float x = static_cast<float>(rng.range(20, kGrid - 20)), y = static_cast<float>(rng.range(20, kGrid - 20));
    const float dx = static_cast<float>(rng.range(-4, 4)), dy = static_cast<float>(rng.range(-4, 4));
    const float radius = static_cast<float>(rng.range(6, 24));
    const float strength = (rng.chance(70) ? 1.0f : -1.0f) * (0.2f + 0.1f * static_cast<float>(rng.below(8)));
    for (int d = 0; d < 8; ++d, x += dx, y += dy) s.dab(++n, x, y, radius, strength);
    sum.add(pool.live());
    sum.add(s.digest());
  }
  std::printf("strokes %ld\ndabs %u\nvertices %zu\nsplits %" PRIu64 "\ncollapses %" PRIu64 "\nvisits %" PRIu64 "\n",
              strokes, n, pool.live(), s.splits, s.collapses, s.visits);
}

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt = wl::parse_options(
      argc, argv, "sculpt brush over an iterable element pool (Blender BLI_mempool, sculpt)",
      wl::kBasicAllocs | wl::kRegionLikeAllocs);
  const long strokes = wl::scaled(opt, 100, 1);
  wl::Checksum sum;
  if (opt.alloc == wl::Alloc::Custom) {
    MemPool pool;
    run(pool, strokes, sum);
  } else {
    ListPool pool(opt.alloc);
    run(pool, strokes, sum);
  }
  wl::print_checksum(sum.value());
  return 0;
}
