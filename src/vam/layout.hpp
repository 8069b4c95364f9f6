// layout.hpp — the small-object heap's geometry in force (Layout,
// size_classes.hpp): the table malloc and free read, settled from the
// options before the first block is carved.
#pragma once

#include "vam/check.hpp"
#include "vam/size_classes.hpp"

namespace alloclab::vam {

extern Layout g_layout VAM_HIDDEN;

// The geometry options (VAM_CLASSES, VAM_HEADERS, VAM_BLOCK_ALLOC,
// VAM_BLOCK_PAGES) into g_layout. False if a block was already carved in
// another geometry: that one stays.
bool layout_settle() noexcept;
extern bool g_layout_fixed VAM_HIDDEN;  // a block has been carved: g_layout is final

}  // namespace alloclab::vam
