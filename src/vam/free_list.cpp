// free_list.cpp — the free lists' key (free_list.hpp), drawn once at start-up.
#include "vam/free_list.hpp"

#include <time.h>

namespace alloclab::vam {

// Replaced by free_key_init() before any block exists; the top bit is always
// set, so no user-space word (null included) decodes into a segment.
std::uintptr_t g_free_key = 0x9e37'79b9'7f4a'7c15ull | (std::uintptr_t{1} << 63);

void free_key_init() noexcept {
  // Not a secret (AT_RANDOM's bytes are glibc's stack and pointer guards):
  // the clock and two addresses ASLR moves are enough for a word the
  // program's data does not contain by chance.
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  std::uint64_t seed = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  seed ^= reinterpret_cast<std::uintptr_t>(&seed) ^ (reinterpret_cast<std::uintptr_t>(&g_free_key) << 16);
  // splitmix64's finaliser
  seed += 0x9e37'79b9'7f4a'7c15ull;
  seed = (seed ^ (seed >> 30)) * 0xbf58'476d'1ce4'e5b9ull;
  seed = (seed ^ (seed >> 27)) * 0x94d0'49bb'1331'11ebull;
  seed ^= seed >> 31;
  g_free_key = static_cast<std::uintptr_t>(seed) | (std::uintptr_t{1} << 63);
}

}  // namespace alloclab::vam
