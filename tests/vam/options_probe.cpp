// options_probe <mode> — checks that a VAM_* option set in the environment
// changes libvam's behaviour (driven by ctest with ENVIRONMENT). Prefixed API.
//   eager     VAM_DISCARD=eager: emptied blocks are discarded at once
//   off       VAM_DISCARD=off: nothing is discarded until vam_collect()
//   threshold VAM_DISCARD=delayed VAM_DISCARD_THRESHOLD_ALONE=32: a lone thread's
//             heap discards past 32 pages
//   alone     VAM_DISCARD=delayed VAM_DISCARD_THRESHOLD=32 (and a long delay): a
//             lone thread's heap ignores that threshold and keeps its 204 pages
//   threads   VAM_DISCARD=delayed VAM_DISCARD_THRESHOLD=32 with a second thread
//             holding a heap: discarded past 32 pages
//   largemax  VAM_LARGE_MAX=32k: a 40000-byte object is mapped on its own
//   pid       prints the process id (options_warnings.sh: malformed options
//             warn once on stderr; VAM_STATS=1 names the process)
//   hugepages-always  VAM_HUGEPAGES=always: the first segment is advised (its
//             mapping carries the kernel's "hg" flag); once pages in it are
//             discarded the advice is withdrawn ("nh")
//   hugepages-threshold  VAM_HUGEPAGES=threshold VAM_HUGEPAGE_MIN=16m: the
//             first 16 MiB of segments are not advised, the ones after are
//   hugepages-auto    VAM_HUGEPAGES=auto VAM_HUGEPAGE_MIN=16m: as threshold, but
//             on a guest whose kernel gives free huge pages to its host
//             (host_takes_free_hugepages of the real /sys) none is advised,
//             and VAM_STATS's report says why (vam_print_stats)
//   hugepages-off     VAM_HUGEPAGES=off: 32 MiB of objects, no segment advised
// The huge-page modes read the flags from /proc/self/smaps and report
// "skipped" where the kernel has no transparent huge pages.
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "alloclab/vam.h"
#include "vam/heap_segments.hpp"

static size_t discarded() {
  vam_stats_t s;
  vam_stats(&s);
  return s.pages_discarded;
}

// The rest of the line starting with `key` in the /proc/self/smaps entry of
// the mapping holding p ("" if not found).
static void smaps_field(const void *p, const char *key, char *out, size_t cap) {
  out[0] = 0;
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return;
  char line[512];
  bool inside = false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const size_t klen = strlen(key);
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = a >= lo && a < hi;
    } else if (inside && strncmp(line, key, klen) == 0) {
      snprintf(out, cap, "%.200s", line + klen);
      break;
    }
  }
  fclose(f);
}

// The AnonHugePages of the mapping holding p, in KiB (-1 if not found).
static long anon_huge_kb(const void *p) {
  char v[256];
  smaps_field(p, "AnonHugePages:", v, sizeof v);
  return v[0] ? atol(v) : -1;
}

static bool has_flag(const void *p, const char *flag) {
  char flags[256];
  smaps_field(p, "VmFlags:", flags, sizeof flags);
  char want[8];
  snprintf(want, sizeof want, " %s", flag);
  for (const char *q = flags; (q = strstr(q, want)) != nullptr; q += 3)
    if (q[3] == ' ' || q[3] == '\n' || q[3] == 0) return true;
  return false;
}

static size_t hugepage_segments() {
  vam_stats_t s;
  vam_stats(&s);
  return s.hugepage_segments;
}

static int hugepages_mode(const char *mode) {
  char setting[128] = "";  // read without stdio: no allocation before the probe's own
  const int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);
  if (fd >= 0) {
    const ssize_t n = read(fd, setting, sizeof setting - 1);
    setting[n > 0 ? n : 0] = 0;
    close(fd);
  }
  if (setting[0] == 0 || strstr(setting, "[never]")) {
    printf("options_probe %s: skipped: transparent huge pages are %s on this machine\n", mode,
           setting[0] ? "disabled ([never])" : "not available");
    return 0;
  }
  bool ok = false;
  if (strcmp(mode, "hugepages-always") == 0) {
    void *first = vam_malloc(64);
    const bool advised = has_flag(first, "hg") && hugepage_segments() >= 1;
    // The advice came before the segment's first write, so the kernel could
    // back its first 2 MiB (header and first blocks) with one huge page.
    const long huge_kb = anon_huge_kb(first);
    printf("options_probe %s: first segment's mapping has %ld KiB in huge pages\n", mode, huge_kb);
    // Fill and empty ~52 four-page blocks (208 pages), then discard them.
    std::vector<void *> v;
    for (int i = 0; i < 4000; ++i) v.push_back(vam_malloc(200));
    for (void *p : v) vam_free(p);
    vam_collect();
    const bool withdrawn = has_flag(first, "nh") && !has_flag(first, "hg");
    printf("options_probe %s: advised %d, withdrawn after discarding %d\n", mode, advised, withdrawn);
    ok = advised && withdrawn && huge_kb >= 2048;
    vam_free(first);
  } else {
    // 32 MiB of 64-byte objects: eight small segments.
    std::vector<void *> v;
    for (int i = 0; i < (32 << 20) / 64; ++i) v.push_back(vam_malloc(64));
    const bool first_hg = has_flag(v.front(), "hg"), last_hg = has_flag(v.back(), "hg");
    const size_t n = hugepage_segments();
    printf("options_probe %s: first segment %s, last %s, %zu advised\n", mode, first_hg ? "hg" : "-",
           last_hg ? "hg" : "-", n);
    const bool to_host = alloclab::vam::host_takes_free_hugepages("/sys");
    const bool advises = strcmp(mode, "hugepages-threshold") == 0 || (strcmp(mode, "hugepages-auto") == 0 && !to_host);
    if (strcmp(mode, "hugepages-auto") == 0)
      printf("options_probe %s: free huge pages go to the host: %s, withheld: %d\n", mode, to_host ? "yes" : "no",
             alloclab::vam::hugepages_withheld());
    if (advises) ok = !first_hg && last_hg && n >= 1;
    else ok = !first_hg && !last_hg && n == 0;
    if (strcmp(mode, "hugepages-auto") == 0) {
      // VAM_STATS's report says why, exactly when the advice was withheld.
      char report[8192] = "";
      int fds[2];
      if (pipe(fds) == 0) {
        vam_print_stats(fds[1]);
        close(fds[1]);
        const ssize_t got = read(fds[0], report, sizeof report - 1);
        report[got > 0 ? got : 0] = 0;
        close(fds[0]);
      }
      const bool says = strstr(report, "VAM_HUGEPAGES=auto advised none") != nullptr;
      printf("options_probe %s: the report says so: %d\n", mode, says);
      ok = ok && alloclab::vam::hugepages_withheld() == to_host && says == to_host;
    }
    for (void *p : v) vam_free(p);
  }
  printf("options_probe %s: %s\n", mode, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "pid") == 0) {  // options_warnings.sh checks stderr against this
    vam_free(vam_malloc(100));
    printf("options_probe pid: %ld\n", static_cast<long>(getpid()));
    return 0;
  }
  if (strncmp(mode, "hugepages-", 10) == 0) return hugepages_mode(mode);
  if (strcmp(mode, "largemax") == 0) {
    vam_stats_t a, b;
    vam_stats(&a);
    void *p = vam_malloc(40000);
    vam_stats(&b);
    vam_free(p);
    const bool ok = b.huge_live_bytes >= a.huge_live_bytes + 40000;
    printf("options_probe largemax: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
  }
  // "threads": another thread owns a heap while this one frees.
  std::atomic<int> phase{0};
  std::thread other;
  if (strcmp(mode, "threads") == 0) {
    other = std::thread([&] {
      vam_free(vam_malloc(16));  // gives the thread a heap
      phase = 1;
      while (phase.load() != 2) std::this_thread::yield();
    });
    while (phase.load() != 1) std::this_thread::yield();
  }
  const size_t before = discarded();
  std::vector<void *> v;
  v.reserve(4000);
  for (int i = 0; i < 4000; ++i) v.push_back(vam_malloc(200));  // 52 four-page blocks, 208 pages
  for (void *p : v) vam_free(p);
  const size_t after = discarded() - before;
  bool ok = false;
  if (strcmp(mode, "eager") == 0) ok = after >= 200;
  else if (strcmp(mode, "off") == 0) ok = after == 0;
  else if (strcmp(mode, "threshold") == 0 || strcmp(mode, "threads") == 0) ok = after >= 32 && after < 204;  // the blocks under the threshold wait
  else if (strcmp(mode, "alone") == 0) ok = after == 0;
  if (other.joinable()) {
    phase = 2;
    other.join();
  }
  vam_collect();
  if (strcmp(mode, "off") == 0) ok = ok && discarded() - before >= 200;
  printf("options_probe %s: %zu pages discarded on free: %s\n", mode, after, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
