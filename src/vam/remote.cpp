// remote.cpp — a thread's batches of remote frees, sent (remote.hpp).
#include "vam/remote.hpp"

#include "vam/segment_map.hpp"

namespace alloclab::vam {

__thread RemoteBatches t_remote __attribute__((tls_model("initial-exec"))) = {};

// The batch goes onto its owner's remote stack with one CAS. First its chain
// is walked: `count` distinct objects link head to tail, and tail ends it.
// An object freed twice into one batch breaks that (the second push links it
// to a later object, so the chain loops or ends early), and would otherwise
// cut the objects behind it off the owner's list. (A medium object freed
// twice aborts at its second free already: remote_check finds its mark.)
// The objects were written by this thread a moment ago: the walk reads
// cached lines, once per object, and each one's segment header, to know
// where its link is (a batch holds small and medium objects: remote.hpp).
// The same walk writes the drain's hints (RemoteObj): each medium object
// gets the one kRemoteAhead places on; the last few, with none that far,
// lose the bit.
void remote_flush(RemoteBatch &b) noexcept {
  RemoteObj *back[kRemoteAhead] = {};
  FreeObj *f = b.head;
  std::uint32_t n = 0;
  bool medium;
  for (;;) {
    medium = object_segment(f)->kind == SegKind::medium;
    auto *r = reinterpret_cast<RemoteObj *>(f);
    RemoteObj *&slot = back[n % kRemoteAhead];
    if (slot) slot->ahead = f;
    slot = medium ? r : nullptr;
    if (++n == b.count || f == b.tail) break;
    f = medium ? reinterpret_cast<FreeObj *>(r->link & ~kAheadBit) : remote_next(f, RemoteForm::keyed);
    if (f == nullptr) break;
  }
  const RemoteForm form = medium ? RemoteForm::marked : RemoteForm::keyed;  // the last node's
  if (VAM_UNLIKELY(f != b.tail || n != b.count || remote_next(b.tail, form) != nullptr))
    corruption("free(): double free detected (from another thread)", b.tail);
  for (RemoteObj *o : back)
    if (o) o->link &= ~kAheadBit;
  FreeObj *first = b.head, *last = b.tail;
  b.head = b.tail = nullptr;
  b.count = 0;
  remote_push(b.heap, first, last, form);
  // On the line the push has just written: no further miss.
  if (VAM_UNLIKELY(b.heap->remote_queued.fetch_add(n, std::memory_order_relaxed) + n >= kReclaimObjects))
    remote_reclaim(b.heap);
}

// The owner's block list is walked as the owner may be changing it: every
// read relaxed, every step checked to stay on the block's slots and bounded
// by their number, so that the walk ends and faults nowhere. Finding p
// proves the double free; not finding it proves nothing (the owner may have
// taken p off meanwhile), and the free goes on: the word was data, or the
// owner handed p out again, the one misuse no check here can see.
void remote_free_suspect(Segment *s, void *p, RemoteOp op) noexcept {
  if (!past_block_records(s, p)) remote_invalid(p, op);
  const bool by_free = op == RemoteOp::free;
  if (remote_form(s) == RemoteForm::marked && remote_marked(p))
    corruption(by_free ? "free(): double free detected (freed by another thread already)"
                       : "realloc(): double free / realloc of a freed object (freed by another thread already)",
               p);
  Block *b = block_of(s, p);
  const char *start = load_relaxed(b->start);
  const char *end = load_relaxed(b->end);
  const std::uint32_t size = load_relaxed(b->size);
  if (size == 0) return;
  std::size_t steps = static_cast<std::size_t>(end - start) / size + 1;
  for (FreeObj *f = load_relaxed(b->free); free_list_has(f) && steps-- != 0;) {
    const auto off = static_cast<std::uintptr_t>(reinterpret_cast<char *>(f) - start);
    if (off >= static_cast<std::uintptr_t>(end - start) || off % size != 0) return;
    if (f == p)
      corruption(by_free ? "free(): double free detected (by its owner and another thread)"
                         : "realloc(): double free / realloc of a freed object (freed by its owner)",
                 p);
    f = reinterpret_cast<FreeObj *>((load_relaxed(*reinterpret_cast<std::uintptr_t *>(f)) * kLinkUnmix) ^ g_free_key);
  }
}

void remote_invalid(const void *p, RemoteOp op) noexcept {
  corruption(op == RemoteOp::free ? "free(): invalid pointer (not the start of an object)"
                                  : "realloc(): invalid pointer (not the start of an object)",
             p);
}

void remote_realloc_check(Segment *s, void *p) noexcept {
  if (!past_block_records(s, p)) remote_invalid(p, RemoteOp::realloc);  // before the block record is read
  Block *b = block_of(s, p);
  const char *start = load_relaxed(b->start);
  const char *bump = load_relaxed(b->bump);
  const std::uint32_t recip = load_relaxed(b->recip);
  const auto *c = static_cast<const char *>(p);
  const auto off = static_cast<std::uint32_t>(c - start);
  if (!(c >= start && c < bump) || static_cast<std::uint32_t>(std::uint64_t{off} * recip) >= recip)
    remote_invalid(p, RemoteOp::realloc);
  if (looks_freed(p)) remote_free_suspect(s, p, RemoteOp::realloc);
}

void remote_mark_lost(const void *p) noexcept {
  corruption("free(): double free detected (by its owner and another thread), or written after another thread freed it", p);
}

// A keyed link decodes to null (the chain's end) or to a node in a segment
// of vam's; one the owner's free or malloc wrote over decodes to a random
// word, in no segment (remote.hpp).
FreeObj *remote_keyed_next(FreeObj *f) noexcept {
  FreeObj *next = remote_next(f, RemoteForm::keyed);
  if (VAM_UNLIKELY(next != nullptr && !segment_known(object_segment(next)))) remote_mark_lost(f);
  return next;
}

// Its size read from its tag, which the owner does not write while the
// object lives (LargeHeap::check_live): before the push, after which the
// owner may free it.
//
// Before it is pushed, p must be a large object in use that no other free
// has marked (large_freed_remotely): a free chunk or one on a quick list
// holds its list's links where the push would write, and a marked one waits
// on a remote stack already; and its tag must be a chunk's, its size
// repeated by the next chunk (LargeHeap::check_remote_free): an interior
// pointer's "tag" is data, whose size a reclaim would otherwise give back
// the pages of, over the objects beyond. Only p's own tag, the next chunk's
// copy of its size and p's second word are read, which the owner writes
// only when it frees or reallocates p itself. Then p is
// marked, so that the owner's own free of it, or another thread's, aborts
// too until the owner applies this one.
void remote_free_large(Heap *owner, void *p) noexcept {
  LargeHeap::check_remote_free(p);
  const std::size_t head = load_relaxed(chunk_of_payload(p)->head);
  if (VAM_UNLIKELY(large_freed_remotely(p)))
    corruption("free(): double free detected (large object, freed by another thread already)", p);
  *remote_mark_word(p) = remote_mark_base(p) + kRemotePendingMark;
  const auto units = static_cast<std::int64_t>(((head & ~kChunkFlags) - kChunkHeader) >> kLargeUnitShift) + 1;
  remote_free(owner, p, RemoteForm::plain);
  if (owner->orphan.load(std::memory_order_relaxed) != 0) return;
  if (VAM_UNLIKELY(owner->remote_queued.fetch_add(units, std::memory_order_relaxed) + units >= kReclaimObjects))
    remote_reclaim(owner);
}

void remote_flush_all() noexcept {
  for (RemoteBatch &b : t_remote.slot)
    if (b.count) remote_flush(b);
}

}  // namespace alloclab::vam
