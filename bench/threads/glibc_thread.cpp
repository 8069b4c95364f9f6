// glibc_thread — after glibc's thread benchmark for malloc, as it is used in
// allocator comparisons: every thread runs the same tight loop on its own,
// allocating one size into a small ring of slots and freeing the object it
// replaces. Nothing is shared, so this measures the per-thread fast path and
// how it scales with threads.
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr int kRing = 64;

void work(int id, long steps, std::size_t size, tb::Tally &t) {
  tb::Obj *ring[kRing] = {};
  std::uint64_t made = 0, freed = 0;
  const std::uint64_t seed = 7000 + static_cast<std::uint64_t>(id);
  for (long i = 0; i < steps; ++i) {
    tb::Obj *&slot = ring[i % kRing];
    if (slot) freed += tb::take(slot);
    const std::uint64_t v = tb::value_of(seed, static_cast<std::uint64_t>(i));
    slot = tb::make(size, v);
    made += v;
  }
  for (tb::Obj *o : ring)
    if (o) freed += tb::take(o);
  t.add(made, freed, steps);
}

}  // namespace

int main(int argc, char **argv) {
  const char *env = std::getenv("GLIBC_THREAD_SIZE");
  const tb::Args a = tb::parse(argc, argv, "glibc-thread-style loop: each thread allocates one size (64 B) and frees it",
                               "  GLIBC_THREAD_SIZE=N  the object size (24..65536, default 64)\n");
  std::size_t size = 64;
  if (env) {
    char *end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end == env || *end || v < 24 || v > 65536) {
      std::fprintf(stderr, "glibc_thread: GLIBC_THREAD_SIZE must be in 24..65536: '%s'\n", env);
      return 2;
    }
    size = static_cast<std::size_t>(v);
  }
  const long steps = tb::scaled(a, 60000000.0 / a.threads, 10);
  tb::Tally t;
  std::vector<std::thread> ws;
  for (int i = 0; i < a.threads; ++i) ws.emplace_back([i, steps, size, &t] { work(i, steps, size, t); });
  for (auto &w : ws) w.join();
  return tb::finish("glibc_thread", t);
}
