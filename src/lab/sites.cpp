// sites.cpp — liballoclab_sites.so, the allocation-site recorder behind
// `alloclab profile --stacks` and `alloclab sites`, as an LD_PRELOAD shim.
//
// For every allocation it captures the call stack (libunwind's unw_backtrace:
// the unwind tables, so it walks code built without frame pointers, as
// Debian's is) and charges the request to that stack, its *site*. Per site:
//   calls, bytes          every allocation (realloc included) and its bytes;
//   peak_bytes            what the site held at the moment the whole heap's
//                         live requested bytes were at their maximum;
//   leaked_bytes/objects  what it still held at exit;
//   temporaries           objects freed before ALLOCLAB_SITES_TEMP further
//                         allocations were made by the process (default 1:
//                         freed before any other allocation, heaptrack's
//                         definition of a temporary);
//   max_live_bytes/objects the most the site held at once;
//   lifetimes             summed over its objects, the allocations the
//                         process made while each lived (to exit for those
//                         still live): time counted in allocations, where
//                         DHAT counts it in instructions.
// At exit each process writes DIR/sites.PID.json (ALLOCLAB_SITES_DIR, default
// the start-up working directory): the sites with their frames as (module,
// offset, symbol) and the modules. `alloclab sites` symbolizes further,
// merges processes and ranks; docs/lab.md has the format.
//
// Peak bytes per site without a snapshot per new peak: every new maximum of
// the heap bumps a generation; a site settles its value at the last peak
// lazily, the first time it changes after that peak (its live bytes cannot
// have moved in between), and at exit.
//
// Soundness rules, as the profile shim's: nothing here allocates through
// malloc (tables live in mappings, the record is written with write(2)); the
// interposition core (interpose.h) gives the malloc family, its guard and its
// fork handling; an object's record leaves the table before the allocator can
// hand its address to another thread.
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <fcntl.h>
#include <libunwind.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lab/interpose.h"
#include "lab/text.hpp"
#include "layers/os.hpp"

namespace {

using alloclab::lab::TextBuffer;
using alloclab::lab::parse_u64;
using alloclab::lab::write_all;
namespace os = alloclab::os;

// ---------------------------------------------------------------- options
// ALLOCLAB_SITES_DIR    where each process writes sites.PID.json (default: the
//                       start-up working directory).
// ALLOCLAB_SITES_DEPTH  frames kept per stack, 1..64 (default 32).
// ALLOCLAB_SITES_TEMP   an object freed before this many more allocations is a
//                       temporary, 1..1000000 (default 1).
constexpr unsigned kMaxDepth = 64;
unsigned g_depth = 32;
std::uint64_t g_temp_window = 1;
char g_dir[PATH_MAX];
pid_t g_pid = 0;

// ---------------------------------------------------------------- the lock
// One lock for the site and object tables. The stack is captured before it is
// taken; under it each call does a few hash probes.
std::atomic<bool> g_locked{false};
void lock() noexcept {
  while (g_locked.exchange(true, std::memory_order_acquire))
    while (g_locked.load(std::memory_order_relaxed)) sched_yield();
}
void unlock() noexcept { g_locked.store(false, std::memory_order_release); }

inline std::uint64_t mix(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// A mapped array that doubles (the old one is unmapped after copying).
template <class T>
T *map_array(std::size_t n) noexcept {
  return static_cast<T *>(os::map(os::align_up(n * sizeof(T), os::page_size())));
}
template <class T>
void unmap_array(T *a, std::size_t n) noexcept {
  if (a) os::unmap(a, os::align_up(n * sizeof(T), os::page_size()));
}

// ---------------------------------------------------------------- sites
struct Site {
  std::uint64_t hash;
  std::uint32_t frame_at, depth;  // frames in g_frames[frame_at, frame_at + depth)
  std::uint64_t calls, bytes, temporaries;
  std::uint64_t lifetimes;   // sum over freed objects of allocations made while each lived
  std::int64_t live_bytes, live_objects, max_live_bytes, max_live_objects;
  std::int64_t at_peak;      // live bytes at the heap's last peak, once settled
  std::uint64_t settled_gen;  // the peak generation at_peak belongs to
};

Site *g_sites = nullptr;          // dense, in order of first use; index 0 unused
std::uint32_t g_site_count = 1, g_site_cap = 0;
std::uint32_t *g_site_index = nullptr;  // open addressing over g_sites, 0 = empty
std::size_t g_index_cap = 0;
std::uintptr_t *g_frames = nullptr;
std::size_t g_frame_count = 0, g_frame_cap = 0;

std::int64_t g_live = 0, g_peak = 0;
std::uint64_t g_peak_gen = 0, g_allocs = 0, g_peak_at = 0;  // g_peak_at: allocations at the peak

template <class T>
bool grow_array(T *&a, std::size_t used, std::size_t &cap, std::size_t need) noexcept {
  if (need <= cap) return true;
  std::size_t n = cap ? cap : 4096;
  while (n < need) n *= 2;
  T *b = map_array<T>(n);
  if (!b) return false;
  if (a) std::memcpy(b, a, used * sizeof(T));
  unmap_array(a, cap);
  a = b;
  cap = n;
  return true;
}

bool rehash(std::size_t cap) noexcept {
  auto *idx = map_array<std::uint32_t>(cap);
  if (!idx) return false;
  for (std::uint32_t s = 1; s < g_site_count; ++s) {
    std::size_t h = g_sites[s].hash & (cap - 1);
    while (idx[h]) h = (h + 1) & (cap - 1);
    idx[h] = s;
  }
  unmap_array(g_site_index, g_index_cap);
  g_site_index = idx;
  g_index_cap = cap;
  return true;
}

// The site of this stack, made on first sight; 0 when memory ran out.
std::uint32_t intern(const std::uintptr_t *frames, unsigned depth) noexcept {
  std::uint64_t h = depth;
  for (unsigned i = 0; i < depth; ++i) h = mix(h ^ frames[i]);
  if (g_index_cap == 0 && !rehash(8192)) return 0;
  std::size_t k = h & (g_index_cap - 1);
  for (std::uint32_t s; (s = g_site_index[k]) != 0; k = (k + 1) & (g_index_cap - 1)) {
    const Site &x = g_sites[s];
    if (x.hash == h && x.depth == depth &&
        std::memcmp(g_frames + x.frame_at, frames, depth * sizeof *frames) == 0)
      return s;
  }
  std::size_t site_cap = g_site_cap;
  if (!grow_array(g_sites, g_site_count, site_cap, g_site_count + 1u) ||
      !grow_array(g_frames, g_frame_count, g_frame_cap, g_frame_count + depth))
    return 0;
  g_site_cap = static_cast<std::uint32_t>(site_cap);
  const std::uint32_t s = g_site_count++;
  Site &x = g_sites[s];
  x = Site{};
  x.hash = h;
  x.frame_at = static_cast<std::uint32_t>(g_frame_count);
  x.depth = depth;
  x.settled_gen = g_peak_gen;
  std::memcpy(g_frames + g_frame_count, frames, depth * sizeof *frames);
  g_frame_count += depth;
  g_site_index[k] = s;
  if (2 * g_site_count > g_index_cap) rehash(2 * g_index_cap);
  return s;
}

// Before a site's live bytes change: if the heap peaked since its last change,
// its live bytes then were what they are now.
inline void settle(Site &x) noexcept {
  if (x.settled_gen != g_peak_gen) {
    x.at_peak = x.live_bytes;
    x.settled_gen = g_peak_gen;
  }
}

// ---------------------------------------------------------------- objects
// pointer -> (site, size, allocation number), open addressing with
// backward-shift deletion.
struct Object {
  std::uintptr_t p;  // 0 = empty
  std::uint32_t site;
  std::uint64_t size, number;
};
Object *g_objects = nullptr;
std::size_t g_object_cap = 0, g_object_count = 0;

inline std::size_t slot_of(std::uintptr_t p, std::size_t cap) noexcept { return mix(p) & (cap - 1); }

void place(Object *t, std::size_t cap, const Object &o) noexcept {
  std::size_t k = slot_of(o.p, cap);
  while (t[k].p) k = (k + 1) & (cap - 1);
  t[k] = o;
}

bool insert(const Object &o) noexcept {
  if (2 * (g_object_count + 1) > g_object_cap) {
    const std::size_t cap = g_object_cap ? 2 * g_object_cap : (std::size_t{1} << 16);
    Object *t = map_array<Object>(cap);
    if (!t) return false;
    for (std::size_t i = 0; i < g_object_cap; ++i)
      if (g_objects[i].p) place(t, cap, g_objects[i]);
    unmap_array(g_objects, g_object_cap);
    g_objects = t;
    g_object_cap = cap;
  }
  std::size_t k = slot_of(o.p, g_object_cap);
  for (; g_objects[k].p; k = (k + 1) & (g_object_cap - 1)) {
    if (g_objects[k].p == o.p) {  // a stale record (an object we never saw freed)
      g_objects[k] = o;
      return true;
    }
  }
  g_objects[k] = o;
  ++g_object_count;
  return true;
}

bool remove(std::uintptr_t p, Object *out) noexcept {
  if (g_object_cap == 0) return false;
  const std::size_t mask = g_object_cap - 1;
  std::size_t k = slot_of(p, g_object_cap);
  for (; g_objects[k].p != p; k = (k + 1) & mask)
    if (!g_objects[k].p) return false;
  *out = g_objects[k];
  // backward shift: pull later entries of the probe run into the hole
  std::size_t hole = k;
  for (std::size_t j = (k + 1) & mask; g_objects[j].p; j = (j + 1) & mask) {
    const std::size_t home = slot_of(g_objects[j].p, g_object_cap);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      g_objects[hole] = g_objects[j];
      hole = j;
    }
  }
  g_objects[hole].p = 0;
  --g_object_count;
  return true;
}

// ---------------------------------------------------------------- events
void charge_alloc(std::uintptr_t p, std::size_t n, const std::uintptr_t *frames, unsigned depth) noexcept {
  lock();
  if (const std::uint32_t s = intern(frames, depth)) {
    Site &x = g_sites[s];
    settle(x);
    ++x.calls;
    x.bytes += n;
    x.live_bytes += static_cast<std::int64_t>(n);
    ++x.live_objects;
    if (x.live_bytes > x.max_live_bytes) x.max_live_bytes = x.live_bytes;
    if (x.live_objects > x.max_live_objects) x.max_live_objects = x.live_objects;
    g_live += static_cast<std::int64_t>(n);
    ++g_allocs;
    if (g_live > g_peak) {
      g_peak = g_live;
      g_peak_at = g_allocs;
      ++g_peak_gen;
    }
    insert(Object{p, s, n, g_allocs});
  }
  unlock();
}

// The object's record is already out of the table.
void charge_free(const Object &o) noexcept {
  Site &x = g_sites[o.site];
  settle(x);
  x.live_bytes -= static_cast<std::int64_t>(o.size);
  --x.live_objects;
  g_live -= static_cast<std::int64_t>(o.size);
  x.lifetimes += g_allocs - o.number;
  if (g_allocs - o.number < g_temp_window) ++x.temporaries;
}

// The stack of the interposed call: frames of this shim (the hook, the core's
// malloc or operator new) are dropped by `alloclab sites`, which knows the
// module; here only unw_backtrace's own frame is skipped.
unsigned capture(std::uintptr_t *frames) noexcept {
  void *raw[kMaxDepth + 1];
  const int n = unw_backtrace(raw, static_cast<int>(g_depth) + 1);
  if (n <= 1) return 0;
  for (int i = 1; i < n; ++i) frames[i - 1] = reinterpret_cast<std::uintptr_t>(raw[i]);
  return static_cast<unsigned>(n - 1);
}

void on_alloc(void *p, std::size_t n) noexcept {
  std::uintptr_t frames[kMaxDepth];
  const unsigned depth = capture(frames);
  charge_alloc(reinterpret_cast<std::uintptr_t>(p), n, frames, depth);
}

void on_free(void *p) noexcept {
  lock();
  Object o;
  if (remove(reinterpret_cast<std::uintptr_t>(p), &o)) charge_free(o);
  unlock();
}

// ---------------------------------------------------------------- the record

void put_hex(TextBuffer &b, std::uintptr_t v) noexcept {
  char tmp[20];
  int i = 0;
  do { tmp[i++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
  b.put("\"0x");
  while (i > 0) b.put(tmp[--i]);
  b.put('"');
}

// Modules seen in frames, by load base (dladdr's dli_fbase).
struct Module {
  std::uintptr_t base;
  const char *path;
};
constexpr unsigned kMaxModules = 1024;
Module g_modules[kMaxModules];
unsigned g_module_count = 0;

// dladdr names the main program as it was started ("./prog"): a path relative
// to a directory the reader does not know. /proc/self/exe names it whole.
char g_exe[PATH_MAX];

const char *whole_path(const char *path) noexcept {
  if (path[0] == '/') return path;
  if (g_exe[0] == '\0') {
    const ssize_t n = ::readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
    if (n <= 0) return path;
    g_exe[n] = '\0';
  }
  return g_exe;
}

int module_of(std::uintptr_t base, const char *path) noexcept {
  for (unsigned i = 0; i < g_module_count; ++i)
    if (g_modules[i].base == base) return static_cast<int>(i);
  if (g_module_count == kMaxModules) return -1;
  path = whole_path(path);
  g_modules[g_module_count] = Module{base, path};
  return static_cast<int>(g_module_count++);
}

// One frame: [module, "0xOFFSET", "symbol" or null, "0xSYMBOL_OFFSET"].
// The address is a return address: offsets are of the byte before it, inside
// the call instruction, as symbolizers expect.
void put_frame(TextBuffer &b, std::uintptr_t pc) noexcept {
  Dl_info info{};
  void *entry = nullptr;
  const std::uintptr_t at = pc - 1;
  if (::dladdr1(reinterpret_cast<void *>(at), &info, &entry, RTLD_DL_SYMENT) == 0 ||
      info.dli_fbase == nullptr) {
    b.put("[-1,");
    put_hex(b, at);
    b.put(",null,null]");
    return;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  b.put('[');
  b.put_i64(module_of(base, info.dli_fname ? info.dli_fname : "?"));
  b.put(',');
  put_hex(b, at - base);
  b.put(',');
  // dladdr answers with the nearest exported symbol below the address, which
  // for a static function is another function: take it only if it spans the
  // address.
  const auto *sym = static_cast<const ElfW(Sym) *>(entry);
  const auto saddr = reinterpret_cast<std::uintptr_t>(info.dli_saddr);
  if (info.dli_sname && saddr && sym && at - saddr < sym->st_size) {
    b.put_json_string(info.dli_sname);
    b.put(',');
    put_hex(b, at - saddr);
  } else {
    b.put("null,null");
  }
  b.put(']');
}

bool g_written = false;

void write_record() noexcept {
  if (g_written || !ip_ready()) return;
  lock();
  g_written = true;
  ++ip_depth;  // dladdr and friends reach the allocator beneath unseen
  char path[PATH_MAX + 32];
  TextBuffer pb(path, sizeof path - 1);
  pb.put(g_dir);
  pb.put("/sites.");
  pb.put_u64(static_cast<std::uint64_t>(::getpid()));
  pb.put(".json");
  path[pb.size()] = '\0';
  const std::size_t cap = std::size_t{256} << 20;
  auto *buf = static_cast<char *>(os::map(cap));
  const int fd = buf ? ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
  if (fd >= 0) {
    TextBuffer b(buf, cap);
    b.put("{\"format_version\":1,\"kind\":\"alloclab-sites\",\"pid\":");
    b.put_u64(static_cast<std::uint64_t>(::getpid()));
    b.put(",\"allocations\":");
    b.put_u64(g_allocs);
    b.put(",\"peak_bytes\":");
    b.put_i64(g_peak);
    b.put(",\"leaked_bytes\":");
    b.put_i64(g_live);
    b.put(",\"peak_at\":");
    b.put_u64(g_peak_at);
    b.put(",\"temporary_window\":");
    b.put_u64(g_temp_window);
    b.put(",\"depth\":");
    b.put_u64(g_depth);
    b.put(",\"sites\":[");
    for (std::size_t i = 0; i < g_object_cap; ++i)  // objects live at exit lived until now
      if (g_objects[i].p) g_sites[g_objects[i].site].lifetimes += g_allocs - g_objects[i].number;
    for (std::uint32_t s = 1; s < g_site_count; ++s) {
      Site &x = g_sites[s];
      settle(x);
      b.put(s > 1 ? ",\n{\"calls\":" : "\n{\"calls\":");
      b.put_u64(x.calls);
      b.put_member("bytes", static_cast<std::int64_t>(x.bytes));
      b.put_member("peak_bytes", x.at_peak);
      b.put_member("leaked_bytes", x.live_bytes);
      b.put_member("leaked_objects", x.live_objects);
      b.put_member("temporaries", static_cast<std::int64_t>(x.temporaries));
      b.put_member("max_live_bytes", x.max_live_bytes);
      b.put_member("max_live_objects", x.max_live_objects);
      b.put_member("lifetimes", static_cast<std::int64_t>(x.lifetimes));
      b.put(",\"frames\":[");
      for (std::uint32_t i = 0; i < x.depth; ++i) {
        if (i) b.put(',');
        put_frame(b, g_frames[x.frame_at + i]);
      }
      b.put("]}");
    }
    b.put("],\n\"modules\":[");
    for (unsigned i = 0; i < g_module_count; ++i) {
      if (i) b.put(',');
      b.put("{\"path\":");
      b.put_json_string(g_modules[i].path);
      b.put(",\"base\":");
      put_hex(b, g_modules[i].base);
      b.put('}');
    }
    b.put("],\"complete\":");
    b.put(b.overflowed() ? "false" : "true");
    b.put("}\n");
    write_all(fd, b.data(), b.size());
    ::close(fd);
  }
  if (buf) os::unmap(buf, cap);
  --ip_depth;
  unlock();
}

void after_fork_child() noexcept {
  g_locked.store(false, std::memory_order_relaxed);
  g_pid = ::getpid();
}

void read_options() noexcept {
  std::uint64_t v;
  if (parse_u64(::getenv("ALLOCLAB_SITES_DEPTH"), &v) && v >= 1 && v <= kMaxDepth)
    g_depth = static_cast<unsigned>(v);
  if (parse_u64(::getenv("ALLOCLAB_SITES_TEMP"), &v) && v >= 1 && v <= 1000000) g_temp_window = v;
  const char *dir = ::getenv("ALLOCLAB_SITES_DIR");
  if (dir && *dir && std::strlen(dir) < sizeof g_dir) {
    std::strcpy(g_dir, dir);
  } else if (!::getcwd(g_dir, sizeof g_dir)) {
    std::strcpy(g_dir, ".");
  }
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

}  // namespace

extern "C" {

const char ip_shim_name[] = "liballoclab_sites.so";

void ip_shim_resolved() { read_options(); }
void ip_hook_alloc(void *p, std::size_t n) { on_alloc(p, n); }
void ip_hook_free(void *p) { on_free(p); }

// realloc(old, n): old's record leaves the table first (another thread may get
// its address as soon as the allocator returns), and comes back on failure.
thread_local Object t_realloc_old __attribute__((tls_model("initial-exec")));

std::size_t ip_hook_realloc_begin(void *old) {
  lock();
  const bool known = remove(reinterpret_cast<std::uintptr_t>(old), &t_realloc_old);
  unlock();
  return known ? 1 : 0;
}

void ip_hook_realloc_end(void *old, void *p, std::size_t n, std::size_t token) {
  (void)old;
  if (p || n == 0) {  // moved, resized in place, or freed: the old object is gone
    if (token) {
      lock();
      charge_free(t_realloc_old);
      unlock();
    }
    if (p) on_alloc(p, n);
  } else if (token) {  // failed: old is still live
    lock();
    insert(t_realloc_old);
    unlock();
  }
}

__attribute__((constructor(101))) void sites_init() {
  g_pid = ::getpid();
  ip_ready();
  ::pthread_atfork(lock, unlock, after_fork_child);
}

__attribute__((destructor(101))) void sites_fini() { write_record(); }

// Programs that leave with _exit skip destructors: write first.
__attribute__((visibility("default"))) void _exit(int status) {
  static void (*real_exit)(int) = nullptr;
  if (!real_exit) real_exit = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_NEXT, "_exit"));
  write_record();
  real_exit(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"))) void _Exit(int status) { _exit(status); }

}  // extern "C"
