"""Page-level locality of the heap, per allocator (Vam §4.6; `alloclab pages`).

The program runs once per allocator (preloaded as usual) under the
alloclab-mem Valgrind tool, which only observes.  Its heap is every page of
the program break and of every anonymous private mapping other than thread
stacks; the tool records each reference to a heap page -- by the program or
by the allocator -- collapsing consecutive references to one page into one,
and records discards (madvise DONTNEED/FREE/REMOVE, munmap, brk shrink).

From the trace (src/memtools/pagesim.cpp):
  * the LRU miss curve for every memory size at once (Mattson's stack
    distances): misses(m) = references that miss with m pages of memory.
    A page's first reference, and its first after a discard, is a fill (a
    fresh zero page, no disk read) and never counts as a miss;
  * swap prefetchability at a few memory sizes: each miss goes through a
    buffer of the last 256 prefetched pages; a hit there is prefetchable,
    any other miss brings in the other 7 pages of its aligned group of 8.

DIR/pages.json (core.results.documents.PAGES): per allocator, "curve" as [memory pages, misses] points of a
step function (misses(m) is the value of the last point at or below m), and
"prefetch": memory_pages, misses, prefetchable, non_prefetchable per size.
Plots: DIR/pages_miss_curves.png (Figure 8), DIR/pages_prefetch.png (Figure 9).

API::

    run_pages(cmd, outdir, allocators, sizes=(), fractions=DEFAULT_FRACTIONS, timeout=None,
              keep_traces=False) -> dict
    write(result, outdir, plot=True) -> str     # DIR/pages.json (and the PNGs)
    plot(result, outdir) -> list[str]
    misses_at(curve, m) -> int
"""

from __future__ import annotations

import os

from alloclab.core.results.documents import PAGES, write_document
from alloclab.measure import memtool
from alloclab.present import plots

DEFAULT_FRACTIONS = (0.25, 0.5, 0.75)


def misses_at(curve, m: int) -> int:
    """misses(m) from a curve's step points."""
    val = curve[0][1] if curve else 0
    for x, y in curve:
        if x > m:
            break
        val = y
    return val


def run_pages(cmd, outdir, allocs, sizes=(), fractions=DEFAULT_FRACTIONS, timeout=None,
              keep_traces=False) -> dict:
    tools = memtool.find_memtools()
    res = {"format_version": PAGES.version, "command": list(cmd), "page_size": memtool.PAGE_SIZE,
           "allocators": {}}
    for a in allocs:
        r = memtool.run(cmd, outdir, a.name, allocator=a, trace=True, timeout=timeout, tools=tools)
        sim = memtool.pagesim(r.prefix + ".trace", sizes=sizes, fractions=() if sizes else fractions,
                              tools=tools)
        if not keep_traces:
            os.unlink(r.prefix + ".trace")
        os.unlink(r.prefix + ".summary")
        sim.update({"status": r.status, "max_pages_in_use": r.summary.get("max_pages_in_use"),
                    "library": a.path})
        res["allocators"][a.name] = sim
    return res


def plot(res: dict, outdir: str) -> list[str]:
    """The miss curves and the prefetch bars as PNGs in OUTDIR; their paths ([] without matplotlib)."""
    plt = plots.pyplot()
    if plt is None:
        return []
    out = []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, r in res["allocators"].items():
        c = r["curve"]
        if not c:
            continue
        xs = [p[0] for p in c] + [max(c[-1][0], 1) * 1.05]
        ys = [p[1] for p in c] + [c[-1][1]]
        ax.step(xs, ys, where="post", label=name)
    ax.set_yscale("symlog", linthresh=1)  # the curves span many decades; 0 stays visible
    ax.set_xlabel("memory (pages)")
    out.append(_save(fig, ax, os.path.join(outdir, "pages_miss_curves.png"), "simulated LRU page misses",
                     "heap page miss curves"))

    labels, pre, non = [], [], []
    for name, r in res["allocators"].items():
        for s in r["prefetch"]:
            labels.append(f"{name}\n{s['memory_pages']} pg")
            pre.append(s["prefetchable"])
            non.append(s["non_prefetchable"])
    if labels:
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels)), 4.5))
        xs = range(len(labels))
        ax.bar(xs, non, label="non-prefetchable")
        ax.bar(xs, pre, bottom=non, label="prefetchable")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize=8)
        out.append(_save(fig, ax, os.path.join(outdir, "pages_prefetch.png"), "simulated page misses",
                         "swap prefetchability"))
    return out


def _save(fig, ax, path: str, ylabel: str, title: str) -> str:
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    return plots.save(fig, path)


def write(res: dict, outdir: str, plot_it: bool = True) -> str:
    """DIR/pages.json (and, with PLOT_IT, the PNGs, named in it); the JSON's path."""
    if plot_it:
        res["plots"] = plot(res, outdir)
    return write_document(PAGES, os.path.join(outdir, "pages.json"), res)
