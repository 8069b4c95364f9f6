// instrument.hpp — the exports' hooks of the instrumented builds. libvam.so
// has none: override.cpp wraps each export in VAM_COUNTED / VAM_UNCOUNT /
// VAM_REALLOC_COUNTED, which expand to the bare call there, so its machine
// code is the same as without this file. Two builds define them:
//
//   libvam-stats.so     (VAM_COUNT)    counts the calls of each entry point and
//                       the peak of live bytes, for VAM_STATS: a counter on the
//                       fast paths would cost every call a read-modify-write of
//                       a shared line, so the default library keeps none.
//   libvam-secure.so    (VAM_SECURE)   calls the hardened entry points of
//                       secure.cpp instead of vam's (namespace secure, below).
//   libvam-memcheck.so  (VAM_MEMCHECK) tells Valgrind's memcheck about every
//                       object (client requests): run under
//                       `valgrind --soname-synonyms=somalloc=nouserintercepts`,
//                       memcheck then checks the program on vam's own heap
//                       (docs/vam.md, "Valgrind and the sanitizers").
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

// [p, p + n), inside objects memcheck holds freed, is about to hold vam's own
// words (a reclaim's record, remote_reclaim.cpp): addressable again.
#if defined(VAM_MEMCHECK)
void tell_vam_words(void *p, std::size_t n) noexcept;
#else
inline void tell_vam_words(void *, std::size_t) noexcept {}
#endif

#if defined(VAM_MEMCHECK)
// realloc in the memcheck build: in place when the object already holds n
// bytes, else a new object, the contents copied, the old one freed, each
// step told to memcheck (vam's own realloc would copy into memory memcheck
// still holds freed).
void *checked_realloc(void *p, std::size_t n) noexcept;
// calloc in the memcheck build: the object told to memcheck before it is
// cleared (vam's calloc clears a reused object memcheck still holds freed).
void *checked_calloc(std::size_t n, std::size_t size) noexcept;
#define VAM_CALLOC(n, size) ::alloclab::vam::checked_calloc((n), (size))
#else
#define VAM_CALLOC(n, size) VAM_COUNTED(calloc, v::calloc_impl((n), (size)))
#endif

#if defined(VAM_COUNT) || defined(VAM_MEMCHECK)
void *on_alloc(Call c, void *p) noexcept;          // p: what the call returns
void on_free(Call c, void *p) noexcept;            // before p goes
std::size_t usable_or_zero(const void *p) noexcept;  // a realloc's old size
void *on_realloc(std::size_t old, void *p, std::size_t n, void *r) noexcept;  // realloc(p, n) gave r
#define VAM_COUNTED(kind, expr) ::alloclab::vam::on_alloc(::alloclab::vam::Call::kind, (expr))
#define VAM_UNCOUNT(kind, p) ::alloclab::vam::on_free(::alloclab::vam::Call::kind, (p))
#if defined(VAM_MEMCHECK)
#define VAM_REALLOC_COUNTED(p, n, expr) ::alloclab::vam::checked_realloc((p), (n))
#else
// The old size is read before the realloc runs: a function's arguments are
// evaluated in no set order, and GCC ran the realloc first, after which p
// may be freed (a huge object moved or shrunk into a small one: its mapping
// unmapped, and the read aborted).
#define VAM_REALLOC_COUNTED(p, n, expr)                                        \
  ([&]() noexcept {                                                            \
    const std::size_t old_usable_ = ::alloclab::vam::usable_or_zero(p);        \
    return ::alloclab::vam::on_realloc(old_usable_, (p), (n), (expr));          \
  }())
#endif
#else
#define VAM_COUNTED(kind, expr) (expr)
#define VAM_UNCOUNT(kind, p) ((void)0)
#define VAM_REALLOC_COUNTED(p, n, expr) (expr)
#endif

#if defined(VAM_SECURE)
// vam's entry points with the secure mode's checks (secure.cpp); override.cpp
// calls these, as `v::`, in libvam-secure.so.
namespace secure {
void *malloc_impl(std::size_t n) noexcept;
void free_impl(void *p) noexcept;
void free_sized_impl(void *p, std::size_t size) noexcept;
void *calloc_impl(std::size_t n, std::size_t size) noexcept;
void *realloc_impl(void *p, std::size_t n) noexcept;
void *reallocarray_impl(void *p, std::size_t n, std::size_t size) noexcept;
void *memalign_impl(std::size_t alignment, std::size_t n) noexcept;
void *aligned_alloc_impl(std::size_t alignment, std::size_t n) noexcept;
int posix_memalign_impl(void **out, std::size_t alignment, std::size_t n) noexcept;
void *valloc_impl(std::size_t n) noexcept;
void *pvalloc_impl(std::size_t n) noexcept;
std::size_t usable_size_impl(const void *p) noexcept;
void *aligned_or_null(std::size_t alignment, std::size_t n) noexcept;
// What made an object, recorded in its front: the malloc family (any release
// taken), operator new, operator new[] (a delete of the other form aborts).
constexpr unsigned kFormMalloc = 0, kFormNew = 1, kFormNewArray = 2;
// operator new's and new[]'s object (align 0: new's own); null when out of memory.
void *new_or_null(std::size_t n, std::size_t align, unsigned form) noexcept;
// operator delete (form kFormNew) and delete[] (kFormNewArray), unsized and sized.
void delete_impl(void *p, unsigned form) noexcept;
void delete_sized_impl(void *p, std::size_t n, unsigned form) noexcept;
// memcpy's check (override.cpp exports the checked memcpy): aborts on a copy
// of n bytes to d past an object's end or into its front.
void check_copy(const void *d, std::size_t n) noexcept;
}  // namespace secure
#endif
// A sized release (free_sized, the sized deletes): each build checks the size
// against the object (secure: equal to the size asked; the others: no more
// than the object holds, api.hpp).
#define VAM_SIZED_FREE(p, n) v::free_sized_impl((p), (n))

}  // namespace alloclab::vam
