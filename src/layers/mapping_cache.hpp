// mapping_cache.hpp — MappingCache<Source, Policy>: a cache of freed
// mappings of any page-multiple size, handed out again for requests of other
// sizes.
//
// Objects that get a mapping of their own (vam's huge objects, a reap's large
// ones) come in sizes that rarely repeat exactly, so a cache keyed by size
// (chunk_cache.hpp) seldom hits. This one keeps up to Policy::kSlots mappings
// and, for a request of `bytes`, takes the smallest that holds it:
//   - as it is when it is at most twice the request;
//   - else split: the caller gets the first twice the request, and the rest
//     (the tail) stays in the cache, mapped, where only the mapping it came
//     from can take it back. Freeing the head joins the two again, so a
//     program that takes buffers of a few sizes in turn from one mapping
//     makes no system call (link-grammar's parser: a 2 MiB pool, then a
//     768 KiB one, from the same mapping, once per sentence). A tail left
//     alone goes back when the whole mapping would have (it keeps the
//     mapping's age), by Source::trim_chunk: the shrink, delayed, and not
//     made at all when the head comes back first;
// and failing any big enough, the largest smaller one grown in place when
// the address space after it is free (only to a size the cache would keep).
// A fresh mapping instead would cost an mmap, a fault per page and an
// munmap later. The caller learns the size it got, which may be more than
// it asked for. A caller that resizes a mapping it holds in place asks for
// its tail first (claim_tail), since a tail in the way stops the kernel
// from growing the mapping where it is; one that shrinks a mapping it holds
// can leave the cut-off end as such a tail (hold_tail), for a later grow
// to take back without faulting its pages in again.
//
// Mappings that waited Policy::delay_ms() or more are given back to Source
// by expire(false), which every put_chunk calls; expire(true) gives back
// all of them. When Source refuses a fresh mapping while the cache holds
// some (the address space ran out: ulimit -v), the cache is emptied and the
// request tried once more.
//
// Policy supplies, as static functions, what the owner decides:
//   static constexpr int kSlots          mappings kept at most
//   static std::size_t limit()           bytes the cache may hold now
//   static std::size_t max_bytes()       the largest mapping kept (or grown to)
//   static std::size_t max_tail_bytes()  optional: the largest shrink's end
//                                        held (hold_tail); max_bytes() if absent
//   static std::int64_t delay_ms()       age at which a mapping goes back;
//                                        kNever: kept until reused or expire(true)
//   static std::int64_t now_ms()         a monotonic clock (not read for kNever)
//
// Source has the chunk interface (mmap_heap.hpp) with resize_chunk and
// trim_chunk; this layer never reads or writes a mapping's contents, so
// cached mappings keep theirs (kFreshIsZeroed is false for what take()
// returns) and any header the owner keeps in them. State is static: one
// cache per <Source, Policy> per process, guarded by a SpinLock that is
// never held across a system call. Call prepare_fork/parent_after_fork/
// child_after_fork from pthread_atfork handlers.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "layers/spin_lock.hpp"

namespace alloclab {

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

template <class Source, class Policy>
class MappingCache : public Source {
  static constexpr int kSlots = Policy::kSlots;
  static_assert(kSlots > 0, "a cache needs a slot");

 public:
  static constexpr bool kFreshIsZeroed = false;

  // A mapping of at least `bytes` (a multiple of the page size): a cached
  // one, else a fresh one from Source. *got is its size. nullptr when the
  // system refuses even with the cache emptied.
  void *get_chunk(std::size_t bytes, std::size_t *got) noexcept {
    if (void *p = take(bytes, got)) return p;
    void *p = get_fresh(bytes);
    if (p) *got = bytes;
    return p;
  }

  // A cached mapping of at least `bytes`, contents left as they were; *got
  // is its size. nullptr when none fits (or growing one failed).
  void *take(std::size_t bytes, std::size_t *got) noexcept {
    State &s = state();
    if (s.bytes.load(std::memory_order_relaxed) == 0) return nullptr;  // a peek; the lock decides
    const bool grow_ok = bytes <= Policy::max_bytes();
    Slot picked{};
    s.lock.lock();
    int fit = -1, below = -1;
    for (int i = 0; i < kSlots; ++i) {
      const Slot &c = s.slot[i];
      if (!c.p || c.tail) continue;
      if (c.bytes >= bytes) {
        if (fit < 0 || c.bytes < s.slot[fit].bytes) fit = i;
      } else if (grow_ok && (below < 0 || c.bytes > s.slot[below].bytes)) {
        below = i;
      }
    }
    const int pick = fit >= 0 ? fit : below;
    if (pick >= 0) {
      picked = s.slot[pick];
      remove_locked(s, pick);
      if (picked.bytes > 2 * bytes) {
        // Split: the tail takes the slot the mapping leaves, and its age.
        const std::size_t head = 2 * bytes;
        s.slot[pick] = Slot{static_cast<char *>(picked.p) + head, picked.bytes - head, picked.freed_ms, true};
        s.bytes.store(s.bytes.load(std::memory_order_relaxed) + (picked.bytes - head), std::memory_order_relaxed);
        picked.bytes = head;
      }
    }
    s.lock.unlock();
    if (!picked.p) return nullptr;
    if (picked.bytes >= bytes) {
      s.hits.fetch_add(1, std::memory_order_relaxed);
      *got = picked.bytes;
      return picked.p;
    }
    // Grown in place: the start stays (an aligned Source's alignment with it).
    if (!Source::resize_chunk(picked.p, picked.bytes, bytes)) {
      if (!keep(picked.p, picked.bytes)) Source::put_chunk(picked.p, picked.bytes);
      return nullptr;
    }
    s.hits.fetch_add(1, std::memory_order_relaxed);
    s.resizes.fetch_add(1, std::memory_order_relaxed);
    *got = bytes;
    return picked.p;
  }

  // The last `bytes` of a mapping its caller holds and no longer uses (a
  // shrink), from `tail` on, held as a split's tail would be: the caller's
  // mapping takes it back (claim_tail, put_chunk) or it goes back after the
  // delay. False, nothing done, when it is above Policy's largest end held
  // or the cache has no room: the caller shrinks the mapping itself.
  bool hold_tail(void *tail, std::size_t bytes) noexcept {
    if (bytes > max_tail()) return false;
    return keep(tail, bytes, true);
  }

  // The tail a split left at `end` (the end of a mapping its caller holds),
  // taken out of the cache: its bytes, which the caller's mapping now
  // reaches, or 0 when the cache holds no tail there (none was left, or it
  // went back already).
  std::size_t claim_tail(void *end) noexcept {
    State &s = state();
    if (s.bytes.load(std::memory_order_relaxed) == 0) return 0;
    s.lock.lock();
    const std::size_t n = claim_tail_locked(s, end);
    s.lock.unlock();
    return n;
  }

  // A fresh mapping of `bytes` from Source, never a cached one; if Source
  // refuses while the cache holds mappings, they go back first and Source
  // is asked again. errno is left as it was when that second try succeeds.
  void *get_fresh(std::size_t bytes) noexcept {
    const int saved = errno;
    void *p = Source::get_chunk(bytes);
    if (!p && cached_bytes() != 0) {
      expire(true);
      p = Source::get_chunk(bytes);
      if (p) errno = saved;
    }
    return p;
  }
  // The same from an aligned Source, start + skew a multiple of `align`
  // (cached mappings are known to be aligned only to Source::kAlignment).
  void *get_fresh_at(std::size_t bytes, std::size_t align, std::size_t skew) noexcept {
    const int saved = errno;
    void *p = Source::get_chunk_at(bytes, align, skew);
    if (!p && cached_bytes() != 0) {
      expire(true);
      p = Source::get_chunk_at(bytes, align, skew);
      if (p) errno = saved;
    }
    return p;
  }

  // A mapping of `bytes` (whatever its origin, as long as Source can take it
  // back) is no longer used: joined with the tail a split left after it, if
  // the cache still holds it, then kept if it is small enough and fits the
  // limit and a slot, else given back to Source. Then mappings that waited
  // long enough go back.
  void put_chunk(void *p, std::size_t bytes) noexcept {
    bytes += claim_tail(static_cast<char *>(p) + bytes);
    if (!keep(p, bytes)) Source::put_chunk(p, bytes);
    expire(false);
  }

  // Give back to Source the mappings that waited Policy::delay_ms() or more
  // (all: every one). Unmapped outside the lock.
  void expire(bool all) noexcept {
    State &s = state();
    if (s.bytes.load(std::memory_order_relaxed) == 0) return;
    const std::int64_t delay = Policy::delay_ms();
    if (!all && delay == kNever) return;
    const std::int64_t now = all ? 0 : Policy::now_ms();
    Slot old[kSlots];
    int n = 0;
    s.lock.lock();
    for (int i = 0; i < kSlots; ++i) {
      if (s.slot[i].p && (all || now - s.slot[i].freed_ms >= delay)) {
        old[n++] = s.slot[i];
        remove_locked(s, i);
      }
    }
    s.lock.unlock();
    for (int i = 0; i < n; ++i) {
      if (old[i].tail) Source::trim_chunk(old[i].p, old[i].bytes);
      else Source::put_chunk(old[i].p, old[i].bytes);
    }
  }

  // Bytes of the mappings held now (relaxed: a statistic, exact once
  // the threads that free and take are quiet).
  static std::size_t cached_bytes() noexcept { return state().bytes.load(std::memory_order_relaxed); }
  // Requests served from the cache, and of them those that grew a mapping
  // (cumulative).
  static std::uint64_t hits() noexcept { return state().hits.load(std::memory_order_relaxed); }
  static std::uint64_t resizes() noexcept { return state().resizes.load(std::memory_order_relaxed); }

  static void prepare_fork() noexcept { state().lock.lock(); }
  static void parent_after_fork() noexcept { state().lock.unlock(); }
  static void child_after_fork() noexcept { state().lock.reset(); }

 private:
  struct Slot {  // trivial, so that expire's array of them costs nothing to declare
    void *p;  // nullptr: empty
    std::size_t bytes;
    std::int64_t freed_ms;
    bool tail;  // the end of a mapping that is in use: only claim_tail takes it
  };
  struct State {
    SpinLock lock;
    Slot slot[kSlots] = {};
    // Written under the lock; read without it by the peeks in take and
    // expire: atomic, so that a peek is a relaxed load, not a data race.
    std::atomic<std::size_t> bytes{0};
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> resizes{0};
  };
  static State &state() noexcept {
    static State s;  // constant-initialised: no guard, no allocation
    return s;
  }

  static std::size_t claim_tail_locked(State &s, void *end) noexcept {
    for (int i = 0; i < kSlots; ++i) {
      if (s.slot[i].p == end && s.slot[i].tail) {
        const std::size_t n = s.slot[i].bytes;
        remove_locked(s, i);
        return n;
      }
    }
    return 0;
  }

  static void remove_locked(State &s, int i) noexcept {
    s.bytes.store(s.bytes.load(std::memory_order_relaxed) - s.slot[i].bytes, std::memory_order_relaxed);
    s.slot[i].p = nullptr;
  }

  static std::size_t max_tail() noexcept {
    if constexpr (requires { Policy::max_tail_bytes(); }) return Policy::max_tail_bytes();
    else return Policy::max_bytes();
  }

  // Into a free slot, if the mapping and the limit allow; false otherwise.
  // `tail`: the end of a mapping in use (hold_tail), which only its mapping
  // takes back; its size was checked against max_tail().
  static bool keep(void *p, std::size_t bytes, bool tail = false) noexcept {
    if (!tail && bytes > Policy::max_bytes()) return false;
    const std::size_t limit = Policy::limit();
    const std::int64_t now = Policy::delay_ms() == kNever ? 0 : Policy::now_ms();
    State &s = state();
    bool kept = false;
    s.lock.lock();
    const std::size_t cached = s.bytes.load(std::memory_order_relaxed);
    if (cached + bytes <= limit) {
      for (int i = 0; i < kSlots; ++i) {
        if (!s.slot[i].p) {
          s.slot[i] = Slot{p, bytes, now, tail};
          s.bytes.store(cached + bytes, std::memory_order_relaxed);
          kept = true;
          break;
        }
      }
    }
    s.lock.unlock();
    return kept;
  }
};

}  // namespace alloclab
