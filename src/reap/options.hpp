// options.hpp — every REAP_* option, its default, and where it is read.
// Read once, at the first reap_create, with getenv (which does not allocate).
//
//   REAP_MODE      reap | malloc   default reap. "malloc" turns on the region
//                                  emulator (reaps paper §3.1): objects come
//                                  from the process's malloc and each reap
//                                  tracks them out of band, so a program can
//                                  be A/B-tested on any general-purpose
//                                  allocator without changing its code.
//   REAP_CHECK     0 | 1           default 0 (1 in debug builds). Verify every
//                                  free and realloc: double frees, foreign
//                                  pointers and frees into the wrong reap
//                                  abort with a message naming the fault.
//   REAP_CACHE_KB  N               default 8192. Bytes (KiB) of released chunks
//                                  kept process-wide for the next reap.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace alloclab::reap_options {

struct Options {
  bool emulate = false;
  bool check = false;
  std::size_t cache_bytes = 8192u * 1024u;
};

inline bool truthy(const char *v) {
  return v && *v && std::strcmp(v, "0") != 0 && std::strcmp(v, "no") != 0 &&
         std::strcmp(v, "off") != 0 && std::strcmp(v, "false") != 0;
}

inline Options read() {
  Options o;
#ifndef NDEBUG
  o.check = true;
#endif
  if (const char *m = std::getenv("REAP_MODE")) o.emulate = std::strcmp(m, "malloc") == 0;
  if (const char *c = std::getenv("REAP_CHECK")) o.check = truthy(c) || o.check;
  if (const char *k = std::getenv("REAP_CACHE_KB")) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(k, &end, 10);
    if (end != k && *end == '\0' && v < (1ull << 40)) o.cache_bytes = static_cast<std::size_t>(v) * 1024u;
  }
  return o;
}

inline const Options &get() {
  static const Options o = read();
  return o;
}

}  // namespace alloclab::reap_options
