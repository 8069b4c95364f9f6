// stats.cpp — vam_stats() and VAM_STATS: live objects per class counted
// from the block records (the fast paths keep no other count), large and
// huge bytes from the heaps' counters, the fragmentation ratio (paper §4.4),
// and a report written with write(2), no stdio and no allocation.
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "alloclab/vam.h"
#include "vam/instrument.hpp"
#include "vam/global.hpp"
#include "vam/heap.hpp"
#include "vam/heap_hooks.hpp"
#include "vam/hot_list.hpp"
#include "vam/huge.hpp"
#include "vam/options.hpp"
#include "vam/remote.hpp"

namespace alloclab::vam {

namespace {

std::size_t pos(std::int64_t v) noexcept { return v > 0 ? static_cast<std::size_t>(v) : 0; }

// Live objects per class, from the block records: the fast paths keep only
// each block's count, and a per-class counter beside it would cost every
// malloc and free a dependent read-modify-write.
void count_block_objects(Heap *h, std::int64_t *class_live) noexcept {
  for (Segment *s = h->block_segs.load(std::memory_order_acquire); s; s = s->next) {
    const std::uint32_t carved = load_relaxed(s->next_block);
    Block *blocks = s->blocks();
    for (std::uint32_t i = s->first_block(); i < carved; ++i) {
      Block &b = blocks[i];
      const BlockState st = load_relaxed(b.state);
      if (st != BlockState::front && st != BlockState::waiting && st != BlockState::full) continue;
      const std::uint8_t cls = load_relaxed(b.cls);
      if (cls < kNumClasses) class_live[cls] += load_relaxed(b.used);
    }
  }
  // Objects on a hot list are free, though their blocks count them (hot_list.hpp).
  for (unsigned c = 0; c < kNumClasses; ++c)
    class_live[c] -= hot_length(class_hot_list(h, c));
}

}  // namespace

void collect_stats(vam_stats_t *out) noexcept {
  remote_flush_all();
  reclaim_abandoned();
  memset(out, 0, sizeof *out);
  std::int64_t class_live[kNumClasses] = {};
  std::int64_t class_blocks[kNumClasses] = {};
  std::int64_t large_bytes = 0, large_objs = 0, pages = 0, discarded = 0, calls = 0, segs = 0, hsegs = 0;
  g.lock.lock();
  g.walk_lock.lock();
  for (Heap *h = g.all; h; h = h->all_next) {
    const HeapStats &c = h->segments.stats;
    const ReclaimCounts &r = h->large.reclaimed();  // kept apart (large_region.hpp)
    for (unsigned k = 0; k < kNumClasses; ++k) class_blocks[k] += c.class_blocks(k);
    count_block_objects(h, class_live);
    large_bytes += c.large_live_bytes() - r.large_bytes.get();
    large_objs += c.large_live_objects() - r.large_objects.get();
    pages += c.pages_in_use() - r.pages_discarded.get();
    discarded += c.pages_discarded() + r.pages_discarded.get();
    calls += c.discard_calls() + r.discard_calls.get();
    segs += c.segments();
    hsegs += c.hugepage_segments() - r.hugepage_segments.get();
  }
  out->heaps = g.heaps;
  out->abandoned_heaps = g.abandoned_count;
  g.walk_lock.unlock();
  g.lock.unlock();
  const HugeCounters &hc = huge_counters();
  for (unsigned k = 0; k < kNumClasses; ++k) {
    out->class_size[k] = k < g_layout.classes ? layout_usable(k) : 0;
    out->class_live[k] = pos(class_live[k]);
    out->class_blocks[k] = pos(class_blocks[k]);
    out->small_live_bytes += out->class_live[k] * out->class_size[k];
    out->live_objects += out->class_live[k];
  }
  out->large_live_bytes = pos(large_bytes);
  out->huge_live_bytes = pos(hc.live_bytes.load(std::memory_order_relaxed));
  out->live_objects += pos(large_objs) + pos(hc.live_objects.load(std::memory_order_relaxed));
  out->live_bytes = out->small_live_bytes + out->large_live_bytes + out->huge_live_bytes;
  out->pages_in_use = pos(pages) + pos(hc.pages.load(std::memory_order_relaxed)) +
                      pos(huge_cached_pages());
  out->pages_discarded = pos(discarded);
  out->discard_calls = pos(calls);
  out->huge_remaps = pos(hc.resizes.load(std::memory_order_relaxed));
  out->segments = pos(segs);
  out->hugepage_segments = pos(hsegs);
  const std::size_t live_pages = (out->live_bytes + kPage - 1) / kPage;
  out->fragmentation = live_pages ? double(out->pages_in_use) / double(live_pages) : 0.0;
}

namespace {

// A tiny writer: no stdio, no allocation.
struct Out {
  char buf[8192];
  std::size_t n = 0;
  void str(const char *s) noexcept {
    while (*s && n < sizeof buf) buf[n++] = *s++;
  }
  void num(std::size_t v) noexcept {
    char tmp[24];
    int i = 0;
    do { tmp[i++] = char('0' + v % 10); v /= 10; } while (v);
    while (i && n < sizeof buf) buf[n++] = tmp[--i];
  }
  void kv(const char *k, std::size_t v) noexcept { str(k); num(v); str("\n"); }
  void flush(int fd) noexcept {
    std::size_t off = 0;
    while (off < n) {
      ssize_t w = ::write(fd, buf + off, n - off);
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
    }
    n = 0;
  }
};

// A "Key:   N kB" line of /proc/self/status, in KiB; 0 when it cannot be read.
std::size_t status_kb(const char *key) noexcept {
  char buf[4096];
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char *at = strstr(buf, key);
  if (at == nullptr) return 0;
  at += strlen(key);
  while (*at == ' ' || *at == '\t') ++at;
  std::size_t v = 0;
  for (; *at >= '0' && *at <= '9'; ++at) v = v * 10 + std::size_t(*at - '0');
  return v;
}

void print_calls(Out &o) noexcept {
  CallCounts c;
  call_counts(&c);
  if (!c.counted) {
    o.str("  calls, peak live bytes: counted by libvam-stats.so only (`vam --stats` preloads it)\n");
    return;
  }
  static const char *const names[] = {"malloc", "calloc", "realloc", "aligned", "new", "free", "delete"};
  o.str("  calls            ");
  for (unsigned k = 0; k < unsigned(Call::kinds); ++k) {
    o.str(" ");
    o.str(names[k]);
    o.str(" ");
    o.num(c.calls[k]);
  }
  o.str("\n");
  o.kv("  peak live bytes   ", pos(c.peak_live_bytes));
}

}  // namespace

void print_stats_at_exit() noexcept {
  const char *file = options().stats_file;
  int fd = 2;
  if (file != nullptr) {
    fd = ::open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      Out o;
      o.str("vam: cannot open VAM_STATS file ");
      o.str(file);
      o.str("; the statistics follow on stderr\n");
      o.flush(2);
      fd = 2;
    }
  }
  print_stats(fd);
  if (fd != 2) ::close(fd);
}

void print_stats(int fd) noexcept {
  vam_stats_t s;
  collect_stats(&s);
  Out o;
  // Which process: several under one VAM_STATS=1 write to the same stderr.
  // program_invocation_short_name is set by the C library before main.
  o.str("vam: statistics pid ");
  o.num(static_cast<std::size_t>(::getpid()));
  o.str(" program ");
  o.str(program_invocation_short_name ? program_invocation_short_name : "?");
  o.str("\n");
  o.kv("  live bytes        ", s.live_bytes);
  o.kv("    small           ", s.small_live_bytes);
  o.kv("    large           ", s.large_live_bytes);
  o.kv("    huge            ", s.huge_live_bytes);
  o.kv("  live objects      ", s.live_objects);
  print_calls(o);
  o.kv("  peak RSS (KiB)    ", status_kb("VmHWM:"));
  o.kv("  RSS now (KiB)     ", status_kb("VmRSS:"));
  o.kv("  pages in use      ", s.pages_in_use);
  o.kv("  pages discarded   ", s.pages_discarded);
  o.kv("  discard calls     ", s.discard_calls);
  o.kv("  huge remaps       ", s.huge_remaps);
  o.kv("  segments          ", s.segments);
  o.kv("    huge pages      ", s.hugepage_segments);
  if (hugepages_withheld()) o.str("      (VAM_HUGEPAGES=auto advised none: this guest gives free 2 MiB blocks to its host)\n");
  o.kv("  heaps             ", s.heaps);
  o.kv("  abandoned heaps   ", s.abandoned_heaps);
  const std::size_t f100 = static_cast<std::size_t>(s.fragmentation * 100.0 + 0.5);
  o.str("  fragmentation     ");
  o.num(f100 / 100);
  o.str(".");
  if (f100 % 100 < 10) o.str("0");
  o.num(f100 % 100);
  o.str("  (pages in use / live pages)\n  class  size  live  blocks\n");
  for (unsigned k = 0; k < kNumClasses; ++k) {
    if (!s.class_live[k] && !s.class_blocks[k]) continue;
    o.str("  ");
    o.num(k);
    o.str("  ");
    o.num(s.class_size[k]);
    o.str("  ");
    o.num(s.class_live[k]);
    o.str("  ");
    o.num(s.class_blocks[k]);
    o.str("\n");
  }
  o.flush(fd);
}

}  // namespace alloclab::vam
