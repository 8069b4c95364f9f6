// tool_hooks.hpp — tell memory checkers what our heaps are doing, so that a
// use-after-free or an overflow inside a reap is reported like one on malloc.
//
// Two checkers are understood, each compiled in only when available:
//   * AddressSanitizer (building with -fsanitize=address): manual poisoning.
//   * Valgrind memcheck (<valgrind/memcheck.h> present): mempool client
//     requests plus NOACCESS/DEFINED marking. Active only when the program
//     actually runs under Valgrind, so a normal run pays one predictable
//     branch.
//
// The vocabulary, all no-ops when no checker is active:
//   hide(p, n)        nobody may touch [p, p+n) (free payloads, unbumped space)
//   reveal(p, n)      allocator metadata inside a hidden range: open for us
//   object_alloc(pool, p, n)   [p, p+n) is now a live object (contents undefined)
//   object_free(pool, p, n)    the object at p has died (becomes hidden)
//   object_resize(pool, p, old_n, new_n)
//   pool_create(pool) / pool_destroy(pool)
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define ALLOCLAB_ASAN 1
#include <sanitizer/asan_interface.h>
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOCLAB_ASAN 1
#include <sanitizer/asan_interface.h>
#endif
#endif

#if defined(ALLOCLAB_HAVE_VALGRIND_H)
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#endif

namespace alloclab::tools {

// True when some checker is watching this process. A plain flag, so hot
// paths pay one load: constant under ASan, and set by init() under
// Valgrind. Owners call init() once before their first heap operation.
#if defined(ALLOCLAB_ASAN)
inline constexpr bool kActive = true;
inline constexpr bool active() noexcept { return true; }
inline void init() noexcept {}
#else
inline bool g_active = false;
inline bool active() noexcept { return g_active; }
inline void init() noexcept {
#if defined(ALLOCLAB_HAVE_VALGRIND_H)
  g_active = RUNNING_ON_VALGRIND != 0;
#endif
}
#endif

inline void hide(const void *p, std::size_t n) noexcept {
  (void)p; (void)n;
#if defined(ALLOCLAB_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#elif defined(ALLOCLAB_HAVE_VALGRIND_H)
  VALGRIND_MAKE_MEM_NOACCESS(p, n);
#endif
}

inline void reveal(const void *p, std::size_t n) noexcept {
  (void)p; (void)n;
#if defined(ALLOCLAB_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#elif defined(ALLOCLAB_HAVE_VALGRIND_H)
  VALGRIND_MAKE_MEM_DEFINED(p, n);
#endif
}

inline void object_alloc(const void *pool, const void *p, std::size_t n) noexcept {
  (void)pool; (void)p; (void)n;
#if defined(ALLOCLAB_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#elif defined(ALLOCLAB_HAVE_VALGRIND_H)
  VALGRIND_MEMPOOL_ALLOC(pool, p, n);
#endif
}

inline void object_free(const void *pool, const void *p, std::size_t n) noexcept {
  (void)pool; (void)p; (void)n;
#if defined(ALLOCLAB_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#elif defined(ALLOCLAB_HAVE_VALGRIND_H)
  VALGRIND_MEMPOOL_FREE(pool, p);
#endif
}

inline void object_resize(const void *pool, const void *p, std::size_t old_n,
                          std::size_t new_n) noexcept {
  (void)pool; (void)p; (void)old_n; (void)new_n;
#if defined(ALLOCLAB_ASAN)
  if (new_n > old_n) ASAN_UNPOISON_MEMORY_REGION(static_cast<const char *>(p) + old_n, new_n - old_n);
  else ASAN_POISON_MEMORY_REGION(static_cast<const char *>(p) + new_n, old_n - new_n);
#elif defined(ALLOCLAB_HAVE_VALGRIND_H)
  VALGRIND_MEMPOOL_CHANGE(pool, p, p, new_n);
  if (new_n > old_n) VALGRIND_MAKE_MEM_UNDEFINED(static_cast<const char *>(p) + old_n, new_n - old_n);
  else VALGRIND_MAKE_MEM_NOACCESS(static_cast<const char *>(p) + new_n, old_n - new_n);
#endif
}

inline void pool_create(const void *pool) noexcept {
  (void)pool;
#if !defined(ALLOCLAB_ASAN) && defined(ALLOCLAB_HAVE_VALGRIND_H)
  VALGRIND_CREATE_MEMPOOL(pool, 0, 0);
#endif
}

inline void pool_destroy(const void *pool) noexcept {
  (void)pool;
#if !defined(ALLOCLAB_ASAN) && defined(ALLOCLAB_HAVE_VALGRIND_H)
  VALGRIND_DESTROY_MEMPOOL(pool);
#endif
}

}  // namespace alloclab::tools
