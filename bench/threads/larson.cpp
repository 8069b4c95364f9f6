// larson — a server simulation after Larson and Krishnan's benchmark, as the
// allocator papers describe it: each worker owns an array of slots holding
// objects of random sizes; it repeatedly frees the object in a random slot
// and allocates a replacement. Work goes in rounds: at the end of a round the
// workers exit and each array is handed to a newly created thread (a
// different one than last time), so most objects are freed by a thread other
// than the one that allocated them, and thread heaps keep being abandoned.
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kSlots = 1000;
constexpr std::size_t kMinSize = 8, kMaxSize = 1000;

struct SlotArray {
  explicit SlotArray(std::uint64_t seed) : rng(seed), seed(seed) {}
  tb::Rng rng;
  std::uint64_t seed;
  std::uint64_t made = 0;  // allocations so far: the index of the next value
  tb::Obj *slot[kSlots] = {};
};

void work(SlotArray &a, long steps, tb::Tally &t) {
  std::uint64_t made = 0, freed = 0;
  for (long i = 0; i < steps; ++i) {
    const std::uint32_t s = a.rng.below(kSlots);
    if (a.slot[s]) freed += tb::take(a.slot[s]);
    const std::uint64_t v = tb::value_of(a.seed, a.made++);
    a.slot[s] = tb::make(a.rng.range(kMinSize, kMaxSize), v);
    made += v;
  }
  t.add(made, freed, steps);
}

}  // namespace

int main(int argc, char **argv) {
  const tb::Args a = tb::parse(argc, argv,
                               "larson-style server simulation: slot arrays of random-size objects (8..1000 B), "
                               "handed to new threads every round");
  const int rounds = 20;
  const long steps = tb::scaled(a, 16000000.0 / a.threads / rounds, 10);  // per thread per round
  std::vector<SlotArray *> arrays;
  for (int i = 0; i < a.threads; ++i) arrays.push_back(new SlotArray(1000 + static_cast<std::uint64_t>(i)));
  tb::Tally t;
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::thread> ws;
    for (int i = 0; i < a.threads; ++i) {
      // round r hands array i to worker (i + r) mod threads: a fresh thread each time
      SlotArray &arr = *arrays[static_cast<std::size_t>((i + r) % a.threads)];
      ws.emplace_back([&arr, steps, &t] { work(arr, steps, t); });
    }
    for (auto &w : ws) w.join();
  }
  std::uint64_t freed = 0;
  for (SlotArray *arr : arrays) {
    for (tb::Obj *&o : arr->slot)
      if (o) freed += tb::take(o);
    delete arr;
  }
  t.freed += freed;
  return tb::finish("larson", t);
}
