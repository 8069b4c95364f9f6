// large_region.cpp — best fit over fine-grained lists (LargeBins), immediate
// coalescing (layers/coalesce.hpp).
#include "vam/large_region.hpp"

#include "layers/coalesce.hpp"
#include "layers/os.hpp"
#include "vam/check.hpp"
#include "vam/heap_hooks.hpp"
#include "vam/options.hpp"

namespace alloclab::vam {

namespace {

inline Chunk *next_chunk(Chunk *c) noexcept {
  return reinterpret_cast<Chunk *>(reinterpret_cast<char *>(c) + chunk_size(c));
}
inline std::size_t pages_in(std::size_t bytes) noexcept { return bytes / kPage; }
inline std::uintptr_t up(std::uintptr_t x) noexcept { return (x + kPage - 1) & ~(kPage - 1); }
inline std::uintptr_t down(std::uintptr_t x) noexcept { return x & ~(kPage - 1); }
constexpr std::size_t kRegionChunkBytes = kSegmentBytes - kRegionFirstChunk - kChunkHeader;

}  // namespace

// The pages a sweep would discard in free chunk c: those wholly inside it past
// its list fields, up to the part of the region ever touched, less those
// already discarded. The region's touched end only moves over chunks in use,
// so the value cannot change while c sits in a list.
std::int64_t LargeHeap::dirty_of(const Chunk *c) noexcept {
  if (!(c->head & kChunkDirty)) return 0;
  const char *base = reinterpret_cast<const char *>(c);
  const char *end = base + chunk_size(c);
  const char *touched = segment_of(c)->touched_end;
  if (end > touched) end = touched;
  const std::uintptr_t a = up(reinterpret_cast<std::uintptr_t>(base + kMinChunk));
  const std::uintptr_t b = down(reinterpret_cast<std::uintptr_t>(end));
  if (b <= a) return 0;
  const std::size_t n = pages_in(b - a);
  return n > c->disc_pages ? static_cast<std::int64_t>(n - c->disc_pages) : 0;
}

// The lists plus the exact count of dirty pages on them.
void LargeHeap::insert(Chunk *c) noexcept {
  dirty_.add(dirty_of(c));
  bins_.insert(c, chunk_size(c));
}

void LargeHeap::remove(Chunk *c) noexcept {
  dirty_.add(-dirty_of(c));
  bins_.remove(c);
}

// Best fit: an exact list holds only chunks of one size, so its head is the
// best fit; a coarse list is searched for its smallest fitting chunk; after
// that, any chunk of the next non-empty list fits.
Chunk *LargeHeap::find(std::size_t s) noexcept { return bins_.find(s); }

bool LargeHeap::add_region() noexcept {
  reclaim_abandoned();
  // Its header page and its sentinel's are in use from the start.
  Segment *seg = segs_->map(owner_, SegKind::large, 0, 2);
  if (!seg) return false;
  seg->touched_end = reinterpret_cast<char *>(seg) + kRegionFirstChunk + kMinChunk;
  auto *c = reinterpret_cast<Chunk *>(reinterpret_cast<char *>(seg) + kRegionFirstChunk);
  c->prev_size = 0;
  c->head = kRegionChunkBytes;
  c->disc_pages = 0;
  auto *sentinel = next_chunk(c);
  sentinel->prev_size = kRegionChunkBytes;
  sentinel->head = kChunkInUse;  // size 0, never free: stops coalescing
  seg->prev = nullptr;
  seg->next = regions_;
  if (regions_) regions_->prev = seg;
  regions_ = seg;
  ++nregions_;
  insert(c);
  return true;
}

// Count pages first touched by handing out c.
void LargeHeap::touch(Segment *seg, Chunk *c) noexcept {
  char *end = reinterpret_cast<char *>(c) + chunk_size(c) + kChunkHeader;
  if (end > seg->touched_end) {
    segs_->stats.pages_used(static_cast<std::int64_t>(
        pages_in(up(reinterpret_cast<std::uintptr_t>(end)) -
                 up(reinterpret_cast<std::uintptr_t>(seg->touched_end)))));
    seg->touched_end = end;
  }
}

// Take free chunk c for a request of s bytes (chunk size), splitting off the
// rest when it can stand alone. Returns c, now in use.
Chunk *LargeHeap::take(Chunk *c, std::size_t s) noexcept {
  remove(c);
  const std::size_t cs = chunk_size(c);
  std::size_t disc = c->disc_pages;
  if (cs - s >= kMinChunk) {
    auto *r = reinterpret_cast<Chunk *>(reinterpret_cast<char *>(c) + s);
    r->prev_size = s;
    r->head = (cs - s) | (c->head & (kChunkDirty | kChunkYoung));
    next_chunk(r)->prev_size = cs - s;
    // Discarded pages are spread over the chunk in ways we do not track
    // page by page; charge the taken part first (an estimate, never negative).
    const std::size_t mine = disc < pages_in(s) + 1 ? disc : pages_in(s) + 1;
    const std::size_t rest = disc - mine;
    r->disc_pages = rest < pages_in(cs - s) ? rest : pages_in(cs - s);
    disc = mine;
    c->head = s;
    insert(r);
  }
  segs_->stats.pages_used(static_cast<std::int64_t>(disc));
  c->head = chunk_size(c) | kChunkInUse;
  touch(segment_of(c), c);
  return c;
}

// Whether `next`, the link of a chunk popped from a quick list of n chunks,
// can be the list's next chunk: n > 1, held on a quick list (the link read
// back is 16-aligned and below 2^47: chunk_link_fits).
static bool quick_link_fits(const Chunk *next, int n) noexcept {
  return n > 1 && (next->head & (kChunkInUse | kChunkQuick)) == (kChunkInUse | kChunkQuick);
}

void large_not_an_object(const void *p) noexcept {
  corruption("free(): invalid pointer (not the start of a large object)", p);
}

void chunk_link_broken(const Chunk *c) noexcept {
  corruption("heap corruption: a freed large object's link was overwritten (write after free?)",
             reinterpret_cast<const char *>(c) + kChunkHeader);
}

// Hardening: the link is the payload's first word, which a write after free
// reaches. The list's count says whether c is its last chunk; a link that
// disagrees, or that names no chunk held on a quick list, was written over
// (docs/notes/2026-11-29-git-gap.md), and is not followed.
Chunk *LargeHeap::quick_next(const Chunk *c, int n, const char *what) noexcept {
  const std::uintptr_t v = chunk_link_value(c->next);
  auto *next = reinterpret_cast<Chunk *>(v);
  if (VAM_UNLIKELY(!chunk_link_fits(v) || (next == nullptr ? n != 1 : !quick_link_fits(next, n))))
    corruption(what, reinterpret_cast<const char *>(c) + kChunkHeader);
  return next;
}

// A chunk of at least s bytes from the quick lists, or null: the head of
// s's own list if it is big enough, else of the next list, whose chunks all
// are (so at most a quarter more than asked). Handed out whole, as it was.
Chunk *LargeHeap::quick_take(std::size_t s) noexcept {
  if (quick_bytes_ == 0 || s < kQuickMinChunk || s >= kQuickMaxChunk) return nullptr;
  const int q = quick_list(s);
  for (int i = q; i <= q + 1 && i < kQuickLists; ++i) {
    Chunk *c = quick_[i];
    if (c == nullptr || chunk_size(c) < s) continue;
    quick_[i] = quick_next(c, quick_n_[i], "malloc(): corrupted quick list (write after free?)");
    --quick_n_[i];
    quick_bytes_ -= chunk_size(c);
    c->head &= ~kChunkQuick;
    return c;
  }
  return nullptr;
}

// Hold freed chunk c (s bytes, in use) on its quick list, if there is room.
bool LargeHeap::quick_put(Chunk *c, std::size_t s) noexcept {
  if (s < kQuickMinChunk || s >= kQuickMaxChunk || g_layout.large_quick == 0) return false;
  const int q = quick_list(s);
  // At most a sixteenth of the heap's live large bytes (and kQuickBytes): a
  // heap with few large objects would otherwise hold their memory twice
  // (2 MiB for every heap: +13% peak RSS on the study's smallest programs);
  // but at least kQuickFloor, or such a heap holds no chunk at all.
  const auto live =
      static_cast<std::size_t>(segs_->stats.large_live_bytes() - reclaimed_.large_bytes.get());
  std::size_t budget = live / 16 < kQuickBytes ? live / 16 : kQuickBytes;
  if (budget < kQuickFloor) budget = kQuickFloor;
  if (quick_n_[q] >= kQuickPerList || quick_bytes_ + s > budget) return false;
  c->head |= kChunkQuick;
  c->next = chunk_link_encode(quick_[q]);
  quick_[q] = c;
  ++quick_n_[q];
  quick_bytes_ += s;
  return true;
}

// Every quick chunk through the coalescing free (its statistics were
// settled when it was put there: policy -2).
void LargeHeap::quick_flush() noexcept {
  if (quick_bytes_ == 0) return;
  for (int i = 0; i < kQuickLists; ++i) {
    int n = quick_n_[i];
    for (Chunk *c = quick_[i], *next; c != nullptr; c = next, --n) {
      next = quick_next(c, n, "corrupted quick list (write after free?)");
      c->head &= ~kChunkQuick;
      free(chunk_payload(c), -2);
    }
    quick_[i] = nullptr;
    quick_n_[i] = 0;
  }
  quick_bytes_ = 0;
}

// The chunk size that holds an n-byte payload (n <= region_capacity()).
static std::size_t chunk_for(std::size_t n) noexcept {
  const std::size_t s = (n + kChunkHeader + 15) & ~std::size_t{15};
  return s < kMinChunk ? kMinChunk : s;
}

void *LargeHeap::alloc_quick(std::size_t n) noexcept {
  if (n > region_capacity()) return nullptr;
  Chunk *q = quick_take(chunk_for(n));
  if (!q) return nullptr;
  segs_->stats.large(static_cast<std::int64_t>(chunk_size(q) - kChunkHeader), 1);
  return chunk_payload(q);
}

// Whether carving s bytes from free chunk c puts pages into use: pages it
// discarded, which come back as they are written, or pages the heap never
// touched (past its region's touched end).
bool LargeHeap::brings_pages(const Chunk *c, std::size_t s) noexcept {
  const std::size_t cs = chunk_size(c);
  const std::size_t used = cs - s >= kMinChunk ? s : cs;  // take() hands out the whole chunk otherwise
  return c->disc_pages != 0 ||
         reinterpret_cast<const char *>(c) + used + kChunkHeader > segment_of(c)->touched_end;
}

// A free chunk of at least s bytes, mapping a region when none is left (null:
// out of memory). When the best fit would put pages into use, the chunks the
// quick lists hold go through the coalescing free first and the search is
// made again: held whole, they are memory the heap already uses that a
// request of another size cannot reach, and the heap grew around them
// (gp_mix's peak: 27 pages more than without the lists, docs/results.md). A
// chunk is flushed at most once per time it was put on a list, so this costs
// at most what the coalescing free would have cost at its free. The heap's
// discard count learns of the flushed chunks' pages at its next free.
inline Chunk *LargeHeap::find_or_grow(std::size_t s) noexcept {
  Chunk *c = find(s);
  if (VAM_LIKELY(c != nullptr) && (quick_bytes_ == 0 || !brings_pages(c, s))) return c;
  return grow(s, c);
}

// find_or_grow's other half: c, the best fit (or null), would grow the heap.
Chunk *LargeHeap::grow(std::size_t s, Chunk *c) noexcept {
  if (quick_bytes_ != 0) {
    quick_flush();
    c = find(s);
  }
  if (c != nullptr || !add_region()) return c;
  return find(s);
}

void *LargeHeap::alloc_carved(std::size_t n) noexcept {
  if (n > region_capacity()) return nullptr;
  const std::size_t s = chunk_for(n);
  Chunk *c = find_or_grow(s);
  if (!c) return nullptr;
  c = take(c, s);
  segs_->stats.large(static_cast<std::int64_t>(chunk_size(c) - kChunkHeader), 1);
  return chunk_payload(c);
}

// Give the tail of in-use chunk c beyond `keep` bytes back (coalescing it).
void LargeHeap::release_tail(Chunk *c, std::size_t keep) noexcept {
  const std::size_t cs = chunk_size(c);
  if (cs - keep < kMinChunk) return;
  auto *t = reinterpret_cast<Chunk *>(reinterpret_cast<char *>(c) + keep);
  t->prev_size = keep;
  t->head = (cs - keep) | kChunkInUse;
  next_chunk(t)->prev_size = cs - keep;
  c->head = keep | kChunkInUse;
  free(chunk_payload(t), -1);
}

void *LargeHeap::alloc_aligned(std::size_t n, std::size_t align) noexcept {
  std::size_t s = (n + kChunkHeader + 15) & ~std::size_t{15};
  if (s < kMinChunk) s = kMinChunk;
  const std::size_t total = s + align + kMinChunk;
  if (total - kChunkHeader > region_capacity()) return nullptr;
  Chunk *c = find_or_grow(total);
  if (!c) return nullptr;
  c = take(c, total);
  auto p = reinterpret_cast<std::uintptr_t>(chunk_payload(c));
  if (p & (align - 1)) {
    // Move forward to an aligned payload, leaving a free chunk in front.
    std::uintptr_t q = (p + kMinChunk + align - 1) & ~(align - 1);
    const std::size_t front = q - p;
    auto *nc = chunk_of_payload(reinterpret_cast<void *>(q));
    const std::size_t ns = chunk_size(c) - front;
    nc->prev_size = front;
    nc->head = ns | kChunkInUse;
    next_chunk(nc)->prev_size = ns;
    c->head = front;          // free; its predecessor is in use (no two free neighbours)
    c->disc_pages = 0;
    insert(c);
    c = nc;
  }
  // Counted once its tail is given back: a free subtracts the size it
  // finds then (counted before, each aligned object left its tail's bytes
  // counted live after its free, without end).
  release_tail(c, s);
  segs_->stats.large(static_cast<std::int64_t>(chunk_size(c) - kChunkHeader), 1);
  return chunk_payload(c);
}

bool LargeHeap::resize(void *p, std::size_t n, std::size_t want) noexcept {
  Chunk *c = chunk_of_payload(p);
  const std::size_t cs = chunk_size(c);
  std::size_t s = (n + kChunkHeader + 15) & ~std::size_t{15};
  if (s < kMinChunk) s = kMinChunk;
  if (s > cs) {
    Chunk *nx = next_chunk(c);
    if (nx->head & kChunkInUse) return false;
    const std::size_t total = cs + chunk_size(nx);
    if (total < s) return false;
    remove(nx);
    segs_->stats.pages_used(static_cast<std::int64_t>(nx->disc_pages));
    c->head = total | kChunkInUse;
    next_chunk(c)->prev_size = total;
    touch(segment_of(c), c);
    const std::size_t w = (want + kChunkHeader + 15) & ~std::size_t{15};
    if (w > s) s = w < total ? w : total;
  }
  release_tail(c, s);
  segs_->stats.large(static_cast<std::int64_t>(chunk_size(c)) - static_cast<std::int64_t>(cs), 0);
  return true;
}

std::size_t LargeHeap::discard_range(Segment *seg, char *from, char *to) noexcept {
  if (to > seg->touched_end) to = seg->touched_end;
  const std::uintptr_t a = up(reinterpret_cast<std::uintptr_t>(from));
  const std::uintptr_t b = down(reinterpret_cast<std::uintptr_t>(to));
  if (b <= a) return 0;
  segs_->discard(seg, reinterpret_cast<void *>(a), b - a);
  return pages_in(b - a);
}

// The chunk tags as coalesce() reads them. Every chunk records its
// predecessor's size (0 for a region's first), so a free predecessor is
// found from its own header. A chunk leaving its list hands its discarded-page
// count and its dirty/young marks to the merged chunk.
struct LargeHeap::Tags {
  using Block = Chunk;
  LargeHeap *heap;
  std::size_t disc = 0;   // pages already discarded inside the merged neighbours
  std::size_t flags = 0;  // their kChunkDirty | kChunkYoung
  static Chunk *after(Chunk *c, std::size_t s) noexcept {
    return reinterpret_cast<Chunk *>(reinterpret_cast<char *>(c) + s);
  }
  static bool is_free(Chunk *n) noexcept { return !(n->head & kChunkInUse); }
  static std::size_t size(Chunk *n) noexcept { return chunk_size(n); }
  static void keep(Chunk *) noexcept {}  // its prev_size is written once the merge is done
  static Chunk *free_before(Chunk *c, std::size_t *ps) noexcept {
    if (c->prev_size == 0) return nullptr;
    auto *pv = reinterpret_cast<Chunk *>(reinterpret_cast<char *>(c) - c->prev_size);
    if (pv->head & kChunkInUse) return nullptr;
    *ps = c->prev_size;
    return pv;
  }
  void take(Chunk *x) noexcept {
    heap->remove(x);
    disc += x->disc_pages;
    flags |= x->head & (kChunkDirty | kChunkYoung);
  }
  // h's header is now inside a free chunk: its size goes, so that a second
  // free of its object fails the tag check (free) rather than pass on
  // stale tags and hand the merged chunk out over a live neighbour.
  static void bury(Chunk *h) noexcept { h->head = 0; }
};

namespace {

// A large free or realloc whose pointer failed the tag check: the region's
// chunks are walked from its first, each tag against the one before, to
// say what happened. p inside a free chunk (its own merged into it, or one
// of the quick lists'): a double free. p inside a chunk in use, or beyond
// the region's chunks: not the start of an object. A tag that breaks the
// chain before p's chunk, or p's chunk reached with a broken tag: heap
// corruption near that tag, typically an overflow of the object before it.
[[noreturn]] void large_misuse(const void *p, bool realloc) noexcept {
  const char *op = realloc ? "realloc()" : "free()";
  const auto *target = static_cast<const char *>(p) - kChunkHeader;
  Segment *seg = segment_of(target);
  const char *end = reinterpret_cast<char *>(seg) + kSegmentBytes;
  std::size_t prev = 0;
  for (auto *c = reinterpret_cast<const Chunk *>(reinterpret_cast<char *>(seg) + kRegionFirstChunk);;) {
    const auto *at = reinterpret_cast<const char *>(c);
    if (c->prev_size != prev) corruption_near(op, at);
    const std::size_t s = chunk_size(c);
    if (s == 0 && c->head == kChunkInUse && at == reinterpret_cast<char *>(seg) + kRegionFirstChunk + kRegionChunkBytes)
      break;  // the sentinel: p is past every chunk
    if (s < kMinChunk || s > static_cast<std::size_t>(end - at) - kChunkHeader) corruption_near(op, at);
    if (target < at + s && target >= at) {
      const bool is_free = (c->head & (kChunkInUse | kChunkQuick)) != kChunkInUse;
      if (target == at && !is_free) corruption_near(op, at + s);  // its own tags fit; the next one's do not
      if (is_free)
        corruption(realloc ? "realloc(): double free / realloc of a freed object" : "free(): double free detected (large object)", p);
      break;
    }
    prev = s;
    c = reinterpret_cast<const Chunk *>(at + s);
  }
  corruption(realloc ? "realloc(): invalid pointer (not the start of a large object)"
                     : "free(): invalid pointer (not the start of a large object)",
             p);
}

}  // namespace

void LargeHeap::check_live_failed(const void *p, bool own) noexcept {
  if (own && !tags_fit(chunk_of_payload(p))) large_misuse(p, true);
  corruption("realloc(): double free / realloc of a freed object", p);
}

// policy -1: internal (splitting), no discard, no live accounting; -2: a
// quick chunk going through at last (live accounting done, discard as the
// option says).
std::size_t LargeHeap::free(void *p, int policy) noexcept {
  Chunk *c = chunk_of_payload(p);
  Segment *seg = segment_of(c);
  std::size_t s = chunk_size(c);
  // Hardening (every build): the boundary tags say whether p is an object
  // in use (tags_fit). Free chunks have no in-use bit: a second free of the
  // same object stops here, and one whose chunk has since merged fails the
  // tag check on the size its merge buried; large_misuse says which.
  if (VAM_UNLIKELY(!tags_fit(c))) large_misuse(p, false);
  if (VAM_UNLIKELY((c->head & (kChunkInUse | kChunkQuick)) != kChunkInUse))
    corruption("free(): double free detected (large object)", p);
  if (policy >= 0) {
    segs_->stats.large(-static_cast<std::int64_t>(s - kChunkHeader), -1);
    if (quick_put(c, s)) return 0;
  }
  if (policy == -2) policy = options().discard;
  char *orig_start = reinterpret_cast<char *>(c);
  char *orig_end = orig_start + s;
  Tags t{this};
  c = coalesce(t, c, s);
  const std::size_t disc = t.disc;
  c->head = s | t.flags;
  c->disc_pages = disc;
  next_chunk(c)->prev_size = s;

  // A region that is wholly free again goes back to the OS, keeping one.
  if (s == kRegionChunkBytes && nregions_ > 1) {
    if (seg->prev) seg->prev->next = seg->next;
    else regions_ = seg->next;
    if (seg->next) seg->next->prev = seg->prev;
    --nregions_;
    const std::size_t touched =
        pages_in(up(reinterpret_cast<std::uintptr_t>(seg->touched_end)) -
                 reinterpret_cast<std::uintptr_t>(seg)) + 1;
    segs_->unmap(seg, static_cast<std::int64_t>(touched > disc ? touched - disc : 0));
    return 0;
  }

  std::size_t newly_dirty = 0;
  char *interior = reinterpret_cast<char *>(c) + kMinChunk;
  char *from = orig_start > interior ? orig_start : interior;
  if (policy == int(DiscardPolicy::eager)) {
    // Paper §3.6: discard the pages wholly inside the freed object.
    const std::size_t n = discard_range(seg, from, orig_end);
    if (n) {
      segs_->stats.pages_discarded(static_cast<std::int64_t>(n));
      c->disc_pages += n;
    }
  } else if (policy == int(DiscardPolicy::delayed)) {
    const auto a = up(reinterpret_cast<std::uintptr_t>(from));
    const auto b = down(reinterpret_cast<std::uintptr_t>(orig_end));
    if (b > a) {
      newly_dirty = pages_in(b - a);
      c->head |= kChunkDirty | kChunkYoung;
    }
  }
  const std::size_t cap = pages_in(s);
  if (c->disc_pages > cap) c->disc_pages = cap;
  insert(c);
  return newly_dirty;
}

void LargeHeap::sweep(bool aging) noexcept {
  if (!aging) quick_flush();
  bins_.for_each([&](Chunk *c) {
    if (!(c->head & kChunkDirty)) return;
    if (aging && (c->head & kChunkYoung)) {
      c->head &= ~kChunkYoung;  // still dirty: goes at the next aging sweep unless reused
      return;
    }
    dirty_.add(-dirty_of(c));
    c->head &= ~(kChunkDirty | kChunkYoung);
    char *from = reinterpret_cast<char *>(c) + kMinChunk;
    const std::size_t n = discard_range(segment_of(c), from, reinterpret_cast<char *>(c) + chunk_size(c));
    const std::size_t fresh = n > c->disc_pages ? n - c->disc_pages : 0;
    segs_->stats.pages_discarded(static_cast<std::int64_t>(fresh));
    if (n > c->disc_pages) c->disc_pages = n;
  });
  if (!aging) dirty_.v.store(0, std::memory_order_relaxed);  // no free chunk is marked dirty any more
}

void LargeHeap::free_misuse(const void *p) noexcept { large_misuse(p, false); }

void LargeHeap::check_in_use(const void *p) noexcept {
  const Chunk *c = chunk_of_payload(p);
  if (VAM_UNLIKELY(!tags_fit(c))) large_misuse(p, false);
  if (VAM_UNLIKELY((c->head & (kChunkInUse | kChunkQuick)) != kChunkInUse))
    corruption("free(): double free detected (large object)", p);
}

// The owner's free (policy -1's path: no quick list, no discard by policy),
// then the pages wholly inside the merged chunk, past its list fields and
// below the region's touched end, that overlap p's chunk. The merged
// neighbours' pages that p's do not share were free before: a sweep gives
// them back if they are still dirty. A page p's chunk shares with a
// neighbour was never discarded while p lived (a discard covers pages
// wholly inside one free chunk or, remote_reclaim.cpp's give_back_inside,
// inside one object), so it is counted once.
void LargeHeap::reclaim_free(void *p, std::uintptr_t *from, std::uintptr_t *to) noexcept {
  check_in_use(p);
  Chunk *c = chunk_of_payload(p);
  const Segment *seg = segment_of(c);
  std::size_t s = chunk_size(c);
  reclaimed_.large_bytes.add(static_cast<std::int64_t>(s - kChunkHeader));
  reclaimed_.large_objects.add(1);
  const auto orig_start = reinterpret_cast<std::uintptr_t>(c);
  const std::uintptr_t orig_end = orig_start + s;
  Tags t{this};
  c = coalesce(t, c, s);
  const auto base = reinterpret_cast<std::uintptr_t>(c);
  std::uintptr_t end = base + s;
  const auto touched = reinterpret_cast<std::uintptr_t>(seg->touched_end);
  if (end > touched) end = touched;
  std::uintptr_t a = up(base + kMinChunk);
  if (down(orig_start) > a) a = down(orig_start);
  std::uintptr_t b = down(end);
  if (up(orig_end) < b) b = up(orig_end);
  std::size_t disc = t.disc;
  if (b > a) {
    reclaimed_.pages_discarded.add(static_cast<std::int64_t>(pages_in(b - a)));
    disc += pages_in(b - a);
  }
  *from = a;
  *to = b;
  c->head = s | t.flags;
  const std::size_t cap = pages_in(s);
  c->disc_pages = disc < cap ? disc : cap;
  next_chunk(c)->prev_size = s;
  insert(c);
}

void LargeHeap::reclaim_discard(std::uintptr_t from, std::uintptr_t to) noexcept {
  Segment *seg = segment_of(reinterpret_cast<void *>(from));
  if (load_relaxed(seg->hugepages)) {  // as HeapSegments::discard: the kernel would fill them back
    os::advise_hugepages(seg, kSegmentBytes, false);
    store_relaxed(seg->hugepages, 0u);
    reclaimed_.hugepage_segments.add(1);
  }
  os::discard(reinterpret_cast<void *>(from), to - from);
  reclaimed_.discard_calls.add(1);
}

}  // namespace alloclab::vam
