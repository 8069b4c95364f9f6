// layout.hpp — the small-object heap's geometry in force (Layout,
// size_classes.hpp), settled from the options before the first block is
// carved. Invariant: once any heap has carved a block (g_layout_fixed) the
// geometry never changes; only its copies of options (large_max, discard,
// order, large_quick) follow the options when they are read again.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"
#include "vam/size_classes.hpp"

namespace alloclab::vam {

extern Layout g_layout VAM_HIDDEN;

// The geometry options (VAM_CLASSES, VAM_HEADERS, VAM_BLOCK_ALLOC,
// VAM_BLOCK_PAGES, VAM_BLOCK_OBJECTS, VAM_PAGE_MAX) into g_layout. False if
// a block was already carved in another geometry: that one stays.
bool layout_settle() noexcept;
extern bool g_layout_fixed VAM_HIDDEN;  // a block has been carved: g_layout's geometry is final

// A class's block kind, and a kind's block size (kPage << kind bytes).
inline int kind_of_class(unsigned cls) noexcept { return g_layout.kind[cls]; }
inline std::size_t block_bytes(int kind) noexcept { return kPage << kind; }
inline std::int64_t block_pages(int kind) noexcept { return static_cast<std::int64_t>(block_bytes(kind) / kPage); }

}  // namespace alloclab::vam
