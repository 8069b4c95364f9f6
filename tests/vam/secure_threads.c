// secure_threads.c — each thread's quarantine in libvam-secure.so, run under
// LD_PRELOAD of it (vam.secure.threads):
//   * a thread's exit checks and gives back every object waiting in its
//     quarantine: 400 threads, one after another, each freeing objects of
//     256 KiB, leave the process's resident memory where one thread's use
//     puts it (the objects of exited threads' quarantines would otherwise
//     stay: about 100 MiB);
//   * a write into an object its thread freed is found when that thread
//     exits, in a child process that must abort saying so.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secure_preloaded.h"

#define kThreads 400
#define kObjects 8
#define kBytes ((size_t)256 << 10)
#define kMaxResidentMiB 48  // one thread's objects (2 MiB), the rest of the process, and slack

static void *churn(void *arg) {
  (void)arg;
  void *p[kObjects];
  for (int i = 0; i < kObjects; ++i) {
    p[i] = malloc(kBytes);
    if (p[i] == NULL) return (void *)1;
    memset(p[i], 0x5a, kBytes);
  }
  for (int i = 0; i < kObjects; ++i) free(p[i]);
  return NULL;
}

static long resident_mib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE) / (1 << 20);
}

// Frees a small object, writes into it, and exits without another call.
static void *write_after_free(void *arg) {
  (void)arg;
  volatile char *p = malloc(32);  // volatile bytes: the write after free is not optimised away
  free((void *)p);
  p[0] = 'x';
  return NULL;
}

// In the child: the thread above, joined; the child then ends by _exit (no
// check at the process's exit), so only the thread's exit can catch the write.
static void write_after_free_in_a_thread(const void *arg) {
  (void)arg;
  pthread_t th;
  if (pthread_create(&th, NULL, write_after_free, NULL) != 0) _exit(2);
  pthread_join(th, NULL);
}

int main(void) {
  if (!secure_preloaded("secure_threads")) return 1;
  int failures = 0;

  for (int t = 0; t < kThreads; ++t) {
    pthread_t th;
    void *ret = NULL;
    if (pthread_create(&th, NULL, churn, NULL) != 0 || pthread_join(th, &ret) != 0 || ret != NULL) {
      fputs("secure_threads: FAIL: a churning thread could not run\n", stderr);
      return 1;
    }
  }
  const long mib = resident_mib();
  printf("secure_threads: %d threads freed %d objects of %zu bytes each: %ld MiB resident (at most %d)\n",
         kThreads, kObjects, kBytes, mib, kMaxResidentMiB);
  if (mib < 0 || mib > kMaxResidentMiB) {
    fputs("secure_threads: FAIL: the quarantines of exited threads kept their objects\n", stderr);
    ++failures;
  }

  char said[512];
  const int caught = child_aborts_saying(write_after_free_in_a_thread, NULL, 0, "write after free", said, sizeof said);
  printf("secure_threads: a write after free in a thread that then exits: %s\n", caught ? "aborted, named" : "not caught");
  if (!caught) {
    fprintf(stderr, "secure_threads: FAIL: the thread's exit did not check its quarantine; it said: %s\n", said);
    ++failures;
  }

  if (failures == 0) puts("secure_threads: ok");
  return failures ? 1 : 0;
}
