// secure_preloaded.h — for the C programs run under LD_PRELOAD of
// libvam-secure.so: whether it is the malloc in use (its malloc_usable_size
// is the size asked, where glibc's and libvam.so's round up), said on
// stderr under the program's name when it is not; and a misuse run in a
// child process, which must abort naming it.
#pragma once

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int secure_preloaded(const char *program) {
  void *probe = malloc(5);
  const size_t usable = malloc_usable_size(probe);
  free(probe);
  if (usable == 5) return 1;
  fprintf(stderr, "%s: libvam-secure.so is not preloaded (usable size of malloc(5) is %zu)\n", program, usable);
  return 0;
}

// Runs misuse(arg) in a child whose standard error is kept in said[0..cap),
// then ends the child with status 0: through exit() when exit_handlers is
// set (the library's checks at the process's exit run), else _exit(). True
// when the child died of SIGABRT and what it said holds `want`.
static inline int child_aborts_saying(void (*misuse)(const void *), const void *arg, int exit_handlers, const char *want,
                                      char *said, size_t cap) {
  int err[2];
  if (cap == 0 || pipe(err) != 0) exit(1);
  const pid_t pid = fork();
  if (pid < 0) exit(1);
  if (pid == 0) {
    dup2(err[1], 2);
    close(err[0]);
    misuse(arg);
    if (exit_handlers) exit(0);
    _exit(0);
  }
  close(err[1]);
  memset(said, 0, cap);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < cap && (r = read(err[0], said + got, cap - 1 - got)) > 0) got += (size_t)r;
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(said, want) != NULL;
}
