// mstress — thread churn after the mimalloc stress test as it is described:
// in each round a set of threads allocates and frees objects of random sizes
// (mostly small, some medium, a few large enough to be mapped on their own),
// keeping some in a private array and exchanging others through a shared
// transfer array, where another thread — often one of a later round — finds
// and frees them. Threads exit at the end of each round and new ones start,
// so heaps are abandoned with objects still live and objects outlive the
// thread that made them.
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kPrivate = 500;
constexpr int kTransfer = 1000;

std::size_t pick_size(tb::Rng &r) {
  const unsigned p = r.below(1000);
  if (p < 2) return r.range(256 * 1024, 1024 * 1024);  // huge: its own mapping
  if (p < 30) return r.range(4096, 64 * 1024);         // medium
  return tb::skewed_size(r, 2048);
}

void work(std::uint64_t seed, long steps, std::vector<std::atomic<tb::Obj *>> &transfer, tb::Tally &t) {
  tb::Rng rng(seed);
  tb::Obj *mine[kPrivate] = {};
  std::uint64_t made = 0, freed = 0;
  for (long i = 0; i < steps; ++i) {
    const std::uint64_t v = tb::value_of(seed, static_cast<std::uint64_t>(i));
    tb::Obj *o = tb::make(pick_size(rng), v);
    made += v;
    if (rng.below(4) == 0) {
      // hand it over: whatever was in the transfer slot is ours to free
      tb::Obj *old = transfer[rng.below(kTransfer)].exchange(o, std::memory_order_acq_rel);
      if (old) freed += tb::take(old);
    } else {
      tb::Obj *&slot = mine[rng.below(kPrivate)];
      if (slot) freed += tb::take(slot);
      slot = o;
    }
  }
  // a quarter of the private objects stay live past the thread's end
  for (int k = 0; k < kPrivate; ++k) {
    tb::Obj *o = mine[k];
    if (!o) continue;
    if (rng.below(4) == 0) {
      tb::Obj *old = transfer[rng.below(kTransfer)].exchange(o, std::memory_order_acq_rel);
      if (old) freed += tb::take(old);
    } else {
      freed += tb::take(o);
    }
  }
  t.add(made, freed, steps);
}

}  // namespace

int main(int argc, char **argv) {
  const tb::Args a = tb::parse(argc, argv,
                               "mstress-style thread churn: random sizes up to 1 MiB, objects exchanged through a "
                               "shared array, threads re-created every round");
  const int rounds = 25;
  const long steps = tb::scaled(a, 8000000.0 / a.threads / rounds, 10);
  std::vector<std::atomic<tb::Obj *>> transfer(kTransfer);
  for (auto &s : transfer) s.store(nullptr);
  tb::Tally t;
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::thread> ws;
    for (int i = 0; i < a.threads; ++i) {
      const std::uint64_t seed = 10000ull * static_cast<std::uint64_t>(r + 1) + static_cast<std::uint64_t>(i);
      ws.emplace_back([seed, steps, &transfer, &t] { work(seed, steps, transfer, t); });
    }
    for (auto &w : ws) w.join();
  }
  std::uint64_t freed = 0;
  for (auto &s : transfer)
    if (tb::Obj *o = s.exchange(nullptr)) freed += tb::take(o);
  t.freed += freed;
  return tb::finish("mstress", t);
}
