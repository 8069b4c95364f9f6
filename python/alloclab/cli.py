"""The `alloclab` command line.

    alloclab profile [-o FILE] [--cutoff N] [--allocator NAME] -- CMD ARGS...
    alloclab litter --profile FILE (--adv {0,1,3,10} | --multiplier M --occupancy O)
                    [--seed S] [--allocator NAME] -- CMD ARGS...
    alloclab allocators
    alloclab compare [--allocators LIST] [--adv LIST] [--repeat N] [--timeout S]
                     [--cache {auto,perf,cachegrind,off}] [--baseline NAME[/Adv_N]]
                     [--profile FILE] [--seed S] [--no-warmup] [--fixed-order] [-o DIR] -- CMD ARGS...

Other modules of the package add subcommands by defining register(subparsers)
(see CORE_MODULES below); `study` falls back to a wrapper around
alloclab.study.run_study() when that module has no register().

Exit status: 0 success; 2 bad input (message on stderr); profile and litter
pass on the program's own non-zero status (128+signal when it was killed);
compare returns 1 when some cell has no successful run, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys

from alloclab import LabError, __version__


def _cmd(ns) -> list[str]:
    cmd = list(ns.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise LabError("no command given; put it after --, e.g. alloclab compare -- ls -l")
    return cmd


def _status(res) -> int:
    if res.exit_code is not None:
        return res.exit_code
    return 128 + (res.signal or 0)


def cmd_profile(ns) -> int:
    from alloclab import profile
    cmd = _cmd(ns)
    p = profile.run_profile(cmd, out=ns.output, cutoff=ns.cutoff, allocator=ns.allocator, timeout=ns.timeout)
    procs = len(p["processes"])
    print(f"alloclab: profile written to {ns.output}: {p['allocations']} allocations, {p['bytes']} bytes, "
          f"max_live {p['max_live']} ({p['max_live_bytes']} bytes), mean size {p['mean_size']}, "
          f"{len(p['sizes'])} distinct sizes below {p['cutoff']}, {p['ignored']} at or above"
          + (f"; merged from {procs} processes" if procs > 1 else ""), file=sys.stderr)
    run = p["run"]
    if run["status"] != "ok":
        print(f"alloclab: warning: the program ended with status {run['status']}", file=sys.stderr)
        return run["exit_code"] if run["exit_code"] is not None else 128 + (run["signal"] or 0)
    return 0


def cmd_litter(ns) -> int:
    from alloclab import litter
    cmd = _cmd(ns)
    if ns.adv is not None:
        if ns.multiplier is not None or ns.occupancy is not None:
            raise LabError("give either --adv or --multiplier/--occupancy, not both")
        m, o = litter.preset(ns.adv)
        if m == 0:
            # Adv_0: no littering, but still on the chosen allocator.
            from alloclab import profile, runner
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


def cmd_allocators(ns) -> int:
    from alloclab import allocators
    extras = [allocators.find(x) for x in ns.paths or []]
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
    print(f"lab shims: {lib or 'not found (run make, or set ALLOCLAB_LIBDIR)'}", file=sys.stderr)
    return 0


def cmd_compare(ns) -> int:
    from alloclab import compare
    cmd = _cmd(ns)
    summary = compare.run_matrix(cmd, allocators=ns.allocators.split(","), advs=ns.adv, repeat=ns.repeat,
                                 outdir=ns.output, timeout=ns.timeout, cache=ns.cache, baseline=ns.baseline,
                                 profile=ns.profile, seed=ns.seed, warmup=not ns.no_warmup,
                                 shuffle=not ns.fixed_order)
    print(compare.format_table(summary))
    print(f"results: {os.path.join(ns.output, 'results.csv')}  report: {os.path.join(ns.output, 'report.html')}")
    if summary["meta"].get("interrupted"):
        return 130
    return compare.compare_exit_code(summary)


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    return v


# Modules of this package that are the command line's own; every other module
# may extend it by defining register(subparsers), which adds a subcommand
# (set_defaults(func=...) taking the parsed namespace, returning the status).
CORE_MODULES = {"__init__", "__main__", "cli", "allocators", "runner", "profile", "litter", "cache",
                "compare", "report"}


def _register_extensions(sub) -> list[str]:
    """Add the subcommands of extension modules; returns load problems (not fatal)."""
    import importlib
    import pkgutil

    import alloclab
    problems = []
    for info in sorted(pkgutil.iter_modules(alloclab.__path__), key=lambda m: m.name):
        if info.name in CORE_MODULES or info.name.startswith("_"):
            continue
        try:
            mod = importlib.import_module(f"alloclab.{info.name}")
        except Exception as e:  # a broken extension must not take the core commands down
            problems.append(f"{info.name}: {type(e).__name__}: {e}")
            continue
        try:
            if callable(getattr(mod, "register", None)):
                mod.register(sub)
        except Exception as e:
            problems.append(f"{info.name}: {type(e).__name__}: {e}")
    return problems


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="alloclab", description="Profile, litter and compare memory allocators.")
    p.add_argument("--version", action="version", version=f"alloclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sp = sub.add_parser("profile", help="record allocation sizes and peak live objects of a program")
    sp.add_argument("-o", "--output", default="alloclab-profile.json", help="profile JSON (default %(default)s)")
    sp.add_argument("--cutoff", type=int, default=4096, help="histogram sizes below this (default %(default)s)")
    sp.add_argument("--allocator", default=None, help="allocator to profile on (default glibc)")
    sp.add_argument("--timeout", type=float, default=None, help="kill the program after S seconds")
    sp.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    sp.set_defaults(func=cmd_profile)

    sl = sub.add_parser("litter", help="run a program once on a littered heap")
    sl.add_argument("--profile", required=True, help="profile JSON from `alloclab profile`")
    sl.add_argument("--adv", type=int, choices=[0, 1, 3, 10], help="paper Table 3 preset")
    sl.add_argument("--multiplier", type=_positive_float, help="M: allocate M x max_live objects")
    sl.add_argument("--occupancy", type=_positive_float, help="O: fraction left live, in [0,1]")
    sl.add_argument("--seed", type=int, default=42, help="littering seed (default %(default)s)")
    sl.add_argument("--allocator", default=None, help="allocator name or .so path (default glibc)")
    sl.add_argument("--log", default=None, help="append the litter log line here instead of stderr")
    sl.add_argument("--timeout", type=float, default=None, help="kill the program after S seconds")
    sl.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    sl.set_defaults(func=cmd_litter)

    sa = sub.add_parser("allocators", help="list the allocators found on this machine")
    sa.add_argument("paths", nargs="*", help="extra .so paths to describe")
    sa.set_defaults(func=cmd_allocators)

    sc = sub.add_parser("compare", help="time a program on each allocator x littering level")
    sc.add_argument("--allocators", default="glibc,jemalloc,mimalloc",
                    help="comma-separated names or .so paths, or 'all' (default %(default)s)")
    sc.add_argument("--adv", default="0,1,3,10", help="littering levels (default %(default)s)")
    sc.add_argument("--repeat", type=int, default=5, help="measured runs per cell (default %(default)s)")
    sc.add_argument("--timeout", type=float, default=None, help="kill a run after S seconds")
    sc.add_argument("--cache", choices=["auto", "perf", "cachegrind", "off"], default="auto",
                    help="cache-miss measurement (default %(default)s)")
    sc.add_argument("--baseline", default=None, help="ALLOCATOR or ALLOCATOR/Adv_N (default glibc/Adv_0)")
    sc.add_argument("--profile", default=None, help="use this profile instead of profiling first")
    sc.add_argument("--seed", type=int, default=42, help="littering seed (default %(default)s)")
    sc.add_argument("--no-warmup", action="store_true", help="skip the warm-up run per cell")
    sc.add_argument("--fixed-order", action="store_true",
                    help="visit the cells in the same order every round (default: shuffled per round)")
    sc.add_argument("-o", "--output", default="out/compare", help="output directory (default %(default)s)")
    sc.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    sc.set_defaults(func=cmd_compare)

    p.extension_problems = _register_extensions(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = sys.argv[1:] if argv is None else list(argv)
    if parser.extension_problems and args and not args[0].startswith("-") and \
            args[0] not in ("profile", "litter", "allocators", "compare"):
        for problem in parser.extension_problems:
            print(f"alloclab: warning: extension {problem}", file=sys.stderr)
    ns = parser.parse_args(args)
    try:
        if ns.command == "compare" and ns.allocators.strip() == "all":
            from alloclab import allocators
            ns.allocators = ",".join(a.name for a in allocators.available())
        return ns.func(ns)
    except LabError as e:
        print(f"alloclab: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("alloclab: interrupted", file=sys.stderr)
        return 130
