// litter.cpp — liballoclab_litter.so, the heap preconditioner of littering
// §3.2 (Algorithm 3), as an LD_PRELOAD shim.
//
// Before main (a high-priority constructor) it reads a profile written by
// liballoclab_profile.so, allocates M x max_live objects whose sizes are drawn
// from the profile's histogram (each size with probability proportional to
// its count), shuffles them uniformly, frees the first (1 - O) fraction and
// leaves the rest live for the whole run. It defines no allocator function:
// it litters whichever malloc the process resolves to.
//
// Options (environment, read once at start-up):
//   LITTER_PROFILE     path of the profile JSON (required)
//   LITTER_MULTIPLIER  M >= 0, default 1 (0 = do nothing)
//   LITTER_OCCUPANCY   O in [0, 1], default 0.33
//   LITTER_SEED        unsigned 64-bit seed, default 42 (same seed, same heap)
//   LITTER_LOG         append the one-line log here instead of stderr
//   LITTER_QUIET       set to 1 to print nothing on success
// With LITTER_MULTIPLIER=0 no profile is needed and nothing is littered: the
// shim then only times the run, so a clean run is measured the same way.
//
// The program's time, measured as the 2026 paper's litterer measures it:
// from the end of littering to the process's exit, inside the process. When
// LITTER_LOG is set, the last destructor appends "litter: pid=N run_ms=T
// cpu_ms=C" to it: T the wall-clock time, C the CPU time (user + system, all
// the process's threads) the process used over the same span. CPU time is
// the measure a busy machine disturbs least: time other processes take from
// the program lengthens T, not C. A process that leaves through _exit or a signal logs no run_ms; the lab
// then has only the wall-clock measure for that run.
// A bad option or profile prints "litter: ..." to stderr and exits with 2: a
// run that silently went un-littered would be a wrong measurement.
//
// The shim's own working memory (file text, histogram, pointer array) comes
// from anonymous mappings and is unmapped before main, so the only trace it
// leaves in the program's heap is the littering itself.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "lab/text.hpp"
#include "layers/os.hpp"

namespace {

using alloclab::lab::TextBuffer;
namespace os = alloclab::os;

constexpr std::uint64_t kDefaultSeed = 42;
constexpr std::uint64_t kMaxObjects = std::uint64_t{1} << 31;

[[noreturn]] void fail(const char *what, const char *detail = nullptr) {
  char buf[1024];
  TextBuffer b(buf, sizeof buf);
  b.put("litter: ");
  b.put(what);
  if (detail) { b.put(": "); b.put(detail); }
  b.put('\n');
  alloclab::lab::write_all(2, b.data(), b.size());
  ::_exit(2);
}

// A mapping that unmaps itself.
struct Mapping {
  void *p = nullptr;
  std::size_t bytes = 0;
  explicit Mapping(std::size_t n) : bytes(os::align_up(n ? n : 1, os::page_size())) {
    p = os::map(bytes);
    if (!p) fail("cannot map working memory");
  }
  ~Mapping() { os::unmap(p, bytes); }
  Mapping(const Mapping &) = delete;
  Mapping &operator=(const Mapping &) = delete;
};

// splitmix64: small, fast, and a fixed seed gives the same heap every run.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() noexcept {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) without modulo bias (Lemire's method).
  std::uint64_t below(std::uint64_t bound) noexcept {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t t = -bound % bound;
      while (low < t) {
        m = static_cast<unsigned __int128>(next()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
};

double parse_double(const char *name, const char *text) {
  char *end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || v != v) fail("not a number in", name);
  return v;
}

// ---- a just-enough JSON reader for the profile: finds top-level number
// fields and walks the "sizes" object. It validates what it reads and
// rejects anything it does not understand.
struct Cursor {
  const char *p;
  const char *end;
  void ws() noexcept { while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p; }
  bool eat(char c) noexcept { ws(); if (p < end && *p == c) { ++p; return true; } return false; }
};

bool read_string(Cursor &c, const char **s, std::size_t *n) {
  if (!c.eat('"')) return false;
  const char *start = c.p;
  while (c.p < c.end && *c.p != '"') { if (*c.p == '\\') ++c.p; ++c.p; }
  if (c.p >= c.end) return false;
  *s = start;
  *n = static_cast<std::size_t>(c.p - start);
  ++c.p;
  return true;
}

bool read_uint(Cursor &c, std::uint64_t *v) {
  c.ws();
  if (c.p >= c.end || *c.p < '0' || *c.p > '9') return false;
  std::uint64_t x = 0;
  while (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
    const auto d = static_cast<std::uint64_t>(*c.p - '0');
    if (x > (UINT64_MAX - d) / 10) return false;
    x = x * 10 + d;
    ++c.p;
  }
  *v = x;
  return true;
}

// Skips any JSON value (strings, numbers, literals, nested objects/arrays).
bool skip_value(Cursor &c) {
  c.ws();
  if (c.p >= c.end) return false;
  if (*c.p == '"') { const char *s; std::size_t n; return read_string(c, &s, &n); }
  if (*c.p == '{' || *c.p == '[') {
    int depth = 0;
    while (c.p < c.end) {
      const char ch = *c.p;
      if (ch == '"') { const char *s; std::size_t n; if (!read_string(c, &s, &n)) return false; continue; }
      if (ch == '{' || ch == '[') ++depth;
      if (ch == '}' || ch == ']') { --depth; if (depth == 0) { ++c.p; return true; } }
      ++c.p;
    }
    return false;
  }
  const char *start = c.p;
  while (c.p < c.end && *c.p != ',' && *c.p != '}' && *c.p != ']' && *c.p != ' ' && *c.p != '\n') ++c.p;
  return c.p > start;
}

struct Profile {
  std::uint64_t max_live = 0;
  std::uint64_t ignored = 0;  // allocations at or above the cutoff
  bool have_max_live = false;
  bool have_sizes = false;
  std::uint64_t *sizes = nullptr;   // pairs (size, count), in a mapping
  std::uint64_t *counts = nullptr;
  std::size_t distinct = 0;
};

bool key_is(const char *s, std::size_t n, const char *k) { return std::strlen(k) == n && std::memcmp(s, k, n) == 0; }

// Parses the "sizes" object into (size, cumulative count) pairs.
bool read_sizes(Cursor &c, Profile &pr, std::uint64_t *sizes, std::uint64_t *cum, std::size_t cap) {
  if (!c.eat('{')) return false;
  std::uint64_t total = 0;
  if (c.eat('}')) { pr.have_sizes = true; return true; }
  do {
    const char *s; std::size_t n;
    if (!read_string(c, &s, &n) || n == 0 || n > 19) return false;
    std::uint64_t size = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      size = size * 10 + static_cast<std::uint64_t>(s[i] - '0');
    }
    if (!c.eat(':')) return false;
    std::uint64_t count;
    if (!read_uint(c, &count)) return false;
    if (count == 0) continue;
    if (pr.distinct == cap) return false;
    if (__builtin_add_overflow(total, count, &total)) return false;
    sizes[pr.distinct] = size;
    cum[pr.distinct] = total;
    ++pr.distinct;
  } while (c.eat(','));
  if (!c.eat('}')) return false;
  pr.have_sizes = true;
  return true;
}

void parse_profile(const char *text, std::size_t len, Profile &pr, std::uint64_t *sizes, std::uint64_t *cum,
                   std::size_t cap, const char *path) {
  Cursor c{text, text + len};
  if (!c.eat('{')) fail("profile is not a JSON object", path);
  if (!c.eat('}')) {
    do {
      const char *k; std::size_t n;
      if (!read_string(c, &k, &n) || !c.eat(':')) fail("malformed JSON in profile", path);
      if (key_is(k, n, "max_live")) {
        if (!read_uint(c, &pr.max_live)) fail("\"max_live\" must be a non-negative integer in", path);
        pr.have_max_live = true;
      } else if (key_is(k, n, "ignored")) {
        if (!read_uint(c, &pr.ignored)) fail("\"ignored\" must be a non-negative integer in", path);
      } else if (key_is(k, n, "sizes")) {
        if (!read_sizes(c, pr, sizes, cum, cap)) fail("\"sizes\" must map decimal sizes to counts in", path);
      } else if (!skip_value(c)) {
        fail("malformed JSON in profile", path);
      }
    } while (c.eat(','));
    if (!c.eat('}')) fail("malformed JSON in profile", path);
  }
  if (!pr.have_max_live) fail("profile has no \"max_live\"", path);
  if (!pr.have_sizes) fail("profile has no \"sizes\"", path);
}

double now_seconds() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The process's CPU time so far (user + system, every thread), in seconds.
double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// When littering ended (CLOCK_MONOTONIC seconds), and the CPU time used by
// then; 0 until then.
double g_littering_end = 0.0;
double g_littering_end_cpu = 0.0;

void append_log_line(const char *line, std::size_t n) {
  int out = 2;
  const char *log = ::getenv("LITTER_LOG");
  if (log && *log) {
    out = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out < 0) fail("cannot open LITTER_LOG", log);
  }
  alloclab::lab::write_all(out, line, n);
  if (out != 2) ::close(out);
}

void litter_body();

void litter() {
  litter_body();
  g_littering_end = now_seconds();
  g_littering_end_cpu = cpu_seconds();
}

void litter_body() {
  double multiplier = 1.0, occupancy = 0.33;
  if (const char *v = ::getenv("LITTER_MULTIPLIER")) multiplier = parse_double("LITTER_MULTIPLIER", v);
  const char *path = ::getenv("LITTER_PROFILE");
  if (multiplier == 0.0 && (!path || !*path)) return;  // timing only: a clean run
  if (!path || !*path) fail("LITTER_PROFILE is not set (the profile JSON written by alloclab profile)");
  if (const char *v = ::getenv("LITTER_OCCUPANCY")) occupancy = parse_double("LITTER_OCCUPANCY", v);
  if (!(multiplier >= 0.0) || multiplier > 1e6) fail("LITTER_MULTIPLIER must be >= 0");
  if (!(occupancy >= 0.0 && occupancy <= 1.0)) fail("LITTER_OCCUPANCY must be in [0, 1]");
  std::uint64_t seed = kDefaultSeed;
  if (const char *v = ::getenv("LITTER_SEED"); v && !alloclab::lab::parse_u64(v, &seed))
    fail("LITTER_SEED must be an unsigned integer");
  const char *quiet = ::getenv("LITTER_QUIET");

  // Read the whole profile into a mapping.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open profile", path);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { ::close(fd); fail("profile is not a regular file", path); }
  const auto len = static_cast<std::size_t>(st.st_size);
  Mapping text(len + 1);
  std::size_t got = 0;
  while (got < len) {
    const ssize_t r = ::read(fd, static_cast<char *>(text.p) + got, len - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  if (got != len) fail("cannot read profile", path);

  // At most one entry per 4 characters of text ("1":1,) — a safe bound.
  const std::size_t cap = len / 4 + 1;
  Mapping sizes_map(cap * sizeof(std::uint64_t)), cum_map(cap * sizeof(std::uint64_t));
  auto *sizes = static_cast<std::uint64_t *>(sizes_map.p);
  auto *cum = static_cast<std::uint64_t *>(cum_map.p);
  Profile pr;
  parse_profile(static_cast<const char *>(text.p), len, pr, sizes, cum, cap, path);

  const double wanted = multiplier * static_cast<double>(pr.max_live);
  auto n = static_cast<std::uint64_t>(wanted + 0.5);
  if (n > kMaxObjects) fail("M x max_live is too many objects (over 2^31)");
  // A program whose every allocation is at or above the cutoff (a region
  // allocator that asks malloc only for big chunks, say) leaves nothing to
  // sample from: littering is empty, and the log says why. A profile with
  // live objects but no allocations at all is inconsistent.
  bool all_above_cutoff = false;
  if (n > 0 && pr.distinct == 0) {
    if (pr.ignored == 0) fail("profile has no sizes below its cutoff to sample from", path);
    all_above_cutoff = true;
    n = 0;
  }
  const auto m = static_cast<std::uint64_t>(static_cast<double>(n) * (1.0 - occupancy) + 0.5);

  const double t0 = now_seconds();
  Rng rng{seed};
  std::uint64_t bytes_all = 0, bytes_freed = 0, failed = 0;
  if (n > 0) {
    Mapping objs_map(n * sizeof(void *)), size_map(n * sizeof(std::uint32_t));
    auto **objs = static_cast<void **>(objs_map.p);
    auto *osz = static_cast<std::uint32_t *>(size_map.p);
    const std::uint64_t total = cum[pr.distinct - 1];
    for (std::uint64_t i = 0; i < n; ++i) {
      // SAMPLERANDOMSIZE: the first size whose cumulative count exceeds r.
      const std::uint64_t r = rng.below(total);
      std::size_t lo = 0, hi = pr.distinct - 1;
      while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (cum[mid] > r) hi = mid; else lo = mid + 1;
      }
      const std::size_t size = sizes[lo];
      objs[i] = std::malloc(size);
      if (!objs[i] && size != 0) ++failed;
      // Touch the object as a program would: the allocator's pages get faulted in.
      if (objs[i] && size) static_cast<volatile char *>(objs[i])[0] = 0;
      osz[i] = static_cast<std::uint32_t>(size);
      bytes_all += size;
    }
    // SHUFFLE (Fisher-Yates), then free the first m.
    for (std::uint64_t i = n - 1; i > 0; --i) {
      const std::uint64_t j = rng.below(i + 1);
      void *tp = objs[i]; objs[i] = objs[j]; objs[j] = tp;
      const std::uint32_t ts = osz[i]; osz[i] = osz[j]; osz[j] = ts;
    }
    for (std::uint64_t i = 0; i < m; ++i) {
      std::free(objs[i]);
      bytes_freed += osz[i];
    }
    // objs[m..n) stay live on purpose; only the array that named them goes.
  }
  const double elapsed = now_seconds() - t0;
  if (failed) fail("the allocator refused some littering requests (out of memory?)");

  if (quiet && quiet[0] == '1') return;
  Dl_info info{};
  const char *who = "?";
  void *sym = ::dlsym(RTLD_DEFAULT, "malloc");
  if (sym && ::dladdr(sym, &info) && info.dli_fname) who = info.dli_fname;
  char buf[2048];
  TextBuffer b(buf, sizeof buf);
  b.put("litter: pid="); b.put_u64(static_cast<std::uint64_t>(::getpid()));
  b.put(" allocator="); b.put(who);
  b.put(" profile="); b.put(path);
  b.put(" max_live="); b.put_u64(pr.max_live);
  b.put(" multiplier_x1000="); b.put_u64(static_cast<std::uint64_t>(multiplier * 1000 + 0.5));
  b.put(" occupancy_x1000="); b.put_u64(static_cast<std::uint64_t>(occupancy * 1000 + 0.5));
  b.put(" seed="); b.put_u64(seed);
  b.put(" objects="); b.put_u64(n);
  b.put(" freed="); b.put_u64(m);
  b.put(" live="); b.put_u64(n - m);
  b.put(" bytes="); b.put_u64(bytes_all);
  b.put(" live_bytes="); b.put_u64(bytes_all - bytes_freed);
  b.put(" ms="); b.put_ratio3(static_cast<std::uint64_t>(elapsed * 1e9 + 0.5), 1000000);
  if (all_above_cutoff) b.put(" note=every_allocation_at_or_above_the_cutoff");
  b.put('\n');
  append_log_line(b.data(), b.size());
}

// Priority 101 runs last among destructors: after the program's atexit
// handlers and static destructors, as close to exit as a library can see.
__attribute__((destructor(101))) void litter_fini() {
  const char *log = ::getenv("LITTER_LOG");
  if (!log || !*log || g_littering_end == 0.0) return;
  const double run = now_seconds() - g_littering_end;
  const double cpu = cpu_seconds() - g_littering_end_cpu;
  char buf[160];
  TextBuffer b(buf, sizeof buf);
  b.put("litter: pid="); b.put_u64(static_cast<std::uint64_t>(::getpid()));
  b.put(" run_ms="); b.put_ratio3(static_cast<std::uint64_t>(run * 1e9 + 0.5), 1000000);
  b.put(" cpu_ms="); b.put_ratio3(static_cast<std::uint64_t>((cpu > 0 ? cpu : 0) * 1e9 + 0.5), 1000000);
  b.put('\n');
  append_log_line(b.data(), b.size());
}

// Priority 101: the earliest a program may ask for, so littering happens before
// the constructors of the program and of libraries loaded after this one.
__attribute__((constructor(101))) void litter_init() { litter(); }

}  // namespace
