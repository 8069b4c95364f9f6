"""The bundled workloads: what exists, what each stands for, how to run it.

The one place the lab learns which workload programs there are, the class
each belongs to in the 2026 paper's taxonomy (its Table 1: per-class,
region, hybrid; plus "general" for programs with no custom allocator), the
paper program it mirrors (a row of the 2002 paper's Table 3, where there is
one), and the `--alloc` values it accepts.

Variant names (the `--alloc` values):

    malloc    naive allocation built as the 2026 paper's Table 4 builds it:
              region allocators keep their chunk list but every chunk holds
              one object from malloc, so bulk free is a walk of that list;
              the parser calls malloc/free directly; boxed-sim drops its free
              lists; the mempool keeps its set of live objects for iteration
    custom    the program's own allocator
    reap      libreap in place of the custom allocator
    emulator  the 2002 paper's region emulator: the reap calls under
              REAP_MODE=malloc (an out-of-band record of every object)
    talloc    the region semantics through talloc contexts
    apr       ... through APR pools (no individual free: frees are dropped)
    pmr       ... through std::pmr: a monotonic_buffer_resource where the
              program only frees in bulk, an unsynchronized_pool_resource
              where it also frees objects one at a time

The naive variant is listed first in every `variants` tuple. A binary built
without talloc or APR (their development packages missing) does not accept
those variants; `accepted_variants()` asks the binary (`--variants`).

API::

    CATALOG, PAPER_TABLE3
    find(name) -> Workload
    size_args(name|Workload, scale) -> list   # the --scale (and --live) the study passes it at the mode's SCALE
    feeds(name, paper) -> bool        # whether workload `name` may feed PAPER's rules
    binary(name) -> str | None
    workload_dirs() -> list[str]
    accepted_variants(name) -> tuple
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import os
import subprocess

from alloclab import LabError
from alloclab.core import paths


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str            # binary name under workloads/
    kind: str            # "per-class" | "region" | "hybrid" | "general"
    mirrors: str         # which paper program(s) it stands for
    paper_program: str   # key into PAPER_TABLE3, or "" when Table 3 has no row for it
    variants: tuple      # every --alloc value it accepts; the naive one first
    partial: bool = False  # only part of its allocations go through the custom allocator
    size: float = 1.0      # multiplies the study's --scale (calibration, docs/study.md)
    live: float = 1.0      # its --live: sizes its live set to its paper program's (calibration)
    # the papers ("2002", "2026", "2005") with a counterpart of this program: the only ones whose
    # rules it feeds; None: not sorted yet, it feeds every paper's rules
    papers: tuple | None = None


KINDS = ("per-class", "region", "hybrid", "general")


def _row(objects, max_live, mean_size, total_bytes, max_live_bytes, total_over_max, share):
    return {"memops_share": share, "objects": objects, "max_live": max_live,
            "mean_size": mean_size, "total_bytes": total_bytes,
            "max_live_bytes": max_live_bytes, "total_over_max": total_over_max}


# The 2002 paper's Table 3 ("Statistics for our benchmarks, replacing custom
# memory allocation by general-purpose allocation"), every row as printed:
# total objects, max objects in use, average object size (bytes), total
# memory (bytes), max in use (bytes), total/max, and the share of runtime
# in memory-management operations (with the Windows XP allocator), as a
# fraction.
PAPER_TABLE3: dict[str, dict] = {
    # custom allocation
    "197.parser": _row(9_334_022, 230_919, 38, 351_772_626, 3_207_529, 109.7, 0.418),
    "boxed-sim": _row(52_203, 4_865, 15, 777_913, 301_987, 2.6, 0.002),
    "C-Breeze": _row(5_090_805, 2_177_173, 23, 118_996_917, 60_053_789, 1.9, 0.174),
    "175.vpr": _row(3_897, 3_813, 44, 172_967, 124_636, 1.4, 0.001),
    "176.gcc": _row(9_065_285, 2_538_005, 54, 487_711_209, 112_753_774, 4.3, 0.067),
    "apache": _row(149_275, 3_749, 208, 30_999_123, 754_492, 41, 0.001),
    "lcc": _row(1_465_416, 92_696, 57, 83_217_416, 3_875_780, 21.5, 0.242),
    "mudlle": _row(1_687_079, 38_645, 29, 48_699_895, 662_964, 73.5, 0.337),
    # general-purpose allocation
    "espresso": _row(4_483_621, 4_885, 249, 1_116_708_854, 373_348, 2991.1, 0.108),
    "lindsay": _row(108_861, 297, 64, 6_981_030, 1_509_088, 4.6, 0.028),
    "164.gzip": _row(1_307, 72, 6108, 7_983_304, 6_615_288, 1.2, 0.001),
    "181.mcf": _row(54, 52, 1_789_028, 96_607_514, 96_601_049, 1.0, 0.015),
    "186.crafty": _row(87, 86, 10_206, 887_944, 885_520, 1.0, 0.0),
    "252.eon": _row(1_647, 803, 31, 51_563, 33_200, 1.6, 0.004),
    "253.perlbmk": _row(8_888_870, 5_813, 16, 144_514_214, 284_029, 508.8, 0.126),
    "254.gap": _row(50, 48, 1_343_614, 67_180_715, 67_113_782, 1.0, 0.0),
    "255.vortex": _row(186_483, 53_087, 357, 66_617_881, 17_784_239, 3.7, 0.019),
    "300.twolf": _row(9_458, 1_725, 56, 532_177, 66_891, 8.0, 0.009),
}

# `live` sizes a stand-in's live set to its paper program's max objects in use (Table 3),
# `size` its run: workloads/calibration.json holds what they give (docs/study.md, "Calibration").

# The region semantics through other libraries (2002 paper, Figure 6's
# "allocators with regions and free"): which workloads take them.
_LIKE = ("talloc", "apr", "pmr")

CATALOG: tuple[Workload, ...] = (
    Workload("boxed_sim", "per-class",
             "boxed-sim: a particle simulation with per-class LIFO free lists (2002 Table 1; 2026 RQ1)",
             "boxed-sim", ("malloc", "custom", "reap"), live=1.5),
    Workload("freelist_micro", "per-class",
             "the 2026 paper's RQ1 upper-bound microbenchmark: 16-byte objects on an intrusive free list",
             "", ("malloc", "custom")),
    # --live sizes the unit's headers (1,000 declarations at 1), kept in its permanent arena to the end
    Workload("compiler", "region",
             "lcc: a front end and code generator on obstacks, a permanent arena for the unit's globals and "
             "a region per function (176.gcc has no stand-in: 2.5 million objects live at once)",
             "lcc", ("malloc", "custom", "reap", "emulator") + _LIKE, live=13),
    # the same program, so the same headers
    Workload("compiler_partial", "region",
             "Clang (2026 RQ3): regions for the AST only; names, symbols, types and code via malloc/free",
             "", ("malloc", "custom", "reap", "emulator") + _LIKE, partial=True, live=13),
    Workload("interp", "region",
             "mudlle: an interpreter with a region per top-level form, reset after each",
             "mudlle", ("malloc", "custom", "reap", "emulator") + _LIKE),
    Workload("server", "region",
             "Apache with the bc module (2002 section 7.5): per-request pools, bc frees its temporaries",
             "", ("malloc", "custom", "reap", "emulator") + _LIKE),
    # no apr: a pool drops every free, and the parser allocates many times its peak
    Workload("xalloc_parser", "hybrid",
             "197.parser: a stack allocator (xalloc) with out-of-order frees",
             "197.parser", ("malloc", "custom", "reap", "talloc", "pmr"), live=3600),
    Workload("mempool_iter", "hybrid",
             "Blender's BLI_mempool under the sculpt brush (2026): a pool with free and iteration",
             "", ("malloc", "custom", "reap") + _LIKE),
    # the programs where the 2026 paper found no effect (RQ2 on vpr, RQ3 on both)
    Workload("vpr", "region",
             "175.vpr: FPGA placement by annealing, its netlist in a chunked region; compute-bound, few objects",
             "175.vpr", ("malloc", "custom", "reap", "emulator") + _LIKE, papers=("2002", "2026")),
    Workload("geometry_nodes", "region",
             "Blender's geometry_nodes (2026): a node tree per frame in a LinearAllocator, 18k live objects, "
             "70% over 64 bytes",
             "", ("malloc", "custom", "reap", "emulator") + _LIKE, papers=("2026",)),
    Workload("bignum_factor", "general",
             "cfrac: continued-fraction factoring with bignums, many short-lived numbers of many small sizes",
             "", ("malloc", "reap")),
    Workload("gp_mix", "general",
             "espresso and 253.perlbmk: many sizes and realloc growth, no custom allocator",
             "253.perlbmk", ("malloc", "reap"), live=0.2),
)


def find(name: str) -> Workload:
    for w in CATALOG:
        if w.name == name:
            return w
    raise LabError(f"no workload named {name!r} (known: {', '.join(w.name for w in CATALOG)})")


def size_args(name, scale) -> list[str]:
    """The size arguments of workload NAME (or a Workload) when the study's mode runs at SCALE:
    --scale, the mode's scale times the workload's size, and --live where its live set is sized
    (its calibration, docs/study.md)."""
    w = name if isinstance(name, Workload) else find(name)
    out = ["--scale", str(scale) if w.size == 1.0 else f"{float(scale) * w.size:.6g}"]
    return out + (["--live", f"{w.live:g}"] if w.live != 1.0 else [])


def feeds(name: str, paper: str) -> bool:
    """Whether workload NAME may feed the rules of PAPER ("2002", "2026", "2005"): False only for a
    catalog row that names its papers and not this one (anything else -- a real program, a row not
    sorted yet -- feeds every paper)."""
    for w in CATALOG:
        if w.name == name:
            return w.papers is None or paper in w.papers
    return True


def workload_dirs() -> list[str]:
    """Where workload binaries are looked for, first match wins: the lab's one
    search order (alloclab.core.paths: $ALLOCLAB_PREFIX, the checkout's build tree,
    the install prefixes), in each its workloads/ or libexec/alloclab/workloads/."""
    return paths.workload_dirs()


def binary(name: str) -> str | None:
    """The executable for workload `name`, or None when none is built or installed."""
    for d in workload_dirs():
        for cand in [os.path.join(d, name)] + sorted(glob.glob(os.path.join(d, "*", name))):
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return cand
    return None


@functools.lru_cache(maxsize=None)
def _binary_variants(path: str, mtime: float) -> tuple | None:
    try:
        proc = subprocess.run([path, "--variants"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None  # an older binary without --variants
    return tuple(proc.stdout.split())


def accepted_variants(name: str) -> tuple:
    """The catalog's variants of `name` that its built binary accepts (in the
    catalog's order, naive first); () when there is no binary. A binary built
    without talloc or APR leaves those out."""
    w = find(name)
    path = binary(name)
    if path is None:
        return ()
    said = _binary_variants(path, os.path.getmtime(path))
    if said is None:
        return tuple(v for v in w.variants if v in ("custom", "reap", "malloc"))
    return tuple(v for v in w.variants if v in said)
