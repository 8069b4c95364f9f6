// The C++ faces: alloclab::Reap, ReapResource (std::pmr), ReapAllocator.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <list>
#include <map>
#include <memory_resource>
#include <string>
#include <type_traits>
#include <vector>

#include "alloclab/reap.hpp"

using alloclab::Reap;
using alloclab::ReapAllocator;
using alloclab::ReapResource;

TEST(Reap, IsMoveOnlyAndTheMovedFromHandleIsEmpty) {
  static_assert(!std::is_copy_constructible_v<Reap>);
  static_assert(std::is_nothrow_move_constructible_v<Reap>);
  Reap a;
  void *p = a.malloc(10);
  ASSERT_NE(p, nullptr);
  Reap b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.stats().live_objects, 1u);
  Reap c;
  c = std::move(b);
  EXPECT_EQ(c.stats().live_objects, 1u);
}

TEST(Reap, MakeConstructsAndDestroyRunsTheDestructor) {
  struct Counted {
    int *n;
    explicit Counted(int *c) : n(c) { ++*n; }
    ~Counted() { --*n; }
  };
  int live = 0;
  Reap r;
  Counted *c = r.make<Counted>(&live);
  EXPECT_EQ(live, 1);
  EXPECT_EQ(r.stats().live_objects, 1u);
  r.destroy(c);
  EXPECT_EQ(live, 0);
  EXPECT_EQ(r.stats().live_objects, 0u);
}

TEST(Reap, MakeHonoursOverAlignedTypes) {
  struct alignas(128) Wide {
    char x[3];
  };
  Reap r;
  for (int i = 0; i < 20; ++i) {
    Wide *w = r.make<Wide>();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w) % 128, 0u);
  }
}

// Is the page at p mapped? (A reap's large object is a mapping of its own,
// unmapped when the reap that holds it dies.)
bool mapped(const void *p) {
  unsigned char v;
  const auto page = reinterpret_cast<std::uintptr_t>(p) & ~(std::uintptr_t(sysconf(_SC_PAGESIZE)) - 1);
  return mincore(reinterpret_cast<void *>(page), 1, &v) == 0;
}

TEST(Reap, NestedReapsDieWithTheirParent) {
  // The child's destructor never runs (it lives in raw storage): only the
  // parent's end can free the child's object.
  alignas(Reap) unsigned char storage[sizeof(Reap)];
  void *big = nullptr;
  {
    Reap parent;
    Reap *child = new (storage) Reap(parent);
    big = child->malloc(8u << 20);
    ASSERT_NE(big, nullptr);
    std::memset(big, 1, 8u << 20);
    EXPECT_EQ(child->stats().live_objects, 1u);
    EXPECT_EQ(parent.stats().live_objects, 0u);  // a child's objects are its own
    EXPECT_TRUE(mapped(big));
  }
  EXPECT_FALSE(mapped(big));
}

TEST(ReapResource, DeallocateReallyFreesSoAGrowingVectorReusesMemory) {
  ReapResource res;
  {
    std::pmr::vector<int> v(&res);
    for (int i = 0; i < 100000; ++i) v.push_back(i);
    EXPECT_EQ(res.reap().stats().live_objects, 1u) << "old buffers were freed";
    for (int i = 0; i < 100000; ++i) ASSERT_EQ(v[i], i);
  }
  EXPECT_EQ(res.reap().stats().live_objects, 0u);
}

TEST(ReapResource, IsEqualOnlyToItself) {
  ReapResource a, b;
  EXPECT_TRUE(a.is_equal(a));
  EXPECT_FALSE(a.is_equal(b));
}

TEST(ReapResource, HonoursOverAlignedRequests) {
  ReapResource res;
  void *p = res.allocate(100, 256);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  res.deallocate(p, 100, 256);
}

TEST(ReapResource, ANestedResourceTakesAParent) {
  // As above: the child is never destroyed itself, so its object is freed
  // only if its reap is the parent's child.
  alignas(ReapResource) unsigned char storage[sizeof(ReapResource)];
  void *big = nullptr;
  {
    ReapResource parent;
    auto *child = new (storage) ReapResource(parent);
    big = child->allocate(8u << 20);
    std::memset(big, 1, 8u << 20);
    EXPECT_EQ(child->reap().stats().live_objects, 1u);
    EXPECT_EQ(parent.reap().stats().live_objects, 0u);
    EXPECT_TRUE(mapped(big));
  }
  EXPECT_FALSE(mapped(big));
}

TEST(ReapResource, ReleaseFreesEverythingAtOnce) {
  ReapResource res;
  for (int i = 0; i < 1000; ++i) (void)res.allocate(64);
  ASSERT_EQ(res.reap().stats().live_objects, 1000u);
  res.release();
  EXPECT_EQ(res.reap().stats().live_objects, 0u);
}

TEST(ReapAllocator, WorksWithListAndMapAndFreesNodes) {
  Reap r;
  {
    std::list<int, ReapAllocator<int>> l{ReapAllocator<int>(r)};
    for (int i = 0; i < 1000; ++i) l.push_back(i);
    EXPECT_EQ(r.stats().live_objects, 1000u);
    l.clear();
    EXPECT_EQ(r.stats().live_objects, 0u);
    using Alloc = ReapAllocator<std::pair<const int, std::string>>;
    std::map<int, std::string, std::less<int>, Alloc> m{Alloc(r)};
    for (int i = 0; i < 500; ++i) m[i] = std::to_string(i);
    EXPECT_EQ(m[250], "250");
  }
  EXPECT_EQ(r.stats().live_objects, 0u);
}

TEST(ReapAllocator, CopiesCompareEqualAndRebindKeepsTheReap) {
  Reap r, other;
  ReapAllocator<int> a(r);
  ReapAllocator<double> b(a);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == ReapAllocator<int>(other));
  EXPECT_THROW(a.allocate(SIZE_MAX / 2), std::bad_array_new_length);
}
