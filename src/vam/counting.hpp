// counting.hpp — call counts and peak live bytes, kept only by the counting
// build (libvam-stats.so, VAM_COUNT defined). The default library keeps no
// per-call count: a counter on malloc's and free's fast paths would cost every
// call a read-modify-write of a shared line. override.cpp wraps each export
// in VAM_COUNTED / VAM_UNCOUNT, which expand to the bare call without VAM_COUNT,
// so libvam.so's machine code is the same as without this file.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alloclab::vam {

enum class Call : unsigned { malloc, calloc, realloc, aligned, new_, free, delete_, kinds };

struct CallCounts {
  bool counted = false;                             // false: this build keeps no counts
  std::uint64_t calls[unsigned(Call::kinds)] = {};  // per kind of entry point
  std::int64_t live_bytes = 0;                      // usable bytes allocated and not freed
  std::int64_t peak_live_bytes = 0;                 // the most live_bytes ever was
};

// A snapshot (relaxed reads: approximate while other threads allocate).
void call_counts(CallCounts *out) noexcept;

#if defined(VAM_COUNT)
void *count_alloc(Call c, void *p) noexcept;            // p: what the call returns
void count_free(Call c, const void *p) noexcept;        // before p goes
std::size_t count_usable(const void *p) noexcept;       // a realloc's old size
void *count_realloc(std::size_t old, const void *p, std::size_t n, void *r) noexcept;
#define VAM_COUNTED(kind, expr) ::alloclab::vam::count_alloc(::alloclab::vam::Call::kind, (expr))
#define VAM_UNCOUNT(kind, p) ::alloclab::vam::count_free(::alloclab::vam::Call::kind, (p))
#define VAM_REALLOC_COUNTED(p, n, expr)                                   \
  ::alloclab::vam::count_realloc(::alloclab::vam::count_usable(p), (p), (n), (expr))
#else
#define VAM_COUNTED(kind, expr) (expr)
#define VAM_UNCOUNT(kind, p) ((void)0)
#define VAM_REALLOC_COUNTED(p, n, expr) (expr)
#endif

}  // namespace alloclab::vam
