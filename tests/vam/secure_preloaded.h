// secure_preloaded.h — for the C programs run under LD_PRELOAD of
// libvam-secure.so: whether it is the malloc in use (its malloc_usable_size
// is the size asked, where glibc's and libvam.so's round up), said on
// stderr under the program's name when it is not.
#pragma once

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

static int secure_preloaded(const char *program) {
  void *probe = malloc(5);
  const size_t usable = malloc_usable_size(probe);
  free(probe);
  if (usable == 5) return 1;
  fprintf(stderr, "%s: libvam-secure.so is not preloaded (usable size of malloc(5) is %zu)\n", program, usable);
  return 0;
}
