// vpr — FPGA placement by simulated annealing over a small netlist, then a
// maze-routing estimate; its data structures in a chunked region.
//
// Models 175.vpr (SPEC CPU2000), a region program of the reaps paper (Tables
// 1-4) and of the 2026 "littering" study, which found no effect there: vpr
// is "very processor-intensive with a low memory footprint". Its chunk
// allocator serves "fairly small data structures where memory-efficiency is
// crucial": the netlist (blocks, nets, their pin lists and names) is read
// once into a region that lives for the whole run, and almost nothing else
// is allocated (2002 Table 3: 3,897 objects, 3,813 of them live at once, 44
// bytes on average, 0.1% of the time in memory operations). The time goes to
// the annealer: move a block, recompute the bounding boxes of the nets it
// touches, accept or reject. Each routing pass builds its route trees in a
// scratch region that is reset after the pass.
//
//   --alloc custom  vpr-style chunks: 32 KiB blocks from malloc, bump
//                   allocation, objects larger than a quarter chunk on their
//                   own; the region is freed only as a whole
//   --alloc reap    a reap per region
//   --alloc malloc  naive: each region a list of one-object chunks from malloc
//                   ("reduce chunk size to fit single objects", littering Table 4)
//   --alloc emulator  the reaps under libreap's region emulator (REAP_MODE=malloc)
//   --alloc talloc|apr|pmr  the regions as talloc contexts, APR pools, or
//                   std::pmr::monotonic_buffer_resource (nothing is freed singly)
//
// The work scales with --scale (annealing moves); the netlist does not, so
// the live objects stay those of Table 3's row at every size.
#include "region.hpp"
#include "workload.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

// vpr's chunk allocator: bump allocation in fixed chunks, large requests on
// their own; everything is released at once.
class ChunkRegion {
 public:
  ~ChunkRegion() { release(); }
  void *alloc(std::size_t n) {
    n = (n + 7) & ~std::size_t{7};
    if (n > kChunk / 4) return own(n);
    if (static_cast<std::size_t>(limit_ - next_) < n) {
      wl::HeldBlock *b = wl::hold_block(chunks_, kChunk, "chunk");
      next_ = b->data;
      limit_ = b->data + kChunk;
    }
    void *p = next_;
    next_ += n;
    return p;
  }
  void release() {
    wl::release_blocks(chunks_);
    wl::release_blocks(large_);
    next_ = limit_ = nullptr;
  }

 private:
  static constexpr std::size_t kChunk = 32 * 1024 - 32;
  // a large request on its own block, on a list of its own, so the bump pointer keeps its place
  void *own(std::size_t n) { return wl::hold_block(large_, n, "chunk")->data; }
  wl::HeldBlock *chunks_ = nullptr, *large_ = nullptr;
  char *next_ = nullptr, *limit_ = nullptr;
};

class Memory {
 public:
  explicit Memory(wl::Alloc mode) : custom_(mode == wl::Alloc::Custom) {
    if (!custom_) {
      wl::area_setup(mode, wl::PmrKind::Monotonic);  // released only in bulk
      netlist_area_ = wl::area_create(nullptr);
      scratch_area_ = wl::area_create(nullptr);
    }
  }
  ~Memory() {
    if (!custom_) {
      wl::area_destroy(scratch_area_);
      wl::area_destroy(netlist_area_);
    }
  }
  template <class T>
  T *netlist(std::size_t count = 1) {
    return static_cast<T *>(take(false, sizeof(T) * count));
  }
  template <class T>
  T *scratch(std::size_t count = 1) {
    return static_cast<T *>(take(true, sizeof(T) * count));
  }
  void reset_scratch() {
    if (custom_) scratch_.release();
    else wl::area_clear(scratch_area_);
  }
  std::uint64_t objects() const { return objects_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  void *take(bool scratch, std::size_t n) {
    ++objects_;
    bytes_ += n;
    void *p = custom_ ? (scratch ? scratch_ : netlist_).alloc(n)
                      : wl::area_alloc(scratch ? scratch_area_ : netlist_area_, n);
    return wl::check(p, "region");
  }
  bool custom_;
  ChunkRegion netlist_, scratch_;
  wl::Area *netlist_area_ = nullptr, *scratch_area_ = nullptr;
  std::uint64_t objects_ = 0, bytes_ = 0;
};

// ---------------------------------------------------------------------------
// The netlist: logic blocks and I/O pads on a square grid, nets joining them.
struct Net;
struct Block {
  char *name;
  int *nets;  // the nets on its pins
  int num_nets;
  int x, y;
  int is_io;
};
struct Pin {
  int block;
  int pin;      // which of the block's pins
  float delay;  // the timing estimate of the connection
  float slack;
};
struct Box {
  int xmin, xmax, ymin, ymax;
  int on_edge[4];  // pins on each edge (vpr keeps them to update boxes incrementally)
};
struct Net {
  char *name;
  Pin *pins;  // pins[0] drives the net
  int num_pins;
  Box *box;   // the bounding box of the current placement
  double cost;
};

constexpr int kGrid = 24;                 // logic blocks on a kGrid x kGrid array
constexpr int kBlocks = 500;              // logic blocks placed
constexpr int kPads = 90;                 // I/O pads on the perimeter
constexpr int kNets = 850;
constexpr int kMaxFanout = 22;

char *copy_name(Memory &mem, const char *prefix, int i) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%s%d", prefix, i);
  char *s = mem.netlist<char>(static_cast<std::size_t>(n) + 1);
  std::memcpy(s, buf, static_cast<std::size_t>(n) + 1);
  return s;
}

struct Placer {
  Memory &mem;
  Block *blocks = nullptr;
  Net *nets = nullptr;
  int **grid = nullptr;  // grid[x][y]: the block there, -1 if empty (x, y in 0..kGrid+1; the rim holds pads)
  int num_blocks = kBlocks + kPads;

  explicit Placer(Memory &m) : mem(m) {}

  static bool on_rim(int x, int y) {
    return (x == 0 || x == kGrid + 1 || y == 0 || y == kGrid + 1) && !((x == 0 || x == kGrid + 1) &&
                                                                         (y == 0 || y == kGrid + 1));
  }

  void build(wl::Rng &rng) {
    blocks = mem.netlist<Block>(static_cast<std::size_t>(num_blocks));
    nets = mem.netlist<Net>(kNets);
    grid = mem.netlist<int *>(kGrid + 2);
    for (int x = 0; x < kGrid + 2; ++x) {
      grid[x] = mem.netlist<int>(kGrid + 2);
      for (int y = 0; y < kGrid + 2; ++y) grid[x][y] = -1;
    }
    // pins per net: mostly two to five, a few high-fanout nets
    // (the reader's own scratch: on the stack, as a netlist reader's line buffers are)
    int fanout[kNets];
    int count[kBlocks + kPads] = {};
    for (int n = 0; n < kNets; ++n) {
      const std::uint32_t r = rng.below(100);
      fanout[n] = r < 45 ? 2 : r < 75 ? 3 : r < 88 ? 4 : r < 96 ? 6 : 10 + static_cast<int>(rng.below(12));
    }
    // pins: the driver near the sinks in index order (a netlist has locality)
    int members[kNets][kMaxFanout];
    for (int n = 0; n < kNets; ++n) {
      const int centre = static_cast<int>(rng.below(static_cast<std::uint32_t>(num_blocks)));
      for (int p = 0; p < fanout[n]; ++p) {
        const int spread = p == 0 ? 0 : static_cast<int>(rng.below(61)) - 30;
        int b = ((centre + spread) % num_blocks + num_blocks) % num_blocks;
        auto taken = [&](int c) {
          for (int q = 0; q < p; ++q)
            if (members[n][q] == c) return true;
          return false;
        };
        while (taken(b)) b = static_cast<int>(rng.below(static_cast<std::uint32_t>(num_blocks)));
        members[n][p] = b;
        ++count[b];
      }
    }
    for (int b = 0; b < num_blocks; ++b) {
      Block &blk = blocks[b];
      blk.is_io = b >= kBlocks;
      blk.name = copy_name(mem, blk.is_io ? "pad_" : "clb_", b);
      blk.num_nets = 0;
      blk.nets = count[b] ? mem.netlist<int>(static_cast<std::size_t>(count[b])) : nullptr;
    }
    for (int n = 0; n < kNets; ++n) {
      Net &net = nets[n];
      net.name = copy_name(mem, "n", n);
      net.num_pins = fanout[n];
      net.pins = mem.netlist<Pin>(static_cast<std::size_t>(fanout[n]));
      net.box = mem.netlist<Box>();
      for (int p = 0; p < fanout[n]; ++p) {
        Block &blk = blocks[members[n][p]];
        net.pins[p] = Pin{members[n][p], blk.num_nets, 0.f, 0.f};
        blk.nets[blk.num_nets++] = n;
      }
    }
    // initial placement: logic blocks row by row, pads round the rim
    int b = 0;
    for (int x = 1; x <= kGrid && b < kBlocks; ++x)
      for (int y = 1; y <= kGrid && b < kBlocks; ++y) place(b++, x, y);
    for (int x = 0; x < kGrid + 2 && b < num_blocks; ++x)
      for (int y = 0; y < kGrid + 2 && b < num_blocks; ++y)
        if (on_rim(x, y)) place(b++, x, y);
    for (int n = 0; n < kNets; ++n) nets[n].cost = net_cost(n, *nets[n].box);
  }

  void place(int b, int x, int y) {
    blocks[b].x = x;
    blocks[b].y = y;
    grid[x][y] = b;
  }

  // The bounding box of net n's pins, with the cost vpr's linear-congestion
  // model gives it: half-perimeter weighted by a fanout correction.
  double net_cost(int n, Box &box) const {
    const Net &net = nets[n];
    box.xmin = box.ymin = kGrid + 2;
    box.xmax = box.ymax = -1;
    box.on_edge[0] = box.on_edge[1] = box.on_edge[2] = box.on_edge[3] = 0;
    for (int p = 0; p < net.num_pins; ++p) {
      const Block &blk = blocks[net.pins[p].block];
      if (blk.x < box.xmin) box.xmin = blk.x;
      if (blk.x > box.xmax) box.xmax = blk.x;
      if (blk.y < box.ymin) box.ymin = blk.y;
      if (blk.y > box.ymax) box.ymax = blk.y;
    }
    for (int p = 0; p < net.num_pins; ++p) {
      const Block &blk = blocks[net.pins[p].block];
      box.on_edge[0] += blk.x == box.xmin;
      box.on_edge[1] += blk.x == box.xmax;
      box.on_edge[2] += blk.y == box.ymin;
      box.on_edge[3] += blk.y == box.ymax;
    }
    const double q = net.num_pins <= 3 ? 1.0 : 1.0 + 0.08 * std::sqrt(static_cast<double>(net.num_pins - 3));
    return q * ((box.xmax - box.xmin + 1) + (box.ymax - box.ymin + 1));
  }

  double total_cost() const {
    double c = 0;
    for (int n = 0; n < kNets; ++n) c += nets[n].cost;
    return c;
  }

  // One move: block a to (x, y), swapping with what is there. Returns whether it was kept.
  bool try_move(int a, int x, int y, double temperature, wl::Rng &rng, double &cost) {
    const int b = grid[x][y];
    const int ax = blocks[a].x, ay = blocks[a].y;
    if (b == a) return false;
    // move, then price every net either block touches (a net on both is priced once)
    blocks[a].x = x;
    blocks[a].y = y;
    if (b >= 0) {
      blocks[b].x = ax;
      blocks[b].y = ay;
    }
    double delta = 0;
    Box boxes[64];
    int touched[64];
    int k = 0;
    auto price = [&](const Block &blk) {
      for (int i = 0; i < blk.num_nets && k < 64; ++i) {
        const int n = blk.nets[i];
        bool seen = false;
        for (int j = 0; j < k; ++j) seen |= touched[j] == n;
        if (seen) continue;
        touched[k] = n;
        delta += net_cost(n, boxes[k]) - nets[n].cost;
        ++k;
      }
    };
    price(blocks[a]);
    if (b >= 0) price(blocks[b]);
    const bool keep = delta <= 0 || rng.unit() < std::exp(-delta / temperature);
    if (keep) {
      grid[x][y] = a;
      grid[ax][ay] = b;
      for (int j = 0; j < k; ++j) {
        Net &net = nets[touched[j]];
        *net.box = boxes[j];
        net.cost = net_cost(touched[j], *net.box);
      }
      cost += delta;
    } else {
      blocks[a].x = ax;
      blocks[a].y = ay;
      if (b >= 0) {
        blocks[b].x = x;
        blocks[b].y = y;
      }
    }
    return keep;
  }

  // Simulated annealing with vpr's adaptive schedule: the range limit and the
  // cooling rate follow the share of moves accepted.
  void anneal(long moves, wl::Rng &rng, wl::Checksum &sum) {
    double cost = total_cost();
    double temperature = 0.05 * cost / kNets;
    double range = kGrid;
    const long per_step = 4000;
    for (long done = 0; done < moves;) {
      long accepted = 0;
      const long step = moves - done < per_step ? moves - done : per_step;
      for (long i = 0; i < step; ++i) {
        const int a = static_cast<int>(rng.below(static_cast<std::uint32_t>(num_blocks)));
        const int r = range < 1.0 ? 1 : static_cast<int>(range);
        int x, y;
        if (blocks[a].is_io) {  // pads stay on the rim
          do {
            x = static_cast<int>(rng.below(kGrid + 2));
            y = static_cast<int>(rng.below(kGrid + 2));
          } while (!on_rim(x, y));
        } else {
          x = blocks[a].x + static_cast<int>(rng.below(static_cast<std::uint32_t>(2 * r + 1))) - r;
          y = blocks[a].y + static_cast<int>(rng.below(static_cast<std::uint32_t>(2 * r + 1))) - r;
          x = x < 1 ? 1 : x > kGrid ? kGrid : x;
          y = y < 1 ? 1 : y > kGrid ? kGrid : y;
        }
        accepted += try_move(a, x, y, temperature, rng, cost);
      }
      done += step;
      const double rate = static_cast<double>(accepted) / static_cast<double>(step);
      temperature *= rate > 0.96 ? 0.5 : rate > 0.8 ? 0.9 : rate > 0.15 ? 0.95 : 0.8;
      range *= 1.0 - 0.44 + rate;
      if (range > kGrid) range = kGrid;
      if (range < 1.0) range = 1.0;
      if (temperature < 1e-6) temperature = 1e-6;
      cost = total_cost();  // the running sum drifts in floating point: recompute as vpr does
      sum.add(static_cast<std::uint64_t>(std::llround(cost * 1000.0)));
    }
  }

  // A routing estimate: each high-fanout net's route tree, as a chain of
  // segments from the driver to each sink, built in the scratch region and
  // dropped after the pass. Returns the wire length.
  long route(int pass) {
    struct Segment {
      Segment *next;
      int x0, y0, x1, y1;
    };
    long wire = 0;
    for (int n = pass; n < kNets; n += 16) {
      const Net &net = nets[n];
      if (net.num_pins < 6) continue;
      Segment *tree = nullptr;
      const Block &src = blocks[net.pins[0].block];
      for (int p = 1; p < net.num_pins; ++p) {
        const Block &dst = blocks[net.pins[p].block];
        Segment *s = mem.scratch<Segment>();
        *s = Segment{tree, src.x, src.y, dst.x, dst.y};
        tree = s;
      }
      for (Segment *s = tree; s; s = s->next) wire += std::abs(s->x1 - s->x0) + std::abs(s->y1 - s->y0);
    }
    mem.reset_scratch();
    return wire;
  }
};

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt =
      wl::parse_options(argc, argv, "FPGA placement by simulated annealing, netlist in a chunked region (175.vpr)",
                        wl::kBasicAllocs | wl::alloc_bit(wl::Alloc::Emulator) | wl::kRegionLikeAllocs);
  const long moves = wl::scaled(opt, 1'600'000, 20'000);

  Memory mem(opt.alloc);
  wl::Checksum sum;
  wl::Rng rng(175);
  long wire = 0;
  double cost = 0;
  {
    Placer pl(mem);
    pl.build(rng);
    std::printf("initial cost %.3f\n", pl.total_cost());
    const int passes = 4;
    for (int pass = 0; pass < passes; ++pass) {
      pl.anneal(moves / passes, rng, sum);
      wire += pl.route(pass);
    }
    cost = pl.total_cost();
    for (int b = 0; b < pl.num_blocks; ++b) {
      sum.add(static_cast<std::uint64_t>(pl.blocks[b].x) << 16 | static_cast<std::uint64_t>(pl.blocks[b].y));
      sum.add_bytes(pl.blocks[b].name, std::strlen(pl.blocks[b].name));
    }
  }
  std::printf("moves %ld\nfinal cost %.3f\nwire %ld\n", moves, cost, wire);
  std::fprintf(stderr, "region_objects %" PRIu64 " mean_bytes %.1f (%s)\n", mem.objects(),
               mem.objects() ? static_cast<double>(mem.bytes()) / static_cast<double>(mem.objects()) : 0.0,
               wl::alloc_name(opt.alloc));
  wl::print_checksum(sum.value());
  return 0;
}
