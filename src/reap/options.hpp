// options.hpp — every REAP_* option, its default, and where it is read.
// Read once, at the first reap_create, from the environment (no allocation).
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
//                                  Also on | off, yes | no, true | false.
//   REAP_CACHE_KB  N               default 8192. Bytes (KiB) of released chunks
//                                  kept process-wide for the next reap.
//
// A value that is not one of these, or a REAP_* name that is none of them, is
// reported on stderr once, naming what is accepted and what is used instead:
// a typo must never run the other mode in silence.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstring>

extern char **environ;

namespace alloclab::reap_options {

struct Options {
  bool emulate = false;
  bool check = false;
  std::size_t cache_bytes = 8192u * 1024u;
};

// One line to stderr, built in a fixed buffer (malloc may be the one under test).
class Line {
 public:
  Line &str(const char *s) {
    while (*s && n_ < sizeof buf_ - 1) buf_[n_++] = *s++;
    return *this;
  }
  Line &upto(const char *s, char stop) {
    while (*s && *s != stop && n_ < sizeof buf_ - 1) buf_[n_++] = *s++;
    return *this;
  }
  Line &num(unsigned long long v) {
    char d[24];
    int k = 0;
    do d[k++] = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
    while (k > 0 && n_ < sizeof buf_ - 1) buf_[n_++] = d[--k];
    return *this;
  }
  ~Line() {
    buf_[n_++] = '\n';
    ssize_t w = ::write(2, buf_, n_);
    (void)w;
  }

 private:
  char buf_[512];
  std::size_t n_ = 0;
};

// The value of `entry` ("NAME=value") if its name is `name`, else null.
inline const char *value_of(const char *entry, const char *name) {
  const std::size_t k = std::strlen(name);
  return std::strncmp(entry, name, k) == 0 && entry[k] == '=' ? entry + k + 1 : nullptr;
}

inline bool one_of(const char *v, const char *const *words) {
  for (; *words; ++words)
    if (std::strcmp(v, *words) == 0) return true;
  return false;
}

inline bool parse_mode(const char *v, bool &emulate) {
  if (std::strcmp(v, "reap") == 0) return emulate = false, true;
  if (std::strcmp(v, "malloc") == 0) return emulate = true, true;
  return false;
}

inline bool parse_switch(const char *v, bool &on) {
  static const char *const yes[] = {"1", "on", "yes", "true", nullptr};
  static const char *const no[] = {"0", "off", "no", "false", nullptr};
  if (one_of(v, yes)) return on = true, true;
  if (one_of(v, no)) return on = false, true;
  return false;
}

inline bool parse_kib(const char *v, std::size_t &bytes) {
  if (*v == '\0') return false;
  unsigned long long k = 0;
  for (; *v; ++v) {
    if (*v < '0' || *v > '9') return false;
    k = k * 10 + static_cast<unsigned>(*v - '0');
    if (k >= (1ull << 40)) return false;
  }
  bytes = static_cast<std::size_t>(k) * 1024u;
  return true;
}

inline void warn_value(const char *entry, const char *expected, const char *used) {
  Line().str("reap: ").str(entry).str(" ignored: expected ").str(expected).str("; using ").str(used);
}

inline Options read() {
  Options o;
#ifndef NDEBUG
  o.check = true;
#endif
  if (environ == nullptr) return o;
  for (char **env = environ; *env != nullptr; ++env) {
    const char *e = *env;
    if (std::strncmp(e, "REAP_", 5) != 0) continue;
    if (const char *v = value_of(e, "REAP_MODE")) {
      if (!parse_mode(v, o.emulate)) warn_value(e, "reap | malloc", o.emulate ? "malloc" : "reap");
    } else if (const char *v = value_of(e, "REAP_CHECK")) {
      bool on = false;
      if (!parse_switch(v, on)) warn_value(e, "0 | 1 (or off | on)", o.check ? "1" : "0");
      o.check = on || o.check;  // a debug build always checks
    } else if (const char *v = value_of(e, "REAP_CACHE_KB")) {
      if (!parse_kib(v, o.cache_bytes)) {
        Line().str("reap: ").str(e).str(" ignored: expected KiB (a decimal number below 2^40); using ")
            .num(o.cache_bytes / 1024u);
      }
    } else {
      Line().str("reap: unknown option ").upto(e, '=').str(" ignored; known: REAP_MODE REAP_CHECK REAP_CACHE_KB");
    }
  }
  return o;
}

inline const Options &get() {
  static const Options o = read();
  return o;
}

}  // namespace alloclab::reap_options
