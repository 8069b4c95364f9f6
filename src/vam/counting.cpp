// counting.cpp — the counters of the counting build (counting.hpp). Global
// relaxed atomics: exact across threads, and a cost the counting build
// accepts; the default build compiles only call_counts(), which says it
// counted nothing.
#include "vam/counting.hpp"

#include <atomic>

#include "vam/api.hpp"

namespace alloclab::vam {

#if defined(VAM_COUNT)

namespace {

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

}  // namespace

void *count_alloc(Call c, void *p) noexcept {
  g_counts.calls[unsigned(c)].fetch_add(1, std::memory_order_relaxed);
  if (p) add_live(static_cast<std::int64_t>(usable_size_impl(p)));
  return p;
}

void count_free(Call c, const void *p) noexcept {
  g_counts.calls[unsigned(c)].fetch_add(1, std::memory_order_relaxed);
  if (p) add_live(-static_cast<std::int64_t>(usable_size_impl(p)));
}

std::size_t count_usable(const void *p) noexcept { return p ? usable_size_impl(p) : 0; }

// realloc(p, n) returned r: the old object went unless r is null for a
// nonzero n (then p stays as it was).
void *count_realloc(std::size_t old, const void *p, std::size_t n, void *r) noexcept {
  g_counts.calls[unsigned(Call::realloc)].fetch_add(1, std::memory_order_relaxed);
  if (r == nullptr && n != 0) return r;
  add_live(static_cast<std::int64_t>(r ? usable_size_impl(r) : 0) - static_cast<std::int64_t>(p ? old : 0));
  return r;
}

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
