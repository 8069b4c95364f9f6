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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

  int err[2];
  if (pipe(err) != 0) return 1;
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    dup2(err[1], 2);
    close(err[0]);
    pthread_t th;
    if (pthread_create(&th, NULL, write_after_free, NULL) != 0) _exit(2);
    pthread_join(th, NULL);
    _exit(0);  // the thread's exit let the write pass
  }
  close(err[1]);
  char said[512] = {0};
  size_t got = 0;
  ssize_t r;
  while (got + 1 < sizeof said && (r = read(err[0], said + got, sizeof said - 1 - got)) > 0) got += (size_t)r;
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const int aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  printf("secure_threads: a write after free in a thread that then exits: %s (%s)\n",
         aborted ? "aborted" : "not caught", strstr(said, "write after free") ? "named" : "not named");
  if (!aborted || strstr(said, "write after free") == NULL) {
    fprintf(stderr, "secure_threads: FAIL: the thread's exit did not check its quarantine; it said: %s\n", said);
    ++failures;
  }

  if (failures == 0) puts("secure_threads: ok");
  return failures ? 1 : 0;
}
