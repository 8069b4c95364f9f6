// Probe for the memory-checker integration: writes to an object after
// freeing it. Under Valgrind memcheck this must be reported (the test greps
// for the report); run natively it does nothing harmful to the reap.
#include <cstdio>

#include "alloclab/reap.h"

int main() {
  reap_t *r = reap_create(nullptr);
  auto *p = static_cast<volatile char *>(reap_malloc(r, 64));
  reap_malloc(r, 64);  // keep p away from the bump pointer
  p[0] = 1;
  reap_free(r, const_cast<char *>(p));
  p[10] = 2;  // use after free
  reap_destroy(r);
  std::puts("done");
  return 0;
}
