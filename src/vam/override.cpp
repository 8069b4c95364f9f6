// override.cpp — the only file that defines malloc. Every export is one line
// over the C++ logic in vam.cpp; malloc's and free's fast paths are inline
// (api.hpp), so malloc, free and operator new/delete hold them with no jump. Built into libvam.so (for LD_PRELOAD) and
// libvam.a; not built when the sanitizers own malloc (ALLOCLAB_SANITIZE).
// The operator new/delete family is compiled in only for the static library
// (VAM_OVERRIDE_NEW): under LD_PRELOAD, libstdc++'s operators already call
// our malloc.
#include <errno.h>
#include <stddef.h>

#include "vam/api.hpp"

#if defined(VAM_OVERRIDE_NEW)
#include <new>
#endif

#define VAM_EXPORT extern "C" __attribute__((visibility("default")))

namespace v = alloclab::vam;

VAM_EXPORT void *malloc(size_t n) noexcept { return v::malloc_impl(n); }
VAM_EXPORT void free(void *p) noexcept { v::free_impl(p); }
VAM_EXPORT void *calloc(size_t n, size_t size) noexcept { return v::calloc_impl(n, size); }
VAM_EXPORT void *realloc(void *p, size_t n) noexcept { return v::realloc_impl(p, n); }
VAM_EXPORT void *reallocarray(void *p, size_t n, size_t size) noexcept { return v::reallocarray_impl(p, n, size); }
VAM_EXPORT int posix_memalign(void **out, size_t a, size_t n) noexcept { return v::posix_memalign_impl(out, a, n); }
VAM_EXPORT void *aligned_alloc(size_t a, size_t n) noexcept { return v::aligned_alloc_impl(a, n); }
VAM_EXPORT void *memalign(size_t a, size_t n) noexcept { return v::memalign_impl(a, n); }
VAM_EXPORT void *valloc(size_t n) noexcept { return v::valloc_impl(n); }
VAM_EXPORT void *pvalloc(size_t n) noexcept { return v::pvalloc_impl(n); }
VAM_EXPORT size_t malloc_usable_size(void *p) noexcept { return v::usable_size_impl(p); }
VAM_EXPORT void free_sized(void *p, size_t) noexcept { v::free_impl(p); }
VAM_EXPORT void free_aligned_sized(void *p, size_t, size_t) noexcept { v::free_impl(p); }
VAM_EXPORT void cfree(void *p) noexcept { v::free_impl(p); }

// glibc's internal names, used by some programs and by glibc itself.
VAM_EXPORT void *__libc_malloc(size_t n) noexcept { return v::malloc_impl(n); }
VAM_EXPORT void __libc_free(void *p) noexcept { v::free_impl(p); }
VAM_EXPORT void *__libc_calloc(size_t n, size_t size) noexcept { return v::calloc_impl(n, size); }
VAM_EXPORT void *__libc_realloc(void *p, size_t n) noexcept { return v::realloc_impl(p, n); }
VAM_EXPORT void *__libc_memalign(size_t a, size_t n) noexcept { return v::memalign_impl(a, n); }
VAM_EXPORT void *__libc_valloc(size_t n) noexcept { return v::valloc_impl(n); }
VAM_EXPORT void *__libc_pvalloc(size_t n) noexcept { return v::pvalloc_impl(n); }

#if defined(VAM_OVERRIDE_NEW)

namespace {

// operator new: retry through the new_handler, else throw (C++ [new.delete.single]).
[[gnu::noinline]] void *new_slow(size_t n, size_t align, bool nothrow) {
  for (;;) {
    void *p = align ? v::aligned_or_null(align, n) : v::malloc_impl(n);
    if (p) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) {
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    handler();
  }
}

inline void *new_impl(size_t n) {
  void *p = v::malloc_impl(n);
  return __builtin_expect(p != nullptr, 1) ? p : new_slow(n, 0, false);
}
inline void *new_aligned(size_t n, std::align_val_t a) {
  void *p = v::aligned_or_null(static_cast<size_t>(a), n);
  return p ? p : new_slow(n, static_cast<size_t>(a), false);
}
inline void *new_nothrow(size_t n) noexcept {
  void *p = v::malloc_impl(n);
  if (p) return p;
  try { return new_slow(n, 0, true); } catch (...) { return nullptr; }
}
inline void *new_aligned_nothrow(size_t n, std::align_val_t a) noexcept {
  void *p = v::aligned_or_null(static_cast<size_t>(a), n);
  if (p) return p;
  try { return new_slow(n, static_cast<size_t>(a), true); } catch (...) { return nullptr; }
}

}  // namespace

#define VAM_NEW __attribute__((visibility("default")))

VAM_NEW void *operator new(size_t n) { return new_impl(n); }
VAM_NEW void *operator new[](size_t n) { return new_impl(n); }
VAM_NEW void *operator new(size_t n, const std::nothrow_t &) noexcept { return new_nothrow(n); }
VAM_NEW void *operator new[](size_t n, const std::nothrow_t &) noexcept { return new_nothrow(n); }
VAM_NEW void *operator new(size_t n, std::align_val_t a) { return new_aligned(n, a); }
VAM_NEW void *operator new[](size_t n, std::align_val_t a) { return new_aligned(n, a); }
VAM_NEW void *operator new(size_t n, std::align_val_t a, const std::nothrow_t &) noexcept { return new_aligned_nothrow(n, a); }
VAM_NEW void *operator new[](size_t n, std::align_val_t a, const std::nothrow_t &) noexcept { return new_aligned_nothrow(n, a); }

VAM_NEW void operator delete(void *p) noexcept { v::free_impl(p); }
VAM_NEW void operator delete[](void *p) noexcept { v::free_impl(p); }
VAM_NEW void operator delete(void *p, size_t) noexcept { v::free_impl(p); }
VAM_NEW void operator delete[](void *p, size_t) noexcept { v::free_impl(p); }
VAM_NEW void operator delete(void *p, const std::nothrow_t &) noexcept { v::free_impl(p); }
VAM_NEW void operator delete[](void *p, const std::nothrow_t &) noexcept { v::free_impl(p); }
VAM_NEW void operator delete(void *p, std::align_val_t) noexcept { v::free_impl(p); }
VAM_NEW void operator delete[](void *p, std::align_val_t) noexcept { v::free_impl(p); }
VAM_NEW void operator delete(void *p, size_t, std::align_val_t) noexcept { v::free_impl(p); }
VAM_NEW void operator delete[](void *p, size_t, std::align_val_t) noexcept { v::free_impl(p); }
VAM_NEW void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { v::free_impl(p); }
VAM_NEW void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { v::free_impl(p); }

#endif
