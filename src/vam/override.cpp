// override.cpp — the only file that defines malloc. Every export is one line
// over the C++ logic in vam.cpp; malloc's and free's fast paths are inline
// (api.hpp), so malloc, free and operator new/delete hold them with no jump.
// Built into libvam.so (for LD_PRELOAD), its instrumented twins libvam-stats.so
// and libvam-memcheck.so (instrument.hpp), and libvam.a; not built when the
// sanitizers own malloc (ALLOCLAB_SANITIZE). All define operator new/delete,
// as the peers' libraries do: otherwise every new in a C++ program is
// libstdc++'s, a call more on its way to malloc (and delete the same).
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <new>

#include "vam/api.hpp"
#include "vam/instrument.hpp"

#define VAM_EXPORT extern "C" __attribute__((visibility("default")))

#if defined(VAM_SECURE)
namespace v = alloclab::vam::secure;  // libvam-secure.so: the same entry points, checked (secure.cpp)
#else
namespace v = alloclab::vam;
#endif

VAM_EXPORT void *malloc(size_t n) noexcept { return VAM_COUNTED(malloc, v::malloc_impl(n)); }
VAM_EXPORT void free(void *p) noexcept { VAM_UNCOUNT(free, p); v::free_impl(p); }
VAM_EXPORT void *calloc(size_t n, size_t size) noexcept { return VAM_CALLOC(n, size); }
VAM_EXPORT void *realloc(void *p, size_t n) noexcept { return VAM_REALLOC_COUNTED(p, n, v::realloc_impl(p, n)); }
VAM_EXPORT void *reallocarray(void *p, size_t n, size_t size) noexcept {
#if defined(VAM_MEMCHECK)
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return VAM_REALLOC_COUNTED(p, bytes, 0);
#else
  return VAM_REALLOC_COUNTED(p, n != 0 && size != 0, v::reallocarray_impl(p, n, size));
#endif
}
VAM_EXPORT int posix_memalign(void **out, size_t a, size_t n) noexcept {
#if defined(VAM_COUNT) || defined(VAM_MEMCHECK)
  const int r = v::posix_memalign_impl(out, a, n);
  if (r == 0) VAM_COUNTED(aligned, *out);
  return r;
#else
  return v::posix_memalign_impl(out, a, n);
#endif
}
VAM_EXPORT void *aligned_alloc(size_t a, size_t n) noexcept { return VAM_COUNTED(aligned, v::aligned_alloc_impl(a, n)); }
VAM_EXPORT void *memalign(size_t a, size_t n) noexcept { return VAM_COUNTED(aligned, v::memalign_impl(a, n)); }
VAM_EXPORT void *valloc(size_t n) noexcept { return VAM_COUNTED(aligned, v::valloc_impl(n)); }
VAM_EXPORT void *pvalloc(size_t n) noexcept { return VAM_COUNTED(aligned, v::pvalloc_impl(n)); }
VAM_EXPORT size_t malloc_usable_size(void *p) noexcept { return v::usable_size_impl(p); }
VAM_EXPORT void free_sized(void *p, size_t n) noexcept { VAM_UNCOUNT(free, p); VAM_SIZED_FREE(p, n); }
VAM_EXPORT void free_aligned_sized(void *p, size_t, size_t n) noexcept { VAM_UNCOUNT(free, p); VAM_SIZED_FREE(p, n); }
VAM_EXPORT void cfree(void *p) noexcept { VAM_UNCOUNT(free, p); v::free_impl(p); }

#if defined(VAM_SECURE)
// The guarded copy (secure_copy.cpp, check_copy); the copy itself is libc's memmove.
VAM_EXPORT void *memcpy(void *d, const void *s, size_t n) noexcept {
  v::check_copy(d, n);
  return memmove(d, s, n);
}
#endif

// glibc's internal names, used by some programs and by glibc itself.
VAM_EXPORT void *__libc_malloc(size_t n) noexcept { return VAM_COUNTED(malloc, v::malloc_impl(n)); }
VAM_EXPORT void __libc_free(void *p) noexcept { VAM_UNCOUNT(free, p); v::free_impl(p); }
VAM_EXPORT void *__libc_calloc(size_t n, size_t size) noexcept { return VAM_CALLOC(n, size); }
VAM_EXPORT void *__libc_realloc(void *p, size_t n) noexcept { return VAM_REALLOC_COUNTED(p, n, v::realloc_impl(p, n)); }
VAM_EXPORT void *__libc_memalign(size_t a, size_t n) noexcept { return VAM_COUNTED(aligned, v::memalign_impl(a, n)); }
VAM_EXPORT void *__libc_valloc(size_t n) noexcept { return VAM_COUNTED(aligned, v::valloc_impl(n)); }
VAM_EXPORT void *__libc_pvalloc(size_t n) noexcept { return VAM_COUNTED(aligned, v::pvalloc_impl(n)); }

// The C++ runtime's new-handler and bad_alloc. In libvam.so through weak
// references: the library then needs nothing of libstdc++ (a C program it is
// preloaded into loads none: docs/results.md, "Start-up"), and in a C++
// program, which has the runtime, they bind to it. libvam.a keeps strong ones:
// a weak reference pulls no member out of a static libstdc++.a, and a static
// C++ program would then abort where it should throw (a static link from C
// names -lstdc++, as vam.pc says). Asm labels name libstdc++'s symbols.
#if defined(VAM_SHARED_LIBRARY)
#define VAM_CXX_RUNTIME __attribute__((weak))
#else
#define VAM_CXX_RUNTIME
#endif
using NewHandler = void (*)();
extern "C" NewHandler cxx_get_new_handler() noexcept __asm__("_ZSt15get_new_handlerv") VAM_CXX_RUNTIME;
extern "C" [[noreturn]] void cxx_throw_bad_alloc() __asm__("_ZSt17__throw_bad_allocv") VAM_CXX_RUNTIME;

namespace {

// Whether a function of the C++ runtime is in the process (always, for a
// strong reference).
template <typename F>
inline bool linked(F *f) {
  return f != nullptr;
}

// Not noexcept: write(2) is a cancellation point, and a noexcept function
// around it would need the C++ runtime's personality routine to terminate.
[[noreturn, gnu::noinline, gnu::cold]] void no_cxx_runtime() {
  static const char msg[] = "vam: operator new: out of memory, and no C++ runtime to throw std::bad_alloc\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::abort();
}

// An object for operator new or new[] (kForm), null when out of memory. The
// secure build records which new made it, for the deletes to check.
constexpr unsigned kNew = 1, kNewArray = 2;
template <unsigned kForm>
inline void *new_or_null(size_t n, size_t align) {
#if defined(VAM_SECURE)
  static_assert(kNew == v::kFormNew && kNewArray == v::kFormNewArray);
  return v::new_or_null(n, align, kForm);
#else
  return align ? v::aligned_or_null(align, n) : v::malloc_impl(n);
#endif
}

// operator new out of memory: call the new_handler and retry while there is
// one, else throw std::bad_alloc (C++ [new.delete.single]). The handler may
// throw; the exception passes through these frames (they hold nothing to
// clean up, and override.cpp keeps its unwind tables: -fexceptions).
template <unsigned kForm>
[[gnu::noinline, gnu::cold]] void *new_slow(size_t n, size_t align) {
  for (;;) {
    void *p = new_or_null<kForm>(n, align);
    if (p) return p;
    const NewHandler handler = linked(cxx_get_new_handler) ? cxx_get_new_handler() : nullptr;
    if (!handler) {
      if (linked(cxx_throw_bad_alloc)) cxx_throw_bad_alloc();
      no_cxx_runtime();
    }
    handler();
  }
}

#if defined(VAM_SECURE)
template <unsigned kForm>
inline void *new_impl(size_t n) {
  void *p = new_or_null<kForm>(n, 0);
  return __builtin_expect(p != nullptr, 1) ? p : new_slow<kForm>(n, 0);
}
#else
// What malloc's inline path does not take (malloc_miss, malloc_other), then
// new_slow on null: passed to malloc_inline, so that operator new's inline
// path saves no register to test malloc's result after it. Both forms of new
// are one here: only the secure build tells them apart.
[[gnu::noinline]] void *new_miss(size_t n) {
  void *p = v::malloc_miss(n);
  return __builtin_expect(p != nullptr, 1) ? p : new_slow<kNew>(n, 0);
}
[[gnu::noinline]] void *new_other(size_t n) {
  void *p = v::malloc_other(n);
  return __builtin_expect(p != nullptr, 1) ? p : new_slow<kNew>(n, 0);
}

template <unsigned kForm>
inline void *new_impl(size_t n) {
  return v::malloc_inline<new_miss, new_other>(n);
}
#endif
template <unsigned kForm>
inline void *new_aligned(size_t n, std::align_val_t a) {
  void *p = new_or_null<kForm>(n, static_cast<size_t>(a));
  return p ? p : new_slow<kForm>(n, static_cast<size_t>(a));
}

// The deletes: the secure build checks that the object came from their own
// new (or from malloc).
template <unsigned kForm>
inline void delete_impl(void *p) noexcept {
#if defined(VAM_SECURE)
  v::delete_impl(p, kForm);
#else
  v::free_impl(p);
#endif
}
template <unsigned kForm>
inline void delete_sized(void *p, size_t n) noexcept {
#if defined(VAM_SECURE)
  v::delete_sized_impl(p, n, kForm);
#else
  VAM_SIZED_FREE(p, n);
#endif
}

}  // namespace

// The throwing forms and every delete. The nothrow forms of new are the C++
// runtime's own, which call these inside a try block: defining them here
// would need the runtime's exception handling (its personality routine) and
// so libstdc++ again. They are rare; the hop costs nothing that matters.
#define VAM_NEW __attribute__((visibility("default")))

VAM_NEW void *operator new(size_t n) { return VAM_COUNTED(new_, new_impl<kNew>(n)); }
VAM_NEW void *operator new[](size_t n) { return VAM_COUNTED(new_, new_impl<kNewArray>(n)); }
VAM_NEW void *operator new(size_t n, std::align_val_t a) { return VAM_COUNTED(new_, new_aligned<kNew>(n, a)); }
VAM_NEW void *operator new[](size_t n, std::align_val_t a) { return VAM_COUNTED(new_, new_aligned<kNewArray>(n, a)); }

VAM_NEW void operator delete(void *p) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNew>(p); }
VAM_NEW void operator delete[](void *p) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNewArray>(p); }
VAM_NEW void operator delete(void *p, size_t n) noexcept { VAM_UNCOUNT(delete_, p); delete_sized<kNew>(p, n); }
VAM_NEW void operator delete[](void *p, size_t n) noexcept { VAM_UNCOUNT(delete_, p); delete_sized<kNewArray>(p, n); }
VAM_NEW void operator delete(void *p, const std::nothrow_t &) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNew>(p); }
VAM_NEW void operator delete[](void *p, const std::nothrow_t &) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNewArray>(p); }
VAM_NEW void operator delete(void *p, std::align_val_t) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNew>(p); }
VAM_NEW void operator delete[](void *p, std::align_val_t) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNewArray>(p); }
VAM_NEW void operator delete(void *p, size_t n, std::align_val_t) noexcept { VAM_UNCOUNT(delete_, p); delete_sized<kNew>(p, n); }
VAM_NEW void operator delete[](void *p, size_t n, std::align_val_t) noexcept { VAM_UNCOUNT(delete_, p); delete_sized<kNewArray>(p, n); }
VAM_NEW void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNew>(p); }
VAM_NEW void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { VAM_UNCOUNT(delete_, p); delete_impl<kNewArray>(p); }
