// secure_delete.cpp — libvam-secure.so's check of which new made an object,
// run under LD_PRELOAD of it (vam.secure.delete): at 1 B, 8 B, 4 KiB and
// 256 KiB, plain and aligned (64 bytes), unsized and sized,
//   * an object of operator new released by operator delete[], and one of
//     operator new[] released by operator delete, must abort naming the
//     mismatch (each in a child process);
//   * each new released by its own delete, and an object of malloc released
//     by either delete or of either new by free, must not abort.
// Each object's address passes through an empty asm statement the compiler
// cannot see into: a new and a delete it sees together may be dropped, as
// the public misuse suite's size-mismatch program is.
#include <stdio.h>
#include <stdlib.h>

#include <initializer_list>
#include <new>

#include "secure_preloaded.h"

namespace {

constexpr std::align_val_t kAlign{64};

// How an object is made and how it is released.
enum Made { kByNew, kByNewArray, kByNewAligned, kByNewArrayAligned, kByMalloc };
enum Released { kDelete, kDeleteArray, kDeleteSized, kDeleteArraySized, kDeleteAligned, kDeleteArrayAligned,
                kDeleteSizedAligned, kDeleteArraySizedAligned, kFree };

struct Cell {
  std::size_t n;
  Made made;
  Released released;
};

// p, as the compiler must take it: possibly anything.
void *opaque(void *p) {
  asm volatile("" : "+r"(p) : : "memory");
  return p;
}

void *make(const Cell &c) {
  switch (c.made) {
    case kByNew: return opaque(::operator new(c.n));
    case kByNewArray: return opaque(::operator new[](c.n));
    case kByNewAligned: return opaque(::operator new(c.n, kAlign));
    case kByNewArrayAligned: return opaque(::operator new[](c.n, kAlign));
    case kByMalloc: return opaque(malloc(c.n));
  }
  return nullptr;
}

void release(const Cell &c, void *p) {
  switch (c.released) {
    case kDelete: ::operator delete(p); break;
    case kDeleteArray: ::operator delete[](p); break;
    case kDeleteSized: ::operator delete(p, c.n); break;
    case kDeleteArraySized: ::operator delete[](p, c.n); break;
    case kDeleteAligned: ::operator delete(p, kAlign); break;
    case kDeleteArrayAligned: ::operator delete[](p, kAlign); break;
    case kDeleteSizedAligned: ::operator delete(p, c.n, kAlign); break;
    case kDeleteArraySizedAligned: ::operator delete[](p, c.n, kAlign); break;
    case kFree: free(p); break;
  }
}

void misuse(const void *arg) {
  const Cell &c = *static_cast<const Cell *>(arg);
  release(c, make(c));
}

int failures = 0, cells = 0;

void expect(const Cell &c, bool aborts, const char *what) {
  char said[512];
  ++cells;
  const bool aborted = child_aborts_saying(misuse, &c, 1, aborts ? what : "vam:", said, sizeof said);
  // A pair that must pass: the child must neither abort nor say anything.
  const bool ok = aborts ? aborted : !aborted && said[0] == '\0';
  if (!ok) {
    fprintf(stderr, "secure_delete: FAIL: made %d, released %d, %zu B: %s (said: %s)\n", c.made, c.released, c.n,
            aborts ? "not caught" : "aborted", said[0] ? said : "nothing");
    ++failures;
  }
}

}  // namespace

int main() {
  if (!secure_preloaded("secure_delete")) return 1;
  static const std::size_t sizes[] = {1, 8, 4096, 262144};
  for (std::size_t n : sizes) {
    // The mismatches.
    const char *scalar_by_array = "operator delete[] of an object made by operator new (not new[])";
    const char *array_by_scalar = "operator delete of an object made by operator new[] (not new)";
    expect({n, kByNew, kDeleteArray}, true, scalar_by_array);
    expect({n, kByNew, kDeleteArraySized}, true, scalar_by_array);
    expect({n, kByNewArray, kDelete}, true, array_by_scalar);
    expect({n, kByNewArray, kDeleteSized}, true, array_by_scalar);
    expect({n, kByNewAligned, kDeleteArrayAligned}, true, scalar_by_array);
    expect({n, kByNewAligned, kDeleteArraySizedAligned}, true, scalar_by_array);
    expect({n, kByNewArrayAligned, kDeleteAligned}, true, array_by_scalar);
    expect({n, kByNewArrayAligned, kDeleteSizedAligned}, true, array_by_scalar);
    // The pairs that are right, or let through.
    for (Released r : {kDelete, kDeleteSized}) expect({n, kByNew, r}, false, "");
    for (Released r : {kDeleteArray, kDeleteArraySized}) expect({n, kByNewArray, r}, false, "");
    for (Released r : {kDeleteAligned, kDeleteSizedAligned}) expect({n, kByNewAligned, r}, false, "");
    for (Released r : {kDeleteArrayAligned, kDeleteArraySizedAligned}) expect({n, kByNewArrayAligned, r}, false, "");
    for (Released r : {kDelete, kDeleteArray, kDeleteSized, kDeleteArraySized, kFree})
      expect({n, kByMalloc, r}, false, "");
    for (Made m : {kByNew, kByNewArray}) expect({n, m, kFree}, false, "");
  }
  if (failures != 0) {
    fprintf(stderr, "secure_delete: %d of %d cells failed\n", failures, cells);
    return 1;
  }
  printf("secure_delete: ok (%d cells)\n", cells);
  return 0;
}
