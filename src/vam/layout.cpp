// layout.cpp — the geometry in force, made from the options (layout.hpp).
#include "vam/layout.hpp"

#include <algorithm>  // std::min of a block's objects

#include "vam/options.hpp"
#include "vam/segment.hpp"

namespace alloclab::vam {

constinit Layout g_layout = default_layout();
bool g_layout_fixed = false;

namespace {

Layout make_layout(const Options &o) noexcept {
  Layout l = default_layout();
  l.page_max = static_cast<std::uint32_t>(o.page_max);
  l.classes = fine_classes_up_to(l.page_max);
  if (o.classes == int(ClassSpacing::coarse)) {
    // Powers of two: 8, 16, 32, ..., page_max (classes 0..log2(page_max) - 3).
    // A request of n bytes, looked up at (n + 7) >> 3, goes to the smallest
    // power >= 8i.
    l.coarse = 1;
    l.classes = static_cast<unsigned>(__builtin_ctzll(l.page_max)) - 2;
    for (std::size_t i = 0; i <= kPageMax / 8; ++i) {
      const std::size_t s = i * 8;
      l.class_of[i] = static_cast<std::uint8_t>(s <= 8 ? 0 : (64 - __builtin_clzll(s - 1)) - 3);
    }
    for (unsigned c = 0; c < kNumClasses; ++c) l.slot[c] = c < l.classes ? 8u << c : 0u;
    l.inline_fine = l.inline_limit = 0;  // malloc_impl's inline path computes the default classes
  }
  if (o.headers) {
    l.header = 16;
    for (unsigned c = 0; c < l.classes; ++c) l.slot[c] += l.header;
    l.inline_fine = l.inline_limit = 0;  // malloc_impl's inline path never writes a header
  }
  l.lifo = o.block_alloc == int(BlockAlloc::lifo) ? 1 : 0;
  l.order = static_cast<std::uint32_t>(o.order);
  // Block kinds from the object spacing (header included); the 8- and 16-byte
  // classes stay in one-page blocks whatever the spacing.
  for (unsigned c = 0; c < kNumClasses; ++c)
    l.kind[c] = c >= l.classes || l.slot[c] - l.header < kMediumMin
                    ? 0
                    : static_cast<std::uint8_t>(block_kind_for(l.slot[c], static_cast<std::size_t>(o.block_pages),
                                                               static_cast<std::size_t>(o.block_objects)));
  // The objects a block of each class below the page classes holds, for
  // get_block to read rather than divide: at most kMaxSlots (the pending
  // bitmap: only VAM_BLOCK_PAGES above 4 or VAM_BLOCK_OBJECTS above 512 make
  // that bite, leaving the tail of a small class's block untouched), cut to
  // whole periods of line offsets where that costs one (line_whole_cap).
  for (unsigned c = 0; c < kFineClasses && c < l.classes; ++c) {
    const std::size_t size = page_stride(l.slot[c]);
    const std::size_t cap = std::min<std::size_t>((kPage << l.kind[c]) / size, kMaxSlots);
    l.fine_cap[c] = static_cast<std::uint16_t>(line_whole_cap(cap, size));
  }
  l.large_max = static_cast<std::uint64_t>(o.large_max);
  l.discard = static_cast<std::uint32_t>(o.discard);
  l.large_quick = o.large_quick != 0;
  return l;
}

bool same_layout(const Layout &a, const Layout &b) noexcept {
  const auto *x = reinterpret_cast<const unsigned char *>(&a);
  const auto *y = reinterpret_cast<const unsigned char *>(&b);
  for (std::size_t i = 0; i < sizeof(Layout); ++i)
    if (x[i] != y[i]) return false;
  return true;
}

}  // namespace

bool layout_settle() noexcept {
  Layout l = make_layout(options());
  if (!load_relaxed(g_layout_fixed)) {
    g_layout = l;
    return true;
  }
  // The geometry stays; the option copies follow the options.
  const std::uint64_t large_max = l.large_max;
  const std::uint32_t discard = l.discard;
  const std::uint32_t order = l.order;
  const std::uint32_t large_quick = l.large_quick;
  l.large_max = g_layout.large_max;
  l.discard = g_layout.discard;
  l.order = g_layout.order;
  l.large_quick = g_layout.large_quick;
  const bool same = same_layout(l, g_layout);
  g_layout.large_max = large_max;
  g_layout.discard = discard;
  g_layout.order = order;
  g_layout.large_quick = large_quick;
  return same;
}


}  // namespace alloclab::vam
