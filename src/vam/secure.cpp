// secure.cpp — libvam-secure.so's entry points (VAM_SECURE): vam's allocator
// with a check at every step a misuse can go unnoticed, for programs that want
// them (`vam --secure`, or VAM_SECURE=1 with the vam command). override.cpp
// calls these instead of vam's own when built with VAM_SECURE; libvam.so has
// none of them (instrument.hpp).
//
// Every object is asked of vam 64 bytes larger, for the words around it
// (secure_front.hpp): before q, two canary words, the size word (the size
// asked, the pad, the form, mixed with a per-process secret and q's address)
// and its seal; after q's last byte, four canary words. No lookup in vam's
// tables is made: the front says where vam's object is and how large q is. So:
//   * free, realloc and malloc_usable_size know the exact size, and an
//     overflow or underflow of 1 to 32 bytes (any byte of them changed), or a
//     write into a malloc(0), is found at free;
//   * a sized delete (operator delete(p, n), free_sized) of another size aborts;
//   * memcpy (override.cpp) aborts on a copy past an object's end or into its
//     front (secure_copy.cpp).
// A freed object is not given back at once: its seal is turned into the freed
// seal, its bytes become zeroes, and it takes a random place in the freeing
// thread's quarantine, a ring of kRing places holding kQuarantineBytes at
// most, small enough that an object given back is still in the data cache
// when vam hands it out again; the object it replaces is checked (its front
// and canaries as at its free, its first and last kEdge bytes still zeroes)
// and given back. The first bytes of the object the thread freed last are
// checked at its next malloc and free. Each thread's quarantine is its own:
// no lock, and no other thread takes an object out of it. So:
//   * a read after free finds zeroes, and reused memory comes back zeroed;
//   * a write after free is found at the freeing thread's next allocation
//     (at the start of the object it freed last), when the object leaves the
//     quarantine (at its ends), or when the thread exits, or the process,
//     when every object waiting in the thread's quarantine is checked whole
//     (writing zeroes goes unseen);
//   * a double free or a realloc of an object in quarantine aborts; one that
//     has left it aborts as a pointer that is no object (its front is wiped);
//   * reuse is delayed and its order randomised.
// Objects above kQuarantineMax (1 MiB) skip it (filling them would cost more
// than the program's use of them); vam's own checks (large tags, huge
// headers) stay.
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include <atomic>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "vam/api.hpp"
#include "vam/check.hpp"
#include "vam/instrument.hpp"
#include "vam/secure_front.hpp"

#if defined(VAM_SECURE)

namespace alloclab::vam::secure {

std::uint64_t g_secret;

namespace {

constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kEdge = 64;                // bytes checked at each end of an object leaving the quarantine
constexpr std::size_t kRing = 64;
constexpr std::size_t kQuarantineMax = std::size_t{1} << 20;    // bytes of one object
constexpr std::size_t kQuarantineBytes = std::size_t{16} << 10;  // of all waiting objects but the newest
constexpr std::size_t kSizeMax = std::size_t{1} << 56;          // the size word keeps 8 bits: the pad, the form

// A waiting object: where it is, and its three words as they were at free
// (the size word, the freed seal, the canary), compared when it leaves: no
// key to compute again.
struct Waiting {
  char *q;
  std::size_t n;
  std::size_t pad;
  std::uint64_t size_word;
  std::uint64_t freed_seal;
  std::uint64_t canary;
};

// A thread's quarantine: a ring of kRing places. A freed object takes one at
// random and the object there leaves, checked; while the others hold more
// than kQuarantineBytes, more leave. One in, one out: vam gets an object back
// at each free, as without the quarantine, so a malloc after a free finds one
// on its list. Only its thread reads or writes it, so it takes no lock, and
// the object it freed last cannot leave (and be unmapped by vam) while the
// thread reads it. A fork's child keeps the forking thread's; the objects
// in the other threads' stay there.
struct Quarantine {
  Waiting ring[kRing];
  std::size_t waiting;  // bytes in the ring
  const char *last;     // the object the thread freed last, while it waits
  std::size_t last_n;   // and its size
  std::uint64_t rng;
};

std::uint64_t g_rng_seed;  // each thread's ring draws from it mixed with the ring's address
// No quarantine yet (every thread's at its start), or none to be had: its
// thread's exit has emptied it, or vam had no memory for it. Never written:
// `last` stays null, so the check at malloc needs no test for it.
constinit Quarantine g_no_quarantine{};
// The calling thread's quarantine, made at its first free (make_quarantine);
// its thread's exit empties and frees it (thread_exit).
__thread Quarantine *t_quarantine __attribute__((tls_model("initial-exec"))) = &g_no_quarantine;
// Its thread-exit key; made by a constructor (g_key_made), before any thread
// but the first can free.
pthread_key_t g_key;
bool g_key_made;

// malloc(0): an address of its own in a reserved region no access is allowed
// to (kZeroBytes, 16 bytes apart), so any read or write of it faults; free
// does nothing with it. Past the region's end, a 0-byte object as any other.
constexpr std::size_t kZeroBytes = std::size_t{64} << 20;
// Its start; until it is made, the last kZeroBytes of the address space,
// which no pointer of a program's points into, so that zero_sized is one
// subtraction and one compare.
constexpr std::uintptr_t kNoZeroRegion = ~std::uintptr_t{0} - (kZeroBytes - 1);
std::atomic<std::uintptr_t> g_zero{kNoZeroRegion};
std::atomic<std::size_t> g_zero_next{0};

// The secret and the rings' seed, at the first allocation (arm).
[[gnu::cold, gnu::noinline]] void make_secret() noexcept {
  // The kernel's 16 random bytes for this process (no system call, no allocation).
  std::uint64_t s[2] = {0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull};
  if (const void *r = reinterpret_cast<const void *>(getauxval(AT_RANDOM))) memcpy(s, r, sizeof s);
  g_rng_seed = s[1];
  g_secret = s[0] | 1;
}

// Sixteen bytes at a time where the target has SSE2 (every x86-64): a
// canary check is three loads and one test, not six of each, and an object
// of up to 128 bytes is zeroed or checked by at most eight overlapping
// stores or loads, with no loop. Elsewhere, eight bytes at a time.
#if defined(__SSE2__)
using Bytes16 = __m128i;
VAM_SECURE_INLINE Bytes16 load16(const void *at) noexcept { return _mm_loadu_si128(static_cast<const __m128i *>(at)); }
VAM_SECURE_INLINE void store16(void *at, Bytes16 v) noexcept { _mm_storeu_si128(static_cast<__m128i *>(at), v); }
VAM_SECURE_INLINE Bytes16 or16(Bytes16 a, Bytes16 b) noexcept { return _mm_or_si128(a, b); }
VAM_SECURE_INLINE Bytes16 xor16(Bytes16 a, Bytes16 b) noexcept { return _mm_xor_si128(a, b); }
VAM_SECURE_INLINE Bytes16 zeros16() noexcept { return _mm_setzero_si128(); }
VAM_SECURE_INLINE Bytes16 words16(std::uint64_t w) noexcept { return _mm_set1_epi64x(static_cast<long long>(w)); }
VAM_SECURE_INLINE bool is_zero16(Bytes16 v) noexcept {
  return _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) == 0xffff;
}
#else
struct Bytes16 {
  std::uint64_t lo, hi;
};
VAM_SECURE_INLINE Bytes16 load16(const void *at) noexcept {
  return {load_word(at), load_word(static_cast<const char *>(at) + 8)};
}
VAM_SECURE_INLINE void store16(void *at, Bytes16 v) noexcept {
  store_word(at, v.lo);
  store_word(static_cast<char *>(at) + 8, v.hi);
}
VAM_SECURE_INLINE Bytes16 or16(Bytes16 a, Bytes16 b) noexcept { return {a.lo | b.lo, a.hi | b.hi}; }
VAM_SECURE_INLINE Bytes16 xor16(Bytes16 a, Bytes16 b) noexcept { return {a.lo ^ b.lo, a.hi ^ b.hi}; }
VAM_SECURE_INLINE Bytes16 zeros16() noexcept { return {0, 0}; }
VAM_SECURE_INLINE Bytes16 words16(std::uint64_t w) noexcept { return {w, w}; }
VAM_SECURE_INLINE bool is_zero16(Bytes16 v) noexcept { return (v.lo | v.hi) == 0; }
#endif

// Every byte of [from, to) zero, from 17 to 128 bytes: overlapping 16-byte
// loads from each end.
VAM_SECURE_INLINE bool all_zero_17_128(const char *from, const char *to) noexcept {
  const std::size_t len = static_cast<std::size_t>(to - from);
  Bytes16 any = or16(load16(from), load16(to - 16));
  if (len > 32) any = or16(any, or16(load16(from + 16), load16(to - 32)));
  if (len > 64) any = or16(or16(any, or16(load16(from + 32), load16(to - 48))), or16(load16(from + 48), load16(to - 64)));
  return is_zero16(any);
}

// Every byte of [from, to) zero. The ranges checked are short but at an
// exit (empty): the quarantine checks at most 2 kEdge bytes of an object
// leaving it.
VAM_SECURE_INLINE bool all_zero(const char *from, const char *to) noexcept {
  const std::size_t len = static_cast<std::size_t>(to - from);
  if (len - 8 <= 8) return (load_word(from) | load_word(to - 8)) == 0;  // 8 to 16 bytes, the most common
  if (len - 17 <= 128 - 17) return all_zero_17_128(from, to);
  std::uint64_t any = 0;
  if (len < 8) {
    for (; from < to; ++from) any |= static_cast<unsigned char>(*from);
    return any == 0;
  }
  for (const char *at = from; at + 8 <= to; at += 8) any |= load_word(at);
  return (any | load_word(to - 8)) == 0;
}

// [from, to) zeroed, from 17 to 128 bytes: overlapping 16-byte stores from each end.
VAM_SECURE_INLINE void zero_17_128(char *from, char *to) noexcept {
  const std::size_t len = static_cast<std::size_t>(to - from);
  const Bytes16 z = zeros16();
  store16(from, z);
  store16(to - 16, z);
  if (len <= 32) return;
  store16(from + 16, z);
  store16(to - 32, z);
  if (len <= 64) return;
  store16(from + 32, z);
  store16(from + 48, z);
  store16(to - 48, z);
  store16(to - 64, z);
}

// [from, to) zeroed: up to 128 bytes by stores (a call to memset costs more
// than the stores of a small object), longer ones by memset.
[[gnu::noinline]] void zero_long(char *from, char *to) noexcept {
  const std::size_t len = static_cast<std::size_t>(to - from);
  if (len > 128) {
    memset(from, 0, len);
  } else {
    for (; from < to; ++from) *from = 0;  // under 8 bytes
  }
}

VAM_SECURE_INLINE void zero(char *from, char *to) noexcept {
  const std::size_t len = static_cast<std::size_t>(to - from);
  if (len - 8 <= 8) {
    store_word(from, 0);
    store_word(to - 8, 0);
  } else if (len - 17 <= 128 - 17) {
    zero_17_128(from, to);
  } else {
    zero_long(from, to);
  }
}

// The canary words: two before the size word, four after the object (an
// overflow or underflow of up to 32 bytes reaches one of them, even one that
// changes only the 32nd byte).
VAM_SECURE_INLINE void set_canaries(char *q, std::size_t n, std::uint64_t c) noexcept {
  const Bytes16 v = words16(c);
  store16(q - 32, v);
  store16(q + n, v);
  store16(q + n + 16, v);
}
VAM_SECURE_INLINE bool canaries_changed(const char *q, std::size_t n, std::uint64_t c) noexcept {
  const Bytes16 v = words16(c);
  return !is_zero16(or16(xor16(load16(q - 32), v), or16(xor16(load16(q + n), v), xor16(load16(q + n + 16), v))));
}

// p from vam, holding at least pad + n + kCanary bytes: the object q = p + pad,
// armed, made by `form`.
VAM_SECURE_INLINE void *arm(void *p, std::size_t pad, std::size_t n, unsigned form = kFormMalloc) noexcept {
  char *q = static_cast<char *>(p) + pad;
  if (__builtin_expect(g_secret == 0, 0)) make_secret();
  const std::uint64_t k = key(q);
  const std::uint64_t size_word = size_word_of(n, form, pad) ^ k;
  store_word(q - 2 * sizeof(std::uint64_t), size_word);
  store_word(q - sizeof(std::uint64_t), seal(k, size_word));
  set_canaries(q, n, canary(k));
  return q;
}

// Where the program's object q sits in vam's, read from its front (checked).
struct Place {
  char *p;          // vam's object
  std::size_t pad;  // q - p
  std::size_t n;    // the size asked
  std::uint64_t k;  // q's key
  unsigned form;    // what made it (kFormMalloc, kFormNew, kFormNewArray)
  bool freed;       // the front carries the freed seal
};

[[noreturn, gnu::cold, gnu::noinline]] void not_an_object(const void *q) noexcept {
  corruption("heap corruption: the bytes before the object were overwritten (underflow?), or not an object", q);
}

VAM_SECURE_INLINE Place place(const void *q) noexcept {
  const char *c = static_cast<const char *>(q);
  const std::uint64_t k = key(q);
  const std::uint64_t size_word = load_word(c - 2 * sizeof(std::uint64_t));
  const std::uint64_t check = load_word(c - sizeof(std::uint64_t));
  // The second word is the seal (live) or its complement (freed): their
  // difference is all zeroes or all ones. A front that is neither is none of
  // arm's; one that is can only hold arm's size word, whose pad needs no
  // further check.
  const std::uint64_t diff = check ^ seal(k, size_word);
  if (VAM_UNLIKELY(diff + 1 > 1)) not_an_object(q);
  const std::uint64_t word = size_word ^ k;
  const std::size_t pad = std::size_t{1} << (word & 31);
  return {const_cast<char *>(c) - pad, pad, word >> kSizeShift, k, static_cast<unsigned>(word >> kFormShift) & 3,
          diff != 0};
}

// The canary after q's last byte intact, or abort.
[[noreturn, gnu::cold, gnu::noinline]] void canary_changed(const char *q, std::uint64_t c, const char *what) noexcept {
  if (((load_word(q - 32) ^ c) | (load_word(q - 24) ^ c)) != 0)
    corruption("heap corruption: the bytes before the object were overwritten (underflow?)", q);
  corruption(what, q);
}
VAM_SECURE_INLINE void check_canary(const void *q, const Place &at, const char *what) noexcept {
  const char *c = static_cast<const char *>(q);
  const std::uint64_t want = canary(at.k);
  if (VAM_UNLIKELY(canaries_changed(c, at.n, want))) canary_changed(c, want, what);
}

VAM_SECURE_INLINE bool zero_sized(const void *q) noexcept {
  return reinterpret_cast<std::uintptr_t>(q) - g_zero.load(std::memory_order_acquire) < kZeroBytes;
}

void *zero_object() noexcept {
  std::uintptr_t z = g_zero.load(std::memory_order_acquire);
  if (z == kNoZeroRegion) {
    void *m = mmap(nullptr, kZeroBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    std::uintptr_t expected = kNoZeroRegion;
    if (!g_zero.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(m), std::memory_order_acq_rel)) {
      munmap(m, kZeroBytes);
      z = expected;
    } else {
      z = reinterpret_cast<std::uintptr_t>(m);
    }
  }
  const std::size_t at = g_zero_next.fetch_add(16, std::memory_order_relaxed);
  return at < kZeroBytes ? reinterpret_cast<void *>(z + at) : nullptr;
}

// q's place, checked live: neither freed nor overflowed.
VAM_SECURE_INLINE Place check_live(const void *q) noexcept {
  const Place at = place(q);
  if (VAM_UNLIKELY(at.freed)) corruption("double free (the object is already freed)", q);
  check_canary(q, at, "heap corruption: the bytes after the end of the object were overwritten (overflow?)");
  return at;
}

// A freed object's bytes become zeroes (what it held never reaches a read after
// free, or its next owner), by stores whatever its size: not by handing its
// whole pages to the kernel (madvise MADV_DONTNEED, as from 64 KiB up
// before). vam gives the same memory out again soon, and each page then
// faulted back in, zeroed by the kernel, cost far more than the stores: jq
// joining 40,000 strings frees an object of 86-455 KiB at each step, and
// spent most of its time in the kernel, in 33,238 madvise calls and the
// faults after them. An object above kQuarantineMax is not zeroed at all
// (release), so the stores stop at 1 MiB an object.
VAM_SECURE_INLINE void scrub(char *from, char *to) noexcept { zero(from, to); }

// A freed object's first 16 bytes (all of a smaller one) still zero.
VAM_SECURE_INLINE bool first_bytes_zero(const char *q, std::size_t n) noexcept {
  if (n >= 16) return (load_word(q) | load_word(q + 8)) == 0;
  return n == 0 || all_zero(q, q + n);
}

// Whether a freed object's first and last kEdge bytes still read as zeroes
// (all of one up to 2 kEdge bytes): checking the whole object would read it
// back into the cache only to hand it to vam.
VAM_SECURE_INLINE bool still_scrubbed(const char *from, const char *to) noexcept {
  if (static_cast<std::size_t>(to - from) <= 2 * kEdge) return all_zero(from, to);
  return all_zero(from, from + kEdge) && all_zero(to - kEdge, to);
}

// Back to vam, the front and the canary wiped: a front left in memory vam
// hands out again would read as an object's start to check_copy, and neither
// word should reach the next owner.
void hand_back(char *q, std::size_t n, std::size_t pad) noexcept {
  set_canaries(q, n, 0);
  store16(q - 2 * sizeof(std::uint64_t), zeros16());
  alloclab::vam::free_impl(q - pad);
}

// A waiting object unchanged since its free (its front as it was then, with
// the freed seal; its canary; its ends zero, or every byte when `whole`),
// back to vam.
VAM_SECURE_INLINE void check_waiting(const Waiting &w, bool whole = false) noexcept {
  if (load_word(w.q - 2 * sizeof(std::uint64_t)) != w.size_word ||
      load_word(w.q - sizeof(std::uint64_t)) != w.freed_seal ||
      !(whole ? all_zero(w.q, w.q + w.n) : still_scrubbed(w.q, w.q + w.n)))
    corruption("write after free (a freed object was changed while it waited for reuse)", w.q);
  if (canaries_changed(w.q, w.n, w.canary))
    corruption("heap corruption: the bytes after the end of a freed object were overwritten (overflow?)", w.q);
}
VAM_SECURE_INLINE void give_back(const Waiting &w, bool whole = false) noexcept {
  check_waiting(w, whole);
  hand_back(w.q, w.n, w.pad);
}

// Set by the thread's exit (thread_exit): a free after it goes straight back.
__thread bool t_quarantine_done __attribute__((tls_model("initial-exec"))) = false;

std::size_t next_random(Quarantine &q) noexcept {
  q.rng ^= q.rng << 13;
  q.rng ^= q.rng >> 7;
  q.rng ^= q.rng << 17;
  return static_cast<std::size_t>(q.rng % kRing);
}

// Takes the object at ring place i out.
Waiting take(Quarantine &q, std::size_t i) noexcept {
  const Waiting w = q.ring[i];
  q.ring[i].q = nullptr;
  q.waiting -= w.pad + w.n + kCanary;
  if (q.last == w.q) q.last = nullptr;
  return w;
}

// Every object waiting in q, checked whole (once, at its thread's exit or
// the process's: at most kQuarantineBytes and the newest object, 1 MiB at
// most) and given back: a write after free into an object's middle, which
// the edges checked when an object leaves the ring miss, is found there.
void empty(Quarantine &q) noexcept {
  for (std::size_t i = 0; i < kRing; ++i)
    if (q.ring[i].q != nullptr) give_back(take(q, i), true);
}

// The thread's exit (its key's destructor): its quarantine emptied and
// freed. A free after this (a later destructor's) goes straight back to vam.
void thread_exit(void *arg) noexcept {
  auto *q = static_cast<Quarantine *>(arg);
  t_quarantine = &g_no_quarantine;
  t_quarantine_done = true;
  empty(*q);
  alloclab::vam::free_impl(q);
}

// The key, made before main (pthread_key_create may call malloc: from a
// constructor, not from a first free). glibc keeps the first 32 keys'
// values in the thread itself, so setting one allocates nothing.
[[gnu::constructor]] void make_key() noexcept { g_key_made = pthread_key_create(&g_key, thread_exit) == 0; }

// The calling thread's quarantine, made at its first free: memory from vam
// itself (no check of its own), registered for the thread's exit. A thread
// that runs before the key exists (a free in another library's constructor)
// is the process's first, whose quarantine the exit of the process empties.
[[gnu::noinline]] Quarantine *make_quarantine() noexcept {
  if (t_quarantine_done) return &g_no_quarantine;
  auto *q = static_cast<Quarantine *>(alloclab::vam::malloc_impl(sizeof(Quarantine)));
  if (q == nullptr) return &g_no_quarantine;
  memset(q, 0, sizeof *q);
  q->rng = (g_rng_seed ^ reinterpret_cast<std::uintptr_t>(q) * 0x9e3779b97f4a7c15ull) | 1;
  t_quarantine = q;
  if (g_key_made) pthread_setspecific(g_key, q);
  return q;
}

// More leave while the others than the newest hold more than kQuarantineBytes.
[[gnu::noinline]] void trim(Quarantine &q, std::size_t newest, std::size_t bytes) noexcept {
  std::size_t i = newest;
  // While the others hold more than kQuarantineBytes, one of them is in the ring.
  while (q.waiting - bytes > kQuarantineBytes) {
    while (q.ring[i].q == nullptr || i == newest) i = (i + 1) % kRing;
    give_back(take(q, i));
  }
}

// The object the thread freed last, while it waits: its first bytes still zero.
VAM_SECURE_INLINE void check_freed_last(const Quarantine &q) noexcept {
  if (q.last != nullptr && VAM_UNLIKELY(!first_bytes_zero(q.last, q.last_n)))
    corruption("write after free (the object freed last was changed)", q.last);
}
VAM_SECURE_INLINE void check_freed_last() noexcept { check_freed_last(*t_quarantine); }

// q, checked live at `at` (check_live): into the thread's quarantine, or
// straight back when large (or when the thread has none).
VAM_SECURE_INLINE void release(void *q, const Place &at) noexcept {
  char *c = static_cast<char *>(q);
  const std::size_t bytes = at.pad + at.n + kCanary;
  if (bytes > kQuarantineMax) {
    hand_back(c, at.n, at.pad);
    return;
  }
  Quarantine *qu = t_quarantine;
  if (VAM_UNLIKELY(qu == &g_no_quarantine)) {
    qu = make_quarantine();
    if (qu == &g_no_quarantine) {
      hand_back(c, at.n, at.pad);
      return;
    }
  }
  const std::uint64_t freed_seal = ~load_word(c - sizeof(std::uint64_t));
  store_word(c - sizeof(std::uint64_t), freed_seal);
  scrub(c, c + at.n);
  // The object freed before this one, likely still in the cache: its first bytes.
  check_freed_last(*qu);
  // q takes a random place; its occupant leaves.
  // Checked where it waits, and handed back last (the call is then a jump,
  // and nothing of the ring is kept across it).
  const std::size_t slot = next_random(*qu);
  Waiting &spot = qu->ring[slot];
  char *const out = spot.q;
  const std::size_t out_n = spot.n;
  const std::size_t out_pad = spot.pad;
  if (out != nullptr) {
    check_waiting(spot);
    qu->waiting -= out_pad + out_n + kCanary;
  }
  spot = {c, at.n, at.pad, load_word(c - 2 * sizeof(std::uint64_t)), freed_seal, load_word(c + at.n)};
  qu->waiting += bytes;
  qu->last_n = at.n;
  qu->last = c;
  if (VAM_UNLIKELY(qu->waiting - bytes > kQuarantineBytes)) trim(*qu, slot, bytes);
  if (out != nullptr) hand_back(out, out_n, out_pad);
}

// At the process's exit, every object waiting in the exiting thread's
// quarantine is checked (the other threads' are checked at their own exits).
[[gnu::destructor]] void check_quarantine_at_exit() noexcept {
  if (t_quarantine != &g_no_quarantine) empty(*t_quarantine);
}

// vam's object of `align` (0: malloc's) holding pad + room + kCanary bytes
// (room >= n: the headroom of a growing realloc), armed for n. Inlined into
// allocate (room n) and realloc alone: malloc's path carries no third argument.
VAM_SECURE_INLINE void *allocate_room(std::size_t align, std::size_t n, std::size_t room,
                                        unsigned form = kFormMalloc) noexcept {
  check_freed_last();
  if (n == 0 && align <= 16) {
    if (void *z = zero_object()) return z;
  }
  const std::size_t pad = align > kFront ? align : kFront;
  if (n > kSizeMax || pad > (std::size_t{1} << 30)) {
    errno = ENOMEM;
    return nullptr;
  }
  const std::size_t with = room + pad + kCanary;
  void *p = align > 16 ? alloclab::vam::aligned_or_null(align, with) : alloclab::vam::malloc_impl(with);
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  return arm(p, pad, n, form);
}
void *allocate(std::size_t align, std::size_t n) noexcept { return allocate_room(align, n, n); }

// A realloc that grows past the room vam's object holds moves, and asks for
// a quarter more room than n (n + n / 2^kGrowShift, kept in place by the
// next reallocs until it is used up). Without it, a buffer grown a few bytes
// at a time moved at every step once vam's object fitted it to within a
// rounding (a large object: a 16-byte tag; a huge one: a page), each move
// a copy of all of it and a scrub of the old one: quadratic. With it, the
// moves of a buffer grown to N bytes copy and scrub about 4N bytes in all (a
// few dozen moves to reach 4 MiB). Every check stays as it was: the canaries are written
// right after the n bytes asked (the headroom lies beyond them, as a size
// class's rounding does), the size word says n, and the old object goes
// through release as a free does (zeroed, quarantined, checked when it
// leaves). vam's own growth in place (a large object into a free neighbour,
// a huge one by mremap) is not used: it would need the object's segment
// looked up, which the secure mode does nowhere else, and in this mode the
// neighbour of a freed object waits in the quarantine rather than being free.
constexpr unsigned kGrowShift = 2;

bool valid_alignment(std::size_t a) noexcept { return a != 0 && (a & (a - 1)) == 0; }

}  // namespace

void *malloc_impl(std::size_t n) noexcept { return allocate_room(0, n, n); }

void *aligned_or_null(std::size_t a, std::size_t n) noexcept { return allocate(a, n); }

void free_impl(void *q) noexcept {
  if (q == nullptr || zero_sized(q)) return;
  release(q, check_live(q));
}

// operator new's and new[]'s object: its form recorded in the front, for
// their deletes to check. Null when out of memory (override.cpp's new_slow
// calls the new_handler and retries).
void *new_or_null(std::size_t n, std::size_t align, unsigned form) noexcept {
  return allocate_room(align, n, n, form);
}

namespace {

// A delete of `form` (kFormNew: operator delete; kFormNewArray: delete[]) of
// an object made by the other new aborts: the mismatch runs the wrong
// destructors, or none, over the object. An object of the malloc family is
// let through (glibc takes it as any other), as free takes operator new's.
[[noreturn, gnu::cold, gnu::noinline]] void wrong_delete(const void *q, unsigned form) noexcept {
  corruption(form == kFormNewArray ? "operator delete[] of an object made by operator new (not new[])"
                                   : "operator delete of an object made by operator new[] (not new)",
             q);
}
// form kFormMalloc (free, free_sized) takes an object of any form.
VAM_SECURE_INLINE void check_form(const void *q, const Place &at, unsigned form) noexcept {
  if (VAM_UNLIKELY(at.form != form && at.form != kFormMalloc && form != kFormMalloc)) wrong_delete(q, form);
}

// A release of `size` bytes (a sized delete, free_sized) by `form`.
VAM_SECURE_INLINE void release_sized(void *q, std::size_t size, unsigned form) noexcept {
  if (q == nullptr) return;
  if (zero_sized(q)) {
    if (size != 0) corruption("sized free or delete with another size than the object's", q);
    return;
  }
  const Place at = check_live(q);
  if (at.n != size) corruption("sized free or delete with another size than the object's", q);
  check_form(q, at, form);
  release(q, at);
}

}  // namespace

void delete_impl(void *q, unsigned form) noexcept {
  if (q == nullptr || zero_sized(q)) return;
  const Place at = check_live(q);
  check_form(q, at, form);
  release(q, at);
}

void delete_sized_impl(void *q, std::size_t size, unsigned form) noexcept { release_sized(q, size, form); }

void free_sized_impl(void *q, std::size_t size) noexcept { release_sized(q, size, kFormMalloc); }

void *calloc_impl(std::size_t n, std::size_t size) noexcept {
  std::size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void *q = allocate(0, bytes);
  if (q && !zero_sized(q)) memset(q, 0, bytes);
  return q;
}

void *realloc_impl(void *q, std::size_t n) noexcept {
  if (q == nullptr || zero_sized(q)) return allocate(0, n);
  const Place at = place(q);
  if (at.freed) corruption("realloc(): the object was already freed", q);
  check_canary(q, at, "heap corruption: the bytes after the end of the object were overwritten (overflow?)");
  if (n == 0) {  // as glibc: frees, returns null
    release(q, at);
    return nullptr;
  }
  if (at.pad == kFront && n <= kSizeMax &&
      n + kFront + kCanary <= alloclab::vam::usable_size_impl(at.p)) {  // in place: the old canary wiped
    set_canaries(static_cast<char *>(q), at.n, 0);
    return arm(at.p, at.pad, n);
  }
  void *r = nullptr;
  if (n > at.n) {
    const int saved = errno;
    r = allocate_room(0, n, n + (n >> kGrowShift));
    if (r == nullptr) errno = saved;  // the headroom was refused: n alone, below
  }
  if (r == nullptr) r = allocate(0, n);
  if (r == nullptr) return nullptr;  // errno is ENOMEM; q stays valid
  memmove(r, q, at.n < n ? at.n : n);  // not the checked memcpy: r's room is known
  release(q, at);
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

// The front alone, sealed and live: the canaries are left to free, which
// reads them in any case. A program that asks at each use (the study's server
// does, once a malloc) paid their check each time: 66 instructions a call
// with them, 39 without.
std::size_t usable_size_impl(const void *q) noexcept {
  if (q == nullptr || zero_sized(q)) return 0;
  const Place at = place(q);
  if (VAM_UNLIKELY(at.freed)) corruption("malloc_usable_size(): the object was already freed", q);
  return at.n;
}

}  // namespace alloclab::vam::secure

#endif  // VAM_SECURE
