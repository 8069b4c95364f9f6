// large_region.hpp — large objects (1 KiB .. VAM_LARGE_MAX) in shared regions
// (paper §3.1 "Large Objects").
//
// Objects of every large size share 4 MiB regions, carry a 16-byte boundary
// tag, and are coalesced with free neighbours immediately on free, which
// keeps external fragmentation low even with thousands of size classes.
// Free chunks sit in fine-grained segregated lists: exact lists 16 bytes
// apart below 32 KiB (so a hit needs no search inside the list), then eight
// lists per power of two, best fit inside those. The paper scans its
// free-list table linearly and names a hierarchical index as the fix for
// long scans; the lists are a FitBins (layers/fit_bins.hpp, the index a
// reap's heap uses too) whose bitmap of non-empty lists makes finding the
// first fitting list a few word scans.
//
// A region belongs to one heap. Its chunks, lists and counts are changed
// only under the heap's large lock (LargeHeap::lock): by the heap's owner,
// or by another thread that frees the heap's large objects for an owner
// that does not (reclaim_free, remote_reclaim.cpp). Remote frees otherwise
// go through the heap's remote list first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/fit_bins.hpp"
#include "layers/owner_lock.hpp"
#include "vam/check.hpp"
#include "vam/free_list.hpp"
#include "vam/heap_segments.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

struct Chunk {
  std::size_t prev_size;  // size of the chunk just before (0 for the first)
  std::size_t head;       // size | flags
  // Only while free:
  Chunk *next;
  Chunk *prev;
  std::size_t disc_pages;  // pages inside this free chunk already discarded
};

inline constexpr std::size_t kChunkHeader = 16;
inline constexpr std::size_t kMinChunk = 48;          // header + next/prev/disc_pages
inline constexpr std::size_t kChunkInUse = 1;
inline constexpr std::size_t kChunkDirty = 2;         // freed, pages not yet discarded
inline constexpr std::size_t kChunkYoung = 4;         // dirty pages freed since the last aging sweep
inline constexpr std::size_t kChunkQuick = 8;         // freed, held whole on a quick list (in use to its neighbours)
inline constexpr std::size_t kChunkFlags = 15;
inline constexpr std::size_t kRegionFirstChunk = 256; // after the Segment header
inline constexpr int kExactLargeBins = 2048;          // chunk sizes < 32 KiB
inline constexpr int kLargeBins = kExactLargeBins + 8 * 8;  // 8 per power of two, up to 8 MiB

inline std::size_t chunk_size(const Chunk *c) noexcept { return c->head & ~kChunkFlags; }
inline Chunk *chunk_of_payload(const void *p) noexcept {
  return reinterpret_cast<Chunk *>(reinterpret_cast<std::uintptr_t>(p) - kChunkHeader);
}

// A large object another thread has freed, from that free until its owner
// applies it (drain_remote) or a reclaim frees it (remote_reclaim.cpp): its
// second word holds a mark keyed by its address, the one remote_free_large
// writes, or, once a reclaim has given back the pages inside it, that
// reclaim's (give_back_inside). Nothing else of the heap reads or writes a
// live object's second word, and program data equals a mark once in 2^64
// (g_free_key is secret), so a marked object is a freed one: the owner's
// free or realloc of it, or a second remote free, is a double free, caught
// before the object can be handed out again. Both drains clear the mark
// before the free they apply, so that no mark outlives its object.
inline std::uintptr_t remote_mark_base(const void *p) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) ^ g_free_key) * kLinkMix;
}
inline constexpr std::uintptr_t kRemotePendingMark = 5;  // remote_free_large's
inline constexpr std::uintptr_t kRemoteInnerMark = 3;    // a reclaim's: its inside given back
inline std::uintptr_t *remote_mark_word(void *p) noexcept { return static_cast<std::uintptr_t *>(p) + 1; }
inline bool large_freed_remotely(const void *p) noexcept {
  const std::uintptr_t d = static_cast<const std::uintptr_t *>(p)[1] - remote_mark_base(p);
  return d == kRemotePendingMark || d == kRemoteInnerMark;
}
// Whether p can be a large object's start in its region: 16-aligned and
// past the region's header and its first chunk's tag. Every other check of
// a large pointer reads the tag 16 bytes before it, which for a pointer
// below lies in the header, or before the segment in memory that may not
// be mapped: the callers test this first (vam.cpp: free, realloc,
// malloc_usable_size).
inline bool large_start_plausible(const void *p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return (a & 15) == 0 && (a & (kSegmentBytes - 1)) >= kRegionFirstChunk + kChunkHeader;
}
// free's abort for a pointer that fails it; not declared [[noreturn]], so
// that the call stays a tail jump (large_region.cpp).
void large_not_an_object(const void *p) noexcept;
inline void *chunk_payload(Chunk *c) noexcept { return reinterpret_cast<char *>(c) + kChunkHeader; }

// A free chunk's links (next, prev) and a quick chunk's (next) are the
// first words of its payload, where a write after free or an overflow of
// the chunk before lands. They are stored as a block's links are
// (free_list.hpp), with a 64-bit constant: (link ^ g_free_key) * kChunkMix.
// Read back, a link must be null or a 16-aligned address below 2^47: a
// change of any one byte of the stored word moves the value read by at
// least 2^47 (static_assert), so it fails that test, and a change of more
// bytes passes it about once in 2^21. A link that fails aborts before it is
// followed: a link written over used to be followed into memory no chunk
// is (a fault) or into the middle of an object.
inline constexpr std::uint64_t kChunkUnmix = 0x94d0'49bb'1331'11ebull;
inline constexpr std::uint64_t kChunkMix = link_inverse(kChunkUnmix);
static_assert(kChunkMix * kChunkUnmix == 1);
static_assert(one_byte_changes_move(kChunkUnmix, 47));
inline constexpr std::uintptr_t kChunkLinkBad = ~((std::uintptr_t{1} << 47) - 1) | 15;
inline Chunk *chunk_link_encode(const Chunk *c) noexcept {
  return reinterpret_cast<Chunk *>((reinterpret_cast<std::uintptr_t>(c) ^ g_free_key) * kChunkMix);
}
// The stored link `w`, read back (check it with chunk_link_fits).
inline std::uintptr_t chunk_link_value(const Chunk *w) noexcept {
  return (reinterpret_cast<std::uintptr_t>(w) * kChunkUnmix) ^ g_free_key;
}
inline bool chunk_link_fits(std::uintptr_t v) noexcept { return (v & kChunkLinkBad) == 0; }
// Aborts: free chunk c's link was written over (large_region.cpp).
[[noreturn]] void chunk_link_broken(const Chunk *c) noexcept;
inline Chunk *chunk_link_decode(const Chunk *c, const Chunk *w) noexcept {
  const std::uintptr_t v = chunk_link_value(w);
  if (VAM_UNLIKELY(!chunk_link_fits(v))) chunk_link_broken(c);
  return reinterpret_cast<Chunk *>(v);
}

// How FitBins reaches a free chunk's size and links: encoded, and checked
// when read.
struct ChunkLinks {
  using Node = Chunk;
  static std::size_t size(Chunk *c) noexcept { return chunk_size(c); }
  static Chunk *next(Chunk *c) noexcept { return chunk_link_decode(c, c->next); }
  static void set_links(Chunk *c, Chunk *n, Chunk *p) noexcept {
    c->next = chunk_link_encode(n);
    c->prev = chunk_link_encode(p);
  }
  static void get_links(Chunk *c, Chunk **n, Chunk **p) noexcept {
    *n = chunk_link_decode(c, c->next);
    *p = chunk_link_decode(c, c->prev);
  }
  static void set_next(Chunk *c, Chunk *n) noexcept { c->next = chunk_link_encode(n); }
  static void set_prev(Chunk *c, Chunk *p) noexcept { c->prev = chunk_link_encode(p); }
};

// Quick lists: freed chunks of up to kQuickMaxChunk bytes held whole, not
// coalesced, in lists eight per power of two, for the next request their
// size serves (LargeHeap::quick_take). At most kQuickPerList a list and, in
// all, a sixteenth of the heap's live large bytes and kQuickBytes, but never
// less than kQuickFloor (one chunk of the largest quick size); they go
// through the coalescing free at every full sweep (vam_collect, thread exit,
// a heap over its discard budget) and whenever a request would otherwise put
// pages into use (LargeHeap::find_or_grow): they never make the heap grow.
inline constexpr std::size_t kQuickMinChunk = 1024;
inline constexpr std::size_t kQuickMaxChunk = std::size_t{64} << 10;
inline constexpr int kQuickLists = 6 * 8;  // 1 KiB .. 64 KiB
inline constexpr int kQuickPerList = 4;
inline constexpr std::size_t kQuickBytes = std::size_t{2} << 20;
// The floor lets a heap with few large objects hold a freed buffer whole:
// without it `git log -p` carved 83,457 of its 174,719 large mallocs anew
// (zlib's 7160-byte inflate state, once per object read, among them)
// (docs/notes/2026-11-29-git-gap.md). It costs at most 64 KiB of dirty
// pages more per heap.
inline constexpr std::size_t kQuickFloor = kQuickMaxChunk;
constexpr int quick_list(std::size_t s) noexcept {  // kQuickMinChunk <= s < kQuickMaxChunk
  const int log = 63 - __builtin_clzll(s);
  return (log - 10) * 8 + static_cast<int>((s >> (log - 3)) & 7);
}
static_assert(quick_list(1024) == 0 && quick_list(1152) == 1 && quick_list(2048) == 8 &&
              quick_list(kQuickMaxChunk - 16) == kQuickLists - 1);

// The free lists. Chunk sizes are multiples of 16 from kMinChunk up to a
// whole region's chunk, which stays below the last list's power of two, so
// no size needs clamping into the last list.
using LargeBins = FitBins<ChunkLinks, BinGeometry</*grain*/ 16, /*smallest*/ 0, kExactLargeBins,
                                                  /*per power of two*/ 8, kLargeBins, Fit::best,
                                                  /*budget*/ 0, kSegmentBytes>>;

struct Heap;

// What reclaim_free did to the owner's statistics. The owner writes its
// own counters with no lock (counters.hpp), so these are kept apart, written
// under the large lock, and every reader adds them in (stats.cpp,
// heap_holds_nothing, quick_put).
struct ReclaimCounts {
  Counter large_bytes;    // usable bytes of the large objects freed
  Counter large_objects;  // and how many
  Counter pages_discarded;
  Counter discard_calls;
  Counter hugepage_segments;  // regions whose huge-page advice a discard took back
};

class LargeHeap {
 public:
  // The large lock (layers/owner_lock.hpp). Every call below that changes
  // or reads the lists or the tags of free chunks is made by the heap's
  // owner inside it (heap.cpp, vam.cpp, discard.cpp, abandon.cpp:
  // OwnerGuard): two plain stores and a load, on a line its large calls
  // read anyway; finding it claimed (a reclaim is freeing into the heap,
  // for a bounded time), the owner waits. A reclaim only tries to claim it.
  // Taken inside the calls themselves instead, it cost more instructions
  // (replace_sizes: 224 M against 216 M; 208 M with no lock).
  OwnerLock &lock() noexcept { return lock_; }

  void init(Heap *owner, HeapSegments *segments) noexcept {
    owner_ = owner;
    segs_ = segments;
  }
  // Payload of at least n bytes, 16-byte aligned: alloc_quick from a chunk
  // held on a quick list (else null), alloc_carved best fit from the free
  // lists or a new region (else null: out of memory). A malloc tries both in
  // turn (large_alloc, heap.cpp).
  void *alloc_quick(std::size_t n) noexcept;
  void *alloc_carved(std::size_t n) noexcept;
  // Payload of at least n bytes aligned to `align` (a power of two > 16).
  void *alloc_aligned(std::size_t n, std::size_t align) noexcept;
  // Free a payload from a region this heap owns. Returns pages newly dirty.
  std::size_t free(void *p, int discard_policy) noexcept;
  // Grow (into a free successor) or shrink the object at p in place to hold
  // n bytes. A growth keeps up to `want` bytes (>= n; realloc's slack) of
  // what the successor gives, so that a buffer grown a few bytes at a time
  // is resized once per slack, not at every step. False if it cannot; the
  // object is then unchanged.
  bool resize(void *p, std::size_t n, std::size_t want) noexcept;
  // Discard the pages of every free chunk still marked dirty. `aging`: only
  // those of chunks already dirty at the previous aging sweep; the others
  // stay dirty, no longer young (discard.cpp, heap_age).
  void sweep(bool aging = false) noexcept;
  // Every chunk on the quick lists (above) through the coalescing free; a
  // full sweep does it first.
  void quick_flush() noexcept;
  // Pages inside free chunks marked dirty that are not known to be
  // discarded: what a sweep would give back. Kept exact as chunks enter and
  // leave the free lists, so a dirty chunk handed out again stops counting
  // (the heap's discard threshold measures free resident memory, not the
  // bytes freed since the last sweep).
  std::int64_t dirty_pages() const noexcept { return dirty_.get(); }
  // Free large object p of this heap for its owner, from another thread
  // holding the lock (remote_reclaim.cpp): the owner's free, checks and
  // merge included. The pages wholly inside the merged chunk that overlap
  // p's, [*from, *to) (empty when from >= to), are counted as discarded:
  // the caller gives them back with reclaim_discard before it unlocks,
  // whatever the discard policy, in as few calls as the ranges of its
  // frees merge into. Nothing goes to a quick list and no region is
  // unmapped (both touch what the owner changes without the lock); the
  // statistics go to reclaimed().
  void reclaim_free(void *p, std::uintptr_t *from, std::uintptr_t *to) noexcept;
  // Give back whole pages [from, to) inside one region, under the lock.
  void reclaim_discard(std::uintptr_t from, std::uintptr_t to) noexcept;
  // Aborts, as free would, unless p is a large object in use whose tags
  // fit: what a reclaim checks before it reads p's link.
  static void check_in_use(const void *p) noexcept;
  // Aborts, naming the cause as free's failed check does (a walk of p's
  // region), for a p whose own tag says it is no object in use.
  [[noreturn]] static void free_misuse(const void *p) noexcept;
  // Another thread's free of p (remote_free_large), before it writes into p
  // or counts p's size towards a reclaim, which gives back the pages that
  // size spans: p's own tag in use and not quick, and the size it holds
  // repeated by the next chunk. An interior pointer, whose "tag" is the
  // program's data, fails here, however its flag bits read. The tag of the
  // chunk before is not read: its owner may be merging it meanwhile; p's
  // own size and the next chunk's copy of it stay while p lives.
  static void check_remote_free(const void *p) noexcept {
    const Chunk *c = chunk_of_payload(p);
    if (VAM_UNLIKELY((c->head & (kChunkInUse | kChunkQuick)) != kChunkInUse || !size_tags_fit(c)))
      free_misuse(p);
  }
  const ReclaimCounts &reclaimed() const noexcept { return reclaimed_; }
  // Largest request a region can take.
  static constexpr std::size_t region_capacity() noexcept {
    return kSegmentBytes - kRegionFirstChunk - 2 * kChunkHeader - kMinChunk;
  }
  static std::size_t usable(const void *p) noexcept {
    return chunk_size(chunk_of_payload(p)) - kChunkHeader;
  }
  // realloc's test that p is a large object in use: its tags as free checks
  // them (`own`: p is of the calling thread's heap; else only its in-use
  // bits are read, which the owner does not write while it lives). Aborts,
  // naming the cause, if it is not; else returns p's usable size. Of the
  // tags, it reads what realloc itself relies on: p's own size and the next
  // chunk's copy of it (size_tags_fit). The tag of the chunk before, which
  // only a merge reads, is checked by free, and a realloc that moves frees
  // p; so is every tag when this test fails, to name the cause. No lock:
  // a reclaim (reclaim_free) writes neither a live chunk's head nor the
  // next chunk's copy of its size.
  static std::size_t check_live(const void *p, bool own) noexcept {
    const Chunk *c = chunk_of_payload(p);
    const std::size_t head = c->head;
    if (VAM_LIKELY((head & (kChunkInUse | kChunkQuick)) == kChunkInUse && (!own || size_tags_fit(c)) &&
                   !large_freed_remotely(p)))
      return (head & ~kChunkFlags) - kChunkHeader;
    check_live_failed(p, own);
  }

 private:
  void insert(Chunk *c) noexcept;
  void remove(Chunk *c) noexcept;
  Chunk *find(std::size_t s) noexcept;
  Chunk *find_or_grow(std::size_t s) noexcept;
  Chunk *grow(std::size_t s, Chunk *c) noexcept;
  static bool brings_pages(const Chunk *c, std::size_t s) noexcept;
  bool add_region() noexcept;
  Chunk *take(Chunk *c, std::size_t s) noexcept;
  Chunk *quick_take(std::size_t s) noexcept;
  // The next chunk after c, the first of n on a quick list, checked
  // (`what` names the call in the abort).
  static Chunk *quick_next(const Chunk *c, int n, const char *what) noexcept;
  bool quick_put(Chunk *c, std::size_t s) noexcept;
  void release_tail(Chunk *c, std::size_t keep) noexcept;
  void touch(Segment *seg, Chunk *c) noexcept;
  std::size_t discard_range(Segment *seg, char *from, char *to) noexcept;

  static std::int64_t dirty_of(const Chunk *c) noexcept;
  // Whether c's tags are those of a chunk: its payload 16-aligned and inside
  // the region, its size repeated by the next chunk, and the size of the
  // chunk before it (0 for the region's first) that chunk's own. A double
  // free of an object whose chunk merged into a neighbour fails here (its
  // buried size is 0), and so does an overflow into a neighbour's tag.
  static bool tags_fit(const Chunk *c) noexcept {
    if (!size_tags_fit(c)) return false;
    const auto off = reinterpret_cast<std::uintptr_t>(c) & (kSegmentBytes - 1);
    const std::size_t ps = c->prev_size;
    if (ps == 0) return off == kRegionFirstChunk;
    return ps <= off - kRegionFirstChunk &&
           chunk_size(reinterpret_cast<const Chunk *>(reinterpret_cast<const char *>(c) - ps)) == ps;
  }
  // The first half: c aligned and inside the region, and its size a chunk's
  // that the next chunk repeats.
  static bool size_tags_fit(const Chunk *c) noexcept {
    const auto off = reinterpret_cast<std::uintptr_t>(c) & (kSegmentBytes - 1);
    const std::size_t s = chunk_size(c);
    return (reinterpret_cast<std::uintptr_t>(c) & 15) == 0 && off >= kRegionFirstChunk && s >= kMinChunk &&
           s <= kSegmentBytes - off &&
           reinterpret_cast<const Chunk *>(reinterpret_cast<const char *>(c) + s)->prev_size == s;
  }
  // check_live's failures: aborts, naming the cause.
  [[noreturn]] static void check_live_failed(const void *p, bool own) noexcept;

  struct Tags;  // how coalesce() reads and accounts for chunk tags (large_region.cpp)

  // What a free or malloc through the quick lists reads, first and
  // together: in a program whose own data evicts the heap between two such
  // calls, each line read is a miss (sqlite3: five a pair, docs/results.md).
  // segs_ for the statistics, dirty_ for the heap's discard count, the
  // lists' bytes and lengths.
  HeapSegments *segs_ = nullptr;  // the owner's: regions come and go, pages are discarded, through it
  OwnerLock lock_;
  Counter dirty_;  // sum of dirty_of() over the free lists (read without the lock: dirty_total)
  std::size_t quick_bytes_ = 0;
  std::uint8_t quick_n_[kQuickLists] = {};
  Chunk *quick_[kQuickLists] = {};
  Heap *owner_ = nullptr;
  Segment *regions_ = nullptr;
  std::size_t nregions_ = 0;
  LargeBins bins_;
  ReclaimCounts reclaimed_;  // written under the lock by reclaim_free only
};

}  // namespace alloclab::vam
