// misuse_fuzz.cpp — random programs that each commit one misuse, and what
// the allocator made of it. misuse_test.cpp holds the misuse paths found so
// far, one test each; this program looks for the ones not found yet.
//
// A trial, in a forked child, runs a random program of mallocs, frees and
// reallocs (and memaligns, with --aligned) over a table of live objects
// (sizes from one size range or all),
// commits one misuse chosen at random, and goes on with its program. Every
// pointer the allocator returns is checked against the table: it must not
// overlap a live object, and it must be aligned and hold the size asked. A
// trial ends in one of:
//   caught   the allocator aborted (SIGABRT), naming the misuse;
//   passed   the program ran to its end with every check passing (a write
//            into a freed object or past an object that the allocator does
//            not look at, say, harms only the program's own data);
//   moot     as passed, but the misuse turned out a correct call: a second
//            free of an address handed out again in between, a computed
//            address that started a live object;
//   unmapped the misuse's own write faulted: the memory it wrote to was not
//            mapped (a freed huge object, past a mapping's end);
//   fault    SIGSEGV or SIGBUS anywhere else: the allocator's own crash on
//            its corrupted state;
//   FAILED   the allocator returned a pointer overlapping a live object,
//            misaligned, or too small: silent corruption, what no misuse
//            may turn into.
// The exit status is non-zero if any trial FAILED, or, with --no-faults,
// if any ended in a fault for a misuse that writes nothing (a double or
// invalid free, a realloc of a freed object): those must abort.
//
// Built twice: against vam's prefixed API (vam_misuse_fuzz, linked with
// libvam.a) and against the C library's names (vam_misuse_fuzz_plain), to
// run under LD_PRELOAD of libvam.so, libvam-secure.so or any allocator.
// The program allocates nothing of its own while a trial runs: its tables
// are static, so a misuse reaches the allocator's memory alone.
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_run.hpp"

#if defined(FUZZ_PREFIXED)
#include "alloclab/vam.h"
#endif

namespace {

// Through volatile pointers: the compiler must not pair a malloc with its
// free, nor reason about a freed pointer's use.
#if defined(FUZZ_PREFIXED)
void *(*volatile f_malloc)(size_t) = vam_malloc;
void (*volatile f_free)(void *) = vam_free;
void *(*volatile f_realloc)(void *, size_t) = vam_realloc;
size_t (*volatile f_usable)(const void *) = vam_usable_size;
void *(*volatile f_memalign)(size_t, size_t) = vam_memalign;
void (*f_collect)() = vam_collect;
#else
void *(*volatile f_malloc)(size_t) = malloc;
void (*volatile f_free)(void *) = free;
void *(*volatile f_realloc)(void *, size_t) = realloc;
size_t (*volatile f_usable)(void *) = malloc_usable_size;
void *(*volatile f_memalign)(size_t, size_t) = memalign;
// vam's collection, when the allocator preloaded is vam (else null).
void (*f_collect)() = nullptr;
#endif

// Exit codes of a trial that was not stopped by a signal.
constexpr int kPassed = 0;
constexpr int kOverlap = 3;     // a pointer overlapping a live object
constexpr int kBadPointer = 4;  // misaligned, or holding less than asked
constexpr int kNoMemory = 5;    // a malloc of a few MiB failed
constexpr int kWriteFault = 6;  // the misuse's own write faulted (memory the allocator unmapped)
constexpr int kMoot = 7;        // the misuse turned into a correct call (below)

enum Misuse : unsigned {
  kDoubleFree,          // free(p) twice, other calls between
  kInteriorFree,        // free(p + 8k) of a live p
  kForeignFree,         // free of an address in the program's static data
  kReallocFreed,        // realloc(p, n) after free(p)
  kDoubleFreeThreads,   // free(p) by another thread, then by this one
  kDoubleFreeThreads2,  // free(p) by this thread, then by another
  kForeignReallocFreed, // free(p) by this thread, then realloc(p, n) by another
  kForeignInteriorFree, // free(p + 8k) of a live p by another thread
  kMisalignedFree,      // free(p + 1..15) of a live p, by this thread or another
  kHeaderFree,          // free of an address near the start of p's 4 MiB (a segment's header in vam)
  kWriteAfterFree,      // 1-16 random bytes into a freed object's first 32
  kOverflow,            // 1-8 random bytes past malloc_usable_size(p)
  kUnderflow,           // 1-8 random bytes before p
  kMisuses
};
const char *const kMisuseNames[kMisuses] = {"double-free",         "interior-free", "foreign-free",
                                            "realloc-freed",       "double-free-threads",
                                            "double-free-threads2", "foreign-realloc-freed",
                                            "foreign-interior-free", "misaligned-free",
                                            "header-free",         "write-after-free",
                                            "overflow",            "underflow"};
// Misuses that write nothing: a fault there is the allocator's own.
bool writes_nothing(unsigned m) { return m < kWriteAfterFree; }

// The sizes a trial draws from: one range, or each draw from any.
// kFew: four sizes below 1 KiB, drawn per trial, so that many objects share
// a size class and its blocks fill (where frees take other paths).
enum Range : unsigned { kSmall, kMedium, kLarge, kHuge, kMixed, kFew, kRanges };
const char *const kRangeNames[kRanges] = {"small", "medium", "large", "huge", "mixed", "few"};

struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

struct Obj {
  char *p;
  size_t n;
};

constexpr unsigned kMaxLive = 1024;
Obj g_live[kMaxLive];
unsigned g_nlive;
alignas(64) char g_static[8192];  // kForeignFree's addresses

struct Trial {
  Rng rng;
  Range range;
  size_t few[4];  // kFew's sizes
  unsigned misuse;
  unsigned live_target;
  unsigned warmup;
  unsigned after;
};

size_t draw_size(Rng &rng, Range range, const size_t *few) {
  if (range == kFew) return few[rng.below(4)];
  if (range == kMixed) range = static_cast<Range>(rng.below(kHuge + 1));
  switch (range) {
    case kSmall: return rng.below(8) == 0 ? 0 : 1 + rng.below(512);
    case kMedium: return 513 + rng.below(16 * 1024 - 512);
    case kLarge: return 16 * 1024 + rng.below(512 * 1024 - 16 * 1024);
    default: return 512 * 1024 + rng.below(4 * 1024 * 1024 - 512 * 1024);
  }
}

[[noreturn]] void fail(int code, const char *what, const void *r, size_t n, const Obj *other) {
  if (other)
    fprintf(stderr, "misuse_fuzz: %s: %p (%zu bytes) overlaps the live object %p (%zu bytes)\n", what, r, n,
            static_cast<void *>(other->p), other->n);
  else
    fprintf(stderr, "misuse_fuzz: %s: %p (%zu bytes)\n", what, r, n);
  _exit(code);
}

// --aligned: a quarter of the mallocs are memaligns, of 32 B to 4 KiB.
bool g_aligned;

// A pointer the allocator returned for n bytes (at `align`, when larger
// than malloc's): checked, touched, recorded.
void take(char *r, size_t n, const char *what, size_t align = 0) {
  if (r == nullptr) {
    if (n > (size_t{64} << 20)) return;
    fail(kNoMemory, what, r, n, nullptr);
  }
  if (align <= 16) align = n <= 8 ? 8 : 16;
  if (reinterpret_cast<uintptr_t>(r) % align != 0) fail(kBadPointer, "misaligned", r, n, nullptr);
  if (r >= g_static && r < g_static + sizeof g_static) fail(kOverlap, "a static address handed out", r, n, nullptr);
  const size_t extent = n ? n : 1;
  for (unsigned i = 0; i < g_nlive; ++i) {
    const Obj &o = g_live[i];
    const size_t oe = o.n ? o.n : 1;
    if (r < o.p + oe && o.p < r + extent) fail(kOverlap, what, r, n, &o);
  }
  if (f_usable(r) < n) fail(kBadPointer, "usable size below the size asked", r, n, nullptr);
  // Its first and last bytes written, as a program would.
  memset(r, 0x5c, n < 256 ? n : 256);
  if (n > 256) memset(r + n - 64, 0x5d, 64);
  if (g_nlive < kMaxLive) g_live[g_nlive++] = {r, n};
  else f_free(r);
}

// Take entry i out of the table (the program is about to free it).
char *untake(unsigned i) {
  char *p = g_live[i].p;
  g_live[i] = g_live[--g_nlive];
  return p;
}
// The program frees p by hand (a misuse): whatever entry holds p leaves.
bool forget(const void *p) {
  for (unsigned i = 0; i < g_nlive; ++i)
    if (g_live[i].p == p) {
      untake(i);
      return true;
    }
  return false;
}
// Set when the misuse turned out a correct call: the address freed again
// had been handed out again meanwhile, or the address computed started a
// live object. No allocator can tell such a call from a correct one.
bool g_moot;
bool g_verbose;  // --seed: say what the misuse did

void step(Trial &t) {
  const uint64_t dice = t.rng.below(100);
  if (g_nlive == 0 || (g_nlive < t.live_target && dice < 50)) {
    const size_t n = draw_size(t.rng, t.range, t.few);
    if (g_aligned && t.rng.below(4) == 0) {
      const size_t a = size_t{32} << t.rng.below(8);
      take(static_cast<char *>(f_memalign(a, n)), n, "memalign", a);
    } else {
      take(static_cast<char *>(f_malloc(n)), n, "malloc");
    }
  } else if (dice < 85) {
    f_free(untake(static_cast<unsigned>(t.rng.below(g_nlive))));
  } else {
    const unsigned i = static_cast<unsigned>(t.rng.below(g_nlive));
    const size_t n = draw_size(t.rng, t.range, t.few) | 1;  // never 0: realloc(p, 0) frees
    char *p = untake(i);
    char *r = static_cast<char *>(f_realloc(p, n));
    if (r == nullptr) {
      fail(kNoMemory, "realloc", p, n, nullptr);
    }
    take(r, n, "realloc");
  }
}

// Another thread's free or realloc of p. The thread is made first, and
// waits: made after the program's own free of p, its start-up could take p
// for itself (glibc's thread start allocates), and the misuse would be a
// correct free of the thread's object.
struct Other {
  volatile int go;
  void *p;
  size_t n;  // 0: a free; else a realloc to n bytes
  void *r;
};
void *other_main(void *a) {
  auto *o = static_cast<Other *>(a);
  while (!__atomic_load_n(&o->go, __ATOMIC_ACQUIRE)) {
  }
  if (o->n) o->r = f_realloc(o->p, o->n);
  else f_free(o->p);
  return nullptr;
}
pthread_t start_other(Other &o) {
  pthread_t th;
  if (pthread_create(&th, nullptr, other_main, &o) != 0) _exit(kNoMemory);
  return th;
}
void *finish_other(pthread_t th, Other &o) {
  __atomic_store_n(&o.go, 1, __ATOMIC_RELEASE);
  pthread_join(th, nullptr);
  return o.r;
}
void free_by_another_thread(void *p) {
  Other o{0, p, 0, nullptr};
  finish_other(start_other(o), o);
}
void release(void *p, bool by_another) {
  if (g_verbose) fprintf(stderr, "misuse_fuzz: free(%p) by %s\n", p, by_another ? "another thread" : "this thread");
  if (forget(p)) g_moot = true;
  if (by_another) free_by_another_thread(p);
  else f_free(p);
}

// Set while the misuse writes: a fault then is the write's own, at an
// address no longer mapped (a freed huge object, past a mapping's end),
// not the allocator's.
volatile sig_atomic_t g_writing;
void on_fault(int sig) {
  if (g_writing) _exit(kWriteFault);
  signal(sig, SIG_DFL);
  raise(sig);
}

void random_bytes(Rng &rng, char *at, size_t k) {
  char bytes[16];
  for (size_t i = 0; i < k; ++i) bytes[i] = static_cast<char>(rng.next());
  g_writing = 1;
  for (size_t i = 0; i < k; ++i) static_cast<volatile char *>(at)[i] = bytes[i];
  g_writing = 0;
}

// The size a misused realloc asks: as often as not the object's own (or
// near it), which an allocator may serve in place.
size_t realloc_size(Trial &t, size_t n) {
  if (t.rng.below(2)) return draw_size(t.rng, t.range, t.few) | 1;
  return n > 1 ? n - t.rng.below(n / 4 + 1) : 1;
}

void commit(Trial &t) {
  // The victim: a live object (one is made if there is none); for a free
  // inside it, one of 16 bytes or more.
  const bool inside = t.misuse == kInteriorFree || t.misuse == kForeignInteriorFree;
  unsigned i = g_nlive;
  for (int tries = 0; g_nlive != 0 && tries < 16 && i == g_nlive; ++tries) {
    i = static_cast<unsigned>(t.rng.below(g_nlive));
    if (inside && f_usable(g_live[i].p) < 16) i = g_nlive;
  }
  if (i == g_nlive) {
    take(static_cast<char *>(f_malloc(64)), 64, "malloc");
    i = g_nlive - 1;
  }
  const size_t n = g_live[i].n;
  char *p = g_live[i].p;
  const size_t usable = f_usable(p);
  if (g_verbose) fprintf(stderr, "misuse_fuzz: victim %p, %zu bytes asked, %zu usable\n", static_cast<void *>(p), n, usable);
  switch (t.misuse) {
    case kDoubleFree: {
      f_free(untake(i));
      for (uint64_t k = t.rng.below(4); k > 0; --k) step(t);
      if (forget(p)) g_moot = true;  // handed out again meanwhile: the second free is of that object
      f_free(p);
      break;
    }
    case kInteriorFree: {
      const size_t off = t.rng.below(2) ? 8 * (1 + t.rng.below(usable / 8 - 1 < 8 ? usable / 8 - 1 : 8))
                                        : (usable / 2) & ~size_t{7};
      if (off == 0) return;
      f_free(p + off);
      break;
    }
    case kForeignFree:
      f_free(g_static + 64 + 16 * t.rng.below(64));
      break;
    case kReallocFreed: {
      f_free(untake(i));
      const size_t m = realloc_size(t, n);
      char *r = static_cast<char *>(f_realloc(p, m));
      take(r, m, "realloc of a freed object");
      break;
    }
    case kDoubleFreeThreads:
      untake(i);
      free_by_another_thread(p);
      f_free(p);
      break;
    case kDoubleFreeThreads2: {
      Other o{0, p, 0, nullptr};
      const pthread_t th = start_other(o);
      f_free(untake(i));
      finish_other(th, o);
      break;
    }
    case kForeignReallocFreed: {
      const size_t m = realloc_size(t, n);
      Other o{0, p, m, nullptr};
      const pthread_t th = start_other(o);
      f_free(untake(i));
      take(static_cast<char *>(finish_other(th, o)), m, "realloc of a freed object by another thread");
      break;
    }
    case kForeignInteriorFree: {
      free_by_another_thread(p + 8 * (1 + t.rng.below(usable / 8 - 1 < 8 ? usable / 8 - 1 : 8)));
      break;
    }
    case kMisalignedFree:
      release(p + 1 + t.rng.below(15), t.rng.below(2) != 0);
      break;
    case kHeaderFree: {
      const uintptr_t base = reinterpret_cast<uintptr_t>(p) & ~((uintptr_t{1} << 22) - 1);
      const uintptr_t off = t.rng.below(2) ? 16 * t.rng.below(32) : 16 * t.rng.below(16 * 1024);
      release(reinterpret_cast<void *>(base + off), t.rng.below(2) != 0);
      break;
    }
    case kWriteAfterFree: {
      f_free(untake(i));
      const size_t room = usable < 32 ? usable : 32;
      if (room == 0) return;
      const size_t k = 1 + t.rng.below(room < 16 ? room : 16);
      random_bytes(t.rng, p + t.rng.below(room - k + 1), k);
      break;
    }
    case kOverflow:
      random_bytes(t.rng, p + usable, 1 + t.rng.below(8));
      break;
    case kUnderflow: {
      const size_t k = 1 + t.rng.below(8);
      random_bytes(t.rng, p - k, k);
      break;
    }
    default: break;
  }
  (void)n;
}

Trial make_trial(uint64_t seed) {
  Trial t{};
  t.rng.s = seed * 0x2545f4914f6cdd1dull + 1;
  t.range = static_cast<Range>(t.rng.below(kRanges));
  t.misuse = static_cast<unsigned>(t.rng.below(kMisuses));
  for (size_t &f : t.few) f = 1 + t.rng.below(1024);
  t.live_target = 4 + static_cast<unsigned>(t.rng.below(t.range == kHuge ? 24 : t.range == kFew ? 1000 : 400));
  t.warmup = static_cast<unsigned>(t.rng.below(600));
  t.after = 50 + static_cast<unsigned>(t.rng.below(600));
  return t;
}

int run_trial(uint64_t seed) {
  signal(SIGSEGV, on_fault);
  signal(SIGBUS, on_fault);
  Trial t = make_trial(seed);
  g_nlive = 0;
  for (unsigned k = 0; k < t.warmup; ++k) step(t);
  commit(t);
  for (unsigned k = 0; k < t.after; ++k) step(t);
  // Frees other threads made into this thread's heap wait until it next
  // takes them in; a collection takes them now, with their checks.
  if (f_collect) f_collect();
  while (g_nlive > 0) f_free(untake(g_nlive - 1));
  return g_moot ? kMoot : kPassed;
}

enum Outcome : unsigned { kCaught, kPassedOutcome, kMootOutcome, kUnmapped, kFault, kFailed, kOther, kOutcomes };
const char *const kOutcomeNames[kOutcomes] = {"caught", "passed", "moot", "unmapped", "fault", "FAILED", "other"};

Outcome classify(const vam_test::Outcome &o) {
  if (o.signal() != 0)
    return o.signal() == SIGABRT ? kCaught : (o.signal() == SIGSEGV || o.signal() == SIGBUS) ? kFault : kOther;
  const int code = o.code();
  return code == kPassed                            ? kPassedOutcome
         : code == kMoot                            ? kMootOutcome
         : code == kWriteFault                      ? kUnmapped
         : (code == kOverlap || code == kBadPointer) ? kFailed
                                                    : kOther;
}

vam_test::Outcome trial_in_child(uint64_t seed) {
  return vam_test::in_child([seed] {
    alarm(5);  // a trial takes milliseconds: one that hangs ends as "other"
    return run_trial(seed);
  });
}

// The index of `name` among `names`, or -1 (with a message).
int find_name(const char *name, const char *const *names, unsigned n, const char *what) {
  for (unsigned i = 0; i < n; ++i)
    if (strcmp(name, names[i]) == 0) return static_cast<int>(i);
  fprintf(stderr, "misuse_fuzz: no %s named '%s'\n", what, name);
  return -1;
}

int usage() {
  fprintf(stderr,
          "usage: misuse_fuzz [--from SEED] [--trials N] [--no-faults] [--aligned] [--only MISUSE] [--list OUTCOME]\n"
          "       misuse_fuzz [--aligned] --seed SEED   (one trial in this process, for a debugger)\n");
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
#if !defined(FUZZ_PREFIXED)
  f_collect = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "vam_collect"));
#endif
  uint64_t from = 1, trials = 2000;
  bool no_faults = false;
  int only = -1, list = -1;
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    const char *val = a + 1 < argc ? argv[a + 1] : nullptr;
    char *end = nullptr;
    if (strcmp(arg, "--no-faults") == 0) {
      no_faults = true;
      continue;
    } else if (strcmp(arg, "--aligned") == 0) {
      g_aligned = true;
      continue;
    } else if (val && strcmp(arg, "--from") == 0) {
      from = strtoull(val, &end, 10);
      ++a;
    } else if (val && strcmp(arg, "--trials") == 0) {
      trials = strtoull(val, &end, 10);
      ++a;
    } else if (val && strcmp(arg, "--seed") == 0) {
      const uint64_t seed = strtoull(val, &end, 10);
      if (*end != '\0') return usage();
      const Trial t = make_trial(seed);
      fprintf(stderr, "misuse_fuzz: seed %llu: %s, %s sizes, %u live, %u calls before, %u after\n",
              static_cast<unsigned long long>(seed), kMisuseNames[t.misuse], kRangeNames[t.range], t.live_target,
              t.warmup, t.after);
      g_verbose = true;
      return run_trial(seed);
    } else if (val && strcmp(arg, "--list") == 0) {
      if ((list = find_name(val, kOutcomeNames, kOutcomes, "outcome")) < 0) return 2;
      ++a;
      continue;
    } else if (val && strcmp(arg, "--only") == 0) {
      if ((only = find_name(val, kMisuseNames, kMisuses, "misuse")) < 0) return 2;
      ++a;
      continue;
    } else {
      return usage();
    }
    if (end == nullptr || *end != '\0') return usage();
  }
  if (trials == 0) return usage();

  unsigned counts[kMisuses][kOutcomes] = {};
  unsigned failures = 0, bad_faults = 0, shown = 0;
  for (uint64_t seed = from; seed < from + trials; ++seed) {
    const Trial t = make_trial(seed);
    if (only >= 0 && t.misuse != static_cast<unsigned>(only)) continue;
    const vam_test::Outcome o = trial_in_child(seed);
    const Outcome outcome = classify(o);
    ++counts[t.misuse][outcome];
    const bool bad_fault = outcome == kFault && writes_nothing(t.misuse);
    if (outcome == kFailed || outcome == kOther || outcome == kFault || outcome == static_cast<Outcome>(list)) {
      if (outcome == kFailed) ++failures;
      if (bad_fault) ++bad_faults;
      if (shown++ < 20)
        printf("seed %llu (%s, %s sizes): %s, status 0x%x: %s%s", static_cast<unsigned long long>(seed),
               kMisuseNames[t.misuse], kRangeNames[t.range], kOutcomeNames[outcome], o.status, o.err.c_str(),
               !o.err.empty() && o.err.back() == '\n' ? "" : "\n");
    }
  }
  printf("%-22s", "misuse");
  for (unsigned o = 0; o < kOutcomes; ++o) printf(" %8s", kOutcomeNames[o]);
  printf("\n");
  for (unsigned m = 0; m < kMisuses; ++m) {
    printf("%-22s", kMisuseNames[m]);
    for (unsigned o = 0; o < kOutcomes; ++o) printf(" %8u", counts[m][o]);
    printf("\n");
  }
  printf("misuse_fuzz: %llu trials from seed %llu: %u FAILED, %u faults on a misuse that writes nothing\n",
         static_cast<unsigned long long>(trials), static_cast<unsigned long long>(from), failures, bad_faults);
  return failures != 0 || (no_faults && bad_faults != 0) ? 1 : 0;
}
