"""The study: the papers' claims, tested with data from this machine.

`alloclab study` (and `make study`) runs the bundled workloads — each in the
variants its binary accepts (naive `malloc` built per the 2026 paper's Table
4, the program's `custom` allocator, `reap`, and for the 2002 comparison the
region emulator, talloc, APR pools and std::pmr) — and real programs, some
with their own allocator switched on and off (CPython's pymalloc, SQLite's
lookaside), over the general-purpose allocators installed here, on a clean
and on littered heaps. It writes DIR/results.csv (one row per run),
DIR/verdicts.json (one row per claim of the three papers, with the rule that
judged it), DIR/findings.json (the tables) and DIR/report.html.

The experiment's invariants (the papers' method):
  - one heap profile per program, taken from its naive variant on glibc, and
    every variant and allocator of that program littered with it (2026 §3);
    each row records the sha256 of the profile that littered it;
  - the 2026 paper's taxonomy (alloclab.workloads): each question takes the
    kinds its figure takes (RQ3: region and hybrid);
  - each repeat litters with its own seed, shared by the variants of a
    program, so spreads include the heap layout's variance;
  - littering time is not program time: 2026 verdicts use the in-process time
    from the end of littering to exit, as the paper's litterer measures.

API::

    plan(mode, allocators=None, outdir=..., runs=None) -> Plan
    run_study(outdir="out/study", mode="default", allocators=None, progress=sys.stderr, runs=None) -> dict
    rerender(outdir) -> str          # report.html again from findings.json and verdicts.json
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time

from alloclab import LabError, compare, results, stats, verdicts
from alloclab.core import allocators as alloc_mod
from alloclab.present import tables
from alloclab.experiments import workloads
from alloclab.measure import profile as profile_mod

# Of findings.json and verdicts.json (docs/formats.md). results.csv is the
# comparison's row format (alloclab.results) with the program's columns in front.
FORMAT_VERSION = 1

# Variants that take the whole matrix (every allocator, every littering
# level); the others answer clean-heap questions on glibc only.
CORE_VARIANTS = ("malloc", "custom", "reap")

MODES = {
    # scale passed to --scale, littering levels, repeats, warm-up, real programs' size,
    # how many allocators, whether the clean-only variants (emulator, talloc, apr, pmr) run
    "quick": {"scale": "0.1", "advs": [0, 3], "repeat": 2, "warmup": False, "real": 0.15,
              "max_allocators": 4, "like_variants": False, "memory_scale": "0.02",
              "frag_scale": "0.05", "weights_scale": "0.02"},
    "default": {"scale": "0.5", "advs": [0, 3], "repeat": 3, "warmup": False, "real": 1.0,
                "max_allocators": 5, "like_variants": True, "memory_scale": "0.05",
                "frag_scale": "0.3", "weights_scale": "0.5"},
    "full": {"scale": "3", "advs": [0, 1, 3, 10], "repeat": 5, "warmup": True, "real": 3.0,
             "max_allocators": 5, "like_variants": True, "memory_scale": "0.1",
             "frag_scale": "0.3", "weights_scale": "0.5"},
}
PREFERRED = ["glibc", "jemalloc", "mimalloc", "vam", "tcmalloc"]


@dataclasses.dataclass
class Program:
    name: str          # e.g. "compiler/reap" or "python3/custom" or "gcc"
    workload: str      # the program it is a variant of: one profile per workload
    variant: str       # malloc | custom | reap | emulator | talloc | apr | pmr | real
    kind: str          # per-class | region | hybrid | general | real
    cmd: list
    origin: str = "bundled"   # bundled | real
    clean_only: bool = False  # Adv_0 on glibc only (the 2002 comparisons)
    partial: bool = False


@dataclasses.dataclass
class Plan:
    mode: str
    allocators: list          # Allocator objects, glibc first
    advs: list
    repeat: int
    warmup: bool
    scale: str
    memory_scale: str
    programs: list
    notes: list
    seed: int = 42
    frag_scale: str = "0.3"    # fragmentation needs a heap of realistic size: pages round up small ones
    weights_scale: str = "0.5"  # the memory-operations share, measured at the size the study times

    def groups(self) -> dict:
        """workload -> its programs, naive variant first."""
        out: dict = {}
        for prog in self.programs:
            out.setdefault(prog.workload, []).append(prog)
        return out


# ---------------------------------------------------------------- the programs

def _write(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def _gen_c_file(path: str, functions: int) -> str:
    """A deterministic, allocation-heavy C translation unit for gcc."""
    out = ["/* generated by alloclab study */", "struct node { int v; struct node *next; };"]
    for i in range(functions):
        body = [f"int f{i}(int a, int b) {{", "  int x = a, y = b;"]
        for k in range(12):
            body.append(f"  x = (x * {k + 3} + y) ^ (y >> {k % 7}); y = y + x % {k + 11};")
        body.append(f"  if (x > {i}) {{ y -= {i % 13}; }} else {{ x += {i % 17}; }}")
        body.append(f"  return x + y + {i};")
        body.append("}")
        out.extend(body)
    return _write(path, "\n".join(out) + "\n")


PY_SCRIPT = """\
# generated by alloclab study: dictionaries, lists and strings, deterministic
import sys
n = int(sys.argv[1])
d = {}
acc = 0
for i in range(n):
    k = "key%d" % (i * 7919 % n)
    d.setdefault(k, []).append(str(i) * (i % 7 + 1))
    if i % 3 == 0:
        d.pop("key%d" % ((i * 31) % n), None)
for k in sorted(d):
    acc = (acc * 31 + len(k) + sum(len(s) for s in d[k])) % 1000000007
print(acc)
"""

PERL_SCRIPT = """\
# generated by alloclab study: hashes of words, deterministic
use strict; use warnings;
my $n = shift; my %h; my $acc = 0;
for my $i (0 .. $n - 1) {
  my $w = join("", map { chr(97 + ($i * $_ * 7 + $_) % 26) } 1 .. ($i % 9 + 2));
  push @{ $h{$w} }, $i;
  delete $h{ join("", reverse split //, $w) } if $i % 5 == 0;
}
for my $k (sort keys %h) { $acc = ($acc * 31 + length($k) + scalar(@{ $h{$k} })) % 1000000007; }
print "$acc\\n";
"""


SQL_HEAD = """\
-- generated by alloclab study: many small statements (parsed one by one), then queries
CREATE TABLE words(id INTEGER PRIMARY KEY, w TEXT, n INTEGER);
CREATE INDEX words_w ON words(w);
"""


def _gen_sql(path: str, rows: int) -> str:
    out = [SQL_HEAD, "BEGIN;"]
    letters = "abcdefghijklmnopqrstuvwxyz"
    for i in range(rows):
        w = "".join(letters[(i * k * 7 + k) % 26] for k in range(1, i % 9 + 3))
        out.append(f"INSERT INTO words(w, n) VALUES ('{w}', {i * 7919 % 1000});")
        if i % 50 == 49:
            out.append(f"UPDATE words SET n = n + 1 WHERE w = '{w}';")
        if i % 97 == 96:
            out.append(f"DELETE FROM words WHERE id = {i // 2};")
    out.append("COMMIT;")
    out.append("SELECT count(*), sum(n) FROM words;")
    out.append("SELECT w, count(*) AS c, sum(n) FROM words GROUP BY w ORDER BY c DESC, w LIMIT 5;")
    out.append("SELECT count(*) FROM words a JOIN words b ON a.w = b.w AND a.id < b.id;")
    return _write(path, "\n".join(out) + "\n")


def real_programs(outdir: str, size: float, notes: list) -> list[Program]:
    """Real programs from Debian packages, with inputs generated here. CPython
    and SQLite run twice: with their own small-object allocator (custom) and
    with it switched off (malloc), without recompiling."""
    progs = []
    inputs = os.path.join(outdir, "inputs")
    gcc = shutil.which("gcc")
    if gcc:
        src = _gen_c_file(os.path.join(inputs, "big.c"), max(20, int(150 * size)))
        progs.append(Program("gcc", "gcc", "real", "real",
                             [gcc, "-O1", "-c", src, "-o", os.path.join(inputs, "big.o")], origin="real"))
    else:
        notes.append("gcc is not installed: the compiler program was left out")
    perl = shutil.which("perl")
    if perl:
        script = _write(os.path.join(inputs, "hashes.pl"), PERL_SCRIPT)
        progs.append(Program("perl", "perl", "real", "real", [perl, script, str(max(20000, int(250000 * size)))],
                             origin="real"))
    else:
        notes.append("perl is not installed: the text-processing program was left out")
    # the system's interpreter, not a wrapper script that would run under the allocator too
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else shutil.which("python3")
    if py:
        script = _write(os.path.join(inputs, "alloc_heavy.py"), PY_SCRIPT)
        arg = str(max(20000, int(160000 * size)))
        # pymalloc (per-class: size-class pools of small objects) on and off
        progs.append(Program("python3/malloc", "python3", "malloc", "per-class",
                             ["env", "PYTHONMALLOC=malloc", py, script, arg], origin="real"))
        progs.append(Program("python3/custom", "python3", "custom", "per-class",
                             ["env", "-u", "PYTHONMALLOC", py, script, arg], origin="real"))
    else:
        notes.append("python3 is not installed: the interpreter program was left out")
    sqlite = shutil.which("sqlite3")
    if sqlite:
        sql = _gen_sql(os.path.join(inputs, "words.sql"), max(2000, int(40000 * size)))
        base = [sqlite, "-batch"]
        tail = [":memory:", f".read {sql}"]
        # lookaside (per-connection free lists of small objects) on and off
        progs.append(Program("sqlite3/malloc", "sqlite3", "malloc", "per-class",
                             base + ["-lookaside", "0", "0"] + tail, origin="real"))
        progs.append(Program("sqlite3/custom", "sqlite3", "custom", "per-class", base + tail, origin="real"))
    else:
        notes.append("sqlite3 is not installed: the SQL program was left out")
    return progs


def _pick_allocators(mode: str, allocators, notes: list) -> list:
    m = MODES[mode]
    if allocators:
        allocs = alloc_mod.find_many(allocators)
    else:
        allocs = []
        for name in PREFERRED:
            try:
                allocs.append(alloc_mod.find(name))
            except LabError as e:
                notes.append(f"{name} left out: {e}")
        allocs = allocs[: m["max_allocators"]]
    if not any(a.name == "glibc" for a in allocs):
        allocs.insert(0, alloc_mod.find("glibc"))
    allocs.sort(key=lambda a: a.name != "glibc")
    return allocs


def plan(mode: str = "default", allocators=None, outdir: str = "out/study", runs=None) -> Plan:
    """RUNS: timed runs per program, allocator and level, in place of the mode's."""
    if mode not in MODES:
        raise LabError(f"unknown study mode {mode!r} (quick, default, full)")
    if runs is not None and (not isinstance(runs, int) or runs < 1):
        raise LabError(f"runs must be a whole number of at least 1, not {runs!r}")
    m = MODES[mode]
    notes: list = []
    allocs = _pick_allocators(mode, allocators, notes)
    programs = []
    for w in workloads.CATALOG:
        binary = workloads.binary(w.name)
        if not binary:
            notes.append(f"workload {w.name} is not built (run make): left out")
            continue
        accepted = workloads.accepted_variants(w.name)
        for v in accepted:
            core = v in CORE_VARIANTS
            if not core and not m["like_variants"]:
                continue
            programs.append(Program(f"{w.name}/{v}", w.name, v, w.kind,
                                    [binary, "--alloc", v, "--scale", m["scale"]],
                                    clean_only=not core, partial=w.partial))
        missing = [v for v in w.variants if v not in accepted]
        if missing:
            notes.append(f"{w.name}: its binary does not accept {', '.join(missing)} (built without them)")
    if not m["like_variants"]:
        notes.append(f"{mode} mode: the emulator, talloc, APR and pmr variants are left out")
    programs += real_programs(outdir, m["real"], notes)
    if not programs:
        raise LabError("nothing to run: build the workloads first (make)")
    return Plan(mode, allocs, list(m["advs"]), runs or m["repeat"], m["warmup"], m["scale"], m["memory_scale"],
                programs, notes, frag_scale=m["frag_scale"], weights_scale=m["weights_scale"])


# ---------------------------------------------------------------- running

RESULT_COLUMNS = (["format_version", "program", "workload", "variant", "kind", "origin"]
                  + [c for c in results.columns() if c != "format_version"])


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)


class StudyInterrupted(Exception):
    def __init__(self, rows):
        super().__init__("interrupted")
        self.rows = rows


def profile_workload(naive: Program, outdir: str, timeout: float, say) -> str:
    """Profile a program once, from its naive variant on glibc: the profile
    that litters every variant and allocator of it (2026 §3)."""
    path = os.path.join(outdir, "profiles", f"{_slug(naive.workload)}.json")
    say(f"== study profile {naive.workload} (from {naive.name})")
    prof = profile_mod.run_profile(naive.cmd, out=path, timeout=timeout, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
    if prof["run"]["status"] != "ok":
        raise LabError(f"profiling {naive.name} ended with status {prof['run']['status']}")
    return path


def run_programs(p: Plan, outdir: str, progress, timeout: float = 300) -> list[dict]:
    """Profile each program once, run the matrix of every variant with that
    profile, and append every run to DIR/results.csv as it ends."""
    say = (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)
    rows = []
    glibc = [a for a in p.allocators if a.name == "glibc"]
    groups = p.groups()
    littered = any(adv != 0 for adv in p.advs)
    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RESULT_COLUMNS, extrasaction="ignore")
        w.writeheader()
        done = 0
        for workload, progs in groups.items():
            naive = next((q for q in progs if q.variant in ("malloc", "real")), progs[0])
            profile_path = None
            if littered:
                try:
                    profile_path = profile_workload(naive, outdir, timeout, say)
                except LabError as e:
                    p.notes.append(f"{workload}: no profile ({e}); only its clean runs were made")
            for prog in progs:
                done += 1
                say(f"== study [{done}/{len(p.programs)}] {prog.name}")
                allocs = glibc if prog.clean_only else p.allocators
                advs = [0] if (prog.clean_only or profile_path is None) else p.advs
                pdir = os.path.join(outdir, "runs", _slug(prog.name))
                try:
                    summary = compare.run_matrix(prog.cmd, allocators=allocs, advs=advs, repeat=p.repeat,
                                                 outdir=pdir, timeout=timeout, cache="off", baseline="glibc",
                                                 profile=profile_path if any(advs) else None, seed=p.seed,
                                                 warmup=p.warmup, progress=progress, report=False)
                except LabError as e:
                    p.notes.append(f"{prog.name}: {e}")
                    continue
                for r in results.read_csv(os.path.join(pdir, "results.csv")):
                    r.update(program=prog.name, workload=prog.workload, variant=prog.variant, kind=prog.kind,
                             origin=prog.origin)
                    rows.append(r)
                    w.writerow(r)
                f.flush()
                if summary["meta"].get("interrupted"):
                    p.notes.append(f"interrupted during {prog.name}: the report covers the runs finished before")
                    raise StudyInterrupted(rows)
                bad = [c for c in summary["cells"] if c["ok"] == 0]
                if bad:
                    p.notes.append(f"{prog.name}: no successful run in " + ", ".join(
                        f"{c['allocator']} Adv_{c['adv']}" for c in bad))
                if summary.get("stdout_differs"):
                    p.notes.append(f"{prog.name}: stdout differed between runs")
    return rows


def read_results(outdir: str) -> list[dict]:
    return results.read_csv(os.path.join(outdir, "results.csv"))


def server_footprints(p: Plan) -> dict:
    """The server workload reports its peak footprint per variant (stderr)."""
    binary = workloads.binary("server")
    out = {}
    if not binary:
        return out
    for v in workloads.accepted_variants("server"):
        try:
            cp = subprocess.run([binary, "--alloc", v, "--scale", p.scale], capture_output=True, text=True,
                                timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.search(r"footprint_peak_bytes\s+(\d+)", cp.stderr + cp.stdout)
        if m:
            out[v] = int(m.group(1))
    return out


def weights(p: Plan, progress) -> dict:
    """Each bundled workload's share of instructions in memory operations
    (callgrind, naive variant on glibc) beside its paper program's (2002 Table 3)."""
    try:
        from alloclab.measure import memops
    except ImportError:
        p.notes.append("memory-operations share not measured: alloclab.memops is missing")
        return {}
    out = {}
    for w in workloads.CATALOG:
        binary = workloads.binary(w.name)
        if not binary:
            continue
        if progress:
            print(f"== study weight {w.name}/malloc (callgrind, scale {p.weights_scale})", file=progress, flush=True)
        try:
            m = memops.measure([binary, "--alloc", "malloc", "--scale", p.weights_scale], timeout=1800)
        except LabError as e:
            p.notes.append(f"memory-operations share of {w.name}: {e}")
            continue
        row = workloads.PAPER_TABLE3.get(w.paper_program) if w.paper_program else None
        paper = row.get("memops_share") if row else None
        share = m.get("memops_share")
        within = None
        if paper and share:
            within = (1 / 1.5) <= share / paper <= 1.5
        elif paper is not None and paper == 0 and share is not None:
            within = share < 0.01
        out[w.name] = {"memops_share": share, "paper_program": w.paper_program or None, "paper_share": paper,
                       "within_band": within, "scale": p.weights_scale,
                       "instructions": m.get("instructions")}
    return out


def locality(p: Plan, progress) -> list:
    """D1 and LL misses (cachegrind at the fixed geometry) of the naive
    variants on glibc and vam, clean heap: the Vam paper's locality claim."""
    from alloclab.measure import cache as cache_mod
    names = [a.name for a in p.allocators]
    if "vam" not in names:
        p.notes.append("vam is not among the allocators: its locality was not measured")
        return []
    try:
        method = cache_mod.detect("cachegrind")
    except LabError as e:
        p.notes.append(f"cache misses not measured: {e}")
        return []
    out = []
    for name in ("bignum_factor", "gp_mix", "boxed_sim", "compiler", "interp"):
        binary = workloads.binary(name)
        if not binary:
            continue
        for a in p.allocators:
            if a.name not in ("glibc", "vam"):
                continue
            if progress:
                print(f"== study cache {name}/malloc on {a.name}", file=progress, flush=True)
            res = cache_mod.measure([binary, "--alloc", "malloc", "--scale", p.memory_scale], method,
                                    preload=list(a.preload), env=a.environ, workdir=os.path.join(p_outdir(p), "cache"),
                                    tag=f"{name}-{a.name}", timeout=900)
            if res.get("error"):
                p.notes.append(f"cachegrind of {name} on {a.name}: {res['error']}")
                continue
            out.append({"program": f"{name}/malloc", "allocator": a.name, "d1_misses": res.get("d1_misses"),
                        "ll_misses": res.get("ll_misses"), "geometry": cache_mod.GEOMETRY})
    return out


def p_outdir(p: Plan) -> str:
    return getattr(p, "outdir", "out/study")


def memory_over_time(p: Plan, outdir: str, progress) -> dict:
    """Drag (2002 paper, Table 4 and Figure 7) of the region workloads under
    emulated regions and under reaps, and the page-level miss curves (Vam
    paper, Figure 8) of gp_mix on each allocator. Small inputs: every load
    and store runs under the instrument."""
    from alloclab.measure import memtool
    try:
        memtool.find_memtools()
    except LabError as e:
        p.notes.append(f"drag and pages left out: {e}")
        return {}
    from alloclab.experiments import drag, pages
    scale = p.memory_scale
    mdir = os.path.join(outdir, "memory")
    out = {"scale": scale, "drag": [], "pages": None, "pages_png": None}
    for name in ("compiler", "interp", "xalloc_parser", "server"):
        binary = workloads.binary(name)
        if not binary:
            continue
        accepted = workloads.accepted_variants(name)
        regions = "emulator" if "emulator" in accepted else "malloc"
        for v in (regions, "reap"):
            if progress:
                print(f"== study drag {name}/{v}", file=progress, flush=True)
            try:
                r = drag.run_drag([binary, "--alloc", v, "--scale", scale],
                                  os.path.join(mdir, f"drag-{name}-{v}"), make_plot=False, timeout=600)
            except LabError as e:
                p.notes.append(f"drag of {name}/{v}: {e}")
                continue
            out["drag"].append({"workload": name, "variant": v, "objects": r.get("objects"),
                                "total_drag": r.get("total_drag"), "peak_bytes_actual": r.get("peak_bytes_actual"),
                                "peak_bytes_immediate": r.get("peak_bytes_immediate")})
    # Fragmentation (Vam paper §4.4): heap pages in use over live pages,
    # clean and at the study's strongest littering.
    from alloclab.experiments import frag
    out["frag"] = []
    # The Vam paper's fragmentation is a clean heap's; the littered one is for --full (each run is
    # a Valgrind run of a realistically sized heap).
    frag_advs = sorted({0, max(p.advs)}) if p.mode == "full" else [0]
    for name in ("gp_mix",):
        binary = workloads.binary(name)
        if not binary:
            continue
        if progress:
            print(f"== study frag {name}/malloc", file=progress, flush=True)
        try:
            res = frag.run_frag([binary, "--alloc", "malloc", "--scale", p.frag_scale],
                                os.path.join(mdir, f"frag-{name}"), p.allocators, frag_advs, timeout=600)
        except LabError as e:
            p.notes.append(f"frag of {name}: {e}")
            continue
        for a, row in res["allocators"].items():
            for label, v in row.items():
                out["frag"].append({"program": f"{name}/malloc", "allocator": a, "adv": label, "scale": p.frag_scale,
                                    "max_pages_in_use": v["max_pages_in_use"],
                                    "max_live_pages": v["max_live_pages"], "fragmentation": v["fragmentation"]})
    binary = workloads.binary("gp_mix")
    if binary:
        if progress:
            print("== study pages gp_mix/malloc", file=progress, flush=True)
        try:
            res = pages.run_pages([binary, "--alloc", "malloc", "--scale", scale], os.path.join(mdir, "pages"),
                                  p.allocators, timeout=600)
            pngs = pages.plot(res, os.path.join(mdir, "pages"))
            out["pages"] = {a: {"max_pages_in_use": r.get("max_pages_in_use"), "prefetch": r.get("prefetch")}
                            for a, r in res["allocators"].items()}
            out["pages_png"] = pngs[0] if pngs else None
        except LabError as e:
            p.notes.append(f"pages of gp_mix: {e}")
    return out



# ---------------------------------------------------------------- analysis


def _ratio_row(num: dict, den: dict) -> dict | None:
    s = stats.spread(verdicts.paired(num, den, lambda a, b: a / b))
    return None if s is None else {"median": s.median, "low": s.low, "high": s.high, "n": s.n}


def _rss(rows: list) -> dict:
    """(workload, variant, allocator, adv) -> median peak RSS in KiB over ok runs."""
    acc: dict = {}
    for r in rows:
        if r.get("status") == "ok" and r.get("max_rss_kb") not in (None, ""):
            acc.setdefault((r["workload"], r["variant"], r["allocator"], int(r["adv"])), []).append(
                float(r["max_rss_kb"]))
    return {k: stats.median(v) for k, v in acc.items()}


def study_data(rows: list, extra: dict) -> verdicts.StudyData:
    kinds = {r["workload"]: r.get("kind", "") for r in rows}
    partial = tuple(w.name for w in workloads.CATALOG if w.partial and w.name in kinds)
    mem = extra.get("memory") or {}
    return verdicts.StudyData(rows, drag=mem.get("drag"), frag=mem.get("frag"), cache=extra.get("cache"),
                              memops=extra.get("weights"), partial=partial, kinds=kinds,
                              footprint=extra.get("footprints"))


def analyse(rows: list, extra: dict, allocs: list, advs: list) -> dict:
    d = study_data(rows, extra)
    variants = {}
    for r in rows:
        variants.setdefault(r["workload"], [])
        if r["variant"] not in variants[r["workload"]]:
            variants[r["workload"]].append(r["variant"])
    T = d.times
    tables: dict = {"memory": extra.get("memory") or {}, "weights": extra.get("weights") or {},
                    "cache": extra.get("cache") or [], "server_footprint": extra.get("footprints") or {}}

    # RQ1: per-class allocators (bundled and real) against naive allocation.
    rq1 = []
    for w in d.workloads("per-class"):
        for a in allocs:
            for adv in advs:
                x = _ratio_row(T(w, "custom", a, adv), T(w, "malloc", a, adv))
                if x:
                    rq1.append({"workload": w, "allocator": a, "adv": adv, **x})
    tables["rq1"] = rq1

    # RQ2: region and hybrid variants against naive, clean heap.
    rq2 = []
    for w in d.workloads("region", "hybrid"):
        for v in variants.get(w, []):
            if v == "malloc":
                continue
            for a in allocs:
                x = _ratio_row(T(w, v, a, 0), T(w, "malloc", a, 0))
                if x:
                    rq2.append({"workload": w, "variant": v, "allocator": a, **x})
    tables["rq2"] = rq2

    # RQ3: each variant under littering against its own clean run (region and hybrid).
    rq3 = []
    for w in d.workloads("region", "hybrid"):
        for v in ("custom", "reap", "malloc"):
            for a in allocs:
                for adv in advs:
                    if adv == 0:
                        continue
                    x = _ratio_row(T(w, v, a, adv), T(w, v, a, 0))
                    if x:
                        rq3.append({"workload": w, "variant": v, "allocator": a, "adv": adv,
                                    "partial": w in d.partial, **x})
    tables["rq3"] = rq3

    # Reaps against allocators of like semantics (2002 Figure 6), and the
    # emulator's bookkeeping: clean heap, glibc.
    rss = _rss(rows)
    like = []
    for w in d.workloads("region", "hybrid"):
        for v in variants.get(w, []):
            if v == "reap":
                continue
            x = _ratio_row(T(w, v, "glibc", 0, "wall_s"), T(w, "reap", "glibc", 0, "wall_s"))
            if x:
                r_v, r_r = rss.get((w, v, "glibc", 0)), rss.get((w, "reap", "glibc", 0))
                like.append({"workload": w, "variant": v, **x, "rss_kb": r_v,
                             "rss_over_reap": (r_v / r_r) if r_v and r_r else None})
    tables["like"] = like
    emu = []
    for w in d.workloads("region", "hybrid"):
        x = _ratio_row(T(w, "emulator", "glibc", 0, "wall_s"), T(w, "malloc", "glibc", 0, "wall_s"))
        if x:
            emu.append({"workload": w, **x})
    tables["emulator"] = emu

    # General-purpose allocators: naive variants and real programs, time and RSS over glibc.
    gp = []
    for w in sorted(variants):
        v = "malloc" if "malloc" in variants[w] else ("real" if "real" in variants[w] else None)
        if v is None:
            continue
        for a in allocs:
            for adv in advs:
                x = _ratio_row(T(w, v, a, adv), T(w, v, "glibc", adv))
                if x:
                    r_a, r_g = rss.get((w, v, a, adv)), rss.get((w, v, "glibc", adv))
                    gp.append({"program": f"{w}/{v}" if v != "real" else w, "allocator": a, "adv": adv, **x,
                               "rss_kb": r_a, "rss_ratio": (r_a / r_g) if r_a and r_g else None})
    tables["general"] = gp
    tables["general_summary"] = general_summary(d, [(w, "malloc" if "malloc" in vs else "real")
                                                    for w, vs in sorted(variants.items())
                                                    if "malloc" in vs or "real" in vs], allocs, advs)
    tables["alloc_stats"] = extra.get("profiles") or {}
    return {"tables": tables, "verdicts": verdicts.evaluate(d)}


def general_summary(d: verdicts.StudyData, programs: list, allocs: list, advs: list) -> list[dict]:
    """Per allocator and level: the geometric mean, over PROGRAMS ((workload, variant) pairs that
    every allocator ran), of time and peak RSS over glibc's. The time mean is taken one repeat at a
    time (each program's ratio to glibc's run of the same repeat): `time` is the median of those
    means, `low`/`high` the least and greatest; `over_best` is `time` over the lowest `time` of that
    level, so the ranking of the general-purpose allocators is read from the run, not computed by
    hand. Peak RSS: the mean of the per-program median ratios."""
    out = []
    for adv in advs:
        rows = []
        for a in allocs:
            rsss, reps = [], []
            for w, v in programs:
                rs = verdicts.paired(d.times(w, v, a, adv), d.times(w, v, "glibc", adv), lambda x, g: x / g)
                if not rs:
                    break
                reps.append(rs)
                rx = verdicts.paired(d.rss(w, v, a, adv), d.rss(w, v, "glibc", adv), lambda x, g: x / g)
                if rx:
                    rsss.append(stats.median(rx))
            if len(reps) != len(programs) or not programs:
                continue  # an allocator that missed a program is not ranked on fewer programs
            per_rep = verdicts.per_repeat(reps, stats.geomean)
            rows.append({"allocator": a, "adv": adv, "programs": len(programs), "time": stats.median(per_rep),
                         "low": min(per_rep), "high": max(per_rep), "repeats": len(per_rep),
                         "rss": stats.geomean(rsss) if len(rsss) == len(programs) else None})
        if rows:
            best = min(r["time"] for r in rows)
            for r in rows:
                r["over_best"] = r["time"] / best
            out += rows
    return out


def summary_lines(summary: list) -> list[str]:
    out = []
    for adv in sorted({r["adv"] for r in summary}):
        rows = sorted((r for r in summary if r["adv"] == adv), key=lambda r: r["time"])
        out.append(f"  Adv_{adv}, {rows[0]['programs']} programs (geometric mean over glibc's; "
                   f"time: per repeat, median [min, max]):")
        for r in rows:
            rss = f"{r['rss']:.3f}" if r["rss"] is not None else tables.MISSING
            out.append(f"    {r['allocator']:<12} time {r['time']:.3f} [{r['low']:.3f}, {r['high']:.3f}]  "
                       f"x{r['over_best']:.3f} of the best   peak RSS {rss}")
    return out


def collect_profiles(outdir: str) -> dict:
    out = {}
    for path in sorted(glob_profiles(outdir)):
        try:
            with open(path) as f:
                pr = json.load(f)
        except (OSError, ValueError):
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        out[name] = {k: pr.get(k) for k in ("allocations", "bytes", "max_live", "max_live_bytes", "mean_size")}
    return out


def glob_profiles(outdir: str) -> list:
    d = os.path.join(outdir, "profiles")
    return [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".json")] if os.path.isdir(d) else []


# ---------------------------------------------------------------- the whole study


def _write_json(path: str, obj) -> None:
    _write(path, json.dumps(obj, indent=1, default=str) + "\n")


def verdict_lines(vs: list) -> list[str]:
    out = []
    for v in vs:
        if v["n"]:
            u = v.get("unit", "%")
            m = (f"measured {verdicts.show(v['measured'], u)} [{verdicts.show(v['low'], u)}, "
                 f"{verdicts.show(v['high'], u)}], n={v['n']}")
        else:
            m = "not measured"
        out.append(f"  {v['verdict']:<12} {v['id']:<22} paper {v['paper_value']}; {m}")
    return out


def verdicts_markdown(vs: list) -> str:
    """The verdict table as Markdown (for docs/results.md: the numbers of one named run)."""
    rows = []
    for v in vs:
        u = v.get("unit", "%")
        meas = verdicts.show(v["measured"], u) if v["n"] else tables.MISSING
        spread = (f"{verdicts.show(v['low'], u)} … {verdicts.show(v['high'], u)}" if v["n"] else tables.MISSING)
        note = " (" + "; ".join(x for x in (v.get("note"), v.get("weight_note")) if x) + ")" \
            if v.get("note") or v.get("weight_note") else ""
        rows.append([v["id"], v["paper"], v["claim"], v["paper_value"], meas, spread, v["n"],
                     f"**{v['verdict']}**{note}"])
    return tables.markdown(["id", "paper", "claim", "paper", "measured", "spread", "n", "verdict"], rows,
                           "llllrlrl")


def run_study(outdir: str = "out/study", mode: str = "default", allocators=None, progress=sys.stderr,
              ablation: bool = False, runs=None) -> dict:
    start = time.monotonic()
    os.makedirs(outdir, exist_ok=True)
    p = plan(mode, allocators, outdir, runs)
    p.outdir = outdir
    say = (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)
    say(f"study ({mode}): {len(p.programs)} programs x {len(p.allocators)} allocators x "
        f"{len(p.advs)} littering levels x {p.repeat} run(s) (clean-only variants: glibc, Adv_0)")
    for n in p.notes:
        say(f"note: {n}")
    interrupted = False
    rows: list = []
    extra: dict = {}
    try:
        rows = run_programs(p, outdir, progress)
        extra["footprints"] = server_footprints(p)
        extra["weights"] = weights(p, progress)
        extra["cache"] = locality(p, progress)
        extra["memory"] = memory_over_time(p, outdir, progress)
        if ablation or mode == "full":
            extra["ablation"] = run_ablation(p, outdir, progress)
    except StudyInterrupted as e:
        interrupted, rows = True, e.rows
    except KeyboardInterrupt:
        interrupted = True
        p.notes.append("interrupted: the report covers what was measured before the interruption")
        try:
            rows = read_results(outdir)
        except LabError:
            rows = []
    extra["profiles"] = collect_profiles(outdir)
    allocs = [a.name for a in p.allocators]
    analysis = analyse(rows, extra, allocs, p.advs)
    elapsed = time.monotonic() - start
    analysis["meta"] = {
        "format_version": FORMAT_VERSION, "mode": mode, "allocators": allocs,
        "allocator_info": [{"name": a.name, "version": a.version, "path": a.path} for a in p.allocators],
        "advs": p.advs, "repeat": p.repeat, "scale": p.scale, "memory_scale": p.memory_scale, "seed": p.seed,
        "programs": [dataclasses.asdict(q) for q in p.programs], "elapsed_s": elapsed, "notes": p.notes,
        "interrupted": interrupted, "machine": compare.machine_info(),
        "ablation": extra.get("ablation"),
        "time_measure": "2026 claims: in-process time from the end of littering to exit (program_inproc_s); "
                        "2002 and 2005 claims: wall time of clean runs",
    }
    report = write_outputs(analysis, outdir)
    say("\nVerdicts (the papers' claims on this machine):")
    for line in verdict_lines(analysis["verdicts"]):
        say(line)
    if analysis["tables"].get("general_summary"):
        say("\nGeneral-purpose allocators, naive variants and real programs:")
        for line in summary_lines(analysis["tables"]["general_summary"]):
            say(line)
    say(f"\nreport: {report}  ({elapsed:.0f} s)")
    analysis["interrupted"] = interrupted
    return analysis


def run_ablation(p: Plan, outdir: str, progress) -> str | None:
    """Vam's design switches one at a time (alloclab.ablation) into DIR/ablation/;
    the path of its ablation.json relative to DIR, or None (with a note) when it could not run."""
    from alloclab import ablation
    if "vam" not in [a.name for a in p.allocators]:
        p.notes.append("vam is not among the allocators: the ablation was not run")
        return None
    sub = os.path.join(outdir, "ablation")
    try:
        ablation.run_ablation(outdir=sub, mode="full" if p.mode == "full" else "default", progress=progress,
                              command=["alloclab", "study", f"--{p.mode}", "--ablation"])
    except LabError as e:
        p.notes.append(f"ablation: {e}")
        return None
    return os.path.join("ablation", "ablation.json")


def write_outputs(analysis: dict, outdir: str) -> str:
    """findings.json, verdicts.json, verdicts.md and report.html of ANALYSIS; the report's path."""
    from alloclab import study_report
    _write_json(os.path.join(outdir, "findings.json"), analysis)
    _write_json(os.path.join(outdir, "verdicts.json"),
                {"format_version": FORMAT_VERSION, "run": analysis["meta"]["mode"],
                 "spread": (f"the interval of order statistics that holds the median of the repeats (each "
                            f"with its own littering seed) with probability at least {verdicts.LEVEL}; exact "
                            "for deterministic instruments"), "level": verdicts.LEVEL,
                 "verdicts": analysis["verdicts"]})
    _write(os.path.join(outdir, "verdicts.md"), verdicts_markdown(analysis["verdicts"]))
    return study_report.write_report(analysis, outdir)


def rerender(outdir: str) -> str:
    """Write DIR's report again without running anything. The tables and verdicts are
    computed again from DIR/results.csv and the measurements saved in DIR/findings.json,
    so a report re-rendered by a later alloclab applies its rules to the same data; without
    results.csv the saved analysis is rendered as it is."""
    from alloclab import study_report
    path = os.path.join(outdir, "findings.json")
    try:
        with open(path) as f:
            analysis = json.load(f)
    except OSError as e:
        raise LabError(f"cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise LabError(f"{path} is not JSON: {e}") from None
    meta = analysis.get("meta") or {}
    v = meta.get("format_version")
    if v != FORMAT_VERSION:
        raise LabError(f"{path} has format_version {v}; this alloclab renders {FORMAT_VERSION} "
                       "(run the study again)")
    if not os.path.exists(os.path.join(outdir, "results.csv")):
        return study_report.write_report(analysis, outdir)
    t = analysis.get("tables") or {}
    extra = {"memory": t.get("memory"), "weights": t.get("weights"), "cache": t.get("cache"),
             "footprints": t.get("server_footprint"), "profiles": t.get("alloc_stats")}
    fresh = analyse(read_results(outdir), extra, meta.get("allocators") or [], meta.get("advs") or [0])
    fresh["meta"] = meta
    return write_outputs(fresh, outdir)


# ---------------------------------------------------------------- command line


def add_arguments(ss) -> None:
    """`alloclab study [--quick | --full] [-r N] [--allocators LIST] [-o DIR]` (declared in cli.COMMANDS)."""
    from alloclab import args as A
    A.add_mode(ss, "a smoke test: small inputs, Adv_0 and Adv_3, two runs each, too few for the timed "
               "claims' verdicts (about 2 minutes)",
               "bigger inputs, every littering level, more runs")
    ss.add_argument("-r", "--runs", type=A.count_type(1), default=None, metavar="N",
                    help="timed runs per program, allocator and level (default: 2 with --quick, 3, "
                         "5 with --full); more runs steady the medians and narrow the verdicts' "
                         "intervals; fewer than 3 leave the timed claims without a verdict")
    ss.add_argument("--ablation", action="store_true",
                    help="also run Vam's design-switch ablation into DIR/ablation (always with --full)")
    A.add_allocators(ss, default=None, help_extra="; default: every one found")
    A.add_output_dir(ss, "out/study")


def run_command(ns) -> int:
    allocs = [a.name if a.path is None or a.name in alloc_mod.KNOWN else a.path
              for a in ns.allocators] if ns.allocators else None
    analysis = run_study(outdir=ns.output, mode=ns.mode or "default", allocators=allocs, ablation=ns.ablation,
                         runs=ns.runs)
    return 130 if analysis.get("interrupted") else 0
