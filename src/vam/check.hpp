// check.hpp — internal invariants, checked in debug builds only (no NDEBUG);
// release hot paths carry none. A failure writes one line with write(2) and
// aborts: no stdio, no allocation.
#pragma once

namespace alloclab::vam {
[[noreturn]] void check_failed(const char *what, const char *file, int line) noexcept;
}

#ifdef NDEBUG
#define VAM_CHECK(cond) ((void)0)
#else
#define VAM_CHECK(cond) \
  ((cond) ? (void)0 : ::alloclab::vam::check_failed(#cond, __FILE__, __LINE__))
#endif
