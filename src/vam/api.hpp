// api.hpp — the allocator's entry points as hidden C++ functions. The C faces
// (vam_* in vam.cpp, malloc & co. in override.cpp) are one line each over these.
//
// malloc_impl and free_impl are inline, here, rather than defined in vam.cpp:
// the exported malloc and free then hold the fast paths themselves, with no
// jump from a wrapper. Not aliases in vam.cpp, which would avoid the jump
// too: a static link against libc.a must find the whole malloc family in
// the one object that defines malloc (override.o), or it pulls libc's
// malloc.o as well.
#pragma once

#include <cstddef>

#include "vam/free_cache.hpp"
#include "vam/free_list.hpp"
#include "vam/heap.hpp"
#include "vam/hot_list.hpp"
#include "vam/layout.hpp"
#include "vam/small_free.hpp"

namespace alloclab::vam {

void *calloc_impl(std::size_t n, std::size_t size) noexcept;
void *realloc_impl(void *p, std::size_t n) noexcept;
void *reallocarray_impl(void *p, std::size_t n, std::size_t size) noexcept;
void *memalign_impl(std::size_t alignment, std::size_t n) noexcept;       // glibc memalign rules
void *aligned_alloc_impl(std::size_t alignment, std::size_t n) noexcept;  // C17 / glibc rules
int posix_memalign_impl(void **out, std::size_t alignment, std::size_t n) noexcept;
void *valloc_impl(std::size_t n) noexcept;
void *pvalloc_impl(std::size_t n) noexcept;
std::size_t usable_size_impl(const void *p) noexcept;
// For operator new: allocate or nullptr, without setting errno semantics aside.
void *aligned_or_null(std::size_t alignment, std::size_t n) noexcept;

// The calling thread's heap: never null. A thread that has none yet, or whose
// heap its exit abandoned, points at g_empty_heap, whose class fronts are all
// null, so its first small malloc simply misses and malloc_miss gives it a
// heap (or, once exiting, the exit heap): the inline path tests no pointer
// for null. A POD pointer in initial-exec TLS: reading it never allocates and
// never calls __tls_get_addr (threads.cpp).
extern __thread Heap *t_heap __attribute__((tls_model("initial-exec")));
extern Heap g_empty_heap VAM_HIDDEN;  // constant-initialised, never used for objects

// Out of line (vam.cpp): a small request whose front block cannot serve it
// (or a thread with no heap yet), every request the inline path does not
// take (headers, coarse classes, large, huge, overflow), and every free but
// the common local one (free_checked).
void *malloc_miss(std::size_t n) noexcept;
void *malloc_other(std::size_t n) noexcept;
void free_checked(Segment *s, void *p) noexcept;
// free_sized_impl's cases off its fast path: n larger than p's object
// (sized_release_too_big aborts), or p not in a segment the thread's free
// cache holds (free_checked_sized: the same test, then free_checked).
[[noreturn]] void sized_release_too_big(const void *p) noexcept;
void free_checked_sized(Segment *s, void *p, std::size_t n) noexcept;

// The class's hot list, if it holds an object, comes first (hot_list.hpp):
// the object the last free into a full block gave back, no block to
// update. Then the front block; Miss(n) when neither serves.
template <auto Miss>
[[gnu::always_inline]] inline void *malloc_from(FrontSlot &slot, std::size_t n) noexcept(noexcept(Miss(n))) {
  if (const std::uintptr_t v = load_relaxed(slot.hot)) return hot_take(slot.hot, v);
  if (void *p = small_alloc_block(slot.front)) return p;  // g_no_front if none
  return Miss(n);
}

// In the default geometry (size_classes.hpp, inline_limit; 0 in the
// others: VAM_HEADERS=on, VAM_CLASSES=coarse) the inline path finds the
// class's entry from the request: 9..kSmallMax bytes at byte offset
// 16 * class, which is (n + 15) & ~15, and 0..8 bytes at the 8-byte class's,
// slots[0]. The choice between the two offsets is a select, not a branch:
// a program that mixes requests of up to 8 bytes with larger ones in no
// order (half of glibc's thread benchmark's requests are 4..8 bytes; the
// public suite's alloc-test draws many) mispredicts a branch there on every
// other malloc, where the select costs two instructions on every call. The
// range check is then one compare. Both end in one offset from the heap:
// written as one path, the compiler keeps the entry's address out of the
// return register.
//
// Miss and Other take what the inline path does not (malloc_miss and
// malloc_other for malloc), called last, so that the inline path saves no
// register: operator new passes its own, which retry through the
// new_handler on null (override.cpp). The inline path itself never fails.
template <auto Miss, auto Other>
inline void *malloc_inline(std::size_t n) noexcept(noexcept(Miss(n)) && noexcept(Other(n))) {
  const std::size_t fine = (n + 15) & ~std::size_t{15};
  const std::size_t off = n > kTinyMax ? fine : 0;
  if (VAM_UNLIKELY(n >= g_layout.inline_limit)) return Other(n);
  return malloc_from<Miss>(*reinterpret_cast<FrontSlot *>(reinterpret_cast<char *>(t_heap->slots) + off), n);
}

inline void *malloc_impl(std::size_t n) noexcept { return malloc_inline<malloc_miss, malloc_other>(n); }

// The fast path: a free into a block segment the thread has freed into
// before (its slot of t_free_seg, free_cache.hpp) is local, and that segment is
// known to be mapped and ours, so neither the segment map nor the owner is
// read again. The block's own checks (double free, interior pointer) still
// run. The segment is p masked, not p - 1 as object_segment takes it: the
// two differ only for null (0, which no slot holds) and for a huge object
// aligned to a segment (where no small or medium segment can be: the object
// is there), so a match is the same match, one instruction sooner; the slot
// is p's too, computed alongside. Every other free goes to free_checked,
// with object_segment's segment (null masks to the top of the address
// space, never a segment).
//
// free_cached_segment is that test, for realloc too (vam.cpp): p's segment
// if the thread's free cache holds it, with its block shift; else null.
// free_cached finishes a free there.
inline Segment *free_cached_segment(const void *p, std::size_t &shift) noexcept {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p) & ~(kSegmentBytes - 1);
  const unsigned i = free_seg_slot(p);
  if (VAM_UNLIKELY(a != t_free_seg.seg[i])) return nullptr;
  if (a == 0) __builtin_unreachable();  // a slot holds a segment or kNoFreeSeg, never 0: no test for null
  shift = t_free_seg.shift[i];
  return reinterpret_cast<Segment *>(a);
}
inline void free_cached(Segment *s, void *p, std::size_t shift) noexcept {
  small_free_local<true>(s, p, shift, [] { return t_heap; });
}

inline void free_impl(void *p) noexcept {
  std::size_t shift;
  if (Segment *s = free_cached_segment(p, shift); VAM_LIKELY(s != nullptr)) free_cached(s, p, shift);
  else free_checked(object_segment(p), p);
}

// A sized release (operator delete(p, n) and its aligned and array forms,
// free_sized, free_aligned_sized): as free, and p's object must hold at
// least n bytes. A larger n is a release as a bigger type than the object
// was made as (a `new char` deleted as a struct), or of another object: it
// aborts, before free's own checks. A smaller one passes (the size class
// rounds up, and a release of a smaller base type is not told apart). On
// the fast path the test is one compare with the block's slot size, in the
// line of its record that the free reads anyway (with VAM_HEADERS=on, a
// size up to the header's bytes over the object passes there too).
inline void free_sized_impl(void *p, std::size_t n) noexcept {
  std::size_t shift;
  if (Segment *s = free_cached_segment(p, shift); VAM_LIKELY(s != nullptr)) {
    if (VAM_UNLIKELY(n > block_of(s, p, shift)->size)) sized_release_too_big(p);
    free_cached(s, p, shift);
  } else {
    free_checked_sized(object_segment(p), p, n);
  }
}

}  // namespace alloclab::vam
