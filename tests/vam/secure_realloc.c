// secure_realloc.c — libvam-secure.so's realloc on a growing buffer, run under
// LD_PRELOAD of it (vam.secure.realloc-growth):
//   * a buffer grown one byte at a time to 4 MiB moves O(log n) times (at
//     most kMaxMoves), its bytes kept; before growing reallocs were given
//     headroom it moved at nearly every step once vam's object fitted it
//     (tens of thousands of moves, each a copy of all of it);
//   * the old object of a move goes through the quarantine as a free does:
//     it reads as zeroes, and a realloc of it aborts;
//   * the grown object's canaries sit right after its size, whether the
//     realloc moved it or kept it in place: a byte written past its end
//     aborts at free, at sizes of each kind of vam object (a small class,
//     a large chunk, a huge mapping).
// Each abort is expected in a child: the parent checks it died of SIGABRT.
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "secure_preloaded.h"

#define kTop ((size_t)4 << 20)
#define kMaxMoves 128  // about log(4 MiB) / log(1.25) = 68 with a quarter's headroom, and the small classes' steps

static int failures;

static void fail(const char *what) {
  fprintf(stderr, "secure_realloc: FAIL: %s\n", what);
  ++failures;
}

static unsigned char byte_at(size_t i) { return (unsigned char)(i * 131u + (i >> 11) + 1u); }

// Grows b (holding n bytes of byte_at) to m bytes, one byte a realloc; the
// number of moves is added to *moves, and the address of the last move's
// old object is left in *old_of_move (with its size in *old_n) when moves
// happen.
static unsigned char *grow(unsigned char *b, size_t n, size_t m, unsigned long *moves, unsigned char **old_of_move,
                           size_t *old_n) {
  for (; n < m; ++n) {
    unsigned char *r = realloc(b, n + 1);
    if (r == NULL) {
      fail("realloc returned null");
      exit(1);
    }
    if (b != NULL && r != b) {
      ++*moves;
      if (old_of_move) *old_of_move = b;
      if (old_n) *old_n = n;
    }
    r[n] = byte_at(n);
    b = r;
  }
  return b;
}

static int intact(const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (b[i] != byte_at(i)) return 0;
  return 1;
}

// Runs fn(arg) in a child; true when it died of SIGABRT.
static int aborts(void (*fn)(size_t), size_t arg) {
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(1);
  }
  if (pid == 0) {
    // The abort's message is expected: keep it out of the test's log.
    if (freopen("/dev/null", "w", stderr) == NULL) _exit(3);
    fn(arg);
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 0;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) return 1;
  if (WIFSIGNALED(status)) fprintf(stderr, "secure_realloc: the child died of signal %d\n", WTERMSIG(status));
  else fprintf(stderr, "secure_realloc: the child exited %d\n", WEXITSTATUS(status));
  return 0;
}

// A store the compiler keeps (one into an object freed right after is dropped).
static void poke(unsigned char *at, unsigned char v) { *(volatile unsigned char *)at = v; }

// Grows a buffer to `size` bytes until a realloc moves it, then writes one
// byte past its end (the move's new object): free must abort.
static void overflow_after_move(size_t size) {
  unsigned long moves = 0;
  unsigned char *b = grow(NULL, 0, size, &moves, NULL, NULL);
  size_t n = size;
  for (unsigned long before = moves; moves == before; ++n) b = grow(b, n, n + 1, &moves, NULL, NULL);
  poke(b + n, (unsigned char)~byte_at(n));  // past the end
  free(b);
}

// Grows a buffer to `size` bytes, then by one byte that the headroom keeps in
// place (the same address, checked), and writes one byte past the new end:
// free must abort. The byte past the old end is the program's now.
static void overflow_after_in_place(size_t size) {
  unsigned long moves = 0;
  unsigned char *b = grow(NULL, 0, size, &moves, NULL, NULL);
  size_t n = size;
  for (;;) {  // until a realloc of one byte more stays in place
    unsigned char *r = realloc(b, n + 1);
    if (r == NULL) _exit(3);
    r[n] = byte_at(n);
    ++n;
    if (r == b) {
      b = r;
      break;
    }
    b = r;
  }
  poke(b + n, (unsigned char)~byte_at(n));
  free(b);
}

// A realloc of the old object a move left behind (it waits in the quarantine).
static void realloc_old_object(size_t size) {
  unsigned long moves = 0;
  unsigned char *old = NULL;
  size_t old_n = 0;
  unsigned char *b = grow(NULL, 0, size, &moves, &old, &old_n);
  size_t n = size;
  for (unsigned long before = moves; moves == before; ++n) b = grow(b, n, n + 1, &moves, &old, &old_n);
  void *volatile r = realloc(old, old_n + 1);  // must abort
  (void)r;
  free(b);
}

int main(void) {
  if (!secure_preloaded("secure_realloc")) return 1;

  // Growth one byte at a time: few moves, every byte kept, each move's old
  // object zeroed while it waits.
  unsigned long moves = 0;
  unsigned char *old = NULL;
  size_t old_n = 0, checked_old = 0;
  unsigned char *b = NULL;
  size_t n = 0;
  while (n < kTop) {
    const unsigned long before = moves;
    b = grow(b, n, n + 1, &moves, &old, &old_n);
    ++n;
    if (moves != before && old_n >= 16 && old_n + 64 <= ((size_t)1 << 20)) {  // 64: its guards
      // The old object, just freed, waits in the quarantine (the newest
      // never leaves before the next free): its bytes read as zeroes.
      volatile unsigned char *o = old;
      if (o[0] != 0 || o[old_n / 2] != 0 || o[old_n - 1] != 0) fail("the old object of a move is not zeroed");
      ++checked_old;
    }
  }
  printf("secure_realloc: grown to %zu bytes one byte at a time: %lu moves (at most %d allowed)\n", n, moves,
         kMaxMoves);
  if (moves > kMaxMoves) fail("a growing buffer moves too often (a copy of all of it at each move: quadratic)");
  if (!intact(b, n)) fail("the grown buffer's bytes changed");
  if (malloc_usable_size(b) != n) fail("malloc_usable_size of the grown buffer is not its size");
  if (checked_old == 0) fail("no move's old object was looked at");
  free(b);

  // Sizes in a small class, a large chunk and a huge mapping (vam's classes
  // end at a few KiB, its large objects at VAM_LARGE_MAX).
  static const size_t sizes[] = {100, 3000, 40000, 300000, (size_t)3 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    char what[160];
    if (!aborts(overflow_after_move, sizes[i])) {
      snprintf(what, sizeof what, "an overflow of a buffer grown past %zu bytes by a move is not caught", sizes[i]);
      fail(what);
    }
    if (!aborts(overflow_after_in_place, sizes[i])) {
      snprintf(what, sizeof what, "an overflow of a buffer grown past %zu bytes in place is not caught", sizes[i]);
      fail(what);
    }
    if (sizes[i] <= ((size_t)1 << 20) && !aborts(realloc_old_object, sizes[i])) {
      snprintf(what, sizeof what, "a realloc of a moved buffer's old object (%zu bytes) does not abort", sizes[i]);
      fail(what);
    }
  }
  if (failures) return 1;
  puts("secure_realloc: ok");
  return 0;
}
