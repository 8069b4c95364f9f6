// xmalloc — after the xmalloc test of the public allocator benchmark suite
// (its xmalloc-test, run there as `xmalloc-test -w N -s 64`): N producer
// threads only allocate and N consumer threads only free, so every free is a
// remote free, the hardest case for an allocator with per-thread heaps. As
// there: objects of 64 bytes, every byte written; batches of 4,096 of them,
// each batch's record one allocation of 32 KiB (a large object, freed by the
// consumer with its objects); the batches handed over through a stack (the
// newest first) of at most 100, on which producers wait when it is full.
// A consumer frees 16,384 objects in four batches while a producer waits
// for room: an allocator that takes such a producer for idle gives back the
// pages it is about to fill again (docs/notes/2026-11-30-xmalloc-reclaim.md).
// The original runs for 5 s and reports frees a second; this one does a fixed
// number of batches, and the runner times it.
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kBatch = 4096;
constexpr std::size_t kObject = 64;
constexpr std::size_t kMaxQueued = 100;  // batches; keeps the live heap bounded

struct Batch {
  Batch *next;
  tb::Obj *obj[kBatch];
};

struct Queue {
  std::mutex m;
  std::condition_variable not_empty, not_full;
  Batch *top = nullptr;  // a stack, as the original's
  std::size_t count = 0;
  int producers_left = 0;

  void put(Batch *b) {
    std::unique_lock<std::mutex> l(m);
    not_full.wait(l, [&] { return count < kMaxQueued; });
    b->next = top;
    top = b;
    ++count;
    not_empty.notify_one();
  }
  Batch *get() {  // nullptr once every producer has finished and the stack is empty
    std::unique_lock<std::mutex> l(m);
    not_empty.wait(l, [&] { return top != nullptr || producers_left == 0; });
    Batch *b = top;
    if (!b) return nullptr;
    top = b->next;
    --count;
    not_full.notify_one();
    return b;
  }
  void producer_done() {
    std::lock_guard<std::mutex> l(m);
    if (--producers_left == 0) not_empty.notify_all();
  }
};

void produce(int id, long batches, Queue &q, tb::Tally &t) {
  const std::uint64_t seed = 400 + static_cast<std::uint64_t>(id);
  std::uint64_t made = 0, n = 0;
  for (long b = 0; b < batches; ++b) {
    auto *batch = static_cast<Batch *>(std::malloc(sizeof(Batch)));
    if (!batch) std::exit(1);
    for (tb::Obj *&o : batch->obj) {
      const std::uint64_t v = tb::value_of(seed, n++);
      o = tb::make(kObject, v);
      std::memset(reinterpret_cast<char *>(o) + sizeof(tb::Obj), static_cast<int>(v & 0xff),
                  kObject - sizeof(tb::Obj) - 1);  // the original writes every byte of a 64-byte object
      made += v;
    }
    q.put(batch);
  }
  t.made += made;
  t.ops += n;
  q.producer_done();
}

void consume(Queue &q, tb::Tally &t) {
  std::uint64_t freed = 0;
  while (Batch *b = q.get()) {
    for (tb::Obj *o : b->obj) freed += tb::take(o);
    std::free(b);
  }
  t.freed += freed;
}

}  // namespace

int main(int argc, char **argv) {
  const tb::Args a = tb::parse(argc, argv,
                               "xmalloc-style: `threads` producer threads allocate 64-byte objects in batches of "
                               "4096, as many consumer threads free them");
  const int producers = a.threads;
  const int consumers = a.threads;
  const long batches = tb::scaled(a, 8000.0 / producers, 1);
  Queue q;
  q.producers_left = producers;
  tb::Tally t;
  std::vector<std::thread> ws;
  for (int i = 0; i < consumers; ++i) ws.emplace_back([&] { consume(q, t); });
  for (int i = 0; i < producers; ++i) ws.emplace_back([&, i] { produce(i, batches, q, t); });
  for (auto &w : ws) w.join();
  return tb::finish("xmalloc", t);
}
