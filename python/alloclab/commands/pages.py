"""`alloclab pages`: the heap's page trace, LRU miss curves and swap prefetchability (needs
valgrind)."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab import LabError
from alloclab.commands import arguments as A
from alloclab.experiments import pages

NAME = "pages"
HELP = "heap page trace: LRU miss curves and swap prefetchability (needs valgrind)"


def add_arguments(sp) -> None:
    A.add_allocators(sp)
    sp.add_argument("--sizes", default=None,
                    help="memory sizes in pages for the prefetch simulation (default: --fractions)")
    sp.add_argument("--fractions", default=",".join(map(str, pages.DEFAULT_FRACTIONS)),
                    help="memory sizes as fractions of each allocator's largest stack distance "
                         "(default %(default)s)")
    A.add_timeout(sp, A.DEFAULT_TOOL_TIMEOUT)
    sp.add_argument("--keep-traces", action="store_true", help="keep DIR/<allocator>.trace")
    sp.add_argument("--no-plot", action="store_true", help="skip the PNGs")
    A.add_output_dir(sp, "out/pages")
    A.add_command(sp)


@dataclasses.dataclass
class Plan:
    cmd: list
    outdir: str
    allocators: list     # Allocator
    sizes: list          # memory sizes in pages (none: the fractions)
    fractions: list
    timeout: float | None
    keep_traces: bool
    plot: bool


def plan(ns) -> Plan:
    cmd = A.command(ns)
    sizes = [A.parse_count(x, 0) for x in A.parse_list(ns.sizes)] if ns.sizes else []
    fractions = [A.parse_fraction(x) for x in A.parse_list(ns.fractions)]
    if any(s < 0 for s in sizes) or any(not 0 <= f <= 1 for f in fractions):
        raise LabError("--sizes must be >= 0 and --fractions in [0, 1]")
    return Plan(cmd, ns.output, ns.allocators, sizes, fractions, ns.timeout, ns.keep_traces, not ns.no_plot)


def run(p: Plan) -> dict:
    os.makedirs(p.outdir, exist_ok=True)
    res = pages.run_pages(p.cmd, p.outdir, p.allocators, sizes=p.sizes, fractions=p.fractions, timeout=p.timeout,
                          keep_traces=p.keep_traces)
    return res


def write(p: Plan, res: dict) -> int:
    pages.write(res, p.outdir, p.plot)
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
    print(f"results: {os.path.join(p.outdir, 'pages.json')}")
    return status
