// xmalloc — after the xmalloc test as allocator comparisons describe it:
// producer threads only allocate, consumer threads only free. Producers fill
// batches of objects of random small sizes and hand them over through a
// bounded queue; consumers free every object in a batch. Every free is a
// remote free, the hardest case for an allocator with per-thread heaps.
// With N threads, N/2 (at least one) produce and the rest (at least one) consume.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kBatch = 256;
constexpr std::size_t kMaxQueued = 64;  // batches; keeps the live heap bounded

struct Batch {
  tb::Obj *obj[kBatch];
};

struct Queue {
  std::mutex m;
  std::condition_variable not_empty, not_full;
  std::deque<Batch *> q;
  int producers_left = 0;

  void put(Batch *b) {
    std::unique_lock<std::mutex> l(m);
    not_full.wait(l, [&] { return q.size() < kMaxQueued; });
    q.push_back(b);
    not_empty.notify_one();
  }
  Batch *get() {  // nullptr once every producer has finished and the queue is empty
    std::unique_lock<std::mutex> l(m);
    not_empty.wait(l, [&] { return !q.empty() || producers_left == 0; });
    if (q.empty()) return nullptr;
    Batch *b = q.front();
    q.pop_front();
    not_full.notify_one();
    return b;
  }
  void producer_done() {
    std::lock_guard<std::mutex> l(m);
    if (--producers_left == 0) not_empty.notify_all();
  }
};

void produce(int id, long batches, Queue &q, tb::Tally &t) {
  tb::Rng rng(300 + static_cast<std::uint64_t>(id));
  const std::uint64_t seed = 400 + static_cast<std::uint64_t>(id);
  std::uint64_t made = 0, n = 0;
  for (long b = 0; b < batches; ++b) {
    auto *batch = static_cast<Batch *>(std::malloc(sizeof(Batch)));
    if (!batch) std::exit(1);
    for (tb::Obj *&o : batch->obj) {
      const std::uint64_t v = tb::value_of(seed, n++);
      o = tb::make(tb::skewed_size(rng, 512), v);
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
                               "xmalloc-style: producer threads allocate (8..512 B), consumer threads free "
                               "(threads/2 of each, at least one)");
  const int producers = a.threads / 2 > 0 ? a.threads / 2 : 1;
  const int consumers = a.threads - producers > 0 ? a.threads - producers : 1;
  const long batches = tb::scaled(a, 16000.0 / producers, 1);
  Queue q;
  q.producers_left = producers;
  tb::Tally t;
  std::vector<std::thread> ws;
  for (int i = 0; i < consumers; ++i) ws.emplace_back([&] { consume(q, t); });
  for (int i = 0; i < producers; ++i) ws.emplace_back([&, i] { produce(i, batches, q, t); });
  for (auto &w : ws) w.join();
  return tb::finish("xmalloc", t);
}
