"""The `alloclab` command line.

Every subcommand is declared once, in COMMANDS below: its name, its one-line
help, the function that adds its arguments and the function that runs it.
``alloclab --help`` lists them from there; docs/lab.md describes each.

Arguments of the same kind (allocators, littering levels, durations, output
paths) are parsed by alloclab.args, the same way for every subcommand.
Output paths are created and probed after parsing, before anything runs.

Exit status: 0 success; 2 bad input (message ``alloclab: ...`` on stderr);
profile and litter pass on the program's own non-zero status (128+signal when
it was killed); compare returns 1 when some cell has no successful run, 130
when interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import sys
from typing import Callable

from alloclab import LabError, __version__, args as A


@dataclasses.dataclass(frozen=True)
class Command:
    """One subcommand. add_arguments and run are "module:function" names, imported when needed."""

    name: str
    help: str
    add_arguments: str
    run: str

    def _fn(self, spec: str) -> Callable:
        mod, fn = spec.split(":")
        return getattr(importlib.import_module(mod), fn)

    def add(self, parser) -> None:
        self._fn(self.add_arguments)(parser)

    def __call__(self, ns) -> int:
        return self._fn(self.run)(ns)


COMMANDS: tuple[Command, ...] = (
    Command("profile", "record allocation sizes and peak live objects of a program",
            "alloclab.cli:profile_arguments", "alloclab.cli:cmd_profile"),
    Command("litter", "run a program once on a littered heap",
            "alloclab.cli:litter_arguments", "alloclab.cli:cmd_litter"),
    Command("allocators", "list the allocators found on this machine and where the lab's parts are",
            "alloclab.cli:allocators_arguments", "alloclab.cli:cmd_allocators"),
    Command("compare", "time a program on each allocator x littering level (hyperfine-like runner)",
            "alloclab.cli:compare_arguments", "alloclab.cli:cmd_compare"),
    Command("report", "re-render a comparison's or a study's report.html from its saved files (and export it)",
            "alloclab.cli:report_arguments", "alloclab.cli:cmd_report"),
    Command("drag", "object drag: heap size vs. freeing at last use (needs valgrind)",
            "alloclab.experiments.drag:add_arguments", "alloclab.experiments.drag:main"),
    Command("frag", "fragmentation: max heap pages in use / max live data (needs valgrind)",
            "alloclab.experiments.frag:add_arguments", "alloclab.experiments.frag:main"),
    Command("pages", "heap page trace: LRU miss curves and swap prefetchability (needs valgrind)",
            "alloclab.experiments.pages:add_arguments", "alloclab.experiments.pages:main"),
    Command("study", "answer the papers' questions on this machine (report in out/study)",
            "alloclab.study:add_arguments", "alloclab.study:run_command"),
    Command("ablation", "Vam's design switches one at a time: time, D1/LL misses, peak RSS (out/ablation)",
            "alloclab.ablation:add_arguments", "alloclab.ablation:run_command"),
)


def command_names() -> list[str]:
    return [c.name for c in COMMANDS]


# ------------------------------------------------------------------ profile

def profile_arguments(sp) -> None:
    A.add_output_file(sp, "alloclab-profile.json", "profile JSON")
    sp.add_argument("--cutoff", type=A.count_type(1), default=4096,
                    help="histogram sizes below this (default %(default)s)")
    A.add_allocator(sp, "allocator to profile on (default glibc)")
    A.add_timeout(sp, A.DEFAULT_TIMEOUT)
    A.add_command(sp)


def cmd_profile(ns) -> int:
    from alloclab.measure import profile
    cmd = A.command(ns)
    try:
        p = profile.run_profile(cmd, out=ns.output, cutoff=ns.cutoff, allocator=ns.allocator,
                                timeout=ns.timeout)
    except profile.NoProfile as e:
        res = e.result
        if res is None or res.ok:
            raise
        # The program's own failure: its status, as for any other run (no profile written).
        print(f"alloclab: {e}; no profile written", file=sys.stderr)
        return _status(res)
    procs = len(p["processes"])
    print(f"alloclab: profile written to {ns.output}: {p['allocations']} allocations, {p['bytes']} bytes, "
          f"max_live {p['max_live']} ({p['max_live_bytes']} bytes), mean size {p['mean_size']}, "
          f"{len(p['sizes'])} distinct sizes below {p['cutoff']}, {p['ignored']} at or above"
          + (f"; merged from {procs} processes" if procs > 1 else ""), file=sys.stderr)
    run = p["run"]
    if run["status"] != "ok":
        print(f"alloclab: warning: the program ended with status {run['status']}"
              + (f" (signal {run['signal']})" if run.get("signal") else ""), file=sys.stderr)
        return run["exit_code"] if run["exit_code"] is not None else 128 + (run["signal"] or 0)
    return 0


# ------------------------------------------------------------------- litter

def litter_arguments(sl) -> None:
    sl.add_argument("--profile", required=True, help="profile JSON from `alloclab profile`")
    sl.add_argument("--adv", type=A._type(A.parse_level), default=None,
                    help="paper Table 3 preset: 0, 1, 3 or 10 (also Adv_3, adv3)")
    sl.add_argument("--multiplier", type=A.fraction_type(), help="M: allocate M x max_live objects")
    sl.add_argument("--occupancy", type=A.fraction_type(), help="O: fraction left live, in [0,1]")
    A.add_seed(sl)
    A.add_allocator(sl)
    sl.add_argument("--log", type=A._type(A.parse_output_file), default=None, metavar="FILE",
                    help="append the litter log line here instead of stderr")
    A.add_timeout(sl, A.DEFAULT_TIMEOUT)
    A.add_command(sl)


def _status(res) -> int:
    if res.exit_code is not None:
        return res.exit_code
    return 128 + (res.signal or 0)


def cmd_litter(ns) -> int:
    from alloclab.measure import litter
    cmd = A.command(ns)
    if ns.adv is not None:
        if ns.multiplier is not None or ns.occupancy is not None:
            raise LabError("give either --adv or --multiplier/--occupancy, not both")
        m, o = litter.preset(ns.adv)
        if m == 0:
            # Adv_0: no littering, but still on the chosen allocator.
            from alloclab.measure import profile
            from alloclab.core import runner
            profile.load_profile(ns.profile)
            preload, env = litter.setup(ns.allocator, None, 0, 0)
            return _status(runner.run(cmd, preload=preload, env=env, timeout=ns.timeout, stdout="inherit",
                                      stderr="inherit"))
    else:
        if ns.multiplier is None or ns.occupancy is None:
            raise LabError("give --adv, or both --multiplier and --occupancy")
        m, o = ns.multiplier, ns.occupancy
    res = litter.run_littered(cmd, ns.profile, m, o, seed=ns.seed, allocator=ns.allocator,
                              timeout=ns.timeout, log=ns.log)
    return _status(res)


# --------------------------------------------------------------- allocators

def allocators_arguments(sa) -> None:
    sa.add_argument("paths", nargs="*", help="extra .so paths to describe")


def cmd_allocators(ns) -> int:
    from alloclab.core import allocators, paths
    extras = [A.parse_allocator(x) for x in ns.paths or []]
    rows = [("name", "version", "library")]
    missing = []
    for name in allocators.KNOWN:
        try:
            a = allocators.find(name)
            rows.append((a.name, a.version, a.path or "(system allocator, nothing preloaded)"))
        except LabError as e:
            missing.append(f"{name}: {e}")
    for a in extras:
        rows.append((a.name, a.version, a.path))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print("  ".join(v.ljust(w[i]) for i, v in enumerate(r)).rstrip())
    for m in missing:
        print(f"not available: {m}", file=sys.stderr)
    lib = allocators.lab_libdir()
    print(f"lab shims: {lib or 'not found'}", file=sys.stderr)
    print(f"native parts are searched in: ${paths.ENV} (" + (os.environ.get(paths.ENV) or "unset") + "), "
          + ", ".join(r for r in paths.roots() if r not in os.environ.get(paths.ENV, "").split(":")),
          file=sys.stderr)
    return 0


# ------------------------------------------------------------------ compare

def compare_arguments(sc) -> None:
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
    sc.add_argument("--cache", choices=["auto", "perf", "cachegrind", "off"], default="auto",
                    help="cache-miss measurement (default %(default)s)")
    sc.add_argument("--baseline", default=None, help="ALLOCATOR or ALLOCATOR/Adv_N (default glibc/Adv_0)")
    sc.add_argument("--profile", default=None, help="use this profile instead of profiling first")
    A.add_seed(sc)
    sc.add_argument("--fixed-order", action="store_true",
                    help="visit the cells in the same order every round (default: shuffled per round)")
    A.add_output_dir(sc, "out/compare")
    A.add_export(sc, "json", "also write the summary (cells, statistics, ratios) as JSON here")
    A.add_export(sc, "markdown", "also write the results table as Markdown here")
    A.add_export(sc, "csv", "also write the per-run rows (results.csv) here")
    A.add_command(sc)


def cmd_compare(ns) -> int:
    from alloclab import compare, results
    cmd = A.command(ns)
    if ns.profile is not None:
        from alloclab.measure import profile
        profile.load_profile(ns.profile)
    if ns.cache == "perf":
        from alloclab.measure import cache
        cache.require_perf()
    extra = {}
    if ns.prepare is not None:
        extra["prepare"] = ns.prepare
    if ns.show_output:
        extra["show_output"] = True
    from alloclab.core import runner
    if ns.setup is not None:
        runner.run_prepare(ns.setup, ns.timeout, what="--setup")
    try:
        summary = compare.run_matrix(cmd, allocators=ns.allocators, advs=ns.adv, repeat=ns.runs,
                                     outdir=ns.output, timeout=ns.timeout, cache=ns.cache, baseline=ns.baseline,
                                     profile=ns.profile, seed=ns.seed, warmup=ns.warmup,
                                     shuffle=not ns.fixed_order, **extra)
    finally:
        if ns.cleanup is not None:
            runner.run_prepare(ns.cleanup, ns.timeout, what="--cleanup")
    print(compare.format_table(summary))
    from alloclab import report
    print("\n" + report.headline(summary))
    for w in results.warnings(summary):
        print(f"alloclab: warning: {w}", file=sys.stderr)
    written = results.export(summary, ns.output, json_path=ns.export_json, markdown_path=ns.export_markdown,
                             csv_path=ns.export_csv)
    print(f"results: {os.path.join(ns.output, 'results.csv')}  report: {os.path.join(ns.output, 'report.html')}"
          + "".join(f"  {p}" for p in written))
    if summary["meta"].get("interrupted"):
        return 130
    return compare.compare_exit_code(summary)


# ------------------------------------------------------------------- report

def report_arguments(sr) -> None:
    sr.add_argument("dir", type=A._type(A.parse_input_dir), metavar="DIR",
                    help="a comparison's output directory (holding summary.json)")
    A.add_export(sr, "json", "also write the summary and every run as JSON here")
    A.add_export(sr, "markdown", "also write the results table as Markdown here")


def cmd_report(ns) -> int:
    from alloclab import report, results
    if os.path.exists(os.path.join(ns.dir, "findings.json")):  # a study directory
        from alloclab import study
        print(f"report: {study.rerender(ns.dir)}")
        return 0
    summary = results.read_summary(os.path.join(ns.dir, "summary.json"))
    for k in ("format_version", "kind", "runs"):
        summary.pop(k, None)
    path = report.write_report(summary, ns.dir)
    written = results.export(summary, ns.dir, json_path=ns.export_json, markdown_path=ns.export_markdown)
    for w in results.warnings(summary):
        print(f"alloclab: warning: {w}", file=sys.stderr)
    print(f"report: {path}" + "".join(f"  {p}" for p in written))
    return 0


# ------------------------------------------------------------------- parser

class Parser(argparse.ArgumentParser):
    """argparse with the lab's error convention: `alloclab: <message>` and exit 2."""

    def error(self, message):
        self.exit(2, f"alloclab: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="alloclab", description="Profile, litter and compare memory allocators.",
               epilog="Each command has its own --help. Native parts are found as docs/lab.md describes "
                      "(ALLOCLAB_PREFIX first).")
    p.add_argument("--version", action="version", version=f"alloclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for c in COMMANDS:
        sp = sub.add_parser(c.name, help=c.help, description=c.help)
        c.add(sp)
        sp.set_defaults(func=c)
    return p


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser()
        ns = parser.parse_args(args)
        A.prepare_outputs(ns)
        return ns.func(ns)
    except LabError as e:
        print(f"alloclab: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("alloclab: interrupted", file=sys.stderr)
        return 130


def main_exit() -> None:
    """The console entry point (pyproject.toml [project.scripts])."""
    sys.exit(main())
