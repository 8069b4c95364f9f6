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
#include "vam/heap.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

// The chain first..last (linked through `next`) onto owner's remote stack:
// one CAS, no lock (the owner drains later).
inline void remote_push(Heap *owner, FreeObj *first, FreeObj *last) noexcept {
  FreeObj *head = owner->remote.load(std::memory_order_relaxed);
  do {
    last->next = head;
  } while (!owner->remote.compare_exchange_weak(head, first, std::memory_order_release,
                                                std::memory_order_relaxed));
  if (VAM_UNLIKELY(owner->orphan.load(std::memory_order_relaxed) != 0)) orphan_freed(owner);
}

// Free into another thread's heap, alone.
inline void remote_free(Heap *owner, void *p) noexcept {
  auto *f = static_cast<FreeObj *>(p);
  remote_push(owner, f, f);
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
// core wrote it). So a batched object with room for a second word (a
// medium segment's: 32 bytes or more) carries a hint there, `ahead`, the
// object kRemoteAhead places further down its batch, which the drain
// prefetches. Bit 0 of the link says the hint is set; remote_next masks it.
// Only a hint: the chain alone says which objects are freed.
inline constexpr unsigned kRemoteAhead = 4;
inline constexpr std::uintptr_t kAheadBit = 1;
struct RemoteObj {
  std::uintptr_t link;  // the next object, | kAheadBit when `ahead` is set
  FreeObj *ahead;
};
inline FreeObj *remote_next(const FreeObj *f) noexcept {
  return reinterpret_cast<FreeObj *>(reinterpret_cast<std::uintptr_t>(f->next) & ~kAheadBit);
}

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

// `roomy`: p's object has room for the hint (a medium segment's).
inline void remote_free_batched(Heap *owner, void *p, bool roomy) noexcept {
  if (VAM_UNLIKELY(owner->orphan.load(std::memory_order_relaxed) != 0)) return remote_free(owner, p);
  RemoteBatch &b = t_remote.slot[(reinterpret_cast<std::uintptr_t>(owner) >> 12) % kRemoteSlots];
  if (VAM_UNLIKELY(b.heap != owner)) {
    if (b.count) remote_flush(b);
    b.heap = owner;
  }
  auto *f = static_cast<FreeObj *>(p);
  // The bit marks room here; remote_flush sets the hint or clears the bit.
  f->next = reinterpret_cast<FreeObj *>(reinterpret_cast<std::uintptr_t>(b.head) | std::uintptr_t{roomy});
  if (!b.head) b.tail = f;
  b.head = f;
  if (++b.count == kRemoteBatch) remote_flush(b);
}

}  // namespace alloclab::vam
