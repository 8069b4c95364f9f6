// secure_copy.cpp — libvam-secure.so's guarded memcpy (override.cpp exports
// memcpy and calls check_copy first): a copy that overruns a live object, or
// runs into the front before one, aborts before a byte is copied. It reads
// the fronts secure.cpp writes (secure_front.hpp) and nothing else of the
// secure mode.
#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/instrument.hpp"
#include "vam/secure_front.hpp"
#include "vam/segment_map.hpp"

#if defined(VAM_SECURE)

namespace alloclab::vam::secure {

// A copy that starts at an object
// and runs past its end, or starts up to kReach bytes before an object and
// runs into its front, aborts before a byte is copied. Other copies are not
// looked at (their start may be inside an object, which would take a search).
//
// Most copies start inside an object, or at no object at all, and each costs
// the program a call: check_copy clears them without a stack frame or a
// multiply. It tests each place that could start an object by the one byte
// before it, which a live front always holds as kEdgeByte (seal); a copy it
// cannot clear so goes to copy_checked, which computes the seals (a byte
// equal to kEdgeByte by chance costs that, nothing more).
namespace {

constexpr std::size_t kReach = 32;  // how far before an object a copy into its front is looked for

// Does a live object's front (its seal) end at `at`?
VAM_SECURE_INLINE bool live_front_at(const char *at) noexcept {
  return load_word(at - sizeof(std::uint64_t)) == seal(key(at), load_word(at - 2 * sizeof(std::uint64_t)));
}

// The whole check, for a copy of n > 0 bytes to d, in a segment of vam's.
[[gnu::noinline]] void copy_checked(const char *c, std::size_t n) noexcept {
  const alloclab::vam::Segment *seg = alloclab::vam::object_segment(c);
  const char *base = reinterpret_cast<const char *>(seg);
  // A huge object's mapping may end before its segment's 4 MiB do: d must be in it.
  if (c - base >= static_cast<std::ptrdiff_t>(seg->map_bytes)) return;
  const std::uint64_t k = key(c);
  const std::uint64_t size_word = load_word(c - 2 * sizeof(std::uint64_t));
  if (load_word(c - sizeof(std::uint64_t)) == seal(k, size_word)) {  // a live object starts at c
    if (n > (size_word ^ k) >> kSizeShift) corruption("memcpy past the end of the object (overflow)", c);
    return;
  }
  // An object starting within kReach bytes after d (16-byte aligned) whose front the copy reaches.
  const auto from = reinterpret_cast<std::uintptr_t>(c);
  for (std::uintptr_t q = (from + 16) & ~std::uintptr_t{15}; q <= from + kReach && q - kFront < from + n; q += 16) {
    const auto *at = reinterpret_cast<const char *>(q);
    if (alloclab::vam::object_segment(at) == seg && at - base < static_cast<std::ptrdiff_t>(seg->map_bytes) &&
        live_front_at(at))
      corruption("memcpy into the bytes before an object (underflow)", at);
  }
}

}  // namespace

void check_copy(const void *d, std::size_t n) noexcept {
  const char *c = static_cast<const char *>(d);
  const alloclab::vam::Segment *seg = alloclab::vam::object_segment(d);
  if (n == 0) return;
  if (!alloclab::vam::segment_known(seg)) return;  // the stack, static data, another mapping
  const char *base = reinterpret_cast<const char *>(seg);
  // The places read lie in d's segment and, for a huge object whose mapping
  // ends before the segment's 4 MiB do, in the mapping: else the whole check.
  const std::size_t room =
      seg->map_bytes < alloclab::vam::kSegmentBytes ? seg->map_bytes : alloclab::vam::kSegmentBytes;
  // The places after d where an object may start within kReach bytes
  // (16-byte aligned): first in (d, d + 16], second in (d + 16, d + 32].
  static_assert(kReach == 32 && kFront == 32);
  const char *first = reinterpret_cast<const char *>((reinterpret_cast<std::uintptr_t>(c) + 16) & ~std::uintptr_t{15});
  const char *second = first + 16;
  if (VAM_UNLIKELY(static_cast<std::size_t>(second - base) >= room)) return copy_checked(c, n);
  const char *end = c + n;
  const bool edge = static_cast<unsigned char>(c[-1]) == kEdgeByte ||
                    (first - kFront < end && static_cast<unsigned char>(first[-1]) == kEdgeByte) ||
                    (second - kFront < end && static_cast<unsigned char>(second[-1]) == kEdgeByte);
  if (VAM_UNLIKELY(edge)) return copy_checked(c, n);
}

}  // namespace alloclab::vam::secure

#endif  // VAM_SECURE
