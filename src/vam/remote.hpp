// remote.hpp — a free into another thread's heap: pushed onto the owner's
// remote stack, alone or in batches, for the owner to apply in its slow
// paths (drain_remote, small_free.cpp) as local frees, checks included.
// Any thread pushes (a CAS); only the owner takes, the whole stack at once
// (an exchange): no lock and no ABA. A heap no thread drains (`orphan`)
// gets its frees one by one, counted by the freeing thread (orphan_freed).
#pragma once

#include <atomic>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/large_region.hpp"
#include "vam/segment.hpp"
#include "vam/segment_map.hpp"

namespace alloclab::vam {

// ---- a node of a remote chain
// How a node keeps its link (RemoteForm) depends on what it is:
//   marked  an object of a medium segment (32 bytes or more): a RemoteObj,
//           its first word the remote mark, its second the link, its third
//           the drain's hint (below);
//   keyed   an 8- or 16-byte object, with no room for two words: the link
//           XOR its mark, in its first word;
//   plain   a large object (its mark is in its second word: large_region.hpp,
//           remote_free_large) and a reclaim's record: the link as it is.
// The mark is free_list.hpp's encoding of a link from the object to itself
// (remote_mark_base), which no list holds and which program data equals
// once in 2^64. While a medium object waits on a chain it reads as freed:
//   - to its owner's free, whose walk of the block's list then finds the
//     mark (small_free_suspect), and to its owner's realloc;
//   - to a second remote free (remote_check, remote_free_suspect);
//   - and the drain, or a reclaim, that finds it gone aborts before it
//     follows the link: the owner freed the object after the push (its
//     list, its hot list or a pending slot's reuse wrote over the word) or
//     handed it out again (malloc clears the first word).
// A keyed link that any of these wrote over decodes to an address in no
// segment of vam's (but, for a word of random bits, once in about 2^35
// with a hundred segments mapped), and the drain aborts there instead
// (remote_keyed_next). Each case would
// otherwise end in one address handed out twice.
enum class RemoteForm : std::uint8_t { plain, keyed, marked };
inline RemoteForm remote_form(const Segment *s) noexcept {
  return s->kind == SegKind::medium ? RemoteForm::marked
         : s->kind == SegKind::small ? RemoteForm::keyed
                                     : RemoteForm::plain;
}
struct RemoteObj {
  std::uintptr_t mark;
  std::uintptr_t link;  // the next node, | kAheadBit when `ahead` is set
  FreeObj *ahead;
};
inline constexpr std::uintptr_t kAheadBit = 1;
// The link as written, without a check (the pusher's own walk, tests).
inline FreeObj *remote_next(FreeObj *f, RemoteForm form) noexcept {
  const auto w = reinterpret_cast<std::uintptr_t>(f->next);
  switch (form) {
    case RemoteForm::marked: return reinterpret_cast<FreeObj *>(reinterpret_cast<RemoteObj *>(f)->link & ~kAheadBit);
    case RemoteForm::keyed: return reinterpret_cast<FreeObj *>(w ^ remote_mark_base(f));
    default: return reinterpret_cast<FreeObj *>(w);
  }
}
inline void remote_link(FreeObj *f, RemoteForm form, const FreeObj *next) noexcept {
  const auto n = reinterpret_cast<std::uintptr_t>(next);
  switch (form) {
    case RemoteForm::marked: reinterpret_cast<RemoteObj *>(f)->link = n; return;
    case RemoteForm::keyed: f->next = reinterpret_cast<FreeObj *>(n ^ remote_mark_base(f)); return;
    default: f->next = const_cast<FreeObj *>(next);
  }
}
inline bool remote_marked(const void *p) noexcept {
  return *static_cast<const std::uintptr_t *>(p) == remote_mark_base(p);
}
// Might 8- or 16-byte object p wait on a remote chain (keyed: its first
// word, XOR its mark, is null or a node in one of vam's segments)? For
// program data, about once in 2^35 with a hundred segments mapped. The
// owner's realloc asks (small_live_front, small_check_live): to it such an
// object reads as live.
inline bool remote_keyed_like(const void *p) noexcept {
  const std::uintptr_t link = *static_cast<const std::uintptr_t *>(p) ^ remote_mark_base(p);
  return link == 0 || segment_known(object_segment(reinterpret_cast<const void *>(link)));
}

// The chain first..last (linked through their links; `last_form`: how last
// keeps its) onto owner's remote stack: one CAS, no lock (the owner drains
// later).
inline void remote_push(Heap *owner, FreeObj *first, FreeObj *last, RemoteForm last_form) noexcept {
  FreeObj *head = owner->remote.load(std::memory_order_relaxed);
  do {
    remote_link(last, last_form, head);
  } while (!owner->remote.compare_exchange_weak(head, first, std::memory_order_release,
                                                std::memory_order_relaxed));
  if (VAM_UNLIKELY(owner->orphan.load(std::memory_order_relaxed) != 0)) orphan_freed(owner);
}

// The next node after a medium or small object, read by the drain or a
// reclaim before it applies the free: a lost mark, or a keyed link that
// leads out of vam's segments, aborts (remote_mark_lost). The drain's hint
// is prefetched.
[[noreturn]] void remote_mark_lost(const void *p) noexcept;
inline FreeObj *remote_medium_next(FreeObj *f) noexcept {
  auto *r = reinterpret_cast<RemoteObj *>(f);
  if (VAM_UNLIKELY(!remote_marked(f))) remote_mark_lost(f);
  const std::uintptr_t link = r->link;
  if (link & kAheadBit) __builtin_prefetch(r->ahead, 1);  // a few misses in flight
  return reinterpret_cast<FreeObj *>(link & ~kAheadBit);
}
FreeObj *remote_keyed_next(FreeObj *f) noexcept;

// Before a remote free writes into small or medium object p of segment s:
// p must lie past the segment's records (its Segment record and block
// table): the push writes its link, and a medium object's mark, into p
// before the owner's drain checks p, and a pointer into the records would
// have them overwrite a block's fields, which the owner then follows. A
// first word that reads as a link (looks_freed) is a mark (the object
// waits on a chain already: a double free), a block list's link (the owner
// freed it: the list is walked to confirm), or, once in 2^42, data.
// `op` names the call in the abort: a remote free, or a realloc by a thread
// that does not own p (remote_realloc_check).
enum class RemoteOp : std::uint8_t { free, realloc };
void remote_free_suspect(Segment *s, void *p, RemoteOp op = RemoteOp::free) noexcept;
[[noreturn]] void remote_invalid(const void *p, RemoteOp op) noexcept;  // p starts no object
inline bool past_block_records(const Segment *s, const void *p) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & (kSegmentBytes - 1)) >= s->records_end;
}
// Both tests reach remote_free_suspect, which tells them apart: one call
// site, so that free's code around it is laid out as without the first.
inline void remote_check(Segment *s, void *p) noexcept {
  if (VAM_UNLIKELY(!past_block_records(s, p) || looks_freed(p))) remote_free_suspect(s, p);
}
// realloc of small or medium object p by a thread that does not own its
// block: p must start a slot its block has handed out (read from the block's
// record, whose start, size and bump the owner does not change while an
// object of the block lives: for a live p they are stable, and for any
// other pointer the test only decides which abort), and pass a remote
// free's checks (a medium object's mark, the owner's list). p then always
// moves: only the owner can tell whether p waits on its hot list or among
// its block's pending slots, freed already, where a realloc that kept p in
// place would hand it back while the owner hands it out again; the free
// that the move makes is a remote free, which the owner's drain checks.
void remote_realloc_check(Segment *s, void *p) noexcept;

// Free into another thread's heap, alone (remote_free_large marks a large
// object, then calls it with the plain form).
inline void remote_free(Heap *owner, void *p, RemoteForm form) noexcept {
  auto *f = static_cast<FreeObj *>(p);
  if (form == RemoteForm::marked) reinterpret_cast<RemoteObj *>(f)->mark = remote_mark_base(p);
  remote_push(owner, f, f, form);
}

// Remote frees of small objects, batched per owner: a CAS per free would
// keep the owner's `remote` line, which it reads in every slow path, moving
// between the cores (docs/vam.md, "Threads"). A batch goes with one CAS
// (remote_flush) once it holds kRemoteBatch objects, when another owner
// needs its slot, in vam_stats, vam_collect and at the thread's exit
// (remote_flush_all). A thread batches only once its exit is sure to send
// what it holds (`on`), and never into an orphan heap.
inline constexpr unsigned kRemoteSlots = 4;         // owners batched at once (direct-mapped)
inline constexpr std::uint32_t kRemoteBatch = 32;   // objects per CAS
struct RemoteBatch {
  Heap *heap;      // the owner, or null
  FreeObj *head;   // the last object freed; its chain ends at tail
  FreeObj *tail;   // the first object freed (next is null until sent)
  std::uint32_t count;
};
struct RemoteBatches {
  RemoteBatch slot[kRemoteSlots];
  // The thread's exit sends its batches (thread_done): `on` once the thread
  // is registered for that (with its heap, or, for a thread that only frees,
  // with none: remote_batching_start), cleared when it has run. `decided`:
  // no further try to register.
  bool on;
  bool decided;
};
extern __thread RemoteBatches t_remote __attribute__((tls_model("initial-exec")));
void remote_flush(RemoteBatch &b) noexcept;
void remote_flush_all() noexcept;
// A thread with no heap frees remotely: register it so that its exit sends
// its batches (threads.cpp). False if it cannot be (then it never batches).
bool remote_batching_start() noexcept;

// The drain follows the chain one object at a time, each a miss (another
// core wrote it). So a batched medium object carries a hint, `ahead`, the
// object kRemoteAhead places further down its batch, which the drain
// prefetches. kAheadBit in the link says the hint is set; remote_next masks
// it. Only a hint: the chain alone says which objects are freed.
inline constexpr unsigned kRemoteAhead = 4;

// ---- reclaim: remote frees an idle owner never drains (remote_reclaim.cpp)
// Every batch sent adds its objects to the owner's remote_queued, and every
// large object sent its size in kLargeUnit bytes; the owner's drain sets it
// to 0. The thread whose push brings it to kReclaimObjects takes the
// owner's whole stack, gives back the pages of every block whose every slot
// it holds and the inner pages of every large object, and pushes the rest
// back, with those blocks in records (the link to one carries kRecordBit)
// that the owner's drain applies as their frees (remote_record_apply).
inline constexpr std::int64_t kReclaimObjects = 8192;
// An owner that drained frees within this many milliseconds is working, and
// is not reclaimed: longer than the time slices an owner may wait for a CPU
// on a machine with more threads than CPUs (a few milliseconds), and read on
// a coarse clock (4 ms ticks here), so 8 to 12 ms in effect.
inline constexpr std::int64_t kOwnerWorkingMs = 10;
inline constexpr unsigned kLargeUnitShift = 8;  // a large object counts one per 256 bytes
inline constexpr std::uintptr_t kRecordBit = 2;
void remote_reclaim(Heap *owner) noexcept;
// Apply the record `tagged` links to (a heap's drain, h its heap); returns
// the link after it.
FreeObj *remote_record_apply(Heap *h, FreeObj *tagged) noexcept;
// Blocks given back by reclaims, and large objects they freed, all heaps
// (the tests read them).
extern std::atomic<std::uint64_t> g_reclaimed_blocks;
extern std::atomic<std::uint64_t> g_reclaimed_large;
// Reclaims given up because the owner, waiting for the pusher's CPU, drained
// once the pusher stepped aside (the tests read it).
extern std::atomic<std::uint64_t> g_reclaims_stepped_aside;
// Set: a reclaim takes the owner's stack at every threshold, whether or not
// the owner drained or waits for the CPU (the tests that race reclaims
// against a working owner set it; nothing else does).
extern std::atomic<bool> g_reclaim_always;
// fork waits for the reclaims that hold a heap's large lock, and none
// starts until it is done (remote_reclaim.cpp, LargeHold).
void reclaim_fork_prepare() noexcept;
void reclaim_fork_done() noexcept;
// Free large object p into another thread's heap, counted towards a reclaim.
void remote_free_large(Heap *owner, void *p) noexcept;

// `form`: p's (remote_form): a medium object's mark, and room for the hint.
inline void remote_free_batched(Heap *owner, void *p, RemoteForm form) noexcept {
  if (VAM_UNLIKELY(owner->orphan.load(std::memory_order_relaxed) != 0)) return remote_free(owner, p, form);
  RemoteBatch &b = t_remote.slot[(reinterpret_cast<std::uintptr_t>(owner) >> 12) % kRemoteSlots];
  if (VAM_UNLIKELY(b.heap != owner)) {
    if (b.count) remote_flush(b);
    b.heap = owner;
  }
  auto *f = static_cast<FreeObj *>(p);
  if (form == RemoteForm::marked) {
    // The bit marks room here; remote_flush sets the hint or clears the bit.
    auto *r = reinterpret_cast<RemoteObj *>(f);
    r->mark = remote_mark_base(p);
    r->link = reinterpret_cast<std::uintptr_t>(b.head) | kAheadBit;
  } else {
    remote_link(f, RemoteForm::keyed, b.head);
  }
  if (!b.head) b.tail = f;
  b.head = f;
  if (++b.count == kRemoteBatch) remote_flush(b);
}

}  // namespace alloclab::vam
