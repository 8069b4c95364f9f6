// child_run.hpp — run a function in a forked child and keep what it came to
// (its wait status and what it wrote to stderr): the misuse tests, whose
// children are expected to abort (misuse_test.cpp, misuse_fuzz.cpp).
#pragma once

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <string>

namespace vam_test {

struct Outcome {
  int status = 0;
  std::string err;
  bool aborted() const { return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT; }
  int signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// f in a forked child (this process's heap, as it stands), its stderr
// captured. The child ends with f's exit code.
template <class F>
Outcome in_child(F f) {
  int fds[2];
  if (pipe(fds) != 0) abort();
  fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) abort();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    _exit(f());
  }
  close(fds[1]);
  Outcome o;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) o.err.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  waitpid(pid, &o.status, 0);
  return o;
}

}  // namespace vam_test
