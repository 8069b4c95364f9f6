// larson — Larson and Krishnan's server simulation, with the shape the public
// allocator benchmark suite gives it (`larson 5 8 1000 5000 100 4141 N`):
// each of N workers owns an array of 5000 slots holding objects of 8..999
// bytes; a step frees the object in a random slot and allocates one of a
// random size there, writing its first bytes. Main fills every array first
// (and replaces four times as many objects at random, shuffled), so the
// workers' first frees are of main's objects. A worker lives for 500,000
// steps (the suite's 100 rounds of 5000); then it starts its successor,
// which carries on with the same array, and exits: the successor frees what
// its predecessor allocated while that thread exits, and every heap of an
// exited thread is found again by a thread created later.
//
// What a smaller version leaves out: 5000 live objects a thread spread
// over every class up to 1 KiB (about 80 a class, several blocks each in an
// allocator with small blocks, so frees land in blocks of every state), and
// threads that are born while their predecessor still runs.
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr std::uint32_t kSlots = 5000;
constexpr std::uint32_t kMinSize = 8, kMaxSize = 1000;  // sizes kMinSize .. kMaxSize - 1
constexpr long kLife = 500000;                           // steps of one thread

struct Chain {
  Chain(std::uint64_t seed, long lives, long life) : rng(seed), seed(seed), lives(lives), life(life) {}
  std::vector<tb::BareSlot> slot = std::vector<tb::BareSlot>(kSlots);  // objects are bare bytes
  tb::Rng rng;
  std::uint64_t seed;
  std::uint64_t made_n = 0;  // allocations so far: the index of the next value
  std::uint64_t made = 0, freed = 0;
  long lives, life;
};

struct Done {
  std::mutex m;
  std::condition_variable cv;
  int left = 0;
};

void fill(Chain &c, tb::BareSlot &s) {
  const std::uint32_t size = kMinSize + c.rng.below(kMaxSize - kMinSize);
  s.p = static_cast<unsigned char *>(std::malloc(size));
  if (!s.p) {
    std::fprintf(stderr, "out of memory (%u bytes)\n", size);
    std::exit(1);
  }
  s.size = size;
  s.value = tb::value_of(c.seed, c.made_n++);
  s.p[0] = static_cast<unsigned char>(s.value);
  s.p[size - 1] = static_cast<unsigned char>(s.value);
  c.made += s.value;
}

void worker(Chain *c, Done *d) {
  for (long i = 0; i < c->life; ++i) {
    tb::BareSlot &s = c->slot[c->rng.below(kSlots)];
    c->freed += tb::release(s);
    fill(*c, s);
  }
  if (--c->lives > 0) {
    std::thread(worker, c, d).detach();  // the successor starts before this thread exits
    return;
  }
  std::lock_guard<std::mutex> lock(d->m);
  if (--d->left == 0) d->cv.notify_all();
}

}  // namespace

int main(int argc, char **argv) {
  const tb::Args a = tb::parse(argc, argv,
                               "larson server simulation: 5000 slots of 8..999 B a thread, each thread "
                               "replaced by a new one every 500,000 steps");
  const long total = tb::scaled(a, 16000000.0 / a.threads, 10);  // steps a chain takes, all lives
  const long life = total < kLife ? total : kLife;
  const long lives = total / life;
  std::vector<Chain *> chains;
  for (int i = 0; i < a.threads; ++i) chains.push_back(new Chain(4141 + static_cast<std::uint64_t>(i), lives, life));
  // Main's warm-up: every slot filled, the arrays shuffled, then four
  // replacements a slot at random.
  for (Chain *c : chains)
    for (tb::BareSlot &s : c->slot) fill(*c, s);
  for (Chain *c : chains) {
    for (std::uint32_t i = kSlots; i > 1; --i) std::swap(c->slot[i - 1], c->slot[c->rng.below(i)]);
    for (std::uint32_t i = 0; i < 4 * kSlots; ++i) {
      tb::BareSlot &s = c->slot[c->rng.below(kSlots)];
      c->freed += tb::release(s);
      fill(*c, s);
    }
  }
  Done done;
  done.left = a.threads;
  for (Chain *c : chains) std::thread(worker, c, &done).detach();
  {
    std::unique_lock<std::mutex> lock(done.m);
    done.cv.wait(lock, [&] { return done.left == 0; });
  }
  tb::Tally t;
  for (Chain *c : chains) {
    for (tb::BareSlot &s : c->slot) c->freed += tb::release(s);
    t.add(c->made, c->freed, lives * life);
    delete c;
  }
  return tb::finish("larson", t);
}
