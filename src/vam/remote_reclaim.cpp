// remote_reclaim.cpp — the remote frees an idle owner never drains, given
// back to the system without it (remote.hpp, "reclaim").
//
// A thread that allocates, hands its objects to another thread and then
// waits (blocked, never calling the allocator again) would keep every
// object the other thread frees resident: the frees wait on its remote
// stack for its next slow path. So the thread that pushes them does the
// part of the owner's work that needs none of the owner's state:
//
//  1. Take. Once kReclaimObjects objects are queued (remote_flush counts
//     them, the owner's drain restarts the count), the pusher whose batch
//     reaches the count takes the owner's whole stack with one exchange, as
//     a drain does, unless the owner has drained since the last time the
//     count was reached or is draining now: an owner that drains is
//     working, and will reuse the pages a reclaim would give back (the
//     faults would be its cost). So an owner is reclaimed at the second
//     threshold it makes no drain across; and when it is only waiting for
//     the pusher's CPU, the pusher steps aside first to let it drain (below,
//     in remote_reclaim). The chain is then its own: no other thread reads
//     or writes those objects (their owner does not know they are free).
//  2. Count. It sorts the chain's objects by block and counts each block's
//     DISTINCT slots. A slot met twice was freed twice with no allocation
//     between (its owner cannot have handed it out again: for the owner it
//     is live): a double free, which aborts.
//  3. Give back. A block whose every slot is in the chain is complete. For
//     its owner each of its objects is live: used == capacity, nothing on
//     its list, none pending, no room to bump, none on the hot list. Then
//     nothing the owner does touches the block's slot memory: malloc finds
//     no slot in it, no slow path walks a list the block does not have, no
//     sweep discards a block with live objects, and a free of one of its
//     objects by the owner is the program's second free of it. So the
//     pusher gives the block's pages back (MADV_DONTNEED, counted in RSS at
//     once), all but the ones holding the record below. Of the block's
//     record (Block, in the segment header: the owner's) it reads start,
//     end, size, recip and cls, which get_block wrote before any of the
//     objects was handed out and which stay while any is live, and it
//     writes one field, `used`, to 0, before the pages go.
//     The pages held each object's remote mark, the evidence of a second
//     free that the drain would have met; two rules keep that evidence:
//       - An object on the owner's hot list was freed by the owner too. A
//         hot list of one is its object's address alone, its word never
//         read, so the owner's malloc would hand it out with nothing
//         checked, and the record would free it under the program. So the
//         pusher walks the class's hot list (owner_hot_holds) and keeps a
//         block that has an object on it, or whose list it cannot walk to
//         its end, as an incomplete one: its frees go back for the drain.
//       - `used` at 0 makes the owner's own free or realloc of one of the
//         block's objects, before its drain applies the record, fail the
//         block's test of a live object and abort as a double free; a
//         malloc takes nothing from the block (it has no free slot in the
//         owner's view) and reads no `used` of a full block. The owner's
//         other readers of `used` (statistics, the retirement of an empty
//         front) run on a heap that has drained (heap_abandon) or count it
//         as the frees it is.
//     A second free by the owner that races the reclaim itself (between
//     the walk and the store to `used`) is not seen.
//  4. Hand over. The complete blocks go back to the owner in records, each
//     written into the first slots of one of them (the host), pushed onto
//     the owner's stack with kRecordBit in the link to it; the other
//     objects are pushed back as they were. The owner's drain applies a
//     record (remote_record_apply) as the frees of its blocks' every slot,
//     in one step, after checking in its own view what step 3 assumed: the
//     block is the one the frees were counted in (same start, end and
//     size), in use, untouched since (`used` still 0, nothing on its list,
//     none pending, no room to bump) and none on the hot list. A check
//     that fails means one of the objects was also freed by the owner (or
//     the frees were of an earlier use of the block): a double free, which
//     aborts, as the drain of the same frees would have.
//  5. Pace. The pusher takes the objects it pushed back off remote_queued,
//     so the next reclaim waits for kReclaimObjects new frees: an object
//     pushed back is walked again only after as many new ones, so the walks
//     cost at most about twice what draining the frees would. A large
//     object met for the first time is the exception (below): it is due at
//     the next reclaim, and is walked at most twice.
//
// Large objects (remote_free_large counts them by size) met for the first
// time: the pusher gives back the pages inside each (give_back_inside),
// marks it, and pushes it back as it was, for the owner's drain to free: a
// live large object's inside is the program's alone; its tag and the next
// chunk's are on the pages kept. Met again by the next reclaim (marked:
// the owner has not drained since), it is freed by the pusher itself when
// it claims the owner's large lock (OwnerLock::try_claim;
// layers/owner_lock.hpp), which the owner holds for each of its own large
// calls: the owner's free, its checks and merge included (reclaim_free),
// and the pages of the merged chunk that the object's overlap go back at
// once. Pages that hold the tags
// between neighbouring objects come back too, once both neighbours are
// freed, which a discard inside one object cannot do (an object of 3,000
// bytes has no page of its own). The lock is only tried: an owner that
// holds it is not idle, and then, as when fork is waiting (below), the
// object is pushed back again.
//
// Only the chain, the pusher's scratch table (mapped and unmapped here) and
// the pages are written; a record proves itself with a word keyed by
// g_free_key and its address, so that a misaligned pointer a program frees
// (bit 1 set) is not taken for one. Not done: heaps no thread owns (orphans
// have their own way back, threads.cpp), VAM_HEADERS (a header lies before
// a block's first slot) and VAM_DISCARD=off (nothing goes back).
#include <sched.h>

#include <algorithm>

#include "layers/os.hpp"
#include "vam/api.hpp"
#include "vam/block_lists.hpp"
#include "vam/clock.hpp"
#include "vam/hot_list.hpp"
#include "vam/instrument.hpp"
#include "vam/options.hpp"
#include "vam/remote.hpp"
#include "vam/segment_map.hpp"

namespace alloclab::vam {

std::atomic<std::uint64_t> g_reclaimed_blocks{0};
std::atomic<std::uint64_t> g_reclaimed_large{0};
std::atomic<std::uint32_t> g_large_reclaims{0};
std::atomic<bool> g_reclaim_always{false};
std::atomic<std::uint64_t> g_reclaims_stepped_aside{0};
std::atomic<bool> g_fork_waiting{false};

void reclaim_fork_prepare() noexcept {
  g_fork_waiting.store(true, std::memory_order_seq_cst);
  while (g_large_reclaims.load(std::memory_order_seq_cst) != 0) sched_yield();
}
void reclaim_fork_done() noexcept { g_fork_waiting.store(false, std::memory_order_relaxed); }

namespace {

// A record: this header at its host's first slot, then one entry per block,
// the host's first.
struct RecordEntry {
  Block *block;
  char *start;
  char *end;
  std::uint64_t size;
};
struct Record {
  FreeObj link;          // on the owner's remote stack
  std::uintptr_t check;  // record_check(this, count)
  std::uint64_t count;   // entries, 1..kRecordMax
  RecordEntry *entries() noexcept { return reinterpret_cast<RecordEntry *>(this + 1); }
};
static_assert(sizeof(Record) == 24 && sizeof(RecordEntry) == 32);
constexpr std::size_t kRecordMax = (kPage - sizeof(Record)) / sizeof(RecordEntry);  // a page at most

std::uintptr_t record_check(const Record *r, std::uint64_t count) noexcept {
  return ((reinterpret_cast<std::uintptr_t>(r) ^ g_free_key) * kLinkMix) + count;
}

char *page_floor(const char *p) noexcept {
  return reinterpret_cast<char *>(reinterpret_cast<std::uintptr_t>(p) & ~(kPage - 1));
}
char *page_ceil(const char *p) noexcept { return page_floor(p + kPage - 1); }

// ---- the pusher's side ---------------------------------------------------

// A block met in the taken chain: the fields of its record read once, the
// slots met, and its objects (relinked through their first word, plain).
struct Seen {
  Block *block;  // null: a free entry of the table
  char *start;
  char *end;
  std::uint32_t size;
  std::uint32_t recip;
  std::uint32_t count;  // distinct slots met
  FreeObj *objects;
  std::uint64_t bits[kMaxSlots / 64];
};
constexpr std::size_t kSeenSlots = 2048;  // open addressing, a power of two
constexpr std::size_t kSeenMax = kSeenSlots / 2;  // blocks met; the objects of more are pushed back
constexpr std::size_t kLargeRanges = 2048;  // page ranges of large frees held before their calls
struct PageRange {
  std::uintptr_t from, to;
};
struct Scratch {
  Seen seen[kSeenSlots];
  Seen *met[kSeenMax];       // the entries in use, in the order met
  Seen *complete[kSeenMax];
  PageRange large[kLargeRanges];
};
constexpr std::size_t kScratchBytes = (sizeof(Scratch) + kPage - 1) & ~(kPage - 1);

// What goes back onto the owner's stack, built by pushing in front.
// How a node keeps its link (remote.hpp): a record plainly.
RemoteForm node_form(const FreeObj *node, std::uintptr_t tag) noexcept {
  return tag ? RemoteForm::plain : remote_form(object_segment(node));
}
struct Chain {
  FreeObj *first = nullptr;  // as it goes on the stack: with kRecordBit for a record
  FreeObj *last = nullptr;   // the node added first
  RemoteForm last_form = RemoteForm::plain;
  std::int64_t units = 0;    // what its objects counted in remote_queued
  void add(FreeObj *node, std::uintptr_t tag, std::int64_t counted = 1) noexcept {
    const RemoteForm form = node_form(node, tag);
    remote_link(node, form, first);
    first = reinterpret_cast<FreeObj *>(reinterpret_cast<std::uintptr_t>(node) | tag);
    if (!last) {
      last = node;
      last_form = form;
    }
    if (!tag) units += counted;
  }
};

// Page runs to give back, merged while they touch (they come in address
// order); a segment backed by huge pages first loses the advice, as
// HeapSegments::discard does, so that the kernel does not fill them back.
struct Runs {
  char *from = nullptr;
  char *to = nullptr;
  Segment *advised = nullptr;  // the last segment whose advice was checked
  void add(char *a, char *b) noexcept {
    if (a >= b) return;
    Segment *s = segment_of(a);
    if (s != advised) {
      advised = s;
      if (load_relaxed(s->hugepages)) os::advise_hugepages(s, kSegmentBytes, false);
    }
    if (a == to) {
      to = b;
      return;
    }
    flush();
    from = a;
    to = b;
  }
  void flush() noexcept {
    if (from) os::discard(from, static_cast<std::size_t>(to - from));
    from = to = nullptr;
  }
};

// Is any object of block e on its owner's hot list of e's class, or can
// that list not be walked to its end (a link another thread's free wrote its
// mark over, a page a reclaim gave back, or the owner changing the list)?
// The owner is idle (remote_reclaim's tests): the entry and the links are
// read relaxed, each link checked as the owner's pop checks it, and at most
// kHotMax of them; each object read lies in a segment of vam's.
bool owner_hot_holds(const Heap *owner, const Seen &e) noexcept {
  std::uintptr_t v = class_hot_list(owner, load_relaxed(e.block->cls));
  for (unsigned n = hot_length(v); n > 0; --n) {
    const auto *q = static_cast<const char *>(hot_head(v));
    if (q >= e.start && q < e.end) return true;
    if (n == 1) break;
    if (!segment_known(object_segment(q))) return true;
    const std::uintptr_t rest = hot_decode(load_relaxed(*reinterpret_cast<const std::uintptr_t *>(q)));
    if (!hot_rest_fits(v, rest)) return true;
    v = rest;
  }
  return false;
}

// Large object p: its pages but the first (its link, and the mark below)
// and the one its chunk's end shares with the next chunk's tag, back to the
// system, once; what it counted in remote_queued. Its tag (before p, the
// owner's) is only read: in use, not on a quick list, a size a region
// holds, or p is left alone (the drain checks it). Of a live large object's
// inside the owner reads only the second word (large_freed_remotely), which
// then marks it as given back
// (kRemoteInnerMark, large_region.hpp, in place of remote_free_large's), so
// that a later reclaim that meets it again (pushed back) skips it.
std::uintptr_t inner_mark(const FreeObj *p) noexcept { return remote_mark_base(p) + kRemoteInnerMark; }
// Marked by an earlier reclaim (give_back_inside) and still on the stack:
// its owner has not drained for a whole reclaim's worth of frees. Such an
// object is freed into the owner's heap; one met for the first time only
// gives back the pages inside it, so that an owner that waits a moment
// (between two phases of its work) finds its objects as it left them and
// frees them itself, onto its quick lists.
bool met_before(const FreeObj *p) noexcept {
  return reinterpret_cast<const std::uintptr_t *>(p)[1] == inner_mark(p);
}
std::int64_t give_back_inside(Runs &runs, FreeObj *p) noexcept {
  Chunk *c = chunk_of_payload(p);
  const std::size_t head = load_relaxed(c->head);
  const std::size_t size = head & ~kChunkFlags;
  if ((head & (kChunkInUse | kChunkQuick)) != kChunkInUse || size < kMinChunk ||
      size > LargeHeap::region_capacity() + 2 * kChunkHeader)
    return 1;
  auto *mark = reinterpret_cast<std::uintptr_t *>(p) + 1;
  if (*mark != inner_mark(p)) {
    *mark = inner_mark(p);
    runs.add(page_ceil(reinterpret_cast<char *>(mark + 1)), page_floor(reinterpret_cast<char *>(c) + size));
  }
  return static_cast<std::int64_t>((size - kChunkHeader) >> kLargeUnitShift) + 1;
}

// p's block's entry, p counted in it; null when p is not a small or medium
// object's slot start, or the table is full: then p goes back as it is.
// `last`: the entry of the object before, which frees made in the order of
// the mallocs share (no probe of the table then).
Seen *count_in(Scratch *sc, std::size_t &blocks, Seen *&last, FreeObj *p) noexcept {
  Segment *s = object_segment(p);
  if (s->kind > SegKind::medium) return nullptr;
  Block *b = block_of(s, p);
  std::size_t i = (reinterpret_cast<std::uintptr_t>(b) >> 7) * 0x9e3779b97f4a7c15ull >> 53;
  static_assert(kSeenSlots == std::size_t{1} << (64 - 53));
  Seen *e = last;
  if (e && e->block == b) i = kSeenSlots;  // found: no probe
  for (; i < kSeenSlots; i = (i + 1) & (kSeenSlots - 1)) {
    e = &sc->seen[i];
    if (e->block == b) break;
    if (e->block == nullptr) {
      if (blocks == kSeenMax) return nullptr;
      sc->met[blocks++] = e;
      e->block = b;
      e->start = b->start;
      e->end = b->end;
      e->size = b->size;
      e->recip = b->recip;
      break;
    }
  }
  last = e;
  const auto off = static_cast<std::uint64_t>(reinterpret_cast<char *>(p) - e->start);
  if (off >= static_cast<std::uint64_t>(e->end - e->start)) return nullptr;
  const auto slot = static_cast<std::uint32_t>((off * e->recip) >> 32);
  if (std::uint64_t{slot} * e->size != off) return nullptr;  // not a slot start: the drain says so
  std::uint64_t &word = e->bits[slot / 64];
  const std::uint64_t bit = std::uint64_t{1} << (slot % 64);
  if (VAM_UNLIKELY(word & bit)) corruption("free(): double free detected (from another thread)", p);
  word |= bit;
  ++e->count;
  remote_link(p, remote_form(s), e->objects);
  e->objects = p;
  return e;
}

// The entries a record written at e's first slot holds.
std::size_t record_room(const Seen *e) noexcept {
  const auto bytes = std::min<std::size_t>(kPage, static_cast<std::size_t>(e->end - e->start));
  return bytes < sizeof(Record) ? 0 : std::min(kRecordMax, (bytes - sizeof(Record)) / sizeof(RecordEntry));
}

// Block e's pages, the first byte and the end.
char *block_first(const Seen *e) noexcept {
  Segment *s = segment_of(e->block);
  return s->block_start(static_cast<std::size_t>(e->block - s->blocks()));
}
char *block_last(const Seen *e) noexcept { return block_first(e) + (std::size_t{1} << segment_of(e->block)->block_shift); }

// The page ranges of the large objects a reclaim frees, in address order,
// merged where they touch (neighbours freed in one reclaim): one discard
// call a run. Within one region only: reclaim_discard advises its region.
void discard_large(LargeHeap &l, PageRange *r, std::size_t n) noexcept {
  std::sort(r, r + n, [](const PageRange &x, const PageRange &y) { return x.from < y.from; });
  for (std::size_t i = 0; i < n;) {
    std::uintptr_t from = r[i].from, to = r[i].to;
    const auto region = from & ~(kSegmentBytes - 1);
    for (++i; i < n && r[i].from <= to && (r[i].from & ~(kSegmentBytes - 1)) == region; ++i)
      if (r[i].to > to) to = r[i].to;
    l.reclaim_discard(from, to);
  }
}

// The owner's large lock, tried once per reclaim, at its first large
// object, and held to the reclaim's end. Fork waits for every holder
// (reclaim_fork_prepare): a child must not inherit a lock no thread of its
// will release, nor a heap half changed. A holder counts itself before it
// reads the flag and fork sets the flag before it reads the count, both
// sequentially consistent, so one of the two sees the other.
struct LargeHold {
  LargeHeap *held = nullptr;
  bool tried = false;
  bool take(Heap *owner) noexcept {
    if (tried) return held != nullptr;
    tried = true;
    g_large_reclaims.fetch_add(1, std::memory_order_seq_cst);
    if (!g_fork_waiting.load(std::memory_order_seq_cst) && owner->large.lock().try_claim()) {
      held = &owner->large;
      return true;
    }
    g_large_reclaims.fetch_sub(1, std::memory_order_release);
    return false;
  }
  ~LargeHold() {
    if (!held) return;
    held->lock().release();
    g_large_reclaims.fetch_sub(1, std::memory_order_release);
  }
};

}  // namespace

void remote_reclaim(Heap *owner) noexcept {
  // A heap no thread owns drains through the orphans' work; the caller's
  // own heap drains in its next slow path.
  if (owner->orphan.load(std::memory_order_relaxed) != 0 || owner == t_heap) return;
  // Of the pushers that saw the count reach the threshold, one goes on.
  if (owner->remote_queued.exchange(0, std::memory_order_relaxed) < kReclaimObjects) return;
  // Step 1's test: an owner that drained since the last threshold, or is
  // draining now, is working. The count has restarted, so the question
  // comes again after as many frees.
  const std::uint32_t drains = owner->drains.load(std::memory_order_relaxed);
  const bool always = g_reclaim_always.load(std::memory_order_relaxed);
  if (owner->drains_seen.exchange(drains, std::memory_order_relaxed) != drains && !always) return;
  if (owner->draining.load(std::memory_order_relaxed) != 0 && !always) return;
  // Nor is an owner idle that drained frees within kOwnerWorkingMs: counted
  // in frees alone, an owner blocked for a moment looked idle to pushers
  // that free fast (the public suite's xmalloc-test: a producer waiting on
  // its full queue, or for a CPU, while consumers pushed two thresholds in
  // a fraction of a millisecond), and it faulted back in every page the
  // reclaim gave back. The frees held for it are then reclaimed at the
  // first threshold past that time.
  if (now_ms() - owner->drained_ms.load(std::memory_order_relaxed) < kOwnerWorkingMs && !always) return;
  // An owner that the kernel has runnable on this thread's CPU is waiting
  // for it (fewer CPUs than threads: the pushes came within one time
  // slice). This thread steps aside, 50 us at a time, up to a millisecond,
  // while the owner stays runnable here: given the CPU, a working owner
  // drains, an idle one blocks. Only a drain spares it, so no stack is left
  // unreclaimed on a guess.
  for (int pause = 0; pause < 20 && !always; ++pause) {
    const int cpu = os::thread_runnable_on(owner->tid.load(std::memory_order_relaxed));
    if (cpu < 0 || cpu != sched_getcpu()) break;
    os::step_aside(50);
    const std::uint32_t now = owner->drains.load(std::memory_order_relaxed);
    if (now != drains) {
      owner->drains_seen.store(now, std::memory_order_relaxed);
      g_reclaims_stepped_aside.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  if (g_layout.header != 0 || options().discard == int(DiscardPolicy::off)) return;
  auto *sc = static_cast<Scratch *>(os::map(kScratchBytes));
  if (!sc) return;
  Chain keep;
  Runs inner;  // large objects' pages, in the chain's order
  std::size_t blocks = 0;
  Seen *last = nullptr;
  LargeHold hold;
  std::uint64_t large_freed = 0;
  std::size_t ranges = 0;
  FreeObj *f = owner->remote.exchange(nullptr, std::memory_order_acquire);
  while (f) {
    const auto a = reinterpret_cast<std::uintptr_t>(f);
    auto *node = reinterpret_cast<FreeObj *>(a & ~kRecordBit);
    Segment *s = (a & kRecordBit) ? nullptr : object_segment(node);
    const bool large = s && s->kind == SegKind::large;
    const bool met = large && met_before(node);
    const bool free_now = met && s->owner == owner && hold.take(owner);
    // Before its link is read: an object freed already would hold a free
    // list's link there, and the walk would follow it.
    if (free_now) LargeHeap::check_in_use(node);
    // And, as the drain reads it: a medium object's mark first, an 8- or
    // 16-byte object's link checked (remote.hpp).
    FreeObj *next;
    if (s && s->kind == SegKind::medium) next = remote_medium_next(node);
    else if (s && s->kind == SegKind::small) next = remote_keyed_next(node);
    else next = node->next;
    if (!s) {
      keep.add(node, kRecordBit);  // an earlier reclaim's record (or a misaligned free: the drain aborts)
    } else {
      // Freed twice in a row by other threads: the second push linked it to itself.
      if (VAM_UNLIKELY(next == node)) corruption("free(): double free detected (from another thread)", node);
      if (free_now) {
        PageRange &r = sc->large[ranges];
        *remote_mark_word(node) = 0;  // applied: no mark outlives the object (large_freed_remotely)
        owner->large.reclaim_free(node, &r.from, &r.to);
        ++large_freed;
        if (r.from < r.to && ++ranges == kLargeRanges) {
          discard_large(owner->large, sc->large, ranges);
          ranges = 0;
        }
      } else if (large) {
        // Met for the first time, it is due at the next reclaim, which the
        // pace below must not put off: it counts nothing there.
        const std::int64_t units = give_back_inside(inner, node);
        keep.add(node, 0, met ? units : 0);
      } else if (!count_in(sc, blocks, last, node)) {
        keep.add(node, 0);
      }
    }
    f = next;
  }
  inner.flush();
  if (ranges) discard_large(owner->large, sc->large, ranges);  // under the lock, which `hold` keeps to the end
  if (large_freed) g_reclaimed_large.fetch_add(large_freed, std::memory_order_relaxed);
  std::size_t complete = 0;
  for (std::size_t k = 0; k < blocks; ++k) {
    Seen &e = *sc->met[k];
    if (e.count == static_cast<std::uint64_t>(e.end - e.start) / e.size && !owner_hot_holds(owner, e)) {
      sc->complete[complete++] = &e;
    } else {
      for (FreeObj *o = e.objects, *n; o; o = n) {
        n = remote_next(o, node_form(o, 0));
        keep.add(o, 0);
      }
    }
  }
  // In address order, so that neighbouring blocks go back in one call.
  std::sort(sc->complete, sc->complete + complete, [](const Seen *x, const Seen *y) { return x->block < y->block; });
  Runs runs;
  std::uint64_t given = 0;
  for (std::size_t i = 0; i < complete;) {
    Seen *host = sc->complete[i];
    const std::size_t room = record_room(host);
    if (room == 0) {  // too small to hold a record: its objects go back as they are
      for (FreeObj *o = host->objects, *n; o; o = n) {
        n = remote_next(o, node_form(o, 0));
        keep.add(o, 0);
      }
      ++i;
      continue;
    }
    const std::size_t n = std::min(room, complete - i);
    // Step 3's mark, before any page goes: the owner's free of any of these
    // objects is a second one.
    for (std::size_t k = 0; k < n; ++k) store_relaxed<std::uint16_t>(sc->complete[i + k]->block->used, 0);
    // Over the host's first slots: its objects' links are not needed now.
    auto *r = reinterpret_cast<Record *>(host->start);
    tell_vam_words(r, sizeof(Record) + n * sizeof(RecordEntry));
    for (std::size_t k = 0; k < n; ++k) {
      const Seen *e = sc->complete[i + k];
      r->entries()[k] = RecordEntry{e->block, e->start, e->end, e->size};
    }
    r->count = n;
    r->check = record_check(r, n);
    const char *record_end = reinterpret_cast<char *>(r->entries() + n);
    runs.add(block_first(host), page_floor(host->start));
    runs.add(page_ceil(record_end), block_last(host));
    for (std::size_t k = 1; k < n; ++k) runs.add(block_first(sc->complete[i + k]), block_last(sc->complete[i + k]));
    keep.add(&r->link, kRecordBit);
    given += n;
    i += n;
  }
  runs.flush();
  os::unmap(sc, kScratchBytes);
  if (given) g_reclaimed_blocks.fetch_add(given, std::memory_order_relaxed);
  if (keep.first) {
    if (keep.units) owner->remote_queued.fetch_sub(keep.units, std::memory_order_relaxed);
    remote_push(owner, keep.first, keep.last, keep.last_form);
  }
}

// ---- the owner's side ----------------------------------------------------

namespace {

// The hot list of full block b's class holds one of b's objects. A hot
// object's first word is read only where it links to another (list of two
// or more); a word of 0 there is a page a reclaim gave back, so that hot
// object was also one of a complete block's: freed twice.
bool hot_list_holds_of(const Heap *h, const Block *b) noexcept {
  std::uintptr_t v = class_hot_list(h, b->cls);
  for (unsigned n = hot_length(v); n > 0; --n) {
    const void *q = hot_head(v);
    if (block_holds(b, q)) return true;
    if (n > 1) {
      const std::uintptr_t w = *static_cast<const std::uintptr_t *>(q);
      if (w == 0) return true;
      v = hot_rest(v, HotOp::free);
    }
  }
  return false;
}

}  // namespace

FreeObj *remote_record_apply(Heap *h, FreeObj *tagged) noexcept {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(tagged) & ~kRecordBit;
  auto *r = reinterpret_cast<Record *>(a);
  Segment *s = object_segment(r);
  // A record lies in a block of h and says so with its check; anything else
  // with the bit set is a pointer the program freed that starts no object.
  if (VAM_UNLIKELY((a & 7) != 0 || (a & (kSegmentBytes - 1)) > kSegmentBytes - sizeof(Record) || !segment_known(s) ||
                   s->kind > SegKind::medium || s->owner != h || r->count - 1 >= kRecordMax ||
                   r->check != record_check(r, r->count)))
    corruption("free(): invalid pointer (not the start of an object)", tagged);
  FreeObj *next = remote_next(&r->link, RemoteForm::plain);
  const std::size_t n = r->count;
  for (std::size_t k = 0; k < n; ++k) {
    const RecordEntry e = r->entries()[k];
    Block *b = e.block;
    const BlockState st = b->state;
    // What the reclaim assumed, in the owner's view (the file's head, 3 and
    // 4), and its mark (`used` at 0) still there: any free or malloc of one
    // of the block's objects by the owner since would have changed it.
    const bool as_counted = segment_of(b) == segment_of(e.start) && segment_of(b)->owner == h &&
                            b->start == e.start && b->end == e.end && b->size == e.size;
    const bool untouched = (st == BlockState::front || st == BlockState::waiting || st == BlockState::full) &&
                           b->used == 0 && !free_list_has(b->free) && b->bump >= b->end && !b->has_pending;
    if (VAM_UNLIKELY(!as_counted || !untouched || (st == BlockState::full && hot_list_holds_of(h, b))))
      corruption("free(): double free detected (from another thread)", e.start);
    // Every slot free: the block as get_block leaves it, its pages given back.
    b->free = free_list_end(b);
    b->bump = b->start;
    store_relaxed<std::uint16_t>(b->used, 0);
    // As the last of the frees would: regained if full, retired unless the
    // class's sole block (small_free_slow).
    if (st == BlockState::full) small_free_regained(h, b);
    if (!sole_block(h, b)) retire_discarded(h, b);
  }
  // The record's own pages last: nothing is read from it after this.
  char *from = page_floor(reinterpret_cast<char *>(r));
  h->segments.discard(s, from, static_cast<std::size_t>(page_ceil(reinterpret_cast<char *>(r->entries() + n)) - from));
  return next;
}

}  // namespace alloclab::vam
