// clock.hpp — vam's clock: milliseconds, coarse (the delays it times are
// milliseconds to tens of them, and a coarse read costs no system call).
#pragma once

#include <time.h>

#include <cstdint>

namespace alloclab::vam {

inline std::int64_t now_ms() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace alloclab::vam
