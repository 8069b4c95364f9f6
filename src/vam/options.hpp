// options.hpp — every VAM_* environment option, with its default, in one table.
//
// Options are read once, at the allocator's first use, straight from
// `environ` (no getenv, no allocation), so they work even when the first
// malloc comes from the dynamic loader. docs/vam.md mirrors this table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alloclab::vam {

enum class DiscardPolicy : int { off = 0, eager = 1, delayed = 2 };
enum class HugePages : int { off = 0, automatic = 1, always = 2, threshold = 3 };
enum class ClassSpacing : int { fine = 0, coarse = 1 };
enum class BlockAlloc : int { bump = 0, lifo = 1 };
enum class ReuseOrder : int { recent = 0, fifo = 1, automatic = 2 };

//        name                    field            default   meaning
#define VAM_OPTIONS(X)                                                                         \
  /* When empty pages go back to the OS: off | eager (as soon as a page block or   */         \
  /* the interior of a freed large object is empty, paper §3.6) | delayed (once a  */         \
  /* heap holds VAM_DISCARD_THRESHOLD empty pages, or for the pages that stayed    */         \
  /* empty through a whole VAM_DISCARD_DELAY_MS).                                   */        \
  X("VAM_DISCARD",           discard,           2 /*delayed*/, "off | eager | delayed")       \
  /* delayed: discard when a heap's empty, not yet discarded pages reach this,    */         \
  /* while several threads have heaps (empty pages of one heap are memory the     */         \
  /* others must fault in anew).                                                   */         \
  X("VAM_DISCARD_THRESHOLD", discard_threshold, 256,        "pages (4 KiB) per heap")         \
  /* delayed: the same while one thread alone has a heap: it is the only one that  */         \
  /* could reuse the pages, and it reuses them before touching new ones.           */         \
  X("VAM_DISCARD_THRESHOLD_ALONE", discard_threshold_alone, 4096, "pages (4 KiB)")             \
  /* delayed: discard the pages that stayed empty through this long (checked       */         \
  /* whenever a block empties or a large object is freed; so within two delays).   */         \
  X("VAM_DISCARD_DELAY_MS",  discard_delay_ms,  100,        "milliseconds")                   \
  /* Largest object kept in the shared coalescing regions; bigger ones are mapped  */         \
  /* on their own. Clamped to [1024, 1 MiB].                                       */         \
  X("VAM_LARGE_MAX",         large_max,         256 * 1024, "bytes")                          \
  /* Large objects: on (a freed chunk up to 64 KiB is held whole on a quick list,  */         \
  /* eight per power of two, 4 a list and a sixteenth of the heap's live large    */         \
  /* bytes at most, for the next request its size serves; coalesced at the next   */         \
  /* full sweep) | off (every free coalesces at once, paper §3.1).                 */         \
  X("VAM_LARGE_QUICK",       large_quick,       1 /*on*/,   "off | on")                       \
  /* Freed huge mappings kept (resident) for reuse, in bytes per thread that     */         \
  /* owns a heap (up to 8 threads); 0 disables. Only mappings up to half of this  */         \
  /* are kept; they go back after VAM_DISCARD_DELAY_MS unused.                    */         \
  X("VAM_HUGE_CACHE",        huge_cache,        8 << 20,    "bytes")                          \
  /* Transparent huge pages for the 4 MiB segments: off | threshold (a heap's new */         \
  /* segments, once it holds VAM_HUGEPAGE_MIN bytes of them) | auto (threshold,   */         \
  /* except on a guest that gives free huge pages back to its host: off there)   */         \
  /* | always. A segment whose pages are discarded drops the advice (docs/vam.md, */         \
  /* "Huge pages").                                                                */         \
  X("VAM_HUGEPAGES",         hugepages,         1 /*auto*/, "off | auto | threshold | always") \
  /* auto, threshold: the segment bytes a heap must already hold before it asks.  */         \
  X("VAM_HUGEPAGE_MIN",      hugepage_min,      32 << 20,   "bytes")                          \
  /* Design switches, for the ablation (docs/vam.md, "Design switches"); the     */         \
  /* defaults are the measured best. Size classes: fine (8, then 16 bytes apart  */         \
  /* to 1024: exact fit, paper §3.1) | coarse (powers of two 8..1024, as         */         \
  /* PHKmalloc's).                                                               */         \
  X("VAM_CLASSES",           classes,           0 /*fine*/, "fine | coarse")                  \
  /* Allocation inside a block: bump (reap: bump through a fresh block, then its */         \
  /* free list, paper §3.4) | lifo (the whole block threaded on its free list     */         \
  /* when made; allocation pops the object pushed last).                          */         \
  X("VAM_BLOCK_ALLOC",       block_alloc,       0 /*bump*/, "bump | lifo")                    \
  /* Where a full block goes when a free gives it space again: recent (it       */         \
  /* becomes its class's front, the object just freed the next one handed out,   */         \
  /* paper §3.5) | fifo (it joins the end of its class's available blocks, and   */         \
  /* is reached after every block ahead of it) | auto (the end while the class   */         \
  /* has few blocks waiting and the free is not next to the object freed before  */         \
  /* it; the front otherwise: reuse_order.cpp, regain_at_end).                    */         \
  X("VAM_ORDER",             order,             2 /*auto*/, "recent | fifo | auto")           \
  /* A 16-byte header holding the size before every small object, as DLmalloc's: */         \
  /* off (headerless, BIBOP, paper §3.3) | on (the baseline the paper measures).  */         \
  X("VAM_HEADERS",           headers,           0 /*off*/,  "off | on")                       \
  /* The fewest pages per block of the classes from 32 bytes up: 1 | 2 | 4 | 8 |  */         \
  /* 16. A block holds at most 512 objects (its pending bitmap), so above 4      */         \
  /* pages the smallest classes leave the rest of their block untouched.          */         \
  X("VAM_BLOCK_PAGES",       block_pages,       4,          "1 | 2 | 4 | 8 | 16")          \
  /* The fewest objects a block of those classes holds: its pages double (up to  */         \
  /* 16) until it holds this many. 1: every such block VAM_BLOCK_PAGES pages.    */         \
  X("VAM_BLOCK_OBJECTS",     block_objects,     32,         "objects, 1..512")               \
  /* The largest object in page blocks, in bytes: 1024 (the fine classes only;  */         \
  /* every bigger object a boundary-tagged chunk, as the paper's large objects) */         \
  /* | 2048 | 4096 | 8192 (classes eight per power of two above 1 KiB; faster  */         \
  /* on churn of such objects, more D1 misses and memory in the ablation).      */         \
  X("VAM_PAGE_MAX",          page_max,          1024,       "1024 | 2048 | 4096 | 8192")     \
  /* 1: the secure mode's checks (secure.cpp), which only libvam-secure.so has:    */         \
  /* libvam.so warns that it ignores it (`vam --secure` preloads the secure one).  */         \
  X("VAM_SECURE",            secure,            0,          "0 | 1")                         \
  /* Print vam_stats() to stderr at exit.                                          */         \
  X("VAM_STATS",             stats,             0,          "0 | 1 | a file to append the report to")

struct Options {
#define VAM_OPTION_FIELD(name, field, def, unit) std::int64_t field = def;
  VAM_OPTIONS(VAM_OPTION_FIELD)
#undef VAM_OPTION_FIELD
  // VAM_STATS=FILE: the report is appended to FILE (a string of the environment,
  // which lives as long as the process) instead of written to stderr.
  const char *stats_file = nullptr;
};

// The options in force (defaults until read_options() ran).
Options &options() noexcept;

// Parse the environment. Safe to call before libc is fully up; never allocates.
// Returns false if the environment was not set up yet (defaults stay).
bool read_options() noexcept;

}  // namespace alloclab::vam
