// vam.cpp — the allocator's entry points with their C contracts (errno,
// alignment, overflow, realloc's rules), the out-of-line parts of malloc and
// free (their fast paths are inline in api.hpp), the allocation of a thread
// already past its exit, aborting on corruption, and the prefixed C API.
// Start-up and fork: startup.cpp; thread heaps and orphans: threads.cpp;
// statistics: stats.cpp; their shared state: global.hpp.
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloclab/vam.h"
#include "layers/os.hpp"
#include "vam/api.hpp"
#include "vam/check.hpp"
#include "vam/free_cache.hpp"
#include "vam/global.hpp"
#include "vam/heap.hpp"
#include "vam/hot_list.hpp"
#include "vam/huge.hpp"
#include "vam/object_heap.hpp"
#include "vam/options.hpp"
#include "vam/remote.hpp"
#include "vam/segment_map.hpp"
#include "vam/small_free.hpp"

namespace alloclab::vam {

namespace {

inline void *fail_nomem() noexcept {
  errno = ENOMEM;
  return nullptr;
}

inline bool is_pow2(std::size_t a) noexcept { return a != 0 && (a & (a - 1)) == 0; }

// Every allocation malloc's inline path does not finish, by size
// (object_heap.hpp).
void *alloc_in(Heap *h, std::size_t n, std::size_t align) noexcept {
  void *p = ObjectHeap::alloc(h, n, align);
  return p ? p : fail_nomem();
}

// An allocation by a thread whose heap is already abandoned: from the shared
// exit heap, under its lock. Its frees go to the owners' remote lists, as
// from any thread that owns no heap.
[[gnu::noinline]] void *exiting_alloc(std::size_t n, std::size_t align) noexcept {
  g.exit_lock.lock();
  Heap *h = g.exit_heap.load(std::memory_order_relaxed);
  if (!h) {
    h = new_listed_heap();
    if (h) {
      h->orphan.store(1, std::memory_order_relaxed);  // no thread drains it in a slow path
      g.exit_heap.store(h, std::memory_order_release);
    }
  }
  void *p = h ? alloc_in(h, n, align) : fail_nomem();
  g.exit_lock.unlock();
  return p;
}

[[gnu::noinline]] void *malloc_slow(std::size_t n, std::size_t align) noexcept {
  Heap *h = thread_heap();
  if (VAM_UNLIKELY(!h)) return t_exited ? exiting_alloc(n, align) : fail_nomem();
  return alloc_in(h, n, align);
}

// Aligned allocation for a power-of-two alignment.
void *alloc_aligned(std::size_t align, std::size_t n) noexcept {
  if (align <= 8) return malloc_impl(n);
  if (align == 16) return malloc_impl(n <= 8 ? 16 : n);  // the 8-byte class is only 8-aligned
  if (align > kMaxAlignment) return fail_nomem();
  if (n > PTRDIFF_MAX) return fail_nomem();
  // A page-block class whose objects lie a multiple of `align` apart: every
  // one is aligned, since blocks start on page boundaries, and the colour of
  // a class above 1 KiB is a multiple of 64 (size_classes.hpp, block_colour)
  // (not so with headers: those objects go to the large heap). The distance
  // is the block's stride, 64 bytes more than the class for a multiple of
  // 1 KiB (page_stride), so such a class serves no alignment above 64.
  const std::size_t rounded = n == 0 ? align : (n + align - 1) & ~(align - 1);
  const unsigned cls = rounded <= g_layout.page_max ? layout_class(rounded) : 0;
  if (rounded <= g_layout.page_max && page_stride(g_layout.slot[cls]) % align == 0 && !g_layout.header &&
      (cls < kFineClasses || align <= kColourAlign)) {
    Heap *h = thread_heap();
    if (!h) return malloc_slow(n == 0 ? 1 : n, align);  // exiting, or out of memory
    void *p = small_alloc(h, cls);
    return p ? p : fail_nomem();
  }
  return malloc_slow(n == 0 ? 1 : n, align);
}

}  // namespace

// ---- entry points --------------------------------------------------------

void check_failed(const char *what, const char *file, int line) noexcept {
  char buf[512];
  std::size_t n = 0;
  auto put = [&](const char *t) {
    while (*t && n < sizeof buf - 1) buf[n++] = *t++;
  };
  char num[16];
  int k = 0;
  do { num[k++] = char('0' + line % 10); line /= 10; } while (line && k < 15);
  put("vam: internal check failed: ");
  put(what);
  put(" at ");
  put(file);
  put(":");
  while (k && n < sizeof buf - 1) buf[n++] = num[--k];
  put("\n");
  (void)!::write(2, buf, n);
  abort();
}

namespace {
void put_hex(char *buf, std::size_t &n, std::size_t cap, std::uintptr_t v) noexcept {
  char tmp[16];
  int k = 0;
  do { tmp[k++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v && k < 16);
  if (n + 2 < cap) { buf[n++] = '0'; buf[n++] = 'x'; }
  while (k && n < cap) buf[n++] = tmp[--k];
}

// "vam: <head><p><tail>\n" with write(2), then abort.
[[noreturn]] void abort_with(const char *head, const void *p, const char *tail) noexcept {
  char buf[256];
  std::size_t n = 0;
  auto put = [&](const char *t) {
    while (*t && n < sizeof buf - 1) buf[n++] = *t++;
  };
  put("vam: ");
  put(head);
  put_hex(buf, n, sizeof buf - 1, reinterpret_cast<std::uintptr_t>(p));
  put(tail);
  put("\n");
  (void)!::write(2, buf, n);
  abort();
}
}  // namespace

void corruption(const char *what, const void *p) noexcept {
  char head[200];
  std::size_t n = 0;
  for (const char *t = what; *t && n < sizeof head - 3; ++t) head[n++] = *t;
  head[n++] = ':';
  head[n++] = ' ';
  head[n] = '\0';
  abort_with(head, p, "");
}

void corruption_near(const char *op, const void *near) noexcept {
  char head[200];
  std::size_t n = 0;
  for (const char *t = op; *t && n < sizeof head - 40; ++t) head[n++] = *t;
  for (const char *t = ": heap corruption near "; *t; ++t) head[n++] = *t;
  head[n] = '\0';
  abort_with(head, near, " (overflow?)");
}

// A small request in the default geometry that the front block of its class
// could not serve: that block is used up, or there is none, or the thread
// has no heap yet (t_heap is g_empty_heap, whose fronts are all null).
void *malloc_miss(std::size_t n) noexcept {
  Heap *h = t_heap;
  if (VAM_UNLIKELY(h == &g_empty_heap)) return malloc_slow(n, 0);
  return small_alloc_slow(h, fine_class(n));
}

// Every request malloc_impl's inline path does not take: a geometry with
// headers or coarse classes (inline_fine 0), the page classes above 1 KiB,
// large, huge and impossible.
void *malloc_other(std::size_t n) noexcept {
  Heap *h = t_heap;
  if (h != &g_empty_heap && n <= g_layout.page_max) return small_alloc_layout(h, n);
  if (VAM_UNLIKELY(n > PTRDIFF_MAX)) return fail_nomem();
  return malloc_slow(n, 0);
}

// Every free but one into a segment in the thread's t_free_seg: the
// segment map says whether vam has a segment at s, then its header says
// who owns it. A block segment of this thread's heap goes in t_free_seg.
// free_impl (api.hpp) jumps here: a remote free (most frees in a
// producer/consumer program) pays the fast path's compare and one jump.
void free_checked(Segment *s, void *p) noexcept {
  if (p == nullptr) return;
  // A pointer libvam never handed out (stack, static, another mapping) has
  // no segment of ours around it: abort before its "header" is read. So
  // does a second free of a huge object whose mapping the first unmapped.
  if (VAM_UNLIKELY(!segment_known(s)))
    corruption("free(): invalid pointer (not from vam, or already freed and unmapped)", p);
  VAM_CHECK(s->magic == kSegmentMagic);
  // No segment's owner is g_empty_heap, so a thread with no heap (or an
  // exiting one) frees remotely.
  Heap *h = t_heap;
  if (VAM_LIKELY(s->kind <= SegKind::medium)) {
    if (VAM_LIKELY(s->owner == h)) {
      free_seg_set(s, s->block_shift);
      // As free_impl's fast path would, hot slot included: a free must not
      // behave differently for being the thread's first into this segment.
      small_free_local<true>(s, p, s->block_shift, [h] { return h; });
    } else {
      remote_check(s, p);
      if (VAM_LIKELY(t_remote.on) || (!t_remote.decided && remote_batching_start()))
        remote_free_batched(s->owner, p, remote_form(s));
      else
        remote_free(s->owner, p, remote_form(s));
    }
  } else if (s->kind == SegKind::large) {
    if (VAM_UNLIKELY(!large_start_plausible(p))) return large_not_an_object(p);
    if (s->owner == h) large_free_local(h, p);
    else remote_free_large(s->owner, p);
  } else {
    huge_free(s, p);
  }
}

void sized_release_too_big(const void *p) noexcept {
  corruption("sized free or delete of more bytes than the object holds (released as another type?)", p);
}

// The usable size as malloc_usable_size reads it, once free_checked's own
// first test (a segment of vam's) has passed, so that a foreign pointer
// aborts naming free.
void free_checked_sized(Segment *s, void *p, std::size_t n) noexcept {
  if (p == nullptr) return;
  if (VAM_UNLIKELY(!segment_known(s))) free_checked(s, p);  // aborts: no object of vam's
  if (VAM_UNLIKELY(n > usable_size_impl(p))) sized_release_too_big(p);
  free_checked(s, p);
}

void *calloc_impl(std::size_t n, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(n, size, &total)) return fail_nomem();
  void *p = malloc_impl(total);
  if (p) {
    Segment *s = object_segment(p);
    if (s->kind != SegKind::huge || !s->zeroed) memset(p, 0, total);  // fresh mappings are zero
  }
  return p;
}

std::size_t usable_size_impl(const void *p) noexcept {
  if (!p) return 0;
  Segment *s = object_segment(p);
  // As free: a pointer with no segment of vam's around it has no header to read.
  if (VAM_UNLIKELY(!segment_known(s)))
    corruption("malloc_usable_size(): invalid pointer (not from vam, or already freed and unmapped)", p);
  switch (s->kind) {
    case SegKind::small:
    case SegKind::medium: return block_of(s, p)->size - g_layout.header;
    case SegKind::large:
      if (VAM_UNLIKELY(!large_start_plausible(p)))
        corruption("malloc_usable_size(): invalid pointer (not the start of a large object)", p);
      return LargeHeap::usable(p);
    default: return huge_usable(s, p);
  }
}

namespace {

// Keep the block when the new size fits and does not waste over half of it.
bool realloc_in_place(std::size_t n, std::size_t have) noexcept { return n <= have && (n > have / 2 || have <= 16); }

// realloc's test that p, in vam's segment s, is a live object, and its
// usable size, with one look at the segment's kind: a freed object aborts
// rather than be kept or resized (kept in place, a freed small or large
// object came back from the next malloc too; a freed huge object's cached
// mapping was grown, and handed out again). Another thread's small and
// large objects are tested only as far as reads that race with no write of
// their owner allow: a large object's in-use bits; a small or medium
// object's slot, first word and block's list (remote_realloc_check), and
// `keep` false: such an object always moves.
std::size_t realloc_live_usable(Segment *s, void *p, bool &keep) noexcept {
  switch (s->kind) {
    case SegKind::small:
    case SegKind::medium:
      if (s->owner == t_heap) {
        small_check_live(t_heap, s, p);
      } else {
        remote_realloc_check(s, p);
        keep = false;
      }
      return block_of(s, p)->size - g_layout.header;
    case SegKind::large:
      if (VAM_UNLIKELY(!large_start_plausible(p)))
        corruption("realloc(): invalid pointer (not the start of a large object)", p);
      return LargeHeap::check_live(p, s->owner == t_heap);
    default: huge_check_live(s, p); return huge_usable(s, p);
  }
}

// Growing, by moving or in place into a free neighbour (LargeHeap::resize):
// an eighth more than asked (up to VAM_LARGE_MAX). The
// fine classes are 16 bytes apart, so a buffer grown in small steps would
// move at every step or two, each move a copy of all of it; with the slack
// it moves (or resizes) once per eighth of growth, and the copies add up to a few times
// its final size (docs/vam.md, "Limits and known gaps"). The slack stops at
// the end of the fine classes: an object near 1 KiB stays there rather than
// take a slot a quarter too big in the large-object heap, which costs
// python3 instructions. The page classes above are an eighth apart, their
// own slack, and get none more.
std::size_t realloc_request(std::size_t n, std::size_t have) noexcept {
  std::size_t want = n;
  if (n > have && n <= static_cast<std::size_t>(options().large_max)) {
    if (n <= kSmallMax) want = n + n / 8 > kSmallMax ? kSmallMax : n + n / 8;
    else if (n > g_layout.page_max) want = n + n / 8;
  }
  return want;
}

}  // namespace

void *realloc_impl(void *p, std::size_t n) noexcept {
  if (!p) return malloc_impl(n);
  // An object of a block segment this thread frees into (free's fast path,
  // api.hpp: t_free_seg): the segment is mapped and this thread's, so the
  // segment map and the header need not be read, the object's size is its
  // block's, and the old object goes back on free's own fast path. The
  // segment stays: only this thread unmaps it, and not while p lives in it.
  std::size_t shift;
  if (Segment *s = free_cached_segment(p, shift); VAM_LIKELY(s != nullptr && n != 0)) {
    if (VAM_UNLIKELY(!small_live_front(s, p, shift))) small_check_live(t_heap, s, p);
    const std::size_t have = block_of(s, p, shift)->size - g_layout.header;
    if (realloc_in_place(n, have)) return p;
    void *q = malloc_impl(realloc_request(n, have));
    if (!q) return nullptr;  // errno is ENOMEM; p stays valid
    memcpy(q, p, n < have ? n : have);
    free_cached(s, p, shift);
    return q;
  }
  Segment *s = object_segment(p);
  if (VAM_UNLIKELY(!segment_known(s))) corruption("realloc(): invalid pointer (not from vam, or already freed and unmapped)", p);
  if (n == 0) {  // glibc: realloc(p, 0) frees p and returns NULL
    free_impl(p);
    return nullptr;
  }
  bool keep = true;
  const std::size_t have = realloc_live_usable(s, p, keep);
  if (realloc_in_place(n, have) && keep) return p;
  // A large object of this thread's heap grows into a free neighbour, or
  // gives its tail back, in place.
  if (s->kind == SegKind::large && s->owner == t_heap && n > g_layout.page_max &&
      n <= static_cast<std::size_t>(options().large_max)) {
    OwnerGuard lock(t_heap->large.lock());
    if (t_heap->large.resize(p, n, realloc_request(n, have))) return p;
  }
  // A huge object that stays huge moves its pages, not its bytes.
  if (s->kind == SegKind::huge && n > static_cast<std::size_t>(options().large_max))
    if (void *q = huge_resize(s, p, n)) return q;
  void *q = malloc_impl(realloc_request(n, have));
  if (!q) return nullptr;  // errno is ENOMEM; p stays valid
  memcpy(q, p, n < have ? n : have);
  free_impl(p);
  return q;
}

void *reallocarray_impl(void *p, std::size_t n, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(n, size, &total)) return fail_nomem();
  return realloc_impl(p, total);
}

void *memalign_impl(std::size_t alignment, std::size_t n) noexcept {
  // glibc: a non-power-of-two alignment is rounded up to the next power.
  if (!is_pow2(alignment)) {
    if (alignment > (SIZE_MAX >> 1) + 1) return fail_nomem();
    std::size_t a = 1;
    while (a < alignment) a <<= 1;
    alignment = a;
  }
  return alloc_aligned(alignment, n);
}

void *aligned_alloc_impl(std::size_t alignment, std::size_t n) noexcept {
  // C17 (DR 460): any size; the alignment must be one we support — a power of two.
  if (!is_pow2(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return alloc_aligned(alignment, n);
}

int posix_memalign_impl(void **out, std::size_t alignment, std::size_t n) noexcept {
  if (!is_pow2(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
  const int saved = errno;
  void *p = alloc_aligned(alignment, n);
  errno = saved;
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void *valloc_impl(std::size_t n) noexcept { return alloc_aligned(kPage, n); }

void *pvalloc_impl(std::size_t n) noexcept {
  std::size_t rounded = os::align_up(n == 0 ? 1 : n, kPage);
  if (rounded == 0) return fail_nomem();
  return alloc_aligned(kPage, rounded);
}

void *aligned_or_null(std::size_t alignment, std::size_t n) noexcept {
  return is_pow2(alignment) ? alloc_aligned(alignment, n) : nullptr;
}

}  // namespace alloclab::vam

// ---- the prefixed C API (every build) -------------------------------------

namespace v = alloclab::vam;

extern "C" {
void *vam_malloc(size_t n) { return v::malloc_impl(n); }
void vam_free(void *p) { v::free_impl(p); }
void *vam_calloc(size_t n, size_t size) { return v::calloc_impl(n, size); }
void *vam_realloc(void *p, size_t n) { return v::realloc_impl(p, n); }
void *vam_reallocarray(void *p, size_t n, size_t size) { return v::reallocarray_impl(p, n, size); }
void *vam_memalign(size_t a, size_t n) { return v::memalign_impl(a, n); }
void *vam_aligned_alloc(size_t a, size_t n) { return v::aligned_alloc_impl(a, n); }
int vam_posix_memalign(void **out, size_t a, size_t n) { return v::posix_memalign_impl(out, a, n); }
void *vam_valloc(size_t n) { return v::valloc_impl(n); }
void *vam_pvalloc(size_t n) { return v::pvalloc_impl(n); }
size_t vam_usable_size(const void *p) { return v::usable_size_impl(p); }
void vam_free_sized(void *p, size_t n) { v::free_sized_impl(p, n); }
void vam_free_aligned_sized(void *p, size_t, size_t n) { v::free_sized_impl(p, n); }
void vam_stats(struct vam_stats_t *out) { v::collect_stats(out); }
void vam_print_stats(int fd) { v::print_stats(fd); }
void vam_collect(void) { v::collect_thread(false); }
}
