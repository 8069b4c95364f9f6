// remote_test.cpp — remote frees (remote.hpp/.cpp): reused by the owner, sent
// in batches, and double frees from other threads.
#include <stdint.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "alloclab/vam.h"
#include "api_test_support.hpp"
#include "vam/remote.hpp"

namespace {

using namespace vam_test;

TEST(VamHardening, DoubleFreeFromAnotherThreadWithAFreeBetweenAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        static void *objs[3];  // one kept live, p, q
        std::thread([] {
          for (auto &o : objs) o = vam_malloc(64);
        }).join();
        void *p = objs[1];
        void *q = objs[2];
        vam_free(p);  // remote frees into the exited thread's heap:
        vam_free(q);  // p, q, p on its remote stack, p linked in a cycle
        vam_free(p);
        vam_stats_t s;
        vam_stats(&s);  // applies them: the second p finds itself on the free list
      },
      "vam: free\\(\\): double free detected");
}


TEST(VamThreads, ObjectsFreedByAnotherThreadAreReusedByTheOwner) {
  // Everything this test needs is allocated up front: in the release build
  // the C++ containers allocate through libvam too.
  std::vector<void *> v;
  std::vector<void *> w;
  v.reserve(1000);
  w.reserve(3000);
  for (int i = 0; i < 1000; ++i) v.push_back(vam_malloc(64));
  std::vector<void *> old(v);
  std::sort(old.begin(), old.end());
  std::thread t([&] {
    for (void *p : v) vam_free(p);
  });
  t.join();
  // The owner drains its remote list in its slow path and reuses them.
  int reused = 0;
  for (int i = 0; i < 3000; ++i) {
    w.push_back(vam_malloc(64));
    reused += std::binary_search(old.begin(), old.end(), w.back());
  }
  EXPECT_GT(reused, 900);
  for (void *p : w) vam_free(p);
}

// The node after f on a remote stack, wherever f keeps its link (remote.hpp).
alloclab::vam::FreeObj *next_node(alloclab::vam::FreeObj *f) {
  return alloclab::vam::remote_next(f, alloclab::vam::remote_form(alloclab::vam::object_segment(f)));
}

// Objects on a heap's remote stack, counted without taking them.
size_t remote_count(alloclab::vam::Heap *h) {
  size_t n = 0;
  for (auto *f = h->remote.load(std::memory_order_acquire); f; f = next_node(f)) ++n;
  return n;
}

// A thread batches its frees into another live thread's heap: one CAS per
// kRemoteBatch objects (remote.hpp, remote_free_batched), not one per object,
// whether it has a heap of its own or only frees (xmalloc's consumers: the
// thread-exit key is then set for the batches alone, and it still gets no
// heap). Nothing is held back for long: a full batch goes at once, and the
// freeing thread's exit sends what is left.
TEST(VamThreads, RemoteFreesGoToTheOwnerInBatchesAndAtTheFreeingThreadsExit) {
  using alloclab::vam::kRemoteBatch;
  for (bool own_heap : {true, false}) {
    SCOPED_TRACE(own_heap ? "freeing thread with a heap" : "freeing thread without a heap");
    std::vector<void *> v, sent;
    v.reserve(200);
    sent.reserve(200);
    for (int i = 0; i < 100; ++i) v.push_back(vam_malloc(48));
    alloclab::vam::Heap *h = alloclab::vam::object_segment(v[0])->owner;
    alloclab::vam::drain_remote(h);  // main's own: only this test's frees count
    size_t before_batch = 1, after_batch = 0, after_more = 0;
    std::int64_t heaps_before = 0, heaps_after = 0;
    std::thread([&] {
      const vam_stats_t b = stats();
      heaps_before = b.heaps - b.abandoned_heaps;
      if (own_heap) vam_free(vam_malloc(16));  // a heap of its own
      for (uint32_t i = 0; i + 1 < kRemoteBatch; ++i) vam_free(v[i]);
      before_batch = remote_count(h);
      vam_free(v[kRemoteBatch - 1]);
      after_batch = remote_count(h);
      for (uint32_t i = kRemoteBatch; i < kRemoteBatch + 5; ++i) vam_free(v[i]);
      after_more = remote_count(h);
      const vam_stats_t a = stats();
      heaps_after = a.heaps - a.abandoned_heaps;
    }).join();
    EXPECT_EQ(before_batch, 0u);
    EXPECT_EQ(after_batch, size_t{kRemoteBatch});
    EXPECT_EQ(after_more, size_t{kRemoteBatch});
    EXPECT_EQ(heaps_after, heaps_before + (own_heap ? 1 : 0));  // live heaps: none for a thread that only frees
    // The rest came with the thread's exit (with std::thread's own state,
    // which main allocated and the thread freed). `sent` was reserved up
    // front: an allocation here could drain the list.
    for (auto *f = h->remote.load(std::memory_order_acquire); f; f = next_node(f))
      sent.push_back(f);
    for (uint32_t i = 0; i < kRemoteBatch + 5; ++i) EXPECT_EQ(std::count(sent.begin(), sent.end(), v[i]), 1) << i;
    // The full batch, 48-byte objects (room for the drain's hint), newest
    // first: each but the last kRemoteAhead points kRemoteAhead further on.
    const auto full = std::find(sent.begin(), sent.end(), v[kRemoteBatch - 1]);
    ASSERT_LE(full + kRemoteBatch, sent.end());
    for (uint32_t i = 0; i < kRemoteBatch; ++i) {
      auto *o = reinterpret_cast<alloclab::vam::RemoteObj *>(full[i]);
      const bool hinted = (o->link & alloclab::vam::kAheadBit) != 0;
      EXPECT_EQ(hinted, i + alloclab::vam::kRemoteAhead < kRemoteBatch) << i;
      if (hinted) {
        EXPECT_EQ(o->ahead, full[i + alloclab::vam::kRemoteAhead]) << i;
      }
    }
    alloclab::vam::drain_remote(h);
    for (size_t i = kRemoteBatch + 5; i < v.size(); ++i) vam_free(v[i]);
  }
}

// Statistics see the calling thread's batched frees (it sends them first).
TEST(VamThreads, StatisticsSendTheCallersBatchedRemoteFreesFirst) {
  void *p = vam_malloc(48);
  alloclab::vam::Heap *h = alloclab::vam::object_segment(p)->owner;
  alloclab::vam::drain_remote(h);
  size_t queued = 1, sent = 0;
  std::thread([&] {
    vam_free(vam_malloc(16));
    vam_free(p);
    queued = remote_count(h);
    vam_stats_t s;
    vam_stats(&s);
    sent = remote_count(h);
  }).join();
  EXPECT_EQ(queued, 0u);
  EXPECT_EQ(sent, 1u);
  alloclab::vam::drain_remote(h);
}

// A double free into one batch would otherwise cut the objects behind it
// off the owner's list (a silent leak): sending the batch walks it first.
TEST(VamHardening, DoubleFreeIntoAnotherLiveThreadsHeapAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void *p = vam_malloc(64);
        void *q = vam_malloc(64);
        std::thread([&] {
          vam_free(vam_malloc(16));
          vam_free(p);
          vam_free(q);
          vam_free(p);
        }).join();  // its exit sends the batch
      },
      "vam: free\\(\\): double free detected");
}

}  // namespace
