// instrument.cpp — the hooks of the instrumented builds (instrument.hpp).
// The counting build keeps global relaxed atomics: exact across threads, a
// cost it accepts. The memcheck build describes each object to memcheck as
// its usable size (what realloc keeps in place: checked_realloc), and at free keeps addressable
// what vam itself writes into a freed object: the first 16 bytes of a page
// block's object (its free-list link and double-free word), the whole of a
// larger one (its chunk's tags and links); the rest of a small object is
// out of bounds once freed, as memcheck's own allocator makes it.
#include "vam/instrument.hpp"

#include <errno.h>
#include <string.h>

#include <atomic>

#include "vam/api.hpp"

#if defined(VAM_MEMCHECK)
#include <valgrind/memcheck.h>
#endif

namespace alloclab::vam {

#if defined(VAM_COUNT) || defined(VAM_MEMCHECK)

namespace {

#if defined(VAM_COUNT)
struct Counters {
  std::atomic<std::uint64_t> calls[unsigned(Call::kinds)] = {};
  std::atomic<std::int64_t> live{0};
  std::atomic<std::int64_t> peak{0};
};
constinit Counters g_counts;

void add_live(std::int64_t d) noexcept {
  const std::int64_t now = g_counts.live.fetch_add(d, std::memory_order_relaxed) + d;
  std::int64_t peak = g_counts.peak.load(std::memory_order_relaxed);
  while (now > peak && !g_counts.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void count(Call c) noexcept { g_counts.calls[unsigned(c)].fetch_add(1, std::memory_order_relaxed); }
#else
void add_live(std::int64_t) noexcept {}
void count(Call) noexcept {}
#endif

#if defined(VAM_MEMCHECK)
// What stays addressable of a freed object of `usable` bytes (above).
constexpr std::size_t kSmallMax = 1024;
constexpr std::size_t kLinkBytes = 16;

void tell_alloc(void *p, std::size_t usable, bool zeroed) noexcept {
  VALGRIND_MALLOCLIKE_BLOCK(p, usable, 0, zeroed);
}
void tell_free(void *p, std::size_t usable) noexcept {
  VALGRIND_FREELIKE_BLOCK(p, 0);
  VALGRIND_MAKE_MEM_DEFINED(p, usable <= kSmallMax ? (usable < kLinkBytes ? usable : kLinkBytes) : usable);
}
#else
void tell_alloc(void *, std::size_t, bool) noexcept {}
void tell_free(void *, std::size_t) noexcept {}
#endif

}  // namespace

#if defined(VAM_MEMCHECK)
void tell_vam_words(void *p, std::size_t n) noexcept { VALGRIND_MAKE_MEM_UNDEFINED(p, n); }
#endif

void *on_alloc(Call c, void *p) noexcept {
  count(c);
  if (p) {
    const std::size_t usable = usable_size_impl(p);
    add_live(static_cast<std::int64_t>(usable));
    tell_alloc(p, usable, c == Call::calloc);
  }
  return p;
}

void on_free(Call c, void *p) noexcept {
  count(c);
  if (p) {
    const std::size_t usable = usable_size_impl(p);
    add_live(-static_cast<std::int64_t>(usable));
    tell_free(p, usable);
  }
}

std::size_t usable_or_zero(const void *p) noexcept { return p ? usable_size_impl(p) : 0; }

// realloc(p, n) returned r: the old object went unless r is null for a
// nonzero n (then p stays as it was).
void *on_realloc(std::size_t old, void *p, std::size_t n, void *r) noexcept {
  count(Call::realloc);
  if (r == nullptr && n != 0) return r;
  add_live(static_cast<std::int64_t>(r ? usable_size_impl(r) : 0) - static_cast<std::int64_t>(p ? old : 0));
  return r;
}

#if defined(VAM_MEMCHECK)
void *checked_calloc(std::size_t n, std::size_t size) noexcept {
  std::size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void *p = on_alloc(Call::calloc, malloc_impl(bytes));
  if (p) memset(p, 0, bytes);
  return p;
}

void *checked_realloc(void *p, std::size_t n) noexcept {
  if (p == nullptr) return on_alloc(Call::realloc, malloc_impl(n));
  if (n == 0) {  // as vam's realloc (and glibc's): frees p, returns null
    on_free(Call::realloc, p);
    free_impl(p);
    return nullptr;
  }
  const std::size_t old = usable_size_impl(p);
  if (n <= old) return p;
  void *q = on_alloc(Call::realloc, malloc_impl(n));
  if (q == nullptr) return nullptr;  // errno is ENOMEM; p stays valid
  memcpy(q, p, old);
  on_free(Call::realloc, p);
  free_impl(p);
  return q;
}
#endif

#endif  // VAM_COUNT || VAM_MEMCHECK

#if defined(VAM_COUNT)
void call_counts(CallCounts *out) noexcept {
  out->counted = true;
  for (unsigned k = 0; k < unsigned(Call::kinds); ++k)
    out->calls[k] = g_counts.calls[k].load(std::memory_order_relaxed);
  out->live_bytes = g_counts.live.load(std::memory_order_relaxed);
  out->peak_live_bytes = g_counts.peak.load(std::memory_order_relaxed);
}
#else
void call_counts(CallCounts *out) noexcept { *out = CallCounts{}; }
#endif

}  // namespace alloclab::vam
