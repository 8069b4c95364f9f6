// options.cpp — read the VAM_* table from the environment without allocating.
#include "vam/options.hpp"

#include <unistd.h>

extern char **environ;

namespace alloclab::vam {

Options &options() noexcept {
  static Options o;  // constant-initialised
  return o;
}

namespace {

// If `entry` is "name=value", return value, else nullptr.
const char *match(const char *entry, const char *name) noexcept {
  while (*name && *entry == *name) { ++entry; ++name; }
  return (*name == 0 && *entry == '=') ? entry + 1 : nullptr;
}

bool equals(const char *a, const char *b) noexcept {
  while (*a && *a == *b) { ++a; ++b; }
  return *a == *b;
}

// Decimal with an optional k/m/g suffix (powers of 1024).
bool parse_number(const char *s, std::int64_t &out) noexcept {
  if (*s < '0' || *s > '9') return false;
  std::int64_t v = 0;
  while (*s >= '0' && *s <= '9') {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*s++ - '0');
  }
  int shift = 0;
  if (*s == 'k' || *s == 'K') { shift = 10; ++s; }
  else if (*s == 'm' || *s == 'M') { shift = 20; ++s; }
  else if (*s == 'g' || *s == 'G') { shift = 30; ++s; }
  if (*s != 0) return false;
  if (v > (INT64_MAX >> shift)) return false;
  out = v << shift;
  return true;
}

void set(const char *name, const char *value, std::int64_t &field) noexcept {
  if (equals(name, "VAM_DISCARD")) {
    if (equals(value, "off") || equals(value, "0")) field = int(DiscardPolicy::off);
    else if (equals(value, "eager")) field = int(DiscardPolicy::eager);
    else if (equals(value, "delayed")) field = int(DiscardPolicy::delayed);
    return;  // unknown words keep the default
  }
  if (equals(name, "VAM_HUGEPAGES")) {
    if (equals(value, "off") || equals(value, "0")) field = int(HugePages::off);
    else if (equals(value, "auto")) field = int(HugePages::automatic);
    else if (equals(value, "always") || equals(value, "1")) field = int(HugePages::always);
    return;
  }
  std::int64_t v;
  if (parse_number(value, v)) field = v;
}

}  // namespace

bool read_options() noexcept {
  Options &o = options();
  char **env = environ;
  if (env != nullptr) {
    for (; *env != nullptr; ++env) {
      const char *e = *env;
      if (e[0] != 'V' || e[1] != 'A' || e[2] != 'M' || e[3] != '_') continue;
#define VAM_OPTION_READ(name, field, def, unit) \
      if (const char *v = match(e, name)) { set(name, v, o.field); continue; }
      VAM_OPTIONS(VAM_OPTION_READ)
#undef VAM_OPTION_READ
    }
  }
  if (o.large_max < 1024) o.large_max = 1024;
  if (o.large_max > (1 << 20)) o.large_max = 1 << 20;
  if (o.discard_threshold < 1) o.discard_threshold = 1;
  if (o.discard_threshold_alone < 1) o.discard_threshold_alone = 1;
  if (o.discard_delay_ms < 0) o.discard_delay_ms = 0;
  if (o.huge_cache < 0) o.huge_cache = 0;
  if (o.hugepage_min < 0) o.hugepage_min = 0;
  return env != nullptr;
}

}  // namespace alloclab::vam
