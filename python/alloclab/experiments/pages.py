"""`alloclab pages`: page-level locality of the heap, per allocator (Vam §4.6).

    alloclab pages [--allocators LIST] [--sizes N,...] [--fractions F,...] [-o DIR] -- CMD ARGS...

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

DIR/pages.json: per allocator, "curve" as [memory pages, misses] points of a
step function (misses(m) is the value of the last point at or below m), and
"prefetch": memory_pages, misses, prefetchable, non_prefetchable per size.
Plots: DIR/pages_miss_curves.png (Figure 8), DIR/pages_prefetch.png (Figure 9).
"""

from __future__ import annotations

import json
import os
import sys

from alloclab import LabError, args as A
from alloclab.measure import memtool

FORMAT_VERSION = 1  # of pages.json (docs/formats.md)

DEFAULT_FRACTIONS = (0.25, 0.5, 0.75)


def add_arguments(sp) -> None:
    A.add_allocators(sp)
    sp.add_argument("--sizes", default=None,
                    help="memory sizes in pages for the prefetch simulation (default: --fractions)")
    sp.add_argument("--fractions", default=",".join(map(str, DEFAULT_FRACTIONS)),
                    help="memory sizes as fractions of each allocator's largest stack distance "
                         "(default %(default)s)")
    A.add_timeout(sp, A.DEFAULT_TOOL_TIMEOUT)
    sp.add_argument("--keep-traces", action="store_true", help="keep DIR/<allocator>.trace")
    sp.add_argument("--no-plot", action="store_true", help="skip the PNGs")
    A.add_output_dir(sp, "out/pages")
    A.add_command(sp)


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
    res = {"format_version": FORMAT_VERSION, "command": list(cmd), "page_size": memtool.PAGE_SIZE,
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
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    out.append(_save(plt, fig, ax, os.path.join(outdir, "pages_miss_curves.png"), "simulated LRU page misses",
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
        out.append(_save(plt, fig, ax, os.path.join(outdir, "pages_prefetch.png"), "simulated page misses",
                         "swap prefetchability"))
    return out


def _save(plt, fig, ax, path: str, ylabel: str, title: str) -> str:
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(args) -> int:
    cmd = A.command(args)
    allocs = A.parse_allocators(args.allocators)
    sizes = [A.parse_count(x, 0) for x in A.parse_list(args.sizes)] if args.sizes else []
    fractions = [A.parse_fraction(x) for x in A.parse_list(args.fractions)]
    if any(s < 0 for s in sizes) or any(not 0 <= f <= 1 for f in fractions):
        raise LabError("--sizes must be >= 0 and --fractions in [0, 1]")
    os.makedirs(args.output, exist_ok=True)
    res = run_pages(cmd, args.output, allocs, sizes=sizes, fractions=fractions, timeout=args.timeout,
                    keep_traces=args.keep_traces)
    if not args.no_plot:
        res["plots"] = plot(res, args.output)
    with open(os.path.join(args.output, "pages.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    status = 0
    print(f"{'allocator':<10} {'refs':>10} {'fills':>8} {'max dist':>9}  prefetch (memory pages: misses = "
          "prefetchable + non-prefetchable)")
    for name, r in res["allocators"].items():
        pf = "; ".join(f"{s['memory_pages']}: {s['misses']} = {s['prefetchable']} + {s['non_prefetchable']}"
                       for s in r["prefetch"])
        print(f"{name:<10} {r['references']:>10} {r['fills']:>8} {r['max_distance']:>9}  {pf}")
        if r["status"] != 0:
            print(f"alloclab: warning: on {name} the program ended with status {r['status']}", file=sys.stderr)
            status = 1
    print(f"results: {os.path.join(args.output, 'pages.json')}")
    return status


if __name__ == "__main__":
    from alloclab.cli import main as _main
    sys.exit(_main(["pages", *sys.argv[1:]]))
