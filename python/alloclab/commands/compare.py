"""`alloclab compare`: time a program on each allocator x littering level (a hyperfine-like
runner: runs, warm-up, setup/prepare/cleanup hooks, exports)."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab import LabError
from alloclab.commands import arguments as A
from alloclab.core import allocators, runner
from alloclab.core.levels import Cell, Level
from alloclab.core.results.profile import read_profile
from alloclab.core.results.summary import Summary
from alloclab.experiments.compare import summary as summarising
from alloclab.experiments.compare import text
from alloclab.experiments.compare.files import export
from alloclab.experiments.compare.plan import CACHE_METHODS, ComparePlan, default_baseline
from alloclab.experiments.compare.run import run_matrix
from alloclab.measure import cache

NAME = "compare"
HELP = "time a program on each allocator x littering level (hyperfine-like runner)"


def add_arguments(sc) -> None:
    A.add_allocators(sc)
    A.add_levels(sc)
    runs = sc.add_mutually_exclusive_group()
    runs.add_argument("-r", "--runs", "--repeat", dest="runs", type=A.count_type(1), default=5, metavar="N",
                      help="measured runs per cell (--repeat is the old name) (default %(default)s)")
    warm = sc.add_mutually_exclusive_group()
    warm.add_argument("-w", "--warmup", type=A.count_type(0), default=1, metavar="N",
                      help="unrecorded warm-up runs per cell before the measured ones (default %(default)s)")
    warm.add_argument("--no-warmup", dest="warmup", action="store_const", const=0,
                      help="the same as --warmup 0")
    A.add_timeout(sc, A.DEFAULT_TIMEOUT)
    sc.add_argument("-s", "--setup", default=None, metavar="CMD",
                    help="shell command run once before anything else (a failure stops the comparison)")
    sc.add_argument("-p", "--prepare", default=None, metavar="CMD",
                    help="shell command run before every run (warm-up and measured), not timed; "
                         "a failure stops the comparison")
    sc.add_argument("-c", "--cleanup", default=None, metavar="CMD",
                    help="shell command run once at the end, also after a failure or Ctrl-C")
    sc.add_argument("--show-output", action="store_true",
                    help="let the program print to the terminal (default: stdout is hashed, stderr kept)")
    sc.add_argument("--cache", choices=list(CACHE_METHODS), default="auto",
                    help="cache-miss measurement (default %(default)s)")
    sc.add_argument("--rss-series", nargs="?", type=A.count_type(1), const=10, default=None, metavar="MS",
                    help="also run each cell once more and sample its resident memory every MS ms "
                         "(default 10) into rss_series.csv and the report's RSS-over-time plot")
    sc.add_argument("--baseline", default=None, help="ALLOCATOR or ALLOCATOR/Adv_N (default glibc/Adv_0)")
    sc.add_argument("--twin", default=None, metavar="ALLOCATOR",
                    help="an A/A null: run this one of the allocators a second time in every round, at every "
                         "level, as the cell ALLOCATOR~again (never next to its original in a round); its ratio "
                         "to the original is the run's own noise (default: none)")
    sc.add_argument("--profile", default=None, help="use this profile instead of profiling first")
    A.add_seed(sc)
    sc.add_argument("--fixed-order", action="store_true",
                    help="visit the cells in the same order every round (default: shuffled per round)")
    A.add_output_dir(sc, "out/compare")
    A.add_export(sc, "json", "also write the summary (cells, statistics, ratios) as JSON here")
    A.add_export(sc, "markdown", "also write the results table as Markdown here")
    A.add_export(sc, "csv", "also write the per-run rows (results.csv) here")
    A.add_command(sc)


def _listed(name: str, names: list) -> str:
    """NAME as NAMES spell it when it is a path or another spelling of a listed allocator."""
    if name not in names:
        try:
            return allocators.find(name).name
        except LabError:
            pass
    return name


def parse_baseline(text: str | None, allocs: list, levels: list) -> Cell:
    """--baseline: "ALLOCATOR" (at Adv_0, else the lowest level) or "ALLOCATOR/Adv_N", a cell of
    this comparison; default_baseline() without one."""
    if text is None:
        return default_baseline(allocs, levels)
    names = [a.name for a in allocs]
    level = Level.ADV_0 if Level.ADV_0 in levels else min(levels)
    name = text
    if "/" in text and text.rsplit("/", 1)[1].lower().startswith("adv"):
        name, lvl = text.rsplit("/", 1)
        level = Level.parse(lvl)
    name = _listed(name, names)
    if name not in names or level not in levels:
        raise LabError(f"baseline {text!r} is not a cell of this comparison "
                       f"(allocators {', '.join(names)}; levels {', '.join(lv.label for lv in levels)})")
    return Cell(name, level)


def parse_twin(text: str | None, allocs: list):
    """--twin: the allocator of this comparison (by name, or a path or spelling of one) measured
    again under NAME~again; None without one. LabError when it is not one of ALLOCS."""
    if text is None:
        return None
    names = [a.name for a in allocs]
    name = _listed(text, names)
    if name not in names:
        raise LabError(f"twin {text!r} is not one of the allocators compared ({', '.join(names)})")
    return allocators.measured_again(allocs[names.index(name)])


@dataclasses.dataclass
class Plan:
    matrix: ComparePlan
    setup: str | None
    cleanup: str | None
    exports: dict       # json, markdown, csv -> a file, or None


def plan(ns) -> Plan:
    cmd = A.command(ns)
    if ns.profile is not None:
        read_profile(ns.profile)
    if ns.cache == "perf":
        cache.require_perf()
    matrix = ComparePlan(cmd, ns.allocators, ns.adv, parse_baseline(ns.baseline, ns.allocators, ns.adv),
                         runs=ns.runs, warmup=ns.warmup, outdir=ns.output, timeout=ns.timeout, cache=ns.cache,
                         profile=ns.profile, seed=ns.seed, shuffle=not ns.fixed_order, prepare=ns.prepare,
                         show_output=ns.show_output, twin=parse_twin(ns.twin, ns.allocators),
                         rss_every=None if ns.rss_series is None else ns.rss_series / 1000.0)
    return Plan(matrix.check(), ns.setup, ns.cleanup,
                {"json": ns.export_json, "markdown": ns.export_markdown, "csv": ns.export_csv})


def run(p: Plan) -> Summary:
    timeout = p.matrix.timeout
    if p.setup is not None:
        runner.run_prepare(p.setup, timeout, what="--setup")
    try:
        return run_matrix(p.matrix)
    finally:
        if p.cleanup is not None:
            runner.run_prepare(p.cleanup, timeout, what="--cleanup")


def kept(summary: Summary) -> bool:
    """The comparison replaces an earlier one in its directory only when some run succeeded."""
    return any(c.ok for c in summary.cells)


def write(p: Plan, summary: Summary) -> int:
    out = p.matrix.outdir
    print(text.format_table(summary))
    print("\n" + text.headline(summary))
    for w in summarising.warnings(summary):
        print(f"alloclab: warning: {w}", file=sys.stderr)
    written = export(summary, out, p.exports)
    if kept(summary):
        print(f"results: {os.path.join(out, 'results.csv')}  report: {os.path.join(out, 'report.html')}"
              + "".join(f"  {x}" for x in written))
    if summary.meta.interrupted:
        return 130
    return summarising.exit_code(summary)
