/* exec.c — alloclab-exec, the lab's measuring launcher.
 *
 *   alloclab-exec [--preload "LIB LIB..."] RESULT_FILE -- CMD ARGS...
 *
 * Forks, runs CMD (with LD_PRELOAD set to the given libraries, in front of
 * any LD_PRELOAD already present), reaps it with wait4 and writes one line
 * to RESULT_FILE:
 *
 *   exit_code signal wall_ns user_us sys_us maxrss_kb
 *
 * (exit_code -1 when CMD died by `signal`; signal 0 when it exited).
 *
 * Why a separate small program: Linux carries a process's peak RSS across
 * exec, so a program forked straight from the (large) Python interpreter
 * reports at least the interpreter's RSS as its ru_maxrss. Forked from this
 * small launcher, the child starts from a small footprint, and the launcher
 * itself is never littered or profiled.
 *
 * Exit status: 0 when the result was written, 125 on a usage or system
 * error, 127 when CMD could not be executed (reported by the child).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int usage(void) {
  fputs("usage: alloclab-exec [--preload \"LIB...\"] RESULT_FILE -- CMD ARGS...\n", stderr);
  return 125;
}

int main(int argc, char **argv) {
  const char *preload = NULL;
  int i = 1;
  if (i + 1 < argc && strcmp(argv[i], "--preload") == 0) {
    preload = argv[i + 1];
    i += 2;
  }
  if (i + 2 >= argc || strcmp(argv[i + 1], "--") != 0) return usage();
  const char *result = argv[i];
  char **cmd = argv + i + 2;

  if (preload && *preload) {
    const char *old = getenv("LD_PRELOAD");
    if (old && *old) {
      size_t n = strlen(preload) + strlen(old) + 2;
      char *both = malloc(n);
      if (!both) return 125;
      snprintf(both, n, "%s %s", preload, old);
      setenv("LD_PRELOAD", both, 1);
      free(both);
    } else {
      setenv("LD_PRELOAD", preload, 1);
    }
  }

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) { perror("alloclab-exec: fork"); return 125; }
  if (pid == 0) {
    execvp(cmd[0], cmd);
    fprintf(stderr, "alloclab-exec: cannot run %s: %s\n", cmd[0], strerror(errno));
    _exit(127);
  }
  /* The launcher's own environment must not carry the preload any further. */
  int status = 0;
  struct rusage ru;
  for (;;) {
    pid_t r = wait4(pid, &status, 0, &ru);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) { perror("alloclab-exec: wait4"); return 125; }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long long wall_ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
  long long user_us = (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec;
  long long sys_us = (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;

  FILE *f = fopen(result, "w");
  if (!f) { perror("alloclab-exec: result file"); return 125; }
  fprintf(f, "%d %d %lld %lld %lld %ld\n", code, sig, wall_ns, user_us, sys_us, ru.ru_maxrss);
  if (fclose(f) != 0) return 125;
  return 0;
}
