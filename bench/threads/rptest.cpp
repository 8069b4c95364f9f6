// rptest — random producer/consumer, after the rpmalloc test as it is
// described in allocator comparisons: each thread allocates objects of random
// sizes; about half it keeps in a working set for a while and frees itself,
// the rest it passes to a randomly chosen thread through that thread's inbox.
// Every thread empties its inbox now and then and frees what it finds, so
// half the frees are remote and every thread is producer and consumer.
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kWorkingSet = 256;
constexpr std::size_t kMaxSize = 8192;

// Many producers push, the owner takes everything at once: a Treiber stack
// whose only pop is an exchange, so it has no ABA problem.
struct Inbox {
  alignas(64) std::atomic<tb::Obj *> head{nullptr};
  void push(tb::Obj *o) {
    tb::Obj *h = head.load(std::memory_order_relaxed);
    do o->next = h;
    while (!head.compare_exchange_weak(h, o, std::memory_order_release, std::memory_order_relaxed));
  }
  tb::Obj *take_all() { return head.exchange(nullptr, std::memory_order_acquire); }
};

std::uint64_t drain(Inbox &in) {
  std::uint64_t sum = 0;
  for (tb::Obj *o = in.take_all(); o;) {
    tb::Obj *n = o->next;
    sum += tb::take(o);
    o = n;
  }
  return sum;
}

void work(int id, int threads, long steps, std::vector<Inbox> &inbox, std::atomic<int> &producing,
          tb::Tally &t) {
  tb::Rng rng(500 + static_cast<std::uint64_t>(id));
  const std::uint64_t seed = 900 + static_cast<std::uint64_t>(id);
  tb::Obj *keep[kWorkingSet] = {};
  std::uint64_t made = 0, freed = 0;
  for (long i = 0; i < steps; ++i) {
    const std::uint64_t v = tb::value_of(seed, static_cast<std::uint64_t>(i));
    tb::Obj *o = tb::make(tb::skewed_size(rng, kMaxSize), v);
    made += v;
    if (rng.below(2)) {
      inbox[rng.below(static_cast<std::uint32_t>(threads))].push(o);
    } else {
      tb::Obj *&slot = keep[rng.below(kWorkingSet)];
      if (slot) freed += tb::take(slot);
      slot = o;
    }
    if ((i & 15) == 15) freed += drain(inbox[static_cast<std::size_t>(id)]);
  }
  for (tb::Obj *o : keep)
    if (o) freed += tb::take(o);
  // nobody pushes once every thread has stopped producing: then one last drain
  producing.fetch_sub(1);
  while (producing.load() > 0) {
    freed += drain(inbox[static_cast<std::size_t>(id)]);
    std::this_thread::yield();
  }
  freed += drain(inbox[static_cast<std::size_t>(id)]);
  t.add(made, freed, steps);
}

}  // namespace

int main(int argc, char **argv) {
  const tb::Args a = tb::parse(argc, argv,
                               "rptest-style random producer/consumer: objects of 8..8192 B, half passed to a "
                               "random thread's inbox and freed there");
  const long steps = tb::scaled(a, 4000000.0 / a.threads, 16);
  std::vector<Inbox> inbox(static_cast<std::size_t>(a.threads));
  std::atomic<int> producing{a.threads};
  tb::Tally t;
  std::vector<std::thread> ws;
  for (int i = 0; i < a.threads; ++i)
    ws.emplace_back([&, i] { work(i, a.threads, steps, inbox, producing, t); });
  for (auto &w : ws) w.join();
  return tb::finish("rptest", t);
}
