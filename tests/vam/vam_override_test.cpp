// The real symbol surface of libvam: malloc & co., glibc's __libc_* names
// and the C++ operator new/delete family, linked into this test binary, once
// from libvam.a (vam_override_test) and once from libvam.so
// (vam_override_shared_test, whose lookup order puts libvam.so before
// libstdc++ and libc, as LD_PRELOAD does). Release builds only (under ASan
// the sanitizer owns malloc).
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"

extern "C" {
void *__libc_malloc(size_t);
void __libc_free(void *);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);
void free_sized(void *, size_t);
void free_aligned_sized(void *, size_t, size_t);
}

namespace {

// Keep the compiler from eliding malloc/free pairs in tests.
void *volatile sink;

vam_stats_t stats() {
  vam_stats_t s;
  vam_stats(&s);
  return s;
}
size_t live() { return stats().live_bytes; }

bool aligned(const void *p, size_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; }

TEST(VamOverride, MallocIsVam) {
  const size_t before = live();
  void *p = malloc(100000);
  sink = p;
  EXPECT_GE(live(), before + 100000);
  EXPECT_EQ(malloc_usable_size(p), vam_usable_size(p));
  free(p);
}

TEST(VamOverride, MemoryFromAnyEntryPointIsFreeableByAnyOther) {
  std::vector<void *> v;
  v.push_back(malloc(10));
  v.push_back(calloc(3, 100));
  v.push_back(realloc(nullptr, 5000));
  v.push_back(memalign(128, 77));
  v.push_back(aligned_alloc(64, 640));
  v.push_back(valloc(10));
  v.push_back(pvalloc(10));
  void *pm = nullptr;
  ASSERT_EQ(posix_memalign(&pm, 256, 1000), 0);
  v.push_back(pm);
  v.push_back(__libc_malloc(20));
  v.push_back(__libc_calloc(2, 20));
  v.push_back(__libc_realloc(nullptr, 30));
  v.push_back(__libc_memalign(32, 30));
  v.push_back(__libc_valloc(30));
  v.push_back(__libc_pvalloc(30));
  v.push_back(vam_malloc(40));
  v.push_back(::operator new(50));
  v.push_back(::operator new(60, std::align_val_t{512}));
  for (void *p : v) ASSERT_NE(p, nullptr);
  // Free each through a different door than it came in.
  free(v[0]);
  __libc_free(v[1]);
  vam_free(v[2]);
  ::operator delete(v[3]);
  free_sized(v[4], 640);
  free_aligned_sized(v[5], 4096, 10);
  ::operator delete(v[6], std::align_val_t{4096});
  realloc(v[7], 0);
  for (size_t i = 8; i < v.size(); ++i) free(v[i]);
}

TEST(VamOverride, PosixMemalignRejectsAlignment3WithEinval) {
  void *p = reinterpret_cast<void *>(0x42);
  EXPECT_EQ(posix_memalign(&p, 3, 10), EINVAL);
  EXPECT_EQ(p, reinterpret_cast<void *>(0x42));
}

TEST(VamOverride, MallocFailureSetsEnomem) {
  errno = 0;
  sink = malloc(SIZE_MAX - 10);
  EXPECT_EQ(sink, nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  sink = calloc(SIZE_MAX / 8, 16);
  EXPECT_EQ(sink, nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(VamOverride, Aligned2MiBAllocationWorks) {
  void *p = aligned_alloc(size_t{2} << 20, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, size_t{2} << 20));
  free(p);
}

TEST(VamOverride, OperatorNewThrowsBadAllocWhenMemoryRunsOut) {
  EXPECT_THROW(sink = ::operator new(SIZE_MAX - 4096), std::bad_alloc);
  EXPECT_THROW(sink = ::operator new[](SIZE_MAX - 4096), std::bad_alloc);
  EXPECT_THROW(sink = ::operator new(SIZE_MAX - 4096, std::align_val_t{64}), std::bad_alloc);
}

TEST(VamOverride, NothrowOperatorNewReturnsNull) {
  EXPECT_EQ(::operator new(SIZE_MAX - 4096, std::nothrow), nullptr);
  EXPECT_EQ(::operator new[](SIZE_MAX - 4096, std::nothrow), nullptr);
  EXPECT_EQ(::operator new(SIZE_MAX - 4096, std::align_val_t{64}, std::nothrow), nullptr);
}

int g_handler_calls = 0;
void handler_then_give_up() {
  ++g_handler_calls;
  std::set_new_handler(nullptr);
}

TEST(VamOverride, OperatorNewCallsTheNewHandlerBeforeThrowing) {
  g_handler_calls = 0;
  std::set_new_handler(handler_then_give_up);
  EXPECT_THROW(sink = ::operator new(SIZE_MAX - 4096), std::bad_alloc);
  EXPECT_EQ(g_handler_calls, 1);
  std::set_new_handler(nullptr);
}

struct HandlersOwnBadAlloc : std::bad_alloc {};
void handler_that_throws() { throw HandlersOwnBadAlloc(); }

TEST(VamOverride, ANewHandlersExceptionPassesThroughOperatorNew) {
  std::set_new_handler(handler_that_throws);
  EXPECT_THROW(sink = ::operator new(SIZE_MAX - 4096), HandlersOwnBadAlloc);
  EXPECT_THROW(sink = ::operator new[](SIZE_MAX - 4096, std::align_val_t{4096}), HandlersOwnBadAlloc);
  // The nothrow forms (the C++ runtime's, around ours) turn it into null.
  EXPECT_EQ(::operator new(SIZE_MAX - 4096, std::nothrow), nullptr);
  std::set_new_handler(nullptr);
}

// The object (executable or shared library) that holds an address.
const void *object_of(const void *f) {
  Dl_info info{};
  return f && dladdr(f, &info) ? info.dli_fbase : nullptr;
}
// The object that defines a symbol the program's calls bind to.
const void *definer(const char *symbol) { return object_of(dlsym(RTLD_DEFAULT, symbol)); }

TEST(VamOverride, OperatorNewAndDeleteComeFromWhereMallocComes) {
  const void *vam = object_of(reinterpret_cast<const void *>(&vam_stats));  // libvam's object
  ASSERT_NE(vam, nullptr);
  ASSERT_EQ(definer("malloc"), vam);
  for (const char *op : {"_Znwm", "_Znam", "_ZnwmSt11align_val_t", "_ZdlPv", "_ZdaPv", "_ZdlPvm"})
    EXPECT_EQ(definer(op), vam) << op;
}

TEST(VamOverride, AlignedNewHonoursAlignment) {
  struct alignas(256) Big {
    char c[300];
  };
  auto p = std::make_unique<Big[]>(5);
  EXPECT_TRUE(aligned(p.get(), 256));
  auto *q = new Big;
  EXPECT_TRUE(aligned(q, 256));
  delete q;
}

TEST(VamOverride, StandardContainersAndStringsWork) {
  std::vector<std::string> v;
  for (int i = 0; i < 10000; ++i) v.push_back(std::string(i % 300, char('a' + i % 26)));
  size_t total = 0;
  for (auto &s : v) total += s.size();
  EXPECT_EQ(total, 1485000u);
}

// Threads' objects from new[] and from malloc are vam's: while every
// thread holds its own, vam's statistics count them all, object by object
// and byte by byte; once the threads have freed them and exited, the count
// is back where it was. (Statistics, not vam_usable_size: a pointer that is
// not vam's would crash that.)
TEST(VamOverride, ThreadsUseTheOverriddenMalloc) {
  constexpr int kThreads = 4;
  constexpr int kPer = 10000;  // objects a thread holds, half from new[], half from malloc
  const vam_stats_t before = stats();
  std::atomic<int> holding{0};
  std::atomic<bool> counted{false};
  std::atomic<size_t> bytes{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      std::vector<std::unique_ptr<char[]>> news;
      std::vector<void *> mallocs;
      size_t mine = 0;
      for (int i = 0; i < kPer; ++i) {
        const size_t n = i % 2000 + 1;
        void *p;
        if (i % 2 == 0) {
          news.emplace_back(new char[n]);
          p = news.back().get();
        } else {
          mallocs.push_back(malloc(n));
          p = mallocs.back();
        }
        if (p == nullptr) failed.fetch_add(1);
        mine += n;
      }
      bytes.fetch_add(mine);
      holding.fetch_add(1);
      while (!counted.load()) std::this_thread::yield();
      for (void *p : mallocs) free(p);
    });
  while (holding.load() < kThreads) std::this_thread::yield();
  const vam_stats_t held = stats();
  counted.store(true);
  for (auto &t : ts) t.join();
  const vam_stats_t after = stats();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GE(held.live_objects, before.live_objects + kThreads * kPer);
  EXPECT_GE(held.live_bytes, before.live_bytes + bytes.load());
  EXPECT_LT(after.live_objects, before.live_objects + kPer / 10);
}

}  // namespace
