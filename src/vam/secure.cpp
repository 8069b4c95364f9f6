// secure.cpp — libvam-secure.so's entry points (VAM_SECURE): vam's allocator
// with a check at every step a misuse can go unnoticed, for programs that want
// them (`vam --secure`, or VAM_SECURE=1 with the vam command). override.cpp
// calls these instead of vam's own when built with VAM_SECURE; libvam.so has
// none of them (instrument.hpp).
//
// Every object is asked of vam larger, and the program's object q starts
// `pad` bytes into vam's object p (16, or the alignment asked when larger).
// The two words before q (the front) hold pad and a check, mixed with a
// per-process secret and q's address; the last 8 bytes of p's usable size
// (the tail word) hold the size asked for, mixed the same way; the bytes
// between the object's end and the tail, and between p and the front, hold a
// pattern (kSlack). So:
//   * free, realloc and malloc_usable_size know the exact size, and an
//     overflow or underflow of even one byte, or a write into a malloc(0), is
//     found at free;
//   * a sized delete (operator delete(p, n), free_sized) of another size aborts.
// A freed object is not given back at once: it waits in a quarantine of
// kRing objects, filled with kFreed but for a word that marks it freed, and
// the one it replaces, picked at random, is checked (every byte still kFreed)
// and given back. So:
//   * a write after free, a zeroing included, is found when the object leaves
//     the quarantine (or at exit, when every waiting object is checked);
//   * a double free or a realloc of an object in quarantine aborts;
//   * reuse is delayed and its order randomised.
// The quarantine holds at most kQuarantineBytes (16 MiB): past that, more
// objects leave it at random. Objects above kQuarantineMax (1 MiB) skip it
// (filling them would cost more than the program's use of them); vam's own
// checks (large tags, huge headers) stay.
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>

#include <atomic>

#include "vam/api.hpp"
#include "vam/check.hpp"
#include "vam/instrument.hpp"

#if defined(VAM_SECURE)

namespace alloclab::vam::secure {

namespace {

constexpr std::size_t kTail = 8;
constexpr std::size_t kPageBytes = 4096;
constexpr unsigned char kSlack = 0xa5;
constexpr unsigned char kFreed = 0xdf;
constexpr std::size_t kRing = 256;
constexpr std::size_t kQuarantineMax = std::size_t{1} << 20;   // bytes of one object
constexpr std::size_t kQuarantineBytes = std::size_t{16} << 20;  // of all waiting objects

std::uint64_t g_secret;
std::atomic_flag g_ring_lock = ATOMIC_FLAG_INIT;
void *g_ring[kRing];
std::size_t g_ring_bytes[kRing];
std::size_t g_waiting;  // bytes in the ring
std::uint64_t g_rng;

std::uint64_t secret() noexcept {
  if (__builtin_expect(g_secret == 0, 0)) {
    // The kernel's 16 random bytes for this process (no system call, no allocation).
    std::uint64_t s[2] = {0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull};
    if (const void *r = reinterpret_cast<const void *>(getauxval(AT_RANDOM))) memcpy(s, r, sizeof s);
    g_rng = s[1] | 1;
    g_secret = s[0] | 1;
  }
  return g_secret;
}

std::uint64_t key(const void *p) noexcept {
  return secret() ^ (reinterpret_cast<std::uintptr_t>(p) * 0x9e3779b97f4a7c15ull);
}
std::uint64_t freed_mark(const void *p) noexcept { return ~key(p); }

std::uint64_t load_word(const void *at) noexcept {
  std::uint64_t w;
  memcpy(&w, at, sizeof w);
  return w;
}
void store_word(void *at, std::uint64_t w) noexcept { memcpy(at, &w, sizeof w); }

bool all(const char *from, const char *to, unsigned char byte) noexcept {
  for (; from < to; ++from)
    if (static_cast<unsigned char>(*from) != byte) return false;
  return true;
}

constexpr std::size_t kFront = 16;

std::uint64_t front_check(const void *q) noexcept { return (key(q) << 17 | key(q) >> 47) ^ 0x5a5a5a5a5a5a5a5aull; }

// The overhead an object of alignment `align` needs: the pad before it, the tail word after.
std::size_t pad_for(std::size_t align) noexcept { return align > kFront ? align : kFront; }

// p from vam, of usable size >= pad + n + kTail: the object q = p + pad, armed.
void *arm(void *p, std::size_t pad, std::size_t n) noexcept {
  if (p == nullptr) return nullptr;
  const std::size_t u = alloclab::vam::usable_size_impl(p);
  char *c = static_cast<char *>(p);
  char *q = c + pad;
  memset(c, kSlack, pad - kFront);
  store_word(q - kFront, pad ^ key(q));
  store_word(q - sizeof(std::uint64_t), front_check(q));
  memset(q + n, kSlack, u - pad - kTail - n);
  store_word(c + u - kTail, n ^ key(q));
  return q;
}

bool in_quarantine(const void *q) noexcept { return load_word(q) == freed_mark(q); }

// Where the program's object q sits in vam's: the front checked.
struct Place {
  char *p;          // vam's object
  std::size_t pad;  // q - p
  std::size_t u;    // vam's usable size of p
};

Place place(const void *q) noexcept {
  const char *c = static_cast<const char *>(q);
  const std::size_t pad = load_word(c - kFront) ^ key(q);
  if (pad < kFront || pad > (std::size_t{1} << 30) || (pad & (pad - 1)) != 0 ||
      load_word(c - sizeof(std::uint64_t)) != front_check(q))
    corruption("heap corruption: the bytes before the object were overwritten (underflow?), or not an object", q);
  char *p = const_cast<char *>(c) - pad;
  if (!all(p, p + pad - kFront, kSlack))
    corruption("heap corruption: the bytes before the object were overwritten (underflow?)", q);
  return {p, pad, alloclab::vam::usable_size_impl(p)};
}

// The size q was asked with; aborts when its front or tail was overwritten.
std::size_t asked(const void *q, const Place &at) noexcept {
  const char *c = static_cast<const char *>(q);
  const std::size_t room = at.u - at.pad - kTail;
  const std::size_t n = load_word(at.p + at.u - kTail) ^ key(q);
  if (n > room || !all(c + n, c + room, kSlack))
    corruption("heap corruption: the bytes after the end of the object were overwritten (overflow?)", q);
  return n;
}

std::size_t check_live(const void *q) noexcept {
  if (in_quarantine(q)) corruption("double free (the object is already freed)", q);
  return asked(q, place(q));
}

void give_back(void *q) noexcept {
  const Place at = place(q);
  const char *c = static_cast<const char *>(q);
  if (!in_quarantine(q) || !all(c + sizeof(std::uint64_t), at.p + at.u, kFreed))
    corruption("write after free (a freed object was changed while it waited for reuse)", q);
  alloclab::vam::free_impl(at.p);
}

void lock() noexcept {
  while (g_ring_lock.test_and_set(std::memory_order_acquire)) {
  }
}
void unlock() noexcept { g_ring_lock.clear(std::memory_order_release); }

std::size_t next_random() noexcept {  // under the lock
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return static_cast<std::size_t>(g_rng % kRing);
}

// q checked live (check_live): into the quarantine, or straight back when large.
void release(void *q) noexcept {
  const Place where = place(q);
  if (where.u > kQuarantineMax) {
    alloclab::vam::free_impl(where.p);
    return;
  }
  void *p = q;
  const std::size_t u = where.u;
  char *c = static_cast<char *>(q);
  store_word(c, freed_mark(q));
  memset(c + sizeof(std::uint64_t), kFreed,
         static_cast<std::size_t>(where.p + where.u - c) - sizeof(std::uint64_t));
  void *out[kRing];
  std::size_t n_out = 0;
  lock();
  std::size_t at = next_random();
  for (;;) {  // p takes a random place; its occupant, and more while over the budget, leave
    if (g_ring[at]) {
      out[n_out++] = g_ring[at];
      g_waiting -= g_ring_bytes[at];
    }
    if (p) {
      g_ring[at] = p;
      g_ring_bytes[at] = u;
      g_waiting += u;
      p = nullptr;
    } else {
      g_ring[at] = nullptr;
    }
    if (g_waiting <= kQuarantineBytes || n_out == kRing) break;
    at = next_random();
  }
  unlock();
  for (std::size_t i = 0; i < n_out; ++i) give_back(out[i]);
}


// At exit, every object still waiting is checked.
[[gnu::destructor]] void check_quarantine_at_exit() noexcept {
  for (std::size_t i = 0; i < kRing; ++i) {
    lock();
    void *q = g_ring[i];
    g_ring[i] = nullptr;
    g_waiting -= q ? g_ring_bytes[i] : 0;
    unlock();
    if (q) give_back(q);
  }
}

}  // namespace

namespace {

// vam's object of `align` (0: malloc's) holding pad + n + kTail bytes, armed.
void *allocate(std::size_t align, std::size_t n) noexcept {
  const std::size_t pad = pad_for(align);
  std::size_t with;
  if (__builtin_add_overflow(n, pad + kTail, &with)) {
    errno = ENOMEM;
    return nullptr;
  }
  void *p = align > kFront ? alloclab::vam::aligned_or_null(align, with) : alloclab::vam::malloc_impl(with);
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  // The first word of a reused object may still hold the mark of its time in
  // the quarantine: it goes, or the object's free would read as a double free.
  memset(static_cast<char *>(p) + pad, 0, sizeof(std::uint64_t) < n ? sizeof(std::uint64_t) : n);
  return arm(p, pad, n);
}

bool valid_alignment(std::size_t a) noexcept { return a != 0 && (a & (a - 1)) == 0; }

}  // namespace

void *malloc_impl(std::size_t n) noexcept { return allocate(0, n); }

void *aligned_or_null(std::size_t a, std::size_t n) noexcept { return allocate(a, n); }

void free_impl(void *q) noexcept {
  if (q == nullptr) return;
  check_live(q);
  release(q);
}

void free_sized_impl(void *q, std::size_t size) noexcept {
  if (q == nullptr) return;
  if (check_live(q) != size) corruption("sized free or delete with another size than the object's", q);
  release(q);
}

void *calloc_impl(std::size_t n, std::size_t size) noexcept {
  std::size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void *q = allocate(0, bytes);
  if (q) memset(q, 0, bytes);
  return q;
}

void *realloc_impl(void *q, std::size_t n) noexcept {
  if (q == nullptr) return allocate(0, n);
  if (in_quarantine(q)) corruption("realloc(): the object was already freed", q);
  const Place at = place(q);
  const std::size_t old = asked(q, at);
  if (n == 0) {  // as glibc: frees, returns null
    release(q);
    return nullptr;
  }
  if (at.pad == kFront && n <= at.u - at.pad - kTail) return arm(at.p, at.pad, n);
  void *r = allocate(0, n);
  if (r == nullptr) return nullptr;  // errno is ENOMEM; q stays valid
  memcpy(r, q, old < n ? old : n);
  release(q);
  return r;
}

void *reallocarray_impl(void *q, std::size_t n, std::size_t size) noexcept {
  std::size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc_impl(q, bytes);
}

void *memalign_impl(std::size_t a, std::size_t n) noexcept {
  if (!valid_alignment(a)) {  // glibc rounds a bad alignment up
    std::size_t up = kFront;
    while (up < a && up != 0) up <<= 1;
    a = up ? up : a;
  }
  return allocate(a, n);
}

void *aligned_alloc_impl(std::size_t a, std::size_t n) noexcept {
  if (!valid_alignment(a)) {
    errno = EINVAL;
    return nullptr;
  }
  return allocate(a, n);
}

int posix_memalign_impl(void **out, std::size_t a, std::size_t n) noexcept {
  if (!valid_alignment(a) || a % sizeof(void *) != 0) return EINVAL;
  const int saved = errno;
  void *q = allocate(a, n);
  if (q == nullptr) {
    errno = saved;
    return ENOMEM;
  }
  *out = q;
  return 0;
}

void *valloc_impl(std::size_t n) noexcept { return allocate(kPageBytes, n); }

void *pvalloc_impl(std::size_t n) noexcept {
  std::size_t up;
  if (__builtin_add_overflow(n, kPageBytes - 1, &up)) {
    errno = ENOMEM;
    return nullptr;
  }
  return allocate(kPageBytes, up & ~(kPageBytes - 1));
}

std::size_t usable_size_impl(const void *q) noexcept { return q ? check_live(q) : 0; }

}  // namespace alloclab::vam::secure

#endif  // VAM_SECURE
