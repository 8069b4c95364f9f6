// geometry_nodes — a geometry-node tree evaluated frame by frame, every
// node's output in a linear allocator that lives for one evaluation.
//
// Models Blender's geometry-nodes benchmark of the 2026 "littering" study
// (`geometry_nodes`, input foreach_zone_bfield), whose custom allocator is
// Blender's LinearAllocator: bump allocation in chunks that grow, requests
// above a threshold in buffers of their own, everything freed when the
// evaluation ends. The study found regions 14% faster than naive allocation
// on mimalloc and almost no effect of littering: "70% of allocations in the
// geometry_nodes benchmark are bigger than 64 bytes" and it "has a small
// working set of objects: only 18k".
//
// One evaluation runs a for-each zone over a set of seed curves: per element
// it makes the curve's points, a random offset per point, a field sampled at
// each point (a sum of dipoles: the "b field"), the displaced positions and
// the curve's edges, then joins every element's geometry and takes its
// statistics. About 18k objects are live at the end of an evaluation, 70% of
// them larger than 64 bytes.
//
//   --alloc custom  a LinearAllocator per evaluation: chunks from 4 KiB
//                   doubling to 64 KiB, requests above 4 KiB in their own
//                   buffer, all freed at its end
//   --alloc reap    a reap per evaluation
//   --alloc malloc  naive: the large-request threshold at 0, so every request
//                   is its own buffer from malloc, freed at the end (littering
//                   Table 4: "reduce large allocation threshold to 0")
//   --alloc emulator  the reaps under libreap's region emulator (REAP_MODE=malloc)
//   --alloc talloc|apr|pmr  the evaluation's region as a talloc context, an APR
//                   pool, or std::pmr::monotonic_buffer_resource
//
// --scale sets the number of evaluations; each evaluation is the same size.
#include "region.hpp"
#include "workload.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

// Blender's LinearAllocator, as the paper describes it (Algorithms 1 and 2).
class LinearAllocator {
 public:
  ~LinearAllocator() { wl::release_blocks(buffers_); }
  void *allocate(std::size_t n) {
    n = (n + 15) & ~std::size_t{15};
    if (n > kLargeThreshold) return wl::hold_block(buffers_, n, "linear allocator")->data;
    if (static_cast<std::size_t>(limit_ - next_) < n) {
      wl::HeldBlock *b = wl::hold_block(buffers_, next_chunk_, "linear allocator");
      next_ = b->data;
      limit_ = b->data + next_chunk_;
      if (next_chunk_ < kMaxChunk) next_chunk_ *= 2;
    }
    void *p = next_;
    next_ += n;
    return p;
  }

 private:
  static constexpr std::size_t kLargeThreshold = 4096;
  static constexpr std::size_t kMaxChunk = 64 * 1024;
  wl::HeldBlock *buffers_ = nullptr;  // chunks and large buffers alike
  char *next_ = nullptr, *limit_ = nullptr;
  std::size_t next_chunk_ = 4096;
};

// One evaluation's memory, through the variant's allocator.
class Evaluation {
 public:
  Evaluation(bool custom, std::uint64_t &objects, std::uint64_t &large)
      : custom_(custom), objects_(objects), large_(large) {
    if (custom_) linear_ = new (linear_storage_) LinearAllocator();
    else area_ = wl::area_create(nullptr);
  }
  ~Evaluation() {
    if (custom_) linear_->~LinearAllocator();
    else wl::area_destroy(area_);
  }
  Evaluation(const Evaluation &) = delete;
  Evaluation &operator=(const Evaluation &) = delete;

  template <class T>
  T *make(std::size_t count) {
    const std::size_t n = sizeof(T) * count;
    ++objects_;
    large_ += n > 64;
    return static_cast<T *>(wl::check(custom_ ? linear_->allocate(n) : wl::area_alloc(area_, n), "evaluation"));
  }

 private:
  bool custom_;
  std::uint64_t &objects_, &large_;
  LinearAllocator *linear_ = nullptr;
  alignas(LinearAllocator) unsigned char linear_storage_[sizeof(LinearAllocator)];
  wl::Area *area_ = nullptr;
};

struct float3 {
  float x, y, z;
};
struct int2 {
  int a, b;
};

// What the zone's nodes pass on: small records beside the arrays.
struct FieldContext {
  int element;
  int domain;
  std::uint32_t seed;
  float strength;
};
struct CurveGeometry {
  const float3 *positions;
  const float *radius;
  const float3 *tangent;
  const int2 *edges;
  int points;
  float length;
  float3 min, max;
};

constexpr int kElements = 2570;  // the for-each zone's elements (seed curves)
constexpr int kDipoles = 3;

std::uint32_t hash32(std::uint32_t x) { return static_cast<std::uint32_t>(wl::mix(x)); }

float hash_float(std::uint32_t a, std::uint32_t b) { return static_cast<float>(hash32(a * 0x9e3779b9u ^ b) >> 8) * 0x1.0p-24f; }

// The field sampled at a point: a few dipoles that move with the frame.
float3 b_field(float3 p, int frame) {
  float3 out{0.f, 0.f, 0.f};
  for (int d = 0; d < kDipoles; ++d) {
    const float phase = 0.05f * static_cast<float>(frame) + 2.1f * static_cast<float>(d);
    const float3 c{std::cos(phase) * 3.f, std::sin(phase) * 3.f, 0.5f * static_cast<float>(d) - 0.5f};
    const float3 m{0.f, 0.3f * static_cast<float>(d - 1), 1.f};
    const float3 r{p.x - c.x, p.y - c.y, p.z - c.z};
    const float r2 = r.x * r.x + r.y * r.y + r.z * r.z + 0.05f;
    const float inv = 1.f / (r2 * std::sqrt(r2));
    const float mr = 3.f * (m.x * r.x + m.y * r.y + m.z * r.z) / r2;
    out.x += (mr * r.x - m.x) * inv;
    out.y += (mr * r.y - m.y) * inv;
    out.z += (mr * r.z - m.z) * inv;
  }
  return out;
}

// One element of the for-each zone: a seed curve traced a few steps along the field.
CurveGeometry *zone_element(Evaluation &ev, int e, int frame) {
  const FieldContext context{e, 1, hash32(static_cast<std::uint32_t>(e) * 2654435761u + 7u), 0.15f};
  const FieldContext *ctx = &context;  // the node's evaluation context, on the stack as Blender keeps it
  const int points = 6 + static_cast<int>(hash32(static_cast<std::uint32_t>(e)) % 28);  // 6 .. 33

  // Random Value node: a float per point
  float *noise = ev.make<float>(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) noise[i] = hash_float(ctx->seed, static_cast<std::uint32_t>(i)) - 0.5f;

  // Curve Line node, then Set Position with the field as offset
  float3 *start = ev.make<float3>(static_cast<std::size_t>(points));
  float3 p{4.f * hash_float(ctx->seed, 1001u) - 2.f, 4.f * hash_float(ctx->seed, 1002u) - 2.f,
           2.f * hash_float(ctx->seed, 1003u) - 1.f};
  for (int i = 0; i < points; ++i) {
    start[i] = p;
    const float3 f = b_field(p, frame);
    const float len = std::sqrt(f.x * f.x + f.y * f.y + f.z * f.z) + 1e-6f;
    const float step = ctx->strength * (1.f + 0.3f * noise[i]) / len;
    p = float3{p.x + f.x * step, p.y + f.y * step, p.z + f.z * step};
  }
  float3 *moved = ev.make<float3>(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) {
    const float3 f = b_field(start[i], frame + 1);
    moved[i] = float3{start[i].x + 0.01f * f.x, start[i].y + 0.01f * f.y, start[i].z + 0.01f * f.z};
  }
  // Curve Tangent node: a unit vector per point
  float3 *tangent = ev.make<float3>(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) {
    const float3 a = moved[i > 0 ? i - 1 : 0], b = moved[i + 1 < points ? i + 1 : points - 1];
    const float3 t{b.x - a.x, b.y - a.y, b.z - a.z};
    const float len = std::sqrt(t.x * t.x + t.y * t.y + t.z * t.z) + 1e-9f;
    tangent[i] = float3{t.x / len, t.y / len, t.z / len};
  }

  // Curve to Mesh: edges and a radius per point
  int2 *edges = ev.make<int2>(static_cast<std::size_t>(points - 1));
  for (int i = 0; i + 1 < points; ++i) edges[i] = int2{i, i + 1};
  float *radius = ev.make<float>(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) radius[i] = 0.02f + 0.01f * noise[i];

  CurveGeometry *out = ev.make<CurveGeometry>(1);
  out->positions = moved;
  out->radius = radius;
  out->tangent = tangent;
  out->edges = edges;
  out->points = points;
  out->length = 0.f;
  out->min = out->max = moved[0];
  for (int i = 0; i + 1 < points; ++i) {
    const float3 a = moved[edges[i].a], b = moved[edges[i].b];
    out->length += std::sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y) + (b.z - a.z) * (b.z - a.z));
  }
  for (int i = 1; i < points; ++i) {
    out->min = float3{std::fmin(out->min.x, moved[i].x), std::fmin(out->min.y, moved[i].y),
                      std::fmin(out->min.z, moved[i].z)};
    out->max = float3{std::fmax(out->max.x, moved[i].x), std::fmax(out->max.y, moved[i].y),
                      std::fmax(out->max.z, moved[i].z)};
  }
  return out;
}

// One evaluation of the tree: the zone, then Join Geometry and Attribute Statistic.
std::uint64_t evaluate(bool custom, int frame, std::uint64_t &objects, std::uint64_t &large, wl::Checksum &sum) {
  Evaluation ev(custom, objects, large);
  CurveGeometry **curves = ev.make<CurveGeometry *>(kElements);  // the zone's output list
  int total = 0;
  for (int e = 0; e < kElements; ++e) {
    curves[e] = zone_element(ev, e, frame);
    total += curves[e]->points;
  }
  // Join Geometry: one array of every point (a large request: its own buffer)
  float3 *joined = ev.make<float3>(static_cast<std::size_t>(total));
  int at = 0;
  double length = 0, radius = 0;
  for (int e = 0; e < kElements; ++e) {
    std::memcpy(joined + at, curves[e]->positions, sizeof(float3) * static_cast<std::size_t>(curves[e]->points));
    at += curves[e]->points;
    length += curves[e]->length;
    for (int i = 0; i < curves[e]->points; ++i)
      radius += curves[e]->radius[i] * (1.f + 0.5f * curves[e]->tangent[i].z);
  }
  double cx = 0, cy = 0, cz = 0;
  for (int i = 0; i < total; ++i) {
    cx += joined[i].x;
    cy += joined[i].y;
    cz += joined[i].z;
  }
  sum.add(static_cast<std::uint64_t>(total));
  sum.add(static_cast<std::uint64_t>(std::llround(length * 1e3)));
  sum.add(static_cast<std::uint64_t>(std::llround(radius * 1e3)));
  sum.add(static_cast<std::uint64_t>(std::llround((cx + cy + cz) * 1e3)));
  return static_cast<std::uint64_t>(total);
}

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt = wl::parse_options(
      argc, argv, "geometry-node evaluation, each evaluation in a linear allocator (Blender geometry_nodes)",
      wl::kBasicAllocs | wl::alloc_bit(wl::Alloc::Emulator) | wl::kRegionLikeAllocs);
  const long frames = wl::scaled(opt, 140, 2);
  const bool custom = opt.alloc == wl::Alloc::Custom;
  if (!custom) wl::area_setup(opt.alloc, wl::PmrKind::Monotonic);  // nothing is freed singly

  wl::Checksum sum;
  std::uint64_t objects = 0, large = 0, points = 0;
  for (long f = 0; f < frames; ++f) points += evaluate(custom, static_cast<int>(f), objects, large, sum);
  std::printf("frames %ld\npoints %" PRIu64 "\n", frames, points);
  std::fprintf(stderr, "region_objects %" PRIu64 " over_64_bytes %.1f%% (%s)\n", objects,
               objects ? 100.0 * static_cast<double>(large) / static_cast<double>(objects) : 0.0,
               wl::alloc_name(opt.alloc));
  wl::print_checksum(sum.value());
  return 0;
}
