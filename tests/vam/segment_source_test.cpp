// segment_source_test.cpp — the one source of segments (segment_source.hpp): a
// new segment needs no twice its size of address space.
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"

namespace {

using namespace vam_test;

[[noreturn]] void new_segment_under_tight_ulimit() {
  vam_free(vam_malloc(64));  // vam is up: options, a heap, a segment
  // Room for one more 4 MiB segment (and a little), not for 8 MiB.
  const size_t limit = mapped_bytes() + (size_t{6} << 20);
  const rlimit lim{limit, limit};
  if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
  // 64-byte objects until they need a new segment.
  const size_t segs = stats().segments;
  for (int i = 0; stats().segments == segs; ++i)
    for (int k = 0; k < 1000; ++k)
      if (!vam_malloc(64)) _exit(4);
  _exit(0);
}

TEST(VamMemoryBack, ANewSegmentNeedsNoTwiceItsSizeOfAddressSpace) {
#ifdef VAM_SANITIZED
  GTEST_SKIP() << "RLIMIT_AS cannot be used under a sanitizer";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(new_segment_under_tight_ulimit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
