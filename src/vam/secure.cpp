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
//   * a sized delete (operator delete(p, n), free_sized) of another size aborts;
//   * memcpy (exported here) aborts on a copy past an object's end or into its
//     front (check_copy).
// A freed object is not given back at once: its front is marked freed, its
// bytes become zeroes, and it waits in a quarantine of kRing objects; the one
// it replaces, picked at random, is checked (still zeroes) and given back, and
// the object freed last is checked at every allocation. So:
//   * a read after free finds zeroes, and reused memory comes back zeroed;
//   * a write after free is found at the next allocation (the object freed
//     last), when the object leaves the quarantine, or at exit, when every
//     waiting object is checked (writing zeroes goes unseen);
//   * a double free or a realloc of an object in quarantine aborts;
//   * reuse is delayed and its order randomised.
// The quarantine holds at most kQuarantineBytes (16 MiB): past that, more
// objects leave it at random. Objects above kQuarantineMax (1 MiB) skip it
// (filling them would cost more than the program's use of them); vam's own
// checks (large tags, huge headers) stay.
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include <atomic>

#include "vam/api.hpp"
#include "vam/check.hpp"
#include "vam/instrument.hpp"
#include "vam/segment_map.hpp"

#if defined(VAM_SECURE)

namespace alloclab::vam::secure {

namespace {

constexpr std::size_t kTail = 8;
constexpr std::size_t kPageBytes = 4096;
constexpr unsigned char kSlack = 0xa5;
constexpr std::size_t kScrubPages = 64 * 1024;  // from this size up, freed pages are zeroed by the kernel
constexpr std::size_t kEdge = 256;                // bytes checked at each end of such an object
constexpr std::size_t kRing = 256;
constexpr std::size_t kQuarantineMax = std::size_t{1} << 20;   // bytes of one object
constexpr std::size_t kQuarantineBytes = std::size_t{16} << 20;  // of all waiting objects

std::uint64_t g_secret;
std::atomic_flag g_ring_lock = ATOMIC_FLAG_INIT;
void *g_ring[kRing];
std::size_t g_ring_bytes[kRing];
std::size_t g_waiting;  // bytes in the ring
std::uint64_t g_rng;
void *g_last;  // the object freed last, while it waits (checked at every allocation)

// malloc(0): an address of its own in a reserved region no access is allowed
// to (kZeroBytes, 16 bytes apart), so any read or write of it faults; free
// does nothing with it. Past the region's end, a 0-byte object as any other.
constexpr std::size_t kZeroBytes = std::size_t{64} << 20;
std::atomic<char *> g_zero{nullptr};
std::atomic<std::size_t> g_zero_next{0};

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

// Word access at any alignment, inlined: never through the exported memcpy below.
std::uint64_t load_word(const void *at) noexcept {
  std::uint64_t w;
  __builtin_memcpy(&w, at, sizeof w);
  return w;
}
void store_word(void *at, std::uint64_t w) noexcept { __builtin_memcpy(at, &w, sizeof w); }

// Every byte of [from, to) equal to `byte`: a word at a time, OR-ing the
// differences (no early exit in the loop: it vectorises).
bool all(const char *from, const char *to, unsigned char byte) noexcept {
  const std::uint64_t want = 0x0101010101010101ull * byte;
  std::uint64_t diff = 0;
  for (; from < to && (reinterpret_cast<std::uintptr_t>(from) & 7) != 0; ++from)
    diff |= static_cast<unsigned char>(*from) ^ byte;
  for (; to - from >= 8; from += 8) diff |= load_word(from) ^ want;
  for (; from < to; ++from) diff |= static_cast<unsigned char>(*from) ^ byte;
  return diff == 0;
}

// The front: kFront bytes before the object, the last two words its offset
// and check, the rest the pattern; after the object at least kSlackMin
// bytes of pattern, then the tail word. An overflow or underflow of up to
// 32 bytes lands in them, whatever the object's size.
constexpr std::size_t kFront = 32;
constexpr std::size_t kSlackMin = 32;

std::uint64_t front_check(const void *q) noexcept { return (key(q) << 17 | key(q) >> 47) ^ 0x5a5a5a5a5a5a5a5aull; }

// The overhead an object of alignment `align` needs: the pad before it, the tail word after.
std::size_t pad_for(std::size_t align) noexcept { return align > kFront ? align : kFront; }

// p from vam, of usable size >= pad + n + kTail: the object q = p + pad, armed.
void *arm(void *p, std::size_t pad, std::size_t n) noexcept {
  if (p == nullptr) return nullptr;
  const std::size_t u = alloclab::vam::usable_size_impl(p);
  char *c = static_cast<char *>(p);
  char *q = c + pad;
  memset(c, kSlack, pad - 2 * sizeof(std::uint64_t));
  store_word(q - 2 * sizeof(std::uint64_t), pad ^ key(q));
  store_word(q - sizeof(std::uint64_t), front_check(q));
  memset(q + n, kSlack, u - pad - kTail - n);
  store_word(c + u - kTail, n ^ key(q));
  return q;
}

// A freed object's front carries freed_mark where a live one's carries front_check.
bool in_quarantine(const void *q) noexcept {
  return load_word(static_cast<const char *>(q) - sizeof(std::uint64_t)) == freed_mark(q);
}

// Where the program's object q sits in vam's: the front checked.
struct Place {
  char *p;          // vam's object
  std::size_t pad;  // q - p
  std::size_t u;    // vam's usable size of p
};

Place place(const void *q) noexcept {
  const char *c = static_cast<const char *>(q);
  const std::size_t pad = load_word(c - 2 * sizeof(std::uint64_t)) ^ key(q);
  const std::uint64_t check = load_word(c - sizeof(std::uint64_t));
  if (pad < kFront || pad > (std::size_t{1} << 30) || (pad & (pad - 1)) != 0 ||
      (check != front_check(q) && check != freed_mark(q)))
    corruption("heap corruption: the bytes before the object were overwritten (underflow?), or not an object", q);
  char *p = const_cast<char *>(c) - pad;
  if (!all(p, p + pad - 2 * sizeof(std::uint64_t), kSlack))
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

bool zero_sized(const void *q) noexcept {
  const char *z = g_zero.load(std::memory_order_acquire);
  return z != nullptr && static_cast<const char *>(q) >= z && static_cast<const char *>(q) < z + kZeroBytes;
}

void *zero_object() noexcept {
  char *z = g_zero.load(std::memory_order_acquire);
  if (z == nullptr) {
    void *m = mmap(nullptr, kZeroBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    char *expected = nullptr;
    if (!g_zero.compare_exchange_strong(expected, static_cast<char *>(m), std::memory_order_acq_rel)) {
      munmap(m, kZeroBytes);
      z = expected;
    } else {
      z = static_cast<char *>(m);
    }
  }
  const std::size_t at = g_zero_next.fetch_add(16, std::memory_order_relaxed);
  return at < kZeroBytes ? z + at : nullptr;
}

std::size_t check_live(const void *q) noexcept {
  if (zero_sized(q)) return 0;
  if (in_quarantine(q)) corruption("double free (the object is already freed)", q);
  return asked(q, place(q));
}

// A freed object's bytes become zeroes (what it held never reaches a read after
// free, or its next owner): a large one's whole pages by the kernel.
void scrub(char *from, char *to) noexcept {
  if (static_cast<std::size_t>(to - from) < kScrubPages) {
    memset(from, 0, static_cast<std::size_t>(to - from));
    return;
  }
  char *a = reinterpret_cast<char *>((reinterpret_cast<std::uintptr_t>(from) + kPageBytes - 1) & ~(kPageBytes - 1));
  char *b = reinterpret_cast<char *>(reinterpret_cast<std::uintptr_t>(to) & ~(kPageBytes - 1));
  memset(from, 0, static_cast<std::size_t>(a - from));
  if (b > a && madvise(a, static_cast<std::size_t>(b - a), MADV_DONTNEED) != 0) memset(a, 0, static_cast<std::size_t>(b - a));
  memset(b, 0, static_cast<std::size_t>(to - b));
}

// Whether a freed object still reads as zeroes: all of a small one, the
// first and last kEdge bytes of a large one (reading the rest would fault in
// the pages scrub gave back).
bool still_scrubbed(const char *from, const char *to) noexcept {
  if (static_cast<std::size_t>(to - from) < kScrubPages) return all(from, to, 0);
  return all(from, from + kEdge, 0) && all(to - kEdge, to, 0);
}

// Back to vam, the front wiped: a front left in memory vam hands out again
// for another object would read as an object's start to check_copy.
void hand_back(const Place &at) noexcept {
  memset(at.p, 0, at.pad);
  alloclab::vam::free_impl(at.p);
}

void give_back(void *q) noexcept {
  const Place at = place(q);
  const char *c = static_cast<const char *>(q);
  if (!in_quarantine(q) || !still_scrubbed(c, at.p + at.u))
    corruption("write after free (a freed object was changed while it waited for reuse)", q);
  hand_back(at);
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
  if (zero_sized(q)) return;
  const Place where = place(q);
  if (where.u > kQuarantineMax) {
    hand_back(where);
    return;
  }
  void *p = q;
  const std::size_t u = where.u;
  char *c = static_cast<char *>(q);
  store_word(c - sizeof(std::uint64_t), freed_mark(q));
  scrub(c, where.p + where.u);
  void *out[kRing];
  std::size_t n_out = 0;
  lock();
  std::size_t at = next_random();
  for (;;) {  // p takes a random place; its occupant, and more while over the budget, leave
    if (g_ring[at]) {
      out[n_out++] = g_ring[at];
      g_waiting -= g_ring_bytes[at];
      if (g_ring[at] == g_last) g_last = nullptr;
    }
    if (p) {
      g_ring[at] = p;
      g_ring_bytes[at] = u;
      g_waiting += u;
      g_last = p;
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
    if (q == g_last) g_last = nullptr;
    unlock();
    if (q) give_back(q);
  }
}

}  // namespace

namespace {

// vam's object of `align` (0: malloc's) holding pad + n + kTail bytes, armed.
// The object freed last, checked while it waits: its mark, and its first and
// last 16 bytes still zero (a whole check per allocation would cost more than
// the allocation). A write after free that reaches either end is then found
// at the next allocation, whichever object it is for.
void check_last() noexcept {
  lock();
  if (const char *c = static_cast<const char *>(g_last)) {
    const Place at = place(c);
    const char *end = at.p + at.u;
    const char *head = c + 16 < end ? c + 16 : end;
    const char *tail = end - 16 > head ? end - 16 : head;
    if (!in_quarantine(c) || !all(c, head, 0) || !all(tail, end, 0)) {
      unlock();
      corruption("write after free (the object freed last was changed)", c);
    }
  }
  unlock();
}

void *allocate(std::size_t align, std::size_t n) noexcept {
  check_last();
  if (n == 0 && align <= 16) {
    if (void *z = zero_object()) return z;
  }
  const std::size_t pad = pad_for(align);
  std::size_t with;
  if (__builtin_add_overflow(n, pad + kSlackMin + kTail, &with)) {
    errno = ENOMEM;
    return nullptr;
  }
  void *p = align > 16 ? alloclab::vam::aligned_or_null(align, with) : alloclab::vam::malloc_impl(with);
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
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
  if (q == nullptr || zero_sized(q)) return allocate(0, n);
  if (in_quarantine(q)) corruption("realloc(): the object was already freed", q);
  const Place at = place(q);
  const std::size_t old = asked(q, at);
  if (n == 0) {  // as glibc: frees, returns null
    release(q);
    return nullptr;
  }
  if (at.pad == kFront && n <= at.u - at.pad - kSlackMin - kTail) return arm(at.p, at.pad, n);
  void *r = allocate(0, n);
  if (r == nullptr) return nullptr;  // errno is ENOMEM; q stays valid
  memmove(r, q, old < n ? old : n);  // not the checked memcpy: r's room is known
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
    std::size_t up = 16;
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

// memcpy into the heap (the guarded copy): a copy that starts at an object
// and runs past its end, or starts up to kFront bytes before an object and
// runs into it, aborts before a byte is copied. Other copies are not looked
// at (their start may be inside an object, which would take a search).
void check_copy(const void *d, std::size_t n) noexcept {
  const alloclab::vam::Segment *seg = alloclab::vam::object_segment(d);
  if (n == 0 || !alloclab::vam::segment_known(seg)) return;
  const char *c = static_cast<const char *>(d);
  // A huge object's mapping may end before its segment's 4 MiB do: d must be in it.
  if (c - reinterpret_cast<const char *>(seg) >= static_cast<std::ptrdiff_t>(seg->map_bytes)) return;
  if (load_word(c - sizeof(std::uint64_t)) == front_check(d)) {
    if (n > asked(d, place(d))) corruption("memcpy past the end of the object (overflow)", d);
    return;
  }
  // An object starting within kFront bytes after d (16-byte aligned) whose front the copy reaches.
  const auto from = reinterpret_cast<std::uintptr_t>(c);
  for (std::uintptr_t q = (from + 16) & ~std::uintptr_t{15}; q <= from + kFront && q - kFront < from + n; q += 16) {
    const auto *at = reinterpret_cast<const char *>(q);
    if (alloclab::vam::object_segment(at) == seg &&
        at - reinterpret_cast<const char *>(seg) < static_cast<std::ptrdiff_t>(seg->map_bytes) &&
        load_word(at - sizeof(std::uint64_t)) == front_check(at))
      corruption("memcpy into the bytes before an object (underflow)", at);
  }
}

}  // namespace alloclab::vam::secure

#endif  // VAM_SECURE
