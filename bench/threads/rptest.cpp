// rptest — rpmalloc's benchmark with the shape the public allocator
// benchmark suite's runner gives it (`rptest 2 0 1 2 500 1000 100 8 16000`):
// each of N threads owns 1000 slots. The program runs two rounds of N new
// threads, and each thread two passes of 500 loops. A loop
//   - frees 24..79 of its objects, stepping through its slots by 7;
//   - frees every batch other threads handed it since the last loop
//     (the objects, the batch's array, the batch);
//   - allocates 30..99 objects into its slots, stepping by 3, freeing
//     what a slot held;
//   - every second loop allocates one more batch as large and hands it to
//     the next thread (the original stops once some thread has finished
//     its pass; here the work, and so the checksum, does not depend on how
//     the threads interleave).
// Sizes are 8..16000 bytes with a linear drop-off (most above 1 KiB).
// Requests under 4 KiB go, in turn, to calloc, memalign(8) and
// memalign(16), which the original follows with a memset of the whole
// object; larger ones to calloc: every page is written. After its loops a
// thread waits for the others, freeing what they hand it and sleeping 1 ms
// at a time; then it frees all its own objects and, once every thread is
// past its loops, the last batches it was handed.
//
// What the random producer/consumer it replaces left out, and what makes
// the original hard for an allocator that gives memory back: objects mostly
// of several KiB, zeroed or filled on every allocation; the remote frees in
// bursts of a whole batch; and threads that stop for milliseconds between
// passes while the others free their objects, so that an allocator that
// returns an idle thread's freed pages to the kernel has the thread fault
// them in again when it resumes. The original's one-second pauses, in
// which nothing is allocated or freed, and its timing of the loops alone
// are left out: this program is timed whole.
#include <malloc.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr std::uint32_t kSlots = 1000;
constexpr std::uint32_t kAllocStep = 3, kFreeStep = 7;  // coprime with kSlots: each walk visits every slot
constexpr std::uint32_t kMinSize = 8, kMaxSize = 16000;
constexpr std::uint32_t kAlignedBelow = 4096;  // requests below this alternate calloc / memalign(8) / memalign(16)
constexpr int kRounds = 2, kPasses = 2;  // at scale 1
constexpr long kLoops = 500;    // a pass at scale 1
constexpr int kHandEvery = 2;   // loops between two handovers
constexpr int kTableSize = 2000;

// Sizes, drawn once and walked in turn (as the original walks its table):
// min + range * u2 * |u0 + u1 - 1|, the product of a uniform draw and a
// triangular one, so that small sizes are the most frequent and the largest
// the rarest, falling off linearly. Operation counts per loop likewise.
struct Tables {
  std::vector<std::uint32_t> size;
  std::vector<std::uint32_t> allocs, frees;
};

Tables make_tables() {
  Tables t;
  tb::Rng rng(2024);
  auto unit = [&rng] { return static_cast<double>(rng.below(1u << 30)) / static_cast<double>(1u << 30); };
  for (int i = 0; i < kTableSize; ++i) {
    const double u0 = unit(), u1 = unit(), u2 = unit();
    const double s = kMinSize + (kMaxSize - kMinSize) * u2 * std::fabs(u0 + u1 - 1.0);
    t.size.push_back(static_cast<std::uint32_t>(s));
  }
  // Lengths 311 and 257, prime and different: the pairs of counts a loop
  // sees repeat only after their product.
  for (int i = 0; i < 311; ++i) t.allocs.push_back(30 + rng.below(70));
  for (int i = 0; i < 257; ++i) t.frees.push_back((30 + rng.below(70)) * 8 / 10);
  return t;
}

// An object is bare bytes of at least 8: its value in its first 8 bytes and,
// when it is longer, its low byte in its last, checked at its free.
struct Item {
  unsigned char *p;
  std::uint32_t size;
};

[[noreturn]] void out_of_memory(std::size_t n) {
  std::fprintf(stderr, "rptest: out of memory (%zu bytes)\n", n);
  std::exit(1);
}

// The original's allocation: calloc, or memalign and a fill of every byte.
void *get(std::size_t align, std::size_t n) {
  void *p;
  if (align != 0) {
    p = memalign(align, n);
    if (p) std::memset(p, 0xcd, n);
  } else {
    p = std::calloc(1, n);
  }
  if (!p) out_of_memory(n);
  return p;
}

std::uint64_t put_value(Item it, std::uint64_t v) {
  std::memcpy(it.p, &v, sizeof v);
  if (it.size > sizeof v) it.p[it.size - 1] = static_cast<unsigned char>(v);
  return v;
}

std::uint64_t drop(Item &it) {
  if (!it.p) return 0;
  std::uint64_t v;
  std::memcpy(&v, it.p, sizeof v);
  if (it.size > sizeof v && it.p[it.size - 1] != static_cast<unsigned char>(v)) v ^= 0xdeadbeefull;  // shows in the checksum
  std::free(it.p);
  it.p = nullptr;
  return v;
}

// A batch handed to another thread: allocated as the original allocates
// its own (memalign(16), filled), with its array of objects.
struct Batch {
  Batch *next;
  std::uint32_t count;
  Item *items;
};

// Pushed by any thread, taken whole by its owner: an exchange is the only
// pop, so there is no ABA problem.
struct Inbox {
  alignas(64) std::atomic<Batch *> head{nullptr};
  void push(Batch *b) {
    Batch *h = head.load(std::memory_order_relaxed);
    do b->next = h;
    while (!head.compare_exchange_weak(h, b, std::memory_order_release, std::memory_order_relaxed));
  }
  Batch *take_all() { return head.exchange(nullptr, std::memory_order_acquire); }
};

struct Shared {
  const Tables &t;
  int threads;
  long loops;
  std::vector<Inbox> inbox;
  std::atomic<int> past_loops{0};  // threads past their loops in this pass
  std::atomic<int> past_frees{0};  // threads past freeing their own objects in this pass
  tb::Tally tally;
  Shared(const Tables &t, int threads, long loops) : t(t), threads(threads), loops(loops), inbox(threads) {}
};

std::uint64_t free_batches(Batch *b) {
  std::uint64_t sum = 0;
  while (b) {
    for (std::uint32_t i = 0; i < b->count; ++i) sum += drop(b->items[i]);
    Batch *next = b->next;
    std::free(b->items);
    std::free(b);
    b = next;
  }
  return sum;
}

void sleep_1ms() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

void work(Shared &sh, int id, long round) {
  const Tables &t = sh.t;
  std::vector<Item> slot(kSlots, Item{nullptr, 0});
  const std::uint64_t seed = 31000 + static_cast<std::uint64_t>(round * 256 + id);
  std::uint64_t made = 0, freed = 0, n_made = 0;
  std::uint32_t alloc_i = 0, free_i = 0;
  int to = id;  // the last thread handed a batch
  auto make = [&](std::uint32_t &si, std::uint32_t k) {
    const std::uint32_t size = t.size[si];
    si = si + 1 == t.size.size() ? 0 : si + 1;
    static constexpr std::size_t kAlign[3] = {0, 8, 16};
    Item it{static_cast<unsigned char *>(get(size < kAlignedBelow ? kAlign[(si + k) % 3] : 0, size)), size};
    made += put_value(it, tb::value_of(seed, n_made++));
    return it;
  };
  for (int pass = 0; pass < kPasses; ++pass) {
    // Each thread and pass starts at its own place in the tables.
    std::uint32_t si = static_cast<std::uint32_t>((37 * (id + 1) * (pass + 1)) % t.size.size());
    const bool hand = sh.threads > 1;
    for (long loop = 0; loop < sh.loops; ++loop) {
      Batch *got = sh.inbox[id].take_all();
      const std::uint32_t nf = t.frees[static_cast<std::size_t>(pass + loop) % t.frees.size()];
      const std::uint32_t na = t.allocs[static_cast<std::size_t>(pass + loop) % t.allocs.size()];
      for (std::uint32_t k = 0; k < nf; ++k) {
        freed += drop(slot[free_i]);
        free_i = (free_i + kFreeStep) % kSlots;
      }
      freed += free_batches(got);
      for (std::uint32_t k = 0; k < na; ++k) {
        freed += drop(slot[alloc_i]);
        slot[alloc_i] = make(si, k);
        alloc_i = (alloc_i + kAllocStep) % kSlots;
      }
      if (hand && loop % kHandEvery == 0) {
        auto *b = static_cast<Batch *>(get(16, sizeof(Batch)));
        b->count = na;
        b->items = static_cast<Item *>(get(16, sizeof(Item) * na));
        for (std::uint32_t k = 0; k < na; ++k) b->items[k] = make(si, k);
        to = (to + 1) % sh.threads;
        if (to == id) to = (to + 1) % sh.threads;
        sh.inbox[to].push(b);
      }
    }
    // Wait for the others, freeing what they still hand over.
    sh.past_loops.fetch_add(1);
    while (sh.past_loops.load() < sh.threads) {
      freed += free_batches(sh.inbox[id].take_all());
      sleep_1ms();
    }
    for (Item &it : slot) freed += drop(it);
    // Every thread is past its loops: nothing more is pushed after this.
    freed += free_batches(sh.inbox[id].take_all());
    sh.past_frees.fetch_add(1);
    while (sh.past_frees.load() < sh.threads) sleep_1ms();
    // The last thread through resets the pass's counters for the next.
    if (sh.past_frees.fetch_add(1) == 2 * sh.threads - 1) {
      sh.past_loops.store(0);
      sh.past_frees.store(0);
    } else {
      while (sh.past_frees.load() != 0) sleep_1ms();
    }
  }
  sh.tally.add(made, freed, static_cast<long>(n_made));
}

}  // namespace

int main(int argc, char **argv) {
  const tb::Args a = tb::parse(argc, argv,
                               "rpmalloc's test as the public allocator suite runs it: 1000 slots a thread, "
                               "8..16000 B (linear drop-off), calloc or memalign and every byte written, "
                               "batches handed to the next thread, threads that pause between passes");
  const Tables t = make_tables();
  // The scale multiplies the rounds (the original's two at 1), and below 1
  // shortens the passes too: a longer run keeps the original's shape.
  const long rounds = tb::scaled(a, kRounds, 1);
  Shared sh(t, a.threads, a.scale < 1.0 ? tb::scaled(a, kLoops, 2) : kLoops);
  for (long round = 0; round < rounds; ++round) {
    std::vector<std::thread> ws;
    for (int i = 0; i < a.threads; ++i) ws.emplace_back([&sh, i, round] { work(sh, i, round); });
    for (auto &w : ws) w.join();
  }
  return tb::finish("rptest", sh.tally);
}
