// options_probe <mode> — checks that a VAM_* option set in the environment
// changes libvam's behaviour (driven by ctest with ENVIRONMENT). Prefixed API.
//   eager     VAM_DISCARD=eager: emptied blocks are discarded at once
//   off       VAM_DISCARD=off: nothing is discarded until vam_collect()
//   threshold VAM_DISCARD=delayed VAM_DISCARD_THRESHOLD_ALONE=32: a lone thread's
//             heap discards past 32 pages
//   alone     VAM_DISCARD=delayed VAM_DISCARD_THRESHOLD=32 (and a long delay): a
//             lone thread's heap ignores that threshold and keeps its 210 pages
//   threads   VAM_DISCARD=delayed VAM_DISCARD_THRESHOLD=32 with a second thread
//             holding a heap: discarded past 32 pages
//   largemax  VAM_LARGE_MAX=32k: a 40000-byte object is mapped on its own
#include <stdio.h>
#include <string.h>

#include <atomic>
#include <thread>
#include <vector>

#include "alloclab/vam.h"

static size_t discarded() {
  vam_stats_t s;
  vam_stats(&s);
  return s.pages_discarded;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
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
  for (int i = 0; i < 4000; ++i) v.push_back(vam_malloc(200));  // ~210 one-page blocks
  for (void *p : v) vam_free(p);
  const size_t after = discarded() - before;
  bool ok = false;
  if (strcmp(mode, "eager") == 0) ok = after >= 200;
  else if (strcmp(mode, "off") == 0) ok = after == 0;
  else if (strcmp(mode, "threshold") == 0 || strcmp(mode, "threads") == 0) ok = after >= 32 && after < 210;
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
