// boxed_sim — balls bouncing in a box, with a per-class allocator.
//
// Models boxed-sim, the balls-in-a-box simulator of the reaps paper (Table 1)
// and of the 2026 "littering" study (§4.3). The simulation keeps three kinds
// of same-type objects: balls (created when a ball splits or a new one is
// injected, destroyed when one falls into the drain), cell entries of the
// spatial grid (one per ball, replaced when the ball crosses into another
// cell) and collision events (made when two balls touch, consumed at once).
// boxed-sim recycles such objects through one free list per class, which is
// what the `custom` variant does here.
//
// As in boxed-sim, the physics is most of the work: each step integrates in
// fine substeps (contact search over the grid, impulses, motion), and objects
// come and go only when something happens — a crossing, a collision, a split —
// so memory operations are a small share of the run (the reaps paper's
// Table 3: 0.2% for boxed-sim).
//
//   --alloc custom  per-class LIFO free lists in front of malloc
//   --alloc reap    one reap for the simulation; reap_free per object
//   --alloc malloc  free lists removed: every object to malloc/free
//                   ("remove freelist", littering Table 4)
#include "workload.hpp"

#include <cstddef>
#include <new>

namespace {

struct CellEntry;

struct Ball {
  double x, y, vx, vy, r;
  std::uint32_t id;
  std::uint16_t hits;
  std::uint8_t cx, cy;  // the grid cell its entry is in
  Ball *prev, *next;    // the live list, in creation order
  CellEntry *entry;     // its entry in the grid
};

struct CellEntry {
  Ball *ball;
  CellEntry *next;
};

struct Event {
  Ball *a, *b;
  double nx, ny;  // unit normal from a to b
  Event *next;
};

// One allocator interface for the three variants. `custom` keeps a LIFO free
// list per class, threaded through the freed objects themselves.
class Allocator {
 public:
  explicit Allocator(wl::Alloc mode) : mode_(mode) {
    if (mode_ != wl::Alloc::Custom) reap_ = wl::new_reap(nullptr);
  }
  ~Allocator() {
    for (auto *&list : free_) {
      while (list) {
        FreeNode *n = list;
        list = n->next;
        std::free(n);
      }
    }
    if (reap_) reap_destroy(reap_);
  }
  Allocator(const Allocator &) = delete;
  Allocator &operator=(const Allocator &) = delete;

  template <class T, int Class>
  T *make() {
    void *p;
    if (mode_ == wl::Alloc::Custom && free_[Class]) {
      FreeNode *n = free_[Class];
      free_[Class] = n->next;
      p = n;
    } else if (mode_ == wl::Alloc::Custom) {
      p = std::malloc(sizeof(T));
    } else if (mode_ == wl::Alloc::Reap) {
      p = reap_malloc(reap_, sizeof(T));
    } else {
      p = std::malloc(sizeof(T));
    }
    ++allocations_;
    return new (wl::check(p, "boxed_sim")) T{};
  }

  template <int Class>
  void release(void *p) {
    if (mode_ == wl::Alloc::Custom) {
      auto *n = static_cast<FreeNode *>(p);
      n->next = free_[Class];
      free_[Class] = n;
    } else if (mode_ == wl::Alloc::Reap) {
      reap_free(reap_, p);
    } else {
      std::free(p);
    }
  }

  std::uint64_t allocations() const { return allocations_; }

 private:
  struct FreeNode {
    FreeNode *next;
  };
  wl::Alloc mode_;
  reap_t *reap_ = nullptr;
  FreeNode *free_[3] = {nullptr, nullptr, nullptr};
  std::uint64_t allocations_ = 0;
};

enum { kBall, kCell, kEvent };

constexpr double kBox = 100.0;      // the box is [0, kBox)^2
constexpr double kCellSize = 2.0;   // at least the largest diameter
constexpr int kGrid = static_cast<int>(kBox / kCellSize);
constexpr double kDt = 0.05;        // one step of simulated time
constexpr int kSubsteps = 24;       // integrated in this many substeps
constexpr double kGravity = -0.4;
constexpr double kDrain = 6.0;      // balls touching the floor at x < kDrain leave

class Simulation {
 public:
  Simulation(Allocator &a, std::uint64_t seed) : alloc_(a), rng_(seed) {}
  ~Simulation() {
    while (head_) remove(head_);
  }

  void inject(int n) {
    for (int i = 0; i < n; ++i) {
      Ball *b = alloc_.make<Ball, kBall>();
      b->r = 0.3 + 0.6 * rng_.unit();
      b->x = kDrain + b->r + (kBox - kDrain - 2 * b->r) * rng_.unit();
      b->y = kBox * 0.5 + (kBox * 0.5 - b->r) * rng_.unit();
      b->vx = 4.0 * (rng_.unit() - 0.5);
      b->vy = 4.0 * (rng_.unit() - 0.5);
      append(b);
    }
  }

  void step() {
    for (int i = 0; i < kSubsteps; ++i) {
      find_contacts();
      resolve_contacts();
      move(kDt / kSubsteps);
    }
  }

  std::size_t live() const { return live_; }
  std::uint64_t collisions() const { return collisions_; }
  std::uint64_t drained() const { return drained_; }

  void checksum_into(wl::Checksum &c) const {
    c.add(live_);
    for (const Ball *b = head_; b; b = b->next) {
      c.add(b->id);
      c.add(static_cast<std::uint64_t>(std::llround(b->x * 1e6)));
      c.add(static_cast<std::uint64_t>(std::llround(b->y * 1e6)));
    }
  }

 private:
  void append(Ball *b) {
    b->id = next_id_++;
    b->prev = tail_;
    b->next = nullptr;
    (tail_ ? tail_->next : head_) = b;
    tail_ = b;
    ++live_;
    enter_cell(b);
  }

  void remove(Ball *b) {
    leave_cell(b);
    (b->prev ? b->prev->next : head_) = b->next;
    (b->next ? b->next->prev : tail_) = b->prev;
    --live_;
    alloc_.release<kBall>(b);
  }

  static int cell_of(double v) {
    int c = static_cast<int>(v / kCellSize);
    return c < 0 ? 0 : (c >= kGrid ? kGrid - 1 : c);
  }

  // A ball's grid entry: made where the ball is, dropped when it leaves.
  void enter_cell(Ball *b) {
    CellEntry *e = alloc_.make<CellEntry, kCell>();
    e->ball = b;
    b->cx = static_cast<std::uint8_t>(cell_of(b->x));
    b->cy = static_cast<std::uint8_t>(cell_of(b->y));
    CellEntry *&slot = grid_[b->cy][b->cx];
    e->next = slot;
    slot = e;
    b->entry = e;
  }

  void leave_cell(Ball *b) {
    CellEntry **link = &grid_[b->cy][b->cx];
    while (*link != b->entry) link = &(*link)->next;
    *link = b->entry->next;
    alloc_.release<kCell>(b->entry);
    b->entry = nullptr;
  }

  // Every touching, approaching pair becomes one event (queued in order).
  void find_contacts() {
    Event **tail = &events_;
    for (Ball *a = head_; a; a = a->next) {
      const int cx = cell_of(a->x), cy = cell_of(a->y);
      for (int gy = cy - 1; gy <= cy + 1; ++gy) {
        if (gy < 0 || gy >= kGrid) continue;
        for (int gx = cx - 1; gx <= cx + 1; ++gx) {
          if (gx < 0 || gx >= kGrid) continue;
          for (CellEntry *e = grid_[gy][gx]; e; e = e->next) {
            Ball *b = e->ball;
            if (b->id <= a->id) continue;
            const double dx = b->x - a->x, dy = b->y - a->y;
            const double d2 = dx * dx + dy * dy, rr = a->r + b->r;
            if (d2 >= rr * rr || d2 == 0.0) continue;
            const double d = std::sqrt(d2);
            const double nx = dx / d, ny = dy / d;
            if ((b->vx - a->vx) * nx + (b->vy - a->vy) * ny >= 0.0) continue;
            Event *ev = alloc_.make<Event, kEvent>();
            *ev = Event{a, b, nx, ny, nullptr};
            *tail = ev;
            tail = &ev->next;
          }
        }
      }
    }
  }

  // Elastic collisions with mass ~ r^2; a ball hit often enough splits in two.
  void resolve_contacts() {
    while (events_) {
      Event *ev = events_;
      events_ = ev->next;
      Ball *a = ev->a, *b = ev->b;
      const double ma = a->r * a->r, mb = b->r * b->r;
      const double rel = (b->vx - a->vx) * ev->nx + (b->vy - a->vy) * ev->ny;
      const double j = 2.0 * rel / (ma + mb);
      a->vx += j * mb * ev->nx;
      a->vy += j * mb * ev->ny;
      b->vx -= j * ma * ev->nx;
      b->vy -= j * ma * ev->ny;
      ++collisions_;
      ++a->hits;
      ++b->hits;
      alloc_.release<kEvent>(ev);
      if (a->hits >= 24 && a->r > 0.45) split(a);
    }
  }

  void split(Ball *a) {
    a->r *= 0.7;
    a->hits = 0;
    Ball *c = alloc_.make<Ball, kBall>();
    c->r = a->r;
    c->x = a->x + (a->vx >= 0 ? -0.5 : 0.5) * a->r;
    c->y = a->y;
    c->vx = -a->vx;
    c->vy = a->vy + 0.5;
    c->hits = 0;
    append(c);
  }

  void move(double dt) {
    for (Ball *b = head_; b;) {
      Ball *next = b->next;
      b->vy += kGravity * dt;
      b->x += b->vx * dt;
      b->y += b->vy * dt;
      if (b->x < b->r) { b->x = b->r; b->vx = -b->vx; }
      if (b->x > kBox - b->r) { b->x = kBox - b->r; b->vx = -b->vx; }
      if (b->y > kBox - b->r) { b->y = kBox - b->r; b->vy = -b->vy; }
      if (b->y < b->r) {
        if (b->x < kDrain) {
          ++drained_;
          remove(b);
          b = next;
          continue;
        } else {
          b->y = b->r;
          b->vy = -0.98 * b->vy + 0.6;  // a kick keeps the box lively
        }
      }
      if ((cell_of(b->x) != b->cx || cell_of(b->y) != b->cy)) {
        leave_cell(b);  // crossed into another cell
        enter_cell(b);
      }
      b = next;
    }
  }

  Allocator &alloc_;
  wl::Rng rng_;
  Ball *head_ = nullptr, *tail_ = nullptr;
  std::size_t live_ = 0;
  std::uint32_t next_id_ = 0;
  CellEntry *grid_[kGrid][kGrid] = {};
  Event *events_ = nullptr;
  std::uint64_t collisions_ = 0, drained_ = 0;
};

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt = wl::parse_options(
      argc, argv, "balls in a box; per-class free lists (boxed-sim)", wl::kBasicAllocs, true);
  const long steps = wl::scaled(opt, 400, 2);
  // the balls kept in the box: --live sizes the live set (its objects: balls, grid entries, events)
  const std::size_t population = static_cast<std::size_t>(wl::sized(opt, 1000, 10));

  Allocator alloc(opt.alloc);
  wl::Checksum sum;
  {
    Simulation sim(alloc, 13);
    sim.inject(static_cast<int>(population));
    for (long s = 0; s < steps; ++s) {
      sim.step();
      if (sim.live() < population) sim.inject(static_cast<int>((population - sim.live() + 3) / 4));
      if (s % 100 == 99) sim.checksum_into(sum);
    }
    sim.checksum_into(sum);
    std::printf("steps %ld\nballs %zu\ncollisions %" PRIu64 "\ndrained %" PRIu64 "\n", steps,
                sim.live(), sim.collisions(), sim.drained());
  }
  std::fprintf(stderr, "allocations %" PRIu64 " (%s)\n", alloc.allocations(), wl::alloc_name(opt.alloc));
  wl::print_checksum(sum.value());
  return 0;
}
