// remote.cpp — a thread's batches of remote frees, sent (remote.hpp).
#include "vam/remote.hpp"

namespace alloclab::vam {

__thread RemoteBatches t_remote __attribute__((tls_model("initial-exec"))) = {};

// The batch goes onto its owner's remote stack with one CAS. First its chain
// is walked: `count` distinct objects link head to tail, and tail ends it.
// An object freed twice into one batch breaks that (the second push links it
// to a later object, so the chain loops or ends early), and would otherwise
// cut the objects behind it off the owner's list. The objects were written
// by this thread a moment ago: the walk reads cached lines, once per object.
// The same walk writes the drain's hints (remote.hpp, RemoteObj): each object
// marked roomy gets the one kRemoteAhead places on; the last few, with none
// that far, lose the mark.
void remote_flush(RemoteBatch &b) noexcept {
  FreeObj *back[kRemoteAhead] = {};
  FreeObj *f = b.head;
  std::uint32_t n = 0;
  for (;;) {
    FreeObj *&slot = back[n % kRemoteAhead];
    if (slot && (reinterpret_cast<std::uintptr_t>(slot->next) & kAheadBit))
      reinterpret_cast<RemoteObj *>(slot)->ahead = f;
    slot = f;
    if (++n == b.count || f == b.tail) break;
    f = remote_next(f);
    if (f == nullptr) break;
  }
  if (VAM_UNLIKELY(f != b.tail || n != b.count || remote_next(b.tail) != nullptr))
    corruption("free(): double free detected (from another thread)", b.tail);
  for (FreeObj *o : back)
    if (o) o->next = remote_next(o);
  FreeObj *first = b.head, *last = b.tail;
  b.head = b.tail = nullptr;
  b.count = 0;
  remote_push(b.heap, first, last);
  // On the line the push has just written: no further miss.
  if (VAM_UNLIKELY(b.heap->remote_queued.fetch_add(n, std::memory_order_relaxed) + n >= kReclaimObjects))
    remote_reclaim(b.heap);
}

// Its size read from its tag, which the owner does not write while the
// object lives (LargeHeap::check_live): before the push, after which the
// owner may free it.
//
// Before it is pushed, p must be a large object in use that no other free
// has marked (large_freed_remotely): a free chunk or one on a quick list
// holds its list's links where the push would write, and a marked one waits
// on a remote stack already. Only p's own tag and second word are read, which
// the owner writes only when it frees or reallocates p itself. Then p is
// marked, so that the owner's own free of it, or another thread's, aborts
// too until the owner applies this one.
void remote_free_large(Heap *owner, void *p) noexcept {
  const std::size_t head = load_relaxed(chunk_of_payload(p)->head);
  if (VAM_UNLIKELY((head & (kChunkInUse | kChunkQuick)) != kChunkInUse)) LargeHeap::free_misuse(p);
  if (VAM_UNLIKELY(large_freed_remotely(p)))
    corruption("free(): double free detected (large object, freed by another thread already)", p);
  *remote_mark_word(p) = remote_mark_base(p) + kRemotePendingMark;
  const auto units = static_cast<std::int64_t>(((head & ~kChunkFlags) - kChunkHeader) >> kLargeUnitShift) + 1;
  remote_free(owner, p);
  if (owner->orphan.load(std::memory_order_relaxed) != 0) return;
  if (VAM_UNLIKELY(owner->remote_queued.fetch_add(units, std::memory_order_relaxed) + units >= kReclaimObjects))
    remote_reclaim(owner);
}

void remote_flush_all() noexcept {
  for (RemoteBatch &b : t_remote.slot)
    if (b.count) remote_flush(b);
}

}  // namespace alloclab::vam
