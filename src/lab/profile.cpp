// profile.cpp — liballoclab_profile.so, the allocation-size detector of
// littering §3.1, as an LD_PRELOAD shim.
//
// It interposes the malloc family and C++'s operator new/delete, forwards every call to the allocator that
// comes next in symbol lookup order (dlsym(RTLD_NEXT): glibc, or a jemalloc /
// mimalloc / tcmalloc / vam placed after this shim in LD_PRELOAD), and records
//   - a histogram of requested sizes below a cutoff (ALLOCLAB_PROFILE_CUTOFF,
//     default 4096, the paper's page-size cut) and a count of the rest,
//   - total allocations and requested bytes,
//   - the peak number of live objects and the peak live requested bytes.
// At exit (and just before an exec) the process writes one JSON record; see
// docs/lab.md for the format and for how forked and exec'd children name
// their records.
//
// Soundness rules this file keeps:
//   * Nothing here allocates through malloc: tables and per-thread counters
//     live in anonymous mappings (alloclab::os), output is formatted into a
//     mapping and written with write(2).
//   * Requested sizes of live objects are kept in a side table (pointer ->
//     size), never in a hidden header, so alignment guarantees of the
//     allocator beneath are untouched.
//   * The malloc family and operator new/delete themselves, the lookup of the allocator beneath, the
//     bootstrap arena dlsym's own requests are served from, the reentrancy
//     guard and fork safety of all that are the shared interposition core
//     (interpose.h / interpose.c); this file supplies its hooks.
//   * A record is removed from the side table *before* the object is handed
//     back to the allocator, so another thread that receives the same address
//     can never have its record deleted by us.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lab/interpose.h"
#include "lab/text.hpp"
#include "layers/os.hpp"

extern "C" char **environ;

namespace {

using alloclab::lab::TextBuffer;
using alloclab::lab::parse_u64;
namespace os = alloclab::os;

#define LAB_LIKELY(x) __builtin_expect(!!(x), 1)
#define LAB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LAB_TLS __attribute__((tls_model("initial-exec")))

// ---------------------------------------------------------------- options
// ALLOCLAB_PROFILE_OUT     where the record goes (default: alloclab-profile.json
//                          in the start-up working directory). Relative paths are
//                          resolved at start-up, so a later chdir does not move it.
// ALLOCLAB_PROFILE_CUTOFF  sizes below this are histogrammed (default 4096, max 1 MiB).
// ALLOCLAB_PROFILE_CHILD   set by the shim itself in the environment it passes on,
//                          so exec'd descendants know they are not the root process.
constexpr std::size_t kDefaultCutoff = 4096;
constexpr std::size_t kMaxCutoff = std::size_t{1} << 20;
constexpr const char *kChildMarker = "ALLOCLAB_PROFILE_CHILD=1";

std::size_t g_cutoff = kDefaultCutoff;
char g_out[PATH_MAX];        // the root's record path
char g_chosen[PATH_MAX + 32];  // a non-root process's record path, once chosen
bool g_have_chosen = false;
bool g_root = true;
pid_t g_pid = 0;

// ---------------------------------------------------------------- the functions beneath
// The malloc family beneath is the core's (ip_next); these are the process
// functions this shim wraps as well.
struct Next {
  int (*execve)(const char *, char *const[], char *const[]);
  int (*execvpe)(const char *, char *const[], char *const[]);
  int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                     const posix_spawnattr_t *, char *const[], char *const[]);
  int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                      const posix_spawnattr_t *, char *const[], char *const[]);
};
Next next{};

void die(const char *msg) noexcept {
  (void)!::write(2, msg, std::strlen(msg));
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

void read_options() noexcept;

template <class F>
void lookup(F *slot, const char *name) noexcept {
  *slot = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

inline bool ready() noexcept { return ip_ready() != 0; }

// ---------------------------------------------------------------- side tables
// Requested sizes of live objects are kept in two places:
//
//  * the shadow map (the common case): for every 4 KiB page of the heap, a
//    leaf of 512 16-bit slots (1 KiB), one per 8 bytes of address, holding
//    size + 1 (0 = no object starts here; 0xffff = look in the hash). Leaves are found through a two-level radix
//    of the 48-bit address space. No locks: a slot is written only by the
//    thread that allocates or frees the object starting there. Its memory
//    follows the heap's layout, so the map costs what the heap costs in
//    locality, instead of a cache miss per call as a hash would.
//  * the fallback hash (below): pointers not 8-byte aligned, outside 48-bit
//    space, or sizes of 65534 bytes and more.
//
// The fallback: pointer -> requested size, split into stripes, each an open-addressing hash
// table with linear probing and backward-shift deletion (no tombstones),
// guarded by its own spin lock. Tables grow by doubling at half load.
struct Entry {
  std::uintptr_t key;  // 0 = empty
  std::size_t size;
};

struct alignas(64) Stripe {
  std::atomic<bool> locked{false};
  Entry *slots = nullptr;
  std::size_t cap = 0;  // power of two
  std::size_t count = 0;
};

constexpr std::size_t kStripes = 64;
constexpr std::size_t kInitialCap = 1024;
Stripe g_stripes[kStripes];

inline std::uint64_t mix(std::uintptr_t p) noexcept {
  std::uint64_t x = p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

void lock(Stripe &s) noexcept {
  for (unsigned spins = 0; s.locked.exchange(true, std::memory_order_acquire); ++spins) {
    while (s.locked.load(std::memory_order_relaxed)) {
      if (++spins > 64) { ::sched_yield(); spins = 0; }
      else __builtin_ia32_pause();
    }
  }
}
void unlock(Stripe &s) noexcept { s.locked.store(false, std::memory_order_release); }

std::size_t table_bytes(std::size_t cap) noexcept {
  return os::align_up(cap * sizeof(Entry), os::page_size());
}

inline std::size_t home(std::uintptr_t key, std::size_t mask) noexcept { return (mix(key) >> 6) & mask; }

// Places key (known absent) into slots; no growth check.
void place(Entry *slots, std::size_t cap, std::uintptr_t key, std::size_t size) noexcept {
  std::size_t i = home(key, cap - 1);
  while (slots[i].key != 0) i = (i + 1) & (cap - 1);
  slots[i] = Entry{key, size};
}

bool grow(Stripe &s) noexcept {
  const std::size_t ncap = s.cap ? s.cap * 2 : kInitialCap;
  auto *fresh = static_cast<Entry *>(os::map(table_bytes(ncap)));
  if (!fresh) return false;
  for (std::size_t i = 0; i < s.cap; ++i)
    if (s.slots[i].key) place(fresh, ncap, s.slots[i].key, s.slots[i].size);
  if (s.slots) os::unmap(s.slots, table_bytes(s.cap));
  s.slots = fresh;
  s.cap = ncap;
  return true;
}

inline Stripe &stripe_of(std::uintptr_t key) noexcept { return g_stripes[mix(key) & (kStripes - 1)]; }

// Inserts p -> size. Returns 1 when p was new, 0 when it replaced a stale
// record (old size in *old), -1 when the table could not grow (not recorded).
int table_insert(void *p, std::size_t size, std::size_t *old) noexcept {
  const auto key = reinterpret_cast<std::uintptr_t>(p);
  Stripe &s = stripe_of(key);
  lock(s);
  if ((s.count + 1) * 2 > s.cap && !grow(s)) { unlock(s); return -1; }
  std::size_t i = home(key, s.cap - 1);
  while (s.slots[i].key != 0) {
    if (s.slots[i].key == key) {
      *old = s.slots[i].size;
      s.slots[i].size = size;
      unlock(s);
      return 0;
    }
    i = (i + 1) & (s.cap - 1);
  }
  s.slots[i] = Entry{key, size};
  ++s.count;
  unlock(s);
  return 1;
}

// Removes p; true (and its size) when it was recorded.
bool table_remove(void *p, std::size_t *size) noexcept {
  const auto key = reinterpret_cast<std::uintptr_t>(p);
  Stripe &s = stripe_of(key);
  lock(s);
  if (s.cap == 0) { unlock(s); return false; }
  const std::size_t mask = s.cap - 1;
  std::size_t i = home(key, mask);
  while (s.slots[i].key != key) {
    if (s.slots[i].key == 0) { unlock(s); return false; }
    i = (i + 1) & mask;
  }
  *size = s.slots[i].size;
  // Backward-shift deletion: pull later members of the probe run into the hole.
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask; s.slots[j].key != 0; j = (j + 1) & mask) {
    const std::size_t h = home(s.slots[j].key, mask);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    const bool home_after_hole = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
    if (!home_after_hole) {
      s.slots[hole] = s.slots[j];
      hole = j;
    }
  }
  s.slots[hole] = Entry{0, 0};
  --s.count;
  unlock(s);
  return true;
}

// ---- the shadow map
constexpr unsigned kGranuleShift = 3;                         // 8-byte granules
constexpr unsigned kPageShift = 12;
constexpr std::size_t kLeafSlots = std::size_t{1} << (kPageShift - kGranuleShift);
constexpr unsigned kL2Bits = 18;                              // one L2 node spans 1 GiB
constexpr unsigned kL1Bits = 48 - kPageShift - kL2Bits;       // 18
using Slot = std::uint16_t;                                   // size + 1; sizes >= 65534 go to the hash
constexpr Slot kInFallback = 0xffff;                          // the size lives in the hash

struct Leaf { std::atomic<Slot> slot[kLeafSlots]; };
struct L2 { std::atomic<Leaf *> leaf[std::size_t{1} << kL2Bits]; };
std::atomic<L2 *> g_l1[std::size_t{1} << kL1Bits];  // 2 MiB of .bss, touched sparsely

// Leaves come from 1 MiB mappings, carved with an atomic bump pointer.
constexpr std::size_t kLeafChunk = std::size_t{1} << 20;
std::atomic<char *> g_leaf_chunk{nullptr};
std::atomic<std::size_t> g_leaf_used{kLeafChunk};

Leaf *new_leaf() noexcept {
  for (;;) {
    char *chunk = g_leaf_chunk.load(std::memory_order_acquire);
    const std::size_t at = g_leaf_used.fetch_add(sizeof(Leaf), std::memory_order_acq_rel);
    if (chunk && at + sizeof(Leaf) <= kLeafChunk) return reinterpret_cast<Leaf *>(chunk + at);
    // Exhausted: one thread maps a fresh chunk; racing threads retry.
    char *fresh = static_cast<char *>(os::map(kLeafChunk));
    if (!fresh) return nullptr;
    if (g_leaf_chunk.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel)) {
      g_leaf_used.store(sizeof(Leaf), std::memory_order_release);
      return reinterpret_cast<Leaf *>(fresh);
    }
    os::unmap(fresh, kLeafChunk);
  }
}

template <class T, class Make>
T *get_or_make(std::atomic<T *> &slot, Make make) noexcept {
  T *v = slot.load(std::memory_order_acquire);
  if (LAB_LIKELY(v != nullptr)) return v;
  T *fresh = make();
  if (!fresh) return nullptr;
  if (slot.compare_exchange_strong(v, fresh, std::memory_order_acq_rel)) return fresh;
  return v;  // another thread won; its node is used, ours is left unused (rare, small)
}

// The slot for p; nullptr when p is not shadowable (or memory ran out and
// create was asked for).
std::atomic<Slot> *shadow_slot(std::uintptr_t p, bool create) noexcept {
  if ((p & ((std::uintptr_t{1} << kGranuleShift) - 1)) != 0 || (p >> 48) != 0) return nullptr;
  const std::size_t i1 = p >> (kPageShift + kL2Bits);
  const std::size_t i2 = (p >> kPageShift) & ((std::size_t{1} << kL2Bits) - 1);
  const std::size_t i3 = (p & ((std::uintptr_t{1} << kPageShift) - 1)) >> kGranuleShift;
  L2 *l2 = g_l1[i1].load(std::memory_order_acquire);
  if (!l2) {
    if (!create) return nullptr;
    l2 = get_or_make(g_l1[i1], [] { return static_cast<L2 *>(os::map(sizeof(L2))); });
    if (!l2) return nullptr;
  }
  Leaf *leaf = l2->leaf[i2].load(std::memory_order_acquire);
  if (!leaf) {
    if (!create) return nullptr;
    leaf = get_or_make(l2->leaf[i2], new_leaf);
    if (!leaf) return nullptr;
  }
  return &leaf->slot[i3];
}

// Inserts p -> size. Returns 1 when p was new, 0 when it replaced a stale
// record (old size in *old), -1 when it could not be recorded.
int record_insert(void *p, std::size_t size, std::size_t *old) noexcept {
  const auto key = reinterpret_cast<std::uintptr_t>(p);
  if (auto *slot = shadow_slot(key, true)) {
    const Slot prev = slot->load(std::memory_order_relaxed);
    int r = 1;
    if (prev == kInFallback) {
      table_remove(p, old);
      r = 0;
    } else if (prev != 0) {
      *old = prev - 1;
      r = 0;
    }
    if (size < kInFallback - 1) {
      slot->store(static_cast<Slot>(size + 1), std::memory_order_relaxed);
      return r;
    }
    std::size_t ignored;
    if (table_insert(p, size, &ignored) < 0) { slot->store(0, std::memory_order_relaxed); return -1; }
    slot->store(kInFallback, std::memory_order_relaxed);
    return r;
  }
  return table_insert(p, size, old);
}

// Removes p; true (and its size) when it was recorded.
bool record_remove(void *p, std::size_t *size) noexcept {
  const auto key = reinterpret_cast<std::uintptr_t>(p);
  if (auto *slot = shadow_slot(key, false)) {
    const Slot v = slot->load(std::memory_order_relaxed);
    if (v == 0) return false;
    slot->store(0, std::memory_order_relaxed);
    if (v == kInFallback) return table_remove(p, size);
    *size = v - 1;
    return true;
  }
  return table_remove(p, size);
}

// ---------------------------------------------------------------- counters
// Per-thread counters are written only by their thread (relaxed load+store,
// no locked instruction) and summed when a record is written. Blocks are never
// unmapped, so the counts of finished threads survive until exit.
struct ThreadStats {
  ThreadStats *next;
  std::atomic<std::uint64_t> allocations;
  std::atomic<std::uint64_t> bytes;
  std::atomic<std::uint64_t> ignored;
  std::atomic<std::uint64_t> hist[1];  // really g_cutoff entries
};

std::atomic<ThreadStats *> g_threads{nullptr};
thread_local ThreadStats *t_stats LAB_TLS = nullptr;
thread_local bool t_failed LAB_TLS = false;

std::atomic<std::int64_t> g_live{0};
std::atomic<std::int64_t> g_live_bytes{0};
std::atomic<std::int64_t> g_max_live{0};
std::atomic<std::int64_t> g_max_live_bytes{0};
std::atomic<std::uint64_t> g_unknown_frees{0};
std::atomic<std::uint64_t> g_untracked{0};  // counters or table could not be mapped

std::size_t stats_bytes() noexcept {
  return os::align_up(sizeof(ThreadStats) + g_cutoff * sizeof(std::uint64_t), os::page_size());
}

ThreadStats *my_stats() noexcept {
  if (LAB_LIKELY(t_stats != nullptr)) return t_stats;
  if (t_failed) return nullptr;
  auto *s = static_cast<ThreadStats *>(os::map(stats_bytes()));
  if (!s) { t_failed = true; return nullptr; }
  ThreadStats *head = g_threads.load(std::memory_order_relaxed);
  do { s->next = head; } while (!g_threads.compare_exchange_weak(head, s, std::memory_order_release));
  t_stats = s;
  return s;
}

inline void bump(std::atomic<std::uint64_t> &c, std::uint64_t by) noexcept {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

// Until the process creates its first thread (pthread_create, interposed
// below, sets this in the creating thread before the new one exists), the
// shared counters are updated with plain loads and stores: glibc's own
// single-thread trick, and a locked instruction less per call.
std::atomic<bool> g_multi{false};

inline std::int64_t add(std::atomic<std::int64_t> &c, std::int64_t by) noexcept {
  if (g_multi.load(std::memory_order_relaxed)) return c.fetch_add(by, std::memory_order_relaxed) + by;
  const std::int64_t v = c.load(std::memory_order_relaxed) + by;
  c.store(v, std::memory_order_relaxed);
  return v;
}

inline void raise_max(std::atomic<std::int64_t> &mx, std::int64_t v) noexcept {
  std::int64_t cur = mx.load(std::memory_order_relaxed);
  if (v <= cur) return;
  if (!g_multi.load(std::memory_order_relaxed)) { mx.store(v, std::memory_order_relaxed); return; }
  while (v > cur && !mx.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {}
}

inline void add_live(std::int64_t objects, std::int64_t bytes) noexcept {
  if (objects) raise_max(g_max_live, add(g_live, objects));
  raise_max(g_max_live_bytes, add(g_live_bytes, bytes));
}

// A new object p of requested size n was handed out.
void on_alloc(void *p, std::size_t n) noexcept {
  if (!p) return;
  ThreadStats *s = my_stats();
  if (LAB_UNLIKELY(!s)) { g_untracked.fetch_add(1, std::memory_order_relaxed); return; }
  bump(s->allocations, 1);
  bump(s->bytes, n);
  if (n < g_cutoff) bump(s->hist[n], 1);
  else bump(s->ignored, 1);
  std::size_t old = 0;
  switch (record_insert(p, n, &old)) {
    case 1: add_live(1, static_cast<std::int64_t>(n)); break;
    case 0: add_live(0, static_cast<std::int64_t>(n) - static_cast<std::int64_t>(old)); break;
    default: g_untracked.fetch_add(1, std::memory_order_relaxed); break;
  }
}

// p is about to be returned to the allocator beneath.
inline void on_free(void *p) noexcept {
  std::size_t n;
  if (record_remove(p, &n)) {
    add(g_live, -1);
    add(g_live_bytes, -static_cast<std::int64_t>(n));
  } else {
    g_unknown_frees.fetch_add(1, std::memory_order_relaxed);
  }
}

// ---------------------------------------------------------------- the record

int open_record() noexcept {
  if (g_root) return ::open(g_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_have_chosen) return ::open(g_chosen, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // OUT.<pid>.<k>: k distinguishes the images one pid runs through exec.
  char buf[sizeof g_chosen];
  for (std::uint64_t k = 0; k < 1000; ++k) {
    TextBuffer name(buf, sizeof buf - 1);
    name.put(g_out);
    name.put('.');
    name.put_u64(static_cast<std::uint64_t>(::getpid()));
    name.put('.');
    name.put_u64(k);
    if (name.overflowed()) return -1;
    buf[name.size()] = '\0';
    const int fd = ::open(buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::memcpy(g_chosen, buf, name.size() + 1);
      g_have_chosen = true;
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  return -1;
}

void write_record(const char *reason) noexcept {
  const int saved_errno = errno;
  const std::size_t hist_bytes = os::align_up(g_cutoff * sizeof(std::uint64_t), os::page_size());
  auto *hist = static_cast<std::uint64_t *>(os::map(hist_bytes));
  if (!hist) { errno = saved_errno; return; }
  std::uint64_t allocations = 0, bytes = 0, ignored = 0, distinct = 0;
  for (ThreadStats *s = g_threads.load(std::memory_order_acquire); s; s = s->next) {
    allocations += s->allocations.load(std::memory_order_relaxed);
    bytes += s->bytes.load(std::memory_order_relaxed);
    ignored += s->ignored.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < g_cutoff; ++i) hist[i] += s->hist[i].load(std::memory_order_relaxed);
  }
  for (std::size_t i = 0; i < g_cutoff; ++i) distinct += hist[i] != 0;

  const std::size_t cap = os::align_up(8192 + distinct * 48, os::page_size());
  char *text = static_cast<char *>(os::map(cap));
  if (!text) { os::unmap(hist, hist_bytes); errno = saved_errno; return; }
  TextBuffer b(text, cap);
  auto key = [&b](const char *k) { b.put(",\n  \""); b.put(k); b.put("\": "); };
  b.put("{\n  \"pid\": ");
  b.put_u64(static_cast<std::uint64_t>(::getpid()));
  key("ppid"); b.put_u64(static_cast<std::uint64_t>(::getppid()));
  key("root"); b.put(g_root ? "true" : "false");
  key("written_at"); b.put_json_string(reason);
  char exe[PATH_MAX];
  const ssize_t el = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[el > 0 ? el : 0] = '\0';
  key("exe"); b.put_json_string(exe);
  Dl_info info{};
  const char *beneath = "";
  if (ip_next.malloc && ::dladdr(reinterpret_cast<void *>(ip_next.malloc), &info) && info.dli_fname)
    beneath = info.dli_fname;
  key("allocator"); b.put_json_string(beneath);
  key("allocations"); b.put_u64(allocations);
  key("bytes"); b.put_u64(bytes);
  key("max_live"); b.put_i64(g_max_live.load(std::memory_order_relaxed));
  key("max_live_bytes"); b.put_i64(g_max_live_bytes.load(std::memory_order_relaxed));
  key("live_at_exit"); b.put_i64(g_live.load(std::memory_order_relaxed));
  key("mean_size"); b.put_ratio3(bytes, allocations);
  key("cutoff"); b.put_u64(g_cutoff);
  key("ignored"); b.put_u64(ignored);
  key("unknown_frees"); b.put_u64(g_unknown_frees.load(std::memory_order_relaxed));
  key("untracked"); b.put_u64(g_untracked.load(std::memory_order_relaxed));
  key("sizes"); b.put('{');
  bool first = true;
  for (std::size_t i = 0; i < g_cutoff; ++i) {
    if (!hist[i]) continue;
    b.put(first ? "\n    \"" : ",\n    \"");
    first = false;
    b.put_u64(i);
    b.put("\": ");
    b.put_u64(hist[i]);
  }
  b.put(first ? "}\n}\n" : "\n  }\n}\n");

  if (!b.overflowed()) {
    const int fd = open_record();
    if (fd >= 0) {
      alloclab::lab::write_all(fd, b.data(), b.size());
      ::close(fd);
    }
  }
  os::unmap(text, cap);
  os::unmap(hist, hist_bytes);
  errno = saved_errno;
}

// ---------------------------------------------------------------- processes
// Holds every stripe lock across fork so the child never inherits one held
// by a thread that does not exist there.
void before_fork() noexcept { for (auto &s : g_stripes) lock(s); }
void after_fork_parent() noexcept { for (auto &s : g_stripes) unlock(s); }
void after_fork_child() noexcept {
  for (auto &s : g_stripes) unlock(s);
  // The child reports only what it does itself; objects inherited from the
  // parent stay live (they are live in its heap) and seed its peak.
  g_root = false;
  g_have_chosen = false;
  g_pid = ::getpid();
  for (ThreadStats *s = g_threads.load(std::memory_order_relaxed); s; s = s->next) {
    s->allocations.store(0, std::memory_order_relaxed);
    s->bytes.store(0, std::memory_order_relaxed);
    s->ignored.store(0, std::memory_order_relaxed);
    for (std::size_t i = 0; i < g_cutoff; ++i) s->hist[i].store(0, std::memory_order_relaxed);
  }
  g_unknown_frees.store(0, std::memory_order_relaxed);
  g_untracked.store(0, std::memory_order_relaxed);
  g_max_live.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_max_live_bytes.store(g_live_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

bool has_marker(char *const *envp) noexcept {
  if (!envp) return false;
  for (; *envp; ++envp)
    if (std::strcmp(*envp, kChildMarker) == 0) return true;
  return false;
}

// envp plus the child marker, in a mapping (leaked when exec fails: rare and small).
char *const *with_marker(char *const *envp) noexcept {
  if (has_marker(envp)) return envp;
  std::size_t n = 0;
  if (envp) while (envp[n]) ++n;
  auto **out = static_cast<char **>(os::map(os::align_up((n + 2) * sizeof(char *), os::page_size())));
  if (!out) return envp;
  for (std::size_t i = 0; i < n; ++i) out[i] = envp[i];
  out[n] = const_cast<char *>(kChildMarker);
  out[n + 1] = nullptr;
  return out;
}

// The image is about to be replaced: write what it did. A vfork child shares
// its parent's memory (and counters), so it writes nothing.
void before_exec() noexcept {
  if (::getpid() == g_pid) write_record("exec");
}

void resolve_path(const char *in) noexcept {
  g_out[0] = '\0';
  TextBuffer b(g_out, sizeof g_out - 1);
  if (!in || !*in) in = "alloclab-profile.json";
  if (in[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd)) { b.put(cwd); b.put('/'); }
  }
  b.put(in);
  g_out[b.size()] = '\0';
}

// Read once, while the core resolves: before the first allocation is counted, so every
// thread's histogram is sized for the final cutoff (allocations can come
// before our constructor, from other libraries' constructors).
void read_options() noexcept {
  std::uint64_t c;
  if (const char *v = ::getenv("ALLOCLAB_PROFILE_CUTOFF")) {
    if (parse_u64(v, &c) && c > 0 && c <= kMaxCutoff) g_cutoff = static_cast<std::size_t>(c);
    else die("alloclab profile: ALLOCLAB_PROFILE_CUTOFF must be an integer in [1, 1048576]\n");
  }
  resolve_path(::getenv("ALLOCLAB_PROFILE_OUT"));
  g_pid = ::getpid();
  g_root = ::getenv("ALLOCLAB_PROFILE_CHILD") == nullptr;
}

__attribute__((constructor(101))) void profile_init() {
  ready();
  // Descendants started any way at all (system, popen, posix_spawn inside libc)
  // inherit environ, so mark it once here.
  if (g_root) environ = const_cast<char **>(with_marker(environ));
  ::pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

__attribute__((destructor(101))) void profile_fini() { write_record("exit"); }

}  // namespace

// ---------------------------------------------------------------- the interface
extern "C" {

// ---- the hooks of the interposition core (interpose.h): the malloc family
// itself is the core's.
const char ip_shim_name[] = "alloclab profile";

void ip_shim_resolved() {
  lookup(&next.execve, "execve");
  lookup(&next.execvpe, "execvpe");
  lookup(&next.posix_spawn, "posix_spawn");
  lookup(&next.posix_spawnp, "posix_spawnp");
  read_options();
}

// Every successful call is one allocation of its requested size (calloc:
// n*m; pvalloc: rounded up to the page).
void ip_hook_alloc(void *p, std::size_t n) { on_alloc(p, n); }

void ip_hook_free(void *p) { on_free(p); }

// realloc(p, n) is an allocation of n, and p stays one live object: its
// record is taken out before the allocator can hand p's address to another
// thread, and put back if the allocator fails. Token: p's size + 1, 0 when
// p was not recorded.
std::size_t ip_hook_realloc_begin(void *p) {
  std::size_t old = 0;
  return record_remove(p, &old) ? old + 1 : 0;
}

void ip_hook_realloc_end(void *p, void *q, std::size_t n, std::size_t token) {
  const bool known = token != 0;
  const auto old = static_cast<std::int64_t>(token - 1);
  if (q) {
    if (known) add_live(-1, -old);
    on_alloc(q, n);
  } else if (n == 0) {  // the allocator freed p
    if (known) add_live(-1, -old);
  } else if (known) {  // failure: p is still live, put its record back
    std::size_t ignored;
    record_insert(p, token - 1, &ignored);
  }
}

// ---- exec and spawn: write the record before the image goes away, and make
// sure the new image knows it is a descendant.
// execve, or with search execvpe (the file looked up in PATH).
static int exec_marked(bool search, const char *name, char *const argv[], char *const envp[]) {
  ready();
  before_exec();
  return (search ? next.execvpe : next.execve)(name, argv, with_marker(envp));
}

__attribute__((visibility("default"))) int execve(const char *path, char *const argv[], char *const envp[]) {
  return exec_marked(false, path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char *path, char *const argv[]) {
  return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execvpe(const char *file, char *const argv[], char *const envp[]) {
  return exec_marked(true, file, argv, envp);
}

__attribute__((visibility("default"))) int execvp(const char *file, char *const argv[]) {
  return execvpe(file, argv, environ);
}

// execl, execlp and execle reach glibc's exec internally, past any
// interposer, so they are rebuilt here on top of the vector forms above.
static char **collect_args(const char *first, va_list ap, char ***envp_out) {
  va_list count;
  va_copy(count, ap);
  std::size_t n = 1;
  while (va_arg(count, char *) != nullptr) ++n;
  va_end(count);
  auto **argv = static_cast<char **>(os::map(os::align_up((n + 1) * sizeof(char *), os::page_size())));
  if (!argv) return nullptr;
  argv[0] = const_cast<char *>(first);
  for (std::size_t i = 1; i <= n; ++i) argv[i] = va_arg(ap, char *);  // argv[n] = the terminating null
  if (envp_out) *envp_out = va_arg(ap, char **);
  return argv;
}

// The list forms over a vector form: exec(name, the collected argv, envp),
// envp being environ or, for execle, the argument after the list's null.
static int exec_list(int (*exec)(const char *, char *const[], char *const[]), const char *name,
                     const char *first, va_list ap, bool envp_follows) {
  char **envp = environ;
  char **argv = collect_args(first, ap, envp_follows ? &envp : nullptr);
  if (!argv) { errno = ENOMEM; return -1; }
  return exec(name, argv, envp);
}

#define LAB_EXEC_LIST(fname, exec, envp_follows)                                   \
  __attribute__((visibility("default"))) int fname(const char *name, const char *arg, ...) { \
    va_list ap;                                                                   \
    va_start(ap, arg);                                                            \
    const int r = exec_list(exec, name, arg, ap, envp_follows);                   \
    va_end(ap);                                                                   \
    return r;                                                                     \
  }
LAB_EXEC_LIST(execl, execve, false)
LAB_EXEC_LIST(execlp, execvpe, false)
LAB_EXEC_LIST(execle, execve, true)
#undef LAB_EXEC_LIST

// The first thread creation switches the counters to atomic updates.
__attribute__((visibility("default"))) int pthread_create(pthread_t *t, const pthread_attr_t *attr,
                                                          void *(*fn)(void *), void *arg) {
  static int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) = nullptr;
  ready();
  if (!real_create)
    real_create = reinterpret_cast<decltype(real_create)>(::dlsym(RTLD_NEXT, "pthread_create"));
  g_multi.store(true, std::memory_order_seq_cst);
  return real_create(t, attr, fn, arg);
}

// Programs that leave with _exit (dash does) skip destructors: write first.
__attribute__((visibility("default"))) void _exit(int status) {
  static void (*real_exit)(int) = nullptr;
  if (!real_exit) real_exit = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_NEXT, "_exit"));
  if (ready() && ::getpid() == g_pid) write_record("_exit");
  real_exit(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"))) void _Exit(int status) { _exit(status); }

// posix_spawn, or with search posix_spawnp: the new image gets the marker.
static int spawn_marked(bool search, pid_t *pid, const char *name, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
  ready();
  return (search ? next.posix_spawnp : next.posix_spawn)(pid, name, fa, attr, argv, with_marker(envp));
}

__attribute__((visibility("default"))) int posix_spawn(pid_t *pid, const char *path,
                                                       const posix_spawn_file_actions_t *fa,
                                                       const posix_spawnattr_t *attr, char *const argv[],
                                                       char *const envp[]) {
  return spawn_marked(false, pid, path, fa, attr, argv, envp);
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t *pid, const char *file,
                                                        const posix_spawn_file_actions_t *fa,
                                                        const posix_spawnattr_t *attr, char *const argv[],
                                                        char *const envp[]) {
  return spawn_marked(true, pid, file, fa, attr, argv, envp);
}

}  // extern "C"
