// options.cpp — read the VAM_* table from the environment without allocating.
#include "vam/options.hpp"

#include <stdint.h>
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

// A line for stderr, built without allocating.
struct Line {
  char buf[640];
  std::size_t n = 0;
  Line &str(const char *t) noexcept {
    while (*t && n < sizeof buf - 1) buf[n++] = *t++;
    return *this;
  }
  Line &num(std::int64_t v) noexcept {
    if (v < 0) { str("-"); v = -v; }
    char tmp[24];
    int k = 0;
    do { tmp[k++] = char('0' + v % 10); v /= 10; } while (v && k < 24);
    while (k && n < sizeof buf - 1) buf[n++] = tmp[--k];
    return *this;
  }
  void emit() noexcept {
    buf[n++] = '\n';
    (void)!::write(2, buf, n);
  }
};

// A word option's accepted words and their values; nullptr for numbers.
struct Word {
  const char *word;
  int value;
};
constexpr Word kDiscardWords[] = {{"off", int(DiscardPolicy::off)}, {"0", int(DiscardPolicy::off)},
                                  {"eager", int(DiscardPolicy::eager)},
                                  {"delayed", int(DiscardPolicy::delayed)}, {nullptr, 0}};
constexpr Word kHugePageWords[] = {{"off", int(HugePages::off)}, {"0", int(HugePages::off)},
                                   {"auto", int(HugePages::automatic)}, {"threshold", int(HugePages::threshold)},
                                   {"always", int(HugePages::always)}, {"1", int(HugePages::always)},
                                   {nullptr, 0}};
constexpr Word kClassWords[] = {{"fine", int(ClassSpacing::fine)}, {"coarse", int(ClassSpacing::coarse)},
                                {nullptr, 0}};
constexpr Word kBlockAllocWords[] = {{"bump", int(BlockAlloc::bump)}, {"lifo", int(BlockAlloc::lifo)},
                                     {nullptr, 0}};
constexpr Word kOrderWords[] = {{"recent", int(ReuseOrder::recent)}, {"fifo", int(ReuseOrder::fifo)},
                                {"auto", int(ReuseOrder::automatic)}, {nullptr, 0}};
constexpr Word kOnOffWords[] = {{"off", 0}, {"0", 0}, {"on", 1}, {"1", 1}, {nullptr, 0}};
constexpr Word kBlockPageWords[] = {{"1", 1}, {"2", 2}, {"4", 4}, {"8", 8}, {"16", 16}, {nullptr, 0}};
constexpr Word kPageMaxWords[] = {{"1024", 1024}, {"2048", 2048}, {"4096", 4096}, {"8192", 8192},
                                  {"1k", 1024},   {"2k", 2048},   {"4k", 4096},   {"8k", 8192},
                                  {nullptr, 0}};
const Word *words_of(const char *name) noexcept {
  if (equals(name, "VAM_DISCARD")) return kDiscardWords;
  if (equals(name, "VAM_HUGEPAGES")) return kHugePageWords;
  if (equals(name, "VAM_CLASSES")) return kClassWords;
  if (equals(name, "VAM_BLOCK_ALLOC")) return kBlockAllocWords;
  if (equals(name, "VAM_ORDER")) return kOrderWords;
  if (equals(name, "VAM_HEADERS") || equals(name, "VAM_LARGE_QUICK")) return kOnOffWords;
  if (equals(name, "VAM_BLOCK_PAGES")) return kBlockPageWords;
  if (equals(name, "VAM_PAGE_MAX")) return kPageMaxWords;
  return nullptr;
}

// Set `field` from `value`; false (field unchanged) if the value is malformed.
bool set(const char *name, const char *value, std::int64_t &field) noexcept {
  if (const Word *w = words_of(name)) {
    for (; w->word; ++w) {
      if (equals(value, w->word)) {
        field = w->value;
        return true;
      }
    }
    return false;
  }
  std::int64_t v;
  if (!parse_number(value, v)) return false;
  field = v;
  return true;
}

// "vam: VAM_X=value ignored: expected UNIT; using DEFAULT" — once per
// malformed option, naming what is accepted (as mimalloc and jemalloc warn).
void warn_value(const char *name, const char *value, const char *unit, std::int64_t kept) noexcept {
  Line l;
  l.str("vam: ").str(name).str("=").str(value).str(" ignored: expected ").str(unit);
  if (!words_of(name)) l.str(" (a decimal number, optional k/m/g suffix)");
  l.str("; using ");
  if (const Word *w = words_of(name)) {
    const Word *first = w;
    for (; w->word; ++w)
      if (w->value == kept && (w->word[0] < '0' || w->word[0] > '9')) break;
    if (!w->word)  // an option whose words are all numbers (VAM_BLOCK_PAGES, VAM_PAGE_MAX)
      for (w = first; w->word && w->value != kept; ++w) {}
    l.str(w->word ? w->word : "?");
  } else {
    l.num(kept);
  }
  l.emit();
}

void warn_unknown(const char *entry) noexcept {
  Line l;
  l.str("vam: unknown option ");
  for (const char *e = entry; *e && *e != '=' && l.n < 200; ++e) l.buf[l.n++] = *e;
  l.str(" ignored; known:");
#define VAM_OPTION_NAME(name, field, def, unit) l.str(" ").str(name);
  VAM_OPTIONS(VAM_OPTION_NAME)
#undef VAM_OPTION_NAME
  l.emit();
}

// A value outside its range is clamped, and said so.
void clamp(const char *name, std::int64_t &field, std::int64_t lo, std::int64_t hi) noexcept {
  const std::int64_t was = field;
  if (field < lo) field = lo;
  if (field > hi) field = hi;
  if (field != was) {
    Line l;
    l.str("vam: ").str(name).str("=").num(was).str(" out of range [").num(lo).str(", ").num(hi)
        .str("]; using ").num(field);
    l.emit();
  }
}

// VAM_STATS is 0, 1, or the file the report goes to: any value that is not a
// number is taken as a path (a number is read as the other options are).
bool read_stats_option(const char *entry, Options &o) noexcept {
  const char *v = match(entry, "VAM_STATS");
  if (v == nullptr) return false;
  std::int64_t n;
  if (*v == '\0') {
    warn_value("VAM_STATS", v, "0 | 1 | a file", o.stats);
  } else if (parse_number(v, n)) {
    o.stats = n;
    o.stats_file = nullptr;
  } else {
    o.stats = 1;
    o.stats_file = v;
  }
  return true;
}

}  // namespace

// Called once with the environment in place (startup.cpp), so each warning is
// written once per process.
bool read_options() noexcept {
  Options &o = options();
  char **env = environ;
  if (env != nullptr) {
    for (; *env != nullptr; ++env) {
      const char *e = *env;
      if (e[0] != 'V' || e[1] != 'A' || e[2] != 'M' || e[3] != '_') continue;
      if (read_stats_option(e, o)) continue;
#define VAM_OPTION_READ(name, field, def, unit)                              \
      if (const char *v = match(e, name)) {                                  \
        if (!set(name, v, o.field)) warn_value(name, v, unit, o.field);      \
        continue;                                                            \
      }
      VAM_OPTIONS(VAM_OPTION_READ)
#undef VAM_OPTION_READ
      warn_unknown(e);
    }
  }
  constexpr std::int64_t kMax = INT64_MAX;
  clamp("VAM_LARGE_MAX", o.large_max, 1024, 1 << 20);
  clamp("VAM_DISCARD_THRESHOLD", o.discard_threshold, 1, kMax);
  clamp("VAM_DISCARD_THRESHOLD_ALONE", o.discard_threshold_alone, 1, kMax);
  clamp("VAM_DISCARD_DELAY_MS", o.discard_delay_ms, 0, kMax);
  clamp("VAM_HUGE_CACHE", o.huge_cache, 0, kMax);
  clamp("VAM_HUGEPAGE_MIN", o.hugepage_min, 0, kMax);
  clamp("VAM_STATS", o.stats, 0, 1);
  clamp("VAM_SECURE", o.secure, 0, 1);
#if !defined(VAM_SECURE)
  static bool said_secure = false;
  if (o.secure && !said_secure) {
    said_secure = true;
    Line l;
    l.str("vam: VAM_SECURE=1 ignored: this library has no secure mode; preload libvam-secure.so "
          "(the vam command does: vam --secure)");
    l.emit();
  }
#endif
  clamp("VAM_BLOCK_OBJECTS", o.block_objects, 1, 512);
  return env != nullptr;
}

}  // namespace alloclab::vam
