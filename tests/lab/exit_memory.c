/* exit_memory MODE — a program whose memory at exit is known, for
 * exec_memory.sh: it dirties 48 MiB of private anonymous memory, gives 16 MiB
 * of it back with MADV_FREE (still resident until the kernel needs it), then
 *   exit     exits with status 7 from main's thread;
 *   thread   leaves the memory to a second thread, and main calls exit(7);
 *   signal   raises SIGUSR1 first (its handler must run: the launcher passes
 *            signals on), then exits with 7;
 *   crash    dies by SIGSEGV. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1024 * 1024)
static volatile sig_atomic_t handled;
static char *volatile keep;

static void on_usr1(int s) { (void)s; handled = 1; }

static void dirty(void) {
  char *p = mmap(NULL, 48 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) _exit(2);
  madvise(p, 48 * MIB, MADV_NOHUGEPAGE);
  memset(p, 1, 48 * MIB);
  if (madvise(p + 32 * MIB, 16 * MIB, MADV_FREE) != 0) _exit(3);
  keep = p;
}

static void *hold(void *arg) {
  (void)arg;
  dirty();
  for (;;) pause();
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "exit";
  if (strcmp(mode, "thread") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, hold, NULL) != 0) return 2;
    while (!keep) usleep(1000);
    exit(7);
  }
  dirty();
  if (strcmp(mode, "signal") == 0) {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    if (!handled) return 4;
  } else if (strcmp(mode, "crash") == 0) {
    raise(SIGSEGV);
  }
  return 7;
}
