// os.hpp — the one platform seam of alloclab's allocators.
//
// Every request for address space, every return of it, and every "these
// pages are dead, drop their contents" goes through this file. Nothing else
// in src/ calls mmap, mremap, munmap or madvise; a port touches only this file, and
// tests can count calls through the counters below. So does what vam asks of
// the scheduler: whether another thread waits for this one's CPU, and a
// moment's pause to let it run (thread_runnable_on, step_aside; Linux's
// /proc), and the small files that describe the machine (read_small_file).
//
// The functions never allocate through malloc and never touch errno on
// success; on failure map functions return nullptr and leave errno as the
// kernel set it (ENOMEM in practice).
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace alloclab::os {

// Counters of system calls made through this seam (relaxed; for tests and
// statistics, not for synchronisation).
struct Counters {
  std::atomic<std::uint64_t> maps{0};
  std::atomic<std::uint64_t> unmaps{0};
  std::atomic<std::uint64_t> discards{0};
  std::atomic<std::uint64_t> remaps{0};
  std::atomic<std::uint64_t> failed_resizes{0};  // in-place resizes the kernel refused (still a call)
  std::atomic<std::uint64_t> mapped_bytes{0};    // currently mapped through map()
};

inline Counters &counters() noexcept {
  static Counters c;  // constant-initialised: safe before main and inside malloc
  return c;
}

// The system page size, read once. sysconf does not allocate. Cached in a
// constant-initialised atomic (0: not read yet), not a static initialised by
// a call: that would need the C++ runtime's guard (__cxa_guard_acquire), and
// libvam.so would then load libstdc++ into every C program it is preloaded
// into. Threads that race here read the same value and store it twice.
inline std::size_t page_size() noexcept {
  static constinit std::atomic<std::size_t> cached{0};
  std::size_t ps = cached.load(std::memory_order_relaxed);
  if (ps == 0) {
    const long v = ::sysconf(_SC_PAGESIZE);
    ps = v > 0 ? static_cast<std::size_t>(v) : std::size_t{4096};
    cached.store(ps, std::memory_order_relaxed);
  }
  return ps;
}

// Round n up to a multiple of a (a power of two). Returns 0 on overflow.
constexpr std::size_t align_up(std::size_t n, std::size_t a) noexcept {
  return (n + (a - 1) < n) ? 0 : ((n + (a - 1)) & ~(a - 1));
}

// Map `bytes` (a multiple of the page size) of fresh, zeroed, read-write
// memory. nullptr on failure.
inline void *map(std::size_t bytes) noexcept {
  if (bytes == 0) return nullptr;
  void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  counters().maps.fetch_add(1, std::memory_order_relaxed);
  counters().mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return p;
}

// Map `bytes` whose start is a multiple of `alignment` (a power of two, at
// least the page size), or, with a `skew` (a multiple of the page size below
// `alignment`), whose start + skew is: over-map, then trim both ends. The
// skew lets an object sit at an aligned address behind a header page.
//
// Over-mapping needs `alignment` more address space for a moment, which a
// tight RLIMIT_AS (ulimit -v) may refuse. So first map just `bytes`: if the
// kernel's choice is aligned, done; if not, ask for the aligned address at
// or below it (the kernel fills the address space downwards, so that is
// usually free). Only then over-map.
inline void *map_aligned(std::size_t bytes, std::size_t alignment, std::size_t skew = 0) noexcept {
  const std::size_t ps = page_size();
  if (alignment <= ps) return map(bytes);
  const std::size_t span = bytes + alignment;
  if (span < bytes) return nullptr;
  const int saved = errno;  // the attempts below may fail; success must not change errno
  auto fits = [&](void *p) {
    return ((reinterpret_cast<std::uintptr_t>(p) + skew) & (alignment - 1)) == 0;
  };
  void *first = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (first != MAP_FAILED) {
    if (fits(first)) {
      counters().maps.fetch_add(1, std::memory_order_relaxed);
      counters().mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
      return first;
    }
    ::munmap(first, bytes);
    const auto at = reinterpret_cast<std::uintptr_t>(first);
    const std::uintptr_t below = ((at + skew) & ~(alignment - 1)) - skew;
    if (below <= at) {
      void *hinted = ::mmap(reinterpret_cast<void *>(below), bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (hinted != MAP_FAILED) {
        if (fits(hinted)) {
          counters().maps.fetch_add(1, std::memory_order_relaxed);
          counters().mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
          return hinted;
        }
        ::munmap(hinted, bytes);
      }
    }
  }
  errno = saved;
  void *raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = ((base + skew + alignment - 1) & ~(alignment - 1)) - skew;
  const std::size_t head = aligned - base;
  const std::size_t tail = span - head - bytes;
  if (head) ::munmap(raw, head);
  if (tail) ::munmap(reinterpret_cast<void *>(aligned + bytes), tail);
  counters().maps.fetch_add(1, std::memory_order_relaxed);
  counters().mapped_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return reinterpret_cast<void *>(aligned);
}

// Return a mapping made by map() or map_aligned() with the same size.
inline void unmap(void *p, std::size_t bytes) noexcept {
  if (p == nullptr || bytes == 0) return;
  ::munmap(p, bytes);
  counters().unmaps.fetch_add(1, std::memory_order_relaxed);
  counters().mapped_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

// Resize a mapping made by map(), map_aligned() or remap() from old_bytes to
// new_bytes (multiples of the page size), keeping its contents and its
// `alignment` (a power of two, at least the page size). The kernel moves
// page-table entries; no byte is copied. It grows or shrinks in place when
// it can; otherwise the pages move to a fresh aligned range and the old
// range is gone. Returns the (possibly new) start, or nullptr with the old
// mapping untouched.
inline void *remap(void *p, std::size_t old_bytes, std::size_t new_bytes, std::size_t alignment) noexcept {
  const int saved = errno;  // the in-place attempt may fail; success must not change errno
  void *q = ::mremap(p, old_bytes, new_bytes, 0);
  if (q == MAP_FAILED) {
    // Reserve an aligned range, then move the pages over it (MREMAP_FIXED
    // replaces the reservation atomically).
    void *target = map_aligned(new_bytes, alignment);
    if (!target) return nullptr;
    counters().maps.fetch_sub(1, std::memory_order_relaxed);  // a reservation, not a new mapping
    counters().mapped_bytes.fetch_sub(new_bytes, std::memory_order_relaxed);
    q = ::mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (q == MAP_FAILED) {
      ::munmap(target, new_bytes);
      return nullptr;
    }
  }
  errno = saved;
  counters().remaps.fetch_add(1, std::memory_order_relaxed);
  counters().mapped_bytes.fetch_add(new_bytes, std::memory_order_relaxed);
  counters().mapped_bytes.fetch_sub(old_bytes, std::memory_order_relaxed);
  return q;
}

// Grow or shrink a mapping made by map() or map_aligned() in place: its start
// stays where it is. False, with the mapping untouched, when growing would
// run into another mapping.
inline bool resize_in_place(void *p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
  const int saved = errno;
  if (::mremap(p, old_bytes, new_bytes, 0) == MAP_FAILED) {
    errno = saved;
    counters().failed_resizes.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  counters().remaps.fetch_add(1, std::memory_order_relaxed);
  counters().mapped_bytes.fetch_add(new_bytes, std::memory_order_relaxed);
  counters().mapped_bytes.fetch_sub(old_bytes, std::memory_order_relaxed);
  return true;
}

// Tell the kernel the contents of these whole pages are dead: the physical
// pages go back, the address range stays ours and reads back as zeroes
// (MADV_DONTNEED on private anonymous memory). `p` and `bytes` must be
// page-aligned. Returns true on success.
inline bool discard(void *p, std::size_t bytes) noexcept {
  if (p == nullptr || bytes == 0) return true;
  counters().discards.fetch_add(1, std::memory_order_relaxed);
  return ::madvise(p, bytes, MADV_DONTNEED) == 0;
}

// Ask the kernel to back [p, p+bytes) with transparent huge pages (on) or
// never to (off): madvise(MADV_HUGEPAGE / MADV_NOHUGEPAGE). Advice only; the
// kernel may still use small pages. False where the kernel has no THP.
inline bool advise_hugepages(void *p, std::size_t bytes, bool on) noexcept {
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  const int saved = errno;
  const bool ok = ::madvise(p, bytes, on ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) == 0;
  errno = saved;  // advice failing is not the caller's error
  return ok;
#else
  (void)p;
  (void)bytes;
  (void)on;
  return false;
#endif
}

// Up to cap bytes of the file at `path` into buf, by raw system calls (no
// allocation, no cancellation point): the bytes read, or -1 when it cannot be
// opened or read. errno is left as it was.
inline long read_small_file(const char *path, char *buf, std::size_t cap) noexcept {
  const int saved = errno;
  const long fd = ::syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  long n = -1;
  if (fd >= 0) {
    n = ::syscall(SYS_read, fd, buf, cap);
    ::syscall(SYS_close, fd);
  }
  errno = saved;
  return n;
}

// The kernel's id of the calling thread (gettid), for thread_runnable_on.
inline int thread_id() noexcept { return static_cast<int>(::syscall(SYS_gettid)); }

// The CPU that thread `tid` of this process last ran on, if it is running
// or waiting for a CPU (state R in /proc/self/task/TID/stat); -1 when it is
// blocked or sleeping, or when it cannot be told (no such thread, no /proc,
// a refused open). Three raw system calls, none of them a cancellation
// point (free may be where a thread meets this), no allocation; errno is
// left as it was.
inline int thread_runnable_on(int tid) noexcept {
  if (tid <= 0) return -1;
  char path[40] = "/proc/self/task/";
  std::size_t at = sizeof "/proc/self/task/" - 1;
  char digits[12];
  std::size_t nd = 0;
  for (unsigned v = static_cast<unsigned>(tid); v != 0; v /= 10) digits[nd++] = static_cast<char>('0' + v % 10);
  while (nd != 0) path[at++] = digits[--nd];
  for (const char c : {'/', 's', 't', 'a', 't', '\0'}) path[at++] = c;
  char buf[512];
  const long n = read_small_file(path, buf, sizeof buf);
  // "tid (name) S f4 ... f39 ...": the fields follow the last ')', since the
  // name may hold one; the state is field 3, the last CPU field 39, and
  // those between are numbers.
  long i = n - 1;
  while (i >= 0 && buf[i] != ')') --i;
  if (i < 0 || i + 2 >= n || buf[i + 2] != 'R') return -1;
  i += 2;
  for (int field = 3; field < 39; ++field) {
    while (i < n && buf[i] != ' ') ++i;
    ++i;
  }
  int cpu = 0;
  long k = i;
  for (; k < n && buf[k] >= '0' && buf[k] <= '9'; ++k) cpu = cpu * 10 + (buf[k] - '0');
  return k > i && k < n ? cpu : -1;
}

// Block for `us` microseconds, letting another thread have this CPU: a raw
// nanosleep, which is no cancellation point; errno is left as it was.
inline void step_aside(long us) noexcept {
  const int saved = errno;
  const timespec pause = {0, us * 1000};
  ::syscall(SYS_nanosleep, &pause, nullptr);
  errno = saved;
}

}  // namespace alloclab::os
