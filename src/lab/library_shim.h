/* library_shim.h — what the lab's shims over a library's entry points share
 * (liballoclab_apr.so over APR pools, liballoclab_gslice.so over GSlice):
 * the library's own definition of a symbol they replace, a death that says
 * why, and the one line each appends to its log at exit. Header-only: each
 * shim is one C file. */
#ifndef ALLOCLAB_LAB_LIBRARY_SHIM_H
#define ALLOCLAB_LAB_LIBRARY_SHIM_H

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void shim_die(const char *msg) {
  (void)!write(2, msg, strlen(msg));
  _exit(127);
}

/* The next definition of NAME after the shim's (the library's); MISSING is
 * printed, and the process ends, when the program has not loaded it. */
static inline void *shim_next(const char *name, const char *missing) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) shim_die(missing);
  return f;
}

/* Appends LINE (N bytes) to the file named by the environment variable
 * LOG_ENV, or to stderr when it is unset or empty. */
static inline void shim_log(const char *log_env, const char *line, int n) {
  const char *log = getenv(log_env);
  const int fd = log && *log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : 2;
  if (fd >= 0 && n > 0) (void)!write(fd, line, (size_t)n);
  if (fd > 2) close(fd);
}

#endif
