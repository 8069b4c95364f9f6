// check.hpp — internal invariants, checked in debug builds only (no NDEBUG);
// release hot paths carry none. Hardening checks (corruption()) run always. A
// failure writes one line with write(2) and aborts: no stdio, no allocation.
// Also the compiler hints every part of libvam uses.
#pragma once

namespace alloclab::vam {
[[noreturn]] void check_failed(const char *what, const char *file, int line) noexcept;
// Hardening, in every build: a misuse the program made (double free, a
// pointer libvam never handed out) found by a check that costs a compare.
// Writes "vam: <what>: <pointer>" with write(2) and aborts, as glibc does.
[[noreturn]] void corruption(const char *what, const void *p) noexcept;
// Metadata beside an object found overwritten (a free-list link, a boundary
// tag): "vam: <op>: heap corruption near <near> (overflow?)", then abort.
[[noreturn]] void corruption_near(const char *op, const void *near) noexcept;
}

#define VAM_LIKELY(x) __builtin_expect(!!(x), 1)
#define VAM_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifdef NDEBUG
#define VAM_CHECK(cond) ((void)0)
#else
#define VAM_CHECK(cond) \
  ((cond) ? (void)0 : ::alloclab::vam::check_failed(#cond, __FILE__, __LINE__))
#endif

// The globals the fast paths read, declared hidden: -fvisibility=hidden marks
// only definitions, so for a plain extern declaration the compiler in a
// shared library must load the address from the GOT (which the linker then
// turns into a lea), one instruction more on each access than the
// rip-relative operand it uses for a symbol it knows is in this library.
#define VAM_HIDDEN __attribute__((visibility("hidden")))
