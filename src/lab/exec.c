/* exec.c — alloclab-exec, the lab's measuring launcher.
 *
 *   alloclab-exec [--preload "LIB LIB..."] [--memory] RESULT_FILE -- CMD ARGS...
 *
 * Forks, runs CMD (with LD_PRELOAD set to the given libraries, in front of
 * any LD_PRELOAD already present), reaps it with wait4 and writes one line
 * to RESULT_FILE:
 *
 *   exit_code signal wall_ns user_us sys_us maxrss_kb
 *
 * (exit_code -1 when CMD died by `signal`; signal 0 when it exited).
 *
 * With --memory, three more fields follow: the program's Private_Dirty,
 * LazyFree and AnonHugePages in KiB, read from /proc/PID/smaps_rollup at the
 * moment its main thread exits (the last instant its memory still exists):
 * what the process holds at the end, as the kernel counts it. LazyFree is
 * memory given back with MADV_FREE that still counts in RSS until the kernel
 * needs it. The launcher stops the program there with ptrace
 * (PTRACE_O_TRACEEXIT); the time spent reading is not counted in wall_ns.
 * Where ptrace or smaps_rollup is not available, the three fields are -1.
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
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int usage(void) {
  fputs("usage: alloclab-exec [--preload \"LIB...\"] [--memory] RESULT_FILE -- CMD ARGS...\n", stderr);
  return 125;
}

/* The program's memory at its end (KiB), -1 where it could not be read. */
struct memory {
  long long private_dirty_kb, lazyfree_kb, anon_huge_kb;
};

static void read_rollup(pid_t pid, struct memory *m) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return;
  long long v;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "Private_Dirty: %lld kB", &v) == 1) m->private_dirty_kb = v;
    else if (sscanf(line, "LazyFree: %lld kB", &v) == 1) m->lazyfree_kb = v;
    else if (sscanf(line, "AnonHugePages: %lld kB", &v) == 1) m->anon_huge_kb = v;
  }
  fclose(f);
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Waits for the traced program to end, passing its signals on and reading its
 * memory when its main thread stops at exit. Returns the time spent reading. */
static long long wait_traced(pid_t pid, int *status, struct rusage *ru, struct memory *m) {
  long long reading = 0;
  for (;;) {
    pid_t r = wait4(pid, status, 0, ru);
    if (r < 0) {
      if (errno == EINTR) continue;
      perror("alloclab-exec: wait4");
      exit(125);
    }
    if (!WIFSTOPPED(*status)) return reading;
    int sig = WSTOPSIG(*status), event = (*status >> 16) & 0xff;
    if (event == PTRACE_EVENT_EXIT) {
      long long t = now_ns();
      read_rollup(pid, m);
      reading += now_ns() - t;
      ptrace(PTRACE_CONT, pid, 0, 0);
    } else if (event == PTRACE_EVENT_STOP) {  /* a group stop: stay stopped, as untraced */
      if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
        ptrace(PTRACE_LISTEN, pid, 0, 0);
      else
        ptrace(PTRACE_CONT, pid, 0, 0);
    } else {  /* a signal on its way to the program: deliver it */
      ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig);
    }
  }
}

int main(int argc, char **argv) {
  const char *preload = NULL;
  int memory = 0;
  int i = 1;
  for (;;) {
    if (i + 1 < argc && strcmp(argv[i], "--preload") == 0) {
      preload = argv[i + 1];
      i += 2;
    } else if (i < argc && strcmp(argv[i], "--memory") == 0) {
      memory = 1;
      i += 1;
    } else {
      break;
    }
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
    if (memory) raise(SIGSTOP);  /* wait until the launcher traces us */
    execvp(cmd[0], cmd);
    fprintf(stderr, "alloclab-exec: cannot run %s: %s\n", cmd[0], strerror(errno));
    _exit(127);
  }
  /* The launcher's own environment must not carry the preload any further. */
  int status = 0;
  struct rusage ru;
  struct memory mem = {-1, -1, -1};
  long long reading_ns = 0;
  int traced = 0;
  if (memory) {
    while (waitpid(pid, &status, WUNTRACED) < 0 && errno == EINTR) {}
    traced = WIFSTOPPED(status) &&
             ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)) == 0;
    kill(pid, SIGCONT);
  }
  if (traced) {
    reading_ns = wait_traced(pid, &status, &ru, &mem);
  } else {
    for (;;) {
      pid_t r = wait4(pid, &status, 0, &ru);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) { perror("alloclab-exec: wait4"); return 125; }
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long long wall_ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)
                      - reading_ns;
  long long user_us = (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec;
  long long sys_us = (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;

  FILE *f = fopen(result, "w");
  if (!f) { perror("alloclab-exec: result file"); return 125; }
  fprintf(f, "%d %d %lld %lld %lld %ld", code, sig, wall_ns, user_us, sys_us, ru.ru_maxrss);
  if (memory) fprintf(f, " %lld %lld %lld", mem.private_dirty_kb, mem.lazyfree_kb, mem.anon_huge_kb);
  fputc('\n', f);
  if (fclose(f) != 0) return 125;
  return 0;
}
