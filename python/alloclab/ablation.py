"""The ablation of Vam's design choices: each switch changed alone, measured.

The Vam paper (2005, section 4.3 and Figures 4-5) justifies its design by
measuring variants that undo one choice at a time. libvam makes each choice a
run-time option (docs/vam.md, "Design switches"), and `alloclab ablation`
runs every setting of every switch, one switch changed at a time with the
others at their defaults, on bundled workloads and real programs:

    VAM_CLASSES      fine | coarse           size-class spacing (paper §3.1)
    VAM_BLOCK_ALLOC  bump | lifo             allocation inside a block (§3.4)
    VAM_ORDER        recent | fifo           where a block that regains space goes (§3.5)
    VAM_HEADERS      off | on                per-object headers on small objects (§3.3)
    VAM_BLOCK_PAGES  1 | 4 | 16              fewest pages per medium block (§3.1)
    VAM_BLOCK_OBJECTS 32 | 1 | 64            blocks doubled until they hold 32 (64) objects, or fixed
    VAM_PAGE_MAX     1024 | 8192 | 4096      largest object in page blocks; above, boundary-tagged chunks (§3.1)
    VAM_DISCARD      delayed | eager | off   empty-page discard (§3.6)
    VAM_LARGE_QUICK  on | off                freed large chunks held whole on quick lists (not the paper's)

Per program and setting it measures wall time (interleaved rounds: each round
runs every setting of a program in a shuffled order; the ratio to the default
setting is taken per round, and the median with the min-max over rounds is
reported, alloclab.stats), D1 and LL misses (cachegrind at the lab's fixed
geometry, alloclab.cache: one run, deterministic) and peak RSS (median of the
per-round ratios). Lower ratios are better; the winner of a program x switch
is its setting with the lowest time ratio. Across the programs, each setting's
time is also paired by round (the round's geometric mean over the programs,
then a t-interval over the rounds, stats.paired_ratio) and called faster or
slower only when that interval excludes 1; an A/A control, the default setting
run again as one more setting, shows what the method reports when nothing
changed.

Outputs DIR/ablation.json (docs/formats.md) and DIR/ablation.md.

API::

    SWITCHES
    plan_programs(outdir, mode) -> (programs, notes)
    run_ablation(outdir="out/ablation", mode="default", progress=sys.stderr, ...) -> dict
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import shutil
import sys
import time

from alloclab import LabError, stats
from alloclab.core import allocators as alloc_mod, runner
from alloclab.measure import cache as cache_mod
from alloclab.present import tables
from alloclab.experiments import workloads

FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True)
class Switch:
    name: str
    default: str
    values: tuple     # the default first
    paper: str        # what the paper claims, for the report


SWITCHES: tuple[Switch, ...] = (
    Switch("VAM_CLASSES", "fine", ("fine", "coarse"),
           "fine-grained exact-fit classes cut internal fragmentation and L2 misses; coarse ones "
           "reuse space across sizes sooner (253.perlbmk)"),
    Switch("VAM_BLOCK_ALLOC", "bump", ("bump", "lifo"),
           "reap allocation (bump, then the block's free list) needs fewer instructions and keeps "
           "allocation order"),
    Switch("VAM_ORDER", "recent", ("recent", "fifo"),
           "ordered per-size allocation: a block that regains space goes to the front of its "
           "class's available list, so new objects fill recently touched pages (page-level "
           "locality)"),
    Switch("VAM_HEADERS", "off", ("off", "on"),
           "headerless small objects: headers add ~15% L2 misses and ~3% time (10% on 197.parser)"),
    Switch("VAM_BLOCK_PAGES", "4", ("4", "1", "16"),
           "one page for small objects, four for medium: less page-internal fragmentation at the "
           "block's end"),
    Switch("VAM_BLOCK_OBJECTS", "32", ("32", "1", "64"),
           "not the paper's: it fixes no block size; blocks of big objects grown until they hold 32 "
           "(as jemalloc sizes its slabs per class) turn over less often than blocks of one size"),
    Switch("VAM_PAGE_MAX", "1024", ("1024", "8192", "4096"),
           "page blocks for small and medium objects only (up to 504 bytes); larger ones best fit "
           "among chunks with boundary tags and exact-size lists, coalesced at once (the "
           "paper's large objects). 8192: classes eight per power of two above 1 KiB in blocks too"),
    Switch("VAM_DISCARD", "delayed", ("delayed", "eager", "off"),
           "discarding every empty page at once costs a system call and a fault per reuse, "
           "\"low\" against paging"),
    Switch("VAM_LARGE_QUICK", "on", ("on", "off"),
           "not the paper's, which coalesces every freed large object at once: freed chunks of "
           "1..64 KiB held whole on per-size lists (at most a sixteenth of the live large bytes) "
           "for the next request of their size, at the price of the memory they hold"),
)

MODES = {
    # workload scale, real programs' size, timed rounds, which programs
    "quick": {"scale": "0.03", "real": 0.05, "rounds": 2,
              "workloads": ("bignum_factor", "gp_mix"), "real_programs": ("perl",)},
    "default": {"scale": "0.3", "real": 0.3, "rounds": 5,
                "workloads": ("bignum_factor", "gp_mix", "boxed_sim", "compiler", "interp"),
                "real_programs": ("python3/malloc", "perl", "sqlite3/malloc", "jq")},
    "full": {"scale": "1", "real": 1.0, "rounds": 7,
             "workloads": ("bignum_factor", "gp_mix", "boxed_sim", "compiler", "interp", "xalloc_parser",
                           "server"),
             "real_programs": ("python3/malloc", "perl", "sqlite3/malloc", "jq", "gcc")},
}


@dataclasses.dataclass(frozen=True)
class Setting:
    switch: str | None   # None: every switch at its default
    value: str

    @property
    def key(self) -> str:
        if self.switch is None:
            return CONTROL if self.value == "again" else "default"
        return f"{self.switch}={self.value}"

    def env(self) -> dict:
        """Every switch explicitly at its default, but this one; padded so that
        every setting's environment has the same size (see PAD)."""
        e = {s.name: s.default for s in SWITCHES}
        if self.switch is not None:
            e[self.switch] = self.value
        used = sum(len(v) for v in e.values())
        e[PAD] = "x" * (_MAX_VALUES - used)
        e.update(FIXED_SEEDS)
        return e


# The environment's strings sit at the top of the initial stack, so a value
# one byte longer moves every stack address of the program: under cachegrind
# (address randomisation off) that alone changes the miss counts a little. A
# padding variable keeps the environment's size the same for every setting,
# so the counts move only when the allocator behaves differently.
PAD = "ALLOCLAB_ABLATION_PAD"
# Interpreters that randomise their hashing per process would change their
# allocations (and misses) from run to run whatever the allocator does.
FIXED_SEEDS = {"PERL_HASH_SEED": "0", "PYTHONHASHSEED": "0"}
_MAX_VALUES = sum(max(len(v) for v in s.values) for s in SWITCHES)


# The A/A control: the default setting again, run and timed as one more
# setting. Its ratio to the default is what the method reports when nothing
# changed; an alternative is called faster or slower only when its interval
# excludes 1, and the control's own interval shows how often that can fail.
CONTROL = "control"


def settings() -> list[Setting]:
    out = [Setting(None, "")]
    for s in SWITCHES:
        out.extend(Setting(s.name, v) for v in s.values if v != s.default)
    out.append(Setting(None, "again"))
    return out


def paired_by_round(times: dict, key: str, programs: list) -> dict | None:
    """The time of setting `key` over the default's, round by round: each round's
    geometric mean over the programs of the ratio of that round's two runs, then
    stats.paired_ratio over the rounds (a t-interval of the log ratios). Returns
    {"ratio", "low", "high", "p", "rounds", "verdict"}: faster / slower when the 95%
    interval lies below / above 1, else level."""
    per_round = []
    nrounds = max((len(times[q][key]) for q in programs), default=0)
    for r in range(nrounds):
        rs = []
        for q in programs:
            a, b = times[q][key], times[q]["default"]
            if r < len(a) and r < len(b) and a[r] and b[r]:
                rs.append(a[r] / b[r])
        if rs:
            per_round.append(stats.geomean(rs))
    pr = stats.paired_ratio(per_round)
    if pr is None:
        return None
    verdict = ("faster" if pr.high < 1.0 else "slower") if pr.clear else "level"
    return {"ratio": pr.geomean, "low": pr.low, "high": pr.high, "p": pr.p, "rounds": pr.n, "verdict": verdict}


# ------------------------------------------------------------------ programs

JQ_FILTER = "group_by(.k) | map({k: .[0].k, n: length, s: (map(.v) | add), t: (map(.w) | join(\",\"))})"


def _jq_program(outdir: str, size: float):
    """jq grouping generated JSON records: many small strings, arrays and objects."""
    from alloclab import study
    jq = shutil.which("jq")
    if not jq:
        return None
    rows = max(2000, int(60000 * size))
    letters = "abcdefghijklmnopqrstuvwxyz"
    recs = []
    for i in range(rows):
        w = "".join(letters[(i * k * 7 + k) % 26] for k in range(1, i % 9 + 3))
        recs.append(f'{{"k": {i * 7919 % 97}, "v": {i % 1000}, "w": "{w}"}}')
    path = study._write(os.path.join(outdir, "inputs", "records.json"), "[" + ",\n".join(recs) + "]\n")
    return study.Program("jq", "jq", "real", "real", [jq, "-c", JQ_FILTER, path], origin="real")


def plan_programs(outdir: str, mode: str, only=None, scale=None) -> tuple[list, list]:
    """The programs of a mode: bundled workloads (their naive `malloc` variant,
    every allocation through malloc) and real programs (the study's, reused)."""
    from alloclab import study
    m = dict(MODES[mode])
    if scale is not None:
        m["scale"] = str(scale)
    notes: list = []
    progs = []
    for name in m["workloads"]:
        binary = workloads.binary(name)
        if not binary:
            notes.append(f"workload {name} is not built: left out")
            continue
        progs.append(study.Program(name, name, "malloc", workloads.find(name).kind,
                                   [binary, "--alloc", "malloc", "--scale", m["scale"]]))
    real = {q.name: q for q in study.real_programs(outdir, m["real"], notes)}
    if "jq" in m["real_programs"]:
        q = _jq_program(outdir, m["real"])
        if q:
            real["jq"] = q
        else:
            notes.append("jq is not installed: left out")
    for name in m["real_programs"]:
        if name in real:
            progs.append(real[name])
    if only:
        unknown = [n for n in only if n not in {q.name for q in progs}]
        if unknown:
            raise LabError(f"--programs: {', '.join(unknown)} is not among this mode's programs "
                           f"({', '.join(q.name for q in progs) or 'none available'})")
        progs = [q for q in progs if q.name in only]
    if not progs:
        raise LabError("nothing to run: build the workloads (make) or install perl, python3, sqlite3 or jq")
    return progs, notes


# ------------------------------------------------------------------ running

def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)


def _ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def run_ablation(outdir: str = "out/ablation", mode: str = "default", progress=sys.stderr, rounds=None,
                 scale=None, only=None, cache: bool = True, seed: int = 1, timeout: float = 600,
                 command=None) -> dict:
    if mode not in MODES:
        raise LabError(f"unknown ablation mode {mode!r} (quick, default, full)")
    say = (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)
    start = time.monotonic()
    os.makedirs(outdir, exist_ok=True)
    vam = alloc_mod.find("vam")
    m = dict(MODES[mode])
    if scale is not None:
        m["scale"] = str(scale)
    progs, notes = plan_programs(outdir, mode, only, scale)
    nrounds = rounds or m["rounds"]
    sets = settings()
    method = "cachegrind" if cache and shutil.which("valgrind") else "off"
    if cache and method == "off":
        notes.append("valgrind is not installed: D1 and LL misses were not measured")
    say(f"ablation ({mode}): {len(progs)} programs x {len(sets)} settings x {nrounds} timed round(s)"
        + (", plus one cachegrind run each" if method != "off" else ""))
    for n in notes:
        say(f"note: {n}")

    times = {q.name: {s.key: [] for s in sets} for q in progs}
    rss = {q.name: {s.key: [] for s in sets} for q in progs}
    outputs = {q.name: {} for q in progs}
    failed: dict = {}
    rng = random.Random(seed)
    for q in progs:  # one unrecorded warm-up run per program (file cache, lazy binding)
        runner.run(q.cmd, preload=[vam.path], env=sets[0].env(), timeout=timeout)
    for r in range(nrounds):
        say(f"== ablation round {r + 1}/{nrounds}")
        for q in progs:
            order = list(sets)
            rng.shuffle(order)
            for s in order:
                res = runner.run(q.cmd, preload=[vam.path], env=s.env(), timeout=timeout)
                if res.status != "ok":
                    failed.setdefault((q.name, s.key), res.status)
                    times[q.name][s.key].append(None)
                    rss[q.name][s.key].append(None)
                    continue
                times[q.name][s.key].append(res.wall_s)
                rss[q.name][s.key].append(res.max_rss_kb)
                outputs[q.name].setdefault(s.key, res.stdout_sha256)
    for (name, key), status in sorted(failed.items()):
        notes.append(f"{name} with {key}: a run ended {status}")
    for name, outs in outputs.items():
        base = outs.get("default")
        differ = sorted(k for k, h in outs.items() if base is not None and h != base)
        if differ:
            notes.append(f"{name}: its output differed from the default setting's under " + ", ".join(differ))

    counts = {q.name: {} for q in progs}
    if method != "off":
        cdir = os.path.join(outdir, "cache")
        for q in progs:
            for s in sets:
                if s.key == CONTROL:  # deterministic: the default's counts again
                    continue
                say(f"== ablation cachegrind {q.name} {s.key}")
                c = cache_mod.measure(q.cmd, method, preload=[vam.path], env=s.env(), workdir=cdir,
                                      tag=_slug(f"{q.name}.{s.key}"), timeout=timeout * 50)
                if c.get("error"):
                    notes.append(f"cachegrind, {q.name} with {s.key}: {c['error']}")
                counts[q.name][s.key] = c

    rows = []
    for q in progs:
        for sw in SWITCHES:
            group = []
            for v in sw.values:
                key = "default" if v == sw.default else f"{sw.name}={v}"
                t = stats.ratio_spread(times[q.name][key], times[q.name]["default"])
                rs = stats.ratio_spread(rss[q.name][key], rss[q.name]["default"])
                c, c0 = counts[q.name].get(key) or {}, counts[q.name].get("default") or {}
                group.append({
                    "program": q.name, "switch": sw.name, "value": v, "is_default": v == sw.default,
                    "n": t.n if t else 0,
                    "time_ratio": t.median if t else None, "time_lo": t.low if t else None,
                    "time_hi": t.high if t else None,
                    "d1_ratio": _ratio(c.get("d1_misses"), c0.get("d1_misses")),
                    "ll_ratio": _ratio(c.get("ll_misses"), c0.get("ll_misses")),
                    "rss_ratio": rs.median if rs else None,
                    "winner": False,
                })
            timed = [g for g in group if g["time_ratio"] is not None]
            if timed:
                min(timed, key=lambda g: (g["time_ratio"], not g["is_default"]))["winner"] = True
            rows.extend(group)

    summary = summarise(rows, [q.name for q in progs])
    names = [q.name for q in progs]
    for sw in summary:
        for v in sw["values"]:
            v["time_paired"] = None if v["is_default"] else paired_by_round(
                times, f"{sw['switch']}={v['value']}", names)
        sw["clearly_faster"] = [v["value"] for v in sorted(sw["values"], key=lambda v: v["time_geomean"] or 9)
                                if (v.get("time_paired") or {}).get("verdict") == "faster"]
    control = paired_by_round(times, CONTROL, names)
    control_rss = stats.geomean(r.median for r in (stats.ratio_spread(rss[q][CONTROL], rss[q]["default"])
                                                   for q in names) if r)
    notes.append("time ratios are wall time, paired per round (valid only when nothing else ran on the "
                 "machine); D1/LL (cachegrind, address randomisation off, same-size environments, fixed hash "
                 "seeds) repeat exactly for the deterministic programs; peak RSS moves by a few pages from run "
                 "to run")
    out = {
        "format_version": FORMAT_VERSION, "kind": "ablation",
        "command": list(command) if command else ["alloclab", "ablation", f"--{mode}"],
        "geometry": " ".join(f"{k}={v}" for k, v in cache_mod.GEOMETRY.items()) if method != "off" else "",
        "switches": [{"name": s.name, "default": s.default, "values": list(s.values)} for s in SWITCHES],
        "rows": rows,
        "notes": notes,
        "summary": summary,
        "control": dict(control, rss_geomean=control_rss) if control else None,
        "meta": {"mode": mode, "rounds": nrounds, "scale": m["scale"], "real_size": m["real"],
                 "allocator": vam.path, "allocator_version": vam.version, "cache_method": method,
                 "programs": [{"name": q.name, "cmd": q.cmd} for q in progs],
                 "elapsed_s": time.monotonic() - start},
    }
    with open(os.path.join(outdir, "ablation.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    with open(os.path.join(outdir, "ablation.md"), "w") as f:
        f.write(markdown(out))
    say(markdown_summary(out))
    say(f"ablation: {os.path.join(outdir, 'ablation.json')}  {os.path.join(outdir, 'ablation.md')}  "
        f"({time.monotonic() - start:.0f} s)")
    return out


def summarise(rows: list, programs: list) -> list:
    """Per switch and value: geometric means over the programs of each ratio,
    and how many programs that value wins; the overall winner by time (then D1)."""
    out = []
    for sw in SWITCHES:
        vals = []
        for v in sw.values:
            rs = [r for r in rows if r["switch"] == sw.name and r["value"] == v]
            vals.append({"value": v, "is_default": v == sw.default,
                         "time_geomean": stats.geomean(r["time_ratio"] for r in rs),
                         "d1_geomean": stats.geomean(r["d1_ratio"] for r in rs),
                         "ll_geomean": stats.geomean(r["ll_ratio"] for r in rs),
                         "rss_geomean": stats.geomean(r["rss_ratio"] for r in rs),
                         "wins": sum(1 for r in rs if r["winner"])})
        timed = [x for x in vals if x["time_geomean"] is not None]
        best = min(timed, key=lambda x: (x["time_geomean"], not x["is_default"]))["value"] if timed else None
        out.append({"switch": sw.name, "default": sw.default, "values": vals, "best_by_time": best})
    return out


def _f(x, digits=3):
    return tables.MISSING if x is None else f"{x:.{digits}f}"


def markdown(a: dict) -> str:
    lines = ["# Ablation of Vam's design switches", "",
             "Each setting changes one switch; ratios are to that program's default setting "
             "(lower is better). Time: median of per-round ratios (min–max); D1/LL: cachegrind "
             f"({a['geometry'] or 'not measured'}); RSS: peak resident set. **bold**: the program's "
             "winner for that switch (lowest time).", "",
             "## Per switch (geometric means over the programs)", ""]
    per_switch = [[s["switch"], v["value"] + (" (default)" if v["is_default"] else ""), _f(v["time_geomean"]),
                   "" if v["is_default"] else _paired_text(v.get("time_paired")),
                   _f(v["d1_geomean"]), _f(v["ll_geomean"]), _f(v["rss_geomean"]), v["wins"]]
                  for s in a.get("summary", []) for v in s["values"]]
    c = a.get("control")
    if c:
        per_switch.append(["A/A control", "the default again", "", _paired_text(c), "", "", _f(c.get("rss_geomean")),
                           ""])
    lines += [tables.markdown(["switch", "value", "time", "time, paired by round (95%)", "D1 misses", "LL misses",
                               "peak RSS", "programs won"], per_switch, "llrlrrrr").rstrip(), "",
              "time: geometric mean over the programs of each program's median per-round ratio. Paired by "
              "round: each round's geometric mean over the programs, then a t-interval over the rounds; "
              "faster / slower when the interval excludes 1. The A/A control runs the default setting again "
              "as one more setting: its line is the method's error when nothing changed.",
              "", "## Per program", ""]
    per_program = []
    for r in a["rows"]:
        t = f"{_f(r['time_ratio'])} ({_f(r['time_lo'])}–{_f(r['time_hi'])})"
        per_program.append([r["program"], r["switch"], r["value"] + (" (default)" if r["is_default"] else ""),
                            f"**{t}**" if r["winner"] else t, _f(r["d1_ratio"]), _f(r["ll_ratio"]),
                            _f(r["rss_ratio"]), r["n"]])
    lines.append(tables.markdown(["program", "switch", "value", "time (min–max)", "D1 misses", "LL misses",
                                  "peak RSS", "n"], per_program, "lllrrrrr").rstrip())
    if a.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in a["notes"]]
    lines += ["", "Command: `" + " ".join(a["command"]) + "`", ""]
    return "\n".join(lines)


def markdown_summary(a: dict) -> str:
    out = ["", "Ablation (geometric means over the programs; ratios to the default, lower is better):"]
    for s in a.get("summary", []):
        for v in s["values"]:
            if v["is_default"]:
                continue
            out.append(f"  {s['switch']}={v['value']:8s} time {_f(v['time_geomean'])}  D1 {_f(v['d1_geomean'])}"
                       f"  LL {_f(v['ll_geomean'])}  RSS {_f(v['rss_geomean'])}  wins {v['wins']}")
        faster = ", ".join(s.get("clearly_faster") or []) or "none"
        out.append(f"  {s['switch']}: lowest time {s['best_by_time']} (default {s['default']}); "
                   f"clearly faster than the default: {faster}")
    c = a.get("control")
    if c:
        out.append(f"  A/A control (the default again): time {_f(c['ratio'])} (95% {_f(c['low'])}-{_f(c['high'])}), "
                   f"{c['verdict']}: what the method reports when nothing changed")
    return "\n".join(out)


def _paired_text(t) -> str:
    if not t:
        return tables.MISSING
    return f"{_f(t['ratio'])} ({_f(t['low'])}–{_f(t['high'])}) {t['verdict']}"


# ------------------------------------------------------------------ command line

def add_arguments(sp) -> None:
    """`alloclab ablation [--quick | --full] [--rounds N] [--programs LIST] [--no-cache] [-o DIR]`."""
    from alloclab import args as A
    A.add_mode(sp, "a smoke test: two small workloads and perl, two rounds",
               "bigger inputs, more programs, seven rounds")
    sp.add_argument("--rounds", type=A.count_type(1), default=None, metavar="N",
                    help="timed rounds (default: the mode's)")
    A.add_scale(sp)
    sp.add_argument("--programs", type=A._type(A.parse_list), default=None, metavar="LIST",
                    help="only these programs (names as in the report, comma-separated)")
    sp.add_argument("--no-cache", dest="cache", action="store_false",
                    help="skip the cachegrind runs (no D1/LL columns)")
    A.add_timeout(sp, 600)
    A.add_output_dir(sp, "out/ablation")


def run_command(ns) -> int:
    run_ablation(outdir=ns.output, mode=ns.mode or "default", rounds=ns.rounds, scale=ns.scale,
                 only=ns.programs, cache=ns.cache, timeout=ns.timeout or 600,
                 command=["alloclab"] + sys.argv[1:])
    return 0
