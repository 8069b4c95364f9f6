// malloc_in_use(): the bytes the process's malloc has handed out and not got
// back, for the reap tests that see the region emulator free its objects to
// malloc. Under ASan malloc is the sanitizer's, which counts them itself.
#pragma once

#include <malloc.h>

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
inline std::size_t malloc_in_use() { return __sanitizer_get_current_allocated_bytes(); }
#else
inline std::size_t malloc_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // small chunks plus mmapped ones
}
#endif
