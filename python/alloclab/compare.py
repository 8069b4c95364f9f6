"""Comparing allocators under littering: the allocator x Adv x repeat matrix.

run_matrix() profiles the command once (on glibc, unless a profile is given),
then runs every cell (allocator, littering level) once as a warm-up and
`repeat` times measured, round-robin over the cells so that drift in the
machine hits every cell alike (each round visits the cells in a new seeded
random order, so no cell always follows the same neighbour). Each measured run is appended to
DIR/results.csv and flushed as soon as it ends; when the matrix stops early
(Ctrl-C, an exception) the rows written so far stay, and the summary and
report are still written from them.

Cache behaviour (perf or cachegrind, see alloclab.cache) is measured once per
cell — cachegrind is deterministic, so repeats would add nothing.

Exit policy (used by the command line): a run that fails, crashes or times out
is a row with that status, not an error. compare_exit_code() is 1 when some
cell has no successful run at all (its numbers would be missing), else 0;
differing stdout is flagged in the table and report but does not fail.

API::

    run_matrix(cmd, allocators=("glibc",), advs=(0, 1, 3, 10), repeat=5, outdir="out/compare",
               timeout=None, cache="off", baseline=None, profile=None, seed=42,
               warmup=True, progress=sys.stderr, report=True, shuffle=True) -> dict   # the summary
    summarise(rows, meta) -> dict
    format_table(summary) -> str
    compare_exit_code(summary) -> int
    CSV_COLUMNS
"""

from __future__ import annotations

import datetime
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

from alloclab import LabError
from alloclab.core import allocators as alloc_mod, runner
from alloclab.measure import cache as cache_mod, litter
from alloclab.measure import profile as profile_mod
from alloclab import stats as stats_mod

CSV_COLUMNS = ["run", "allocator", "adv", "multiplier", "occupancy", "repeat", "seed", "profile_sha256",
               "wall_s", "user_s", "sys_s", "max_rss_kb", "exit_code", "signal", "status", "stdout_sha256",
               "litter_s", "program_s", "program_inproc_s", "started_utc"]
METRICS = ("wall_s", "program_s", "program_inproc_s", "litter_s", "user_s", "sys_s", "max_rss_kb")


def parse_advs(text) -> list[int]:
    """Littering levels, parsed as the command line parses them (alloclab.args.parse_levels)."""
    from alloclab import args
    return args.parse_levels(text)


def machine_info() -> dict:
    info = {"hostname": platform.node(), "kernel": platform.release(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as f:
            info["memory_kb"] = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return info


def _cell_key(a: str, adv: int) -> str:
    return f"{a}/Adv_{adv}"


def _stats(values):
    s = stats_mod.spread(values)
    return s.as_dict() if s else None


def repeat_seed(seed: int, rep: int) -> int:
    """The littering seed of repeat `rep` (0 = the warm-up): each repeat samples
    its own heap layout, and every cell of one repeat shares it, so cells
    compared within a round see the same layout. splitmix64 of (seed, rep)."""
    z = (int(seed) * 0x9E3779B97F4A7C15 + (rep + 1) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFF


def file_sha256(path: str) -> str:
    return runner.file_sha256(path)


def summarise(rows: list[dict], meta: dict) -> dict:
    """Per-cell statistics (over ok runs), ratios to the baseline, stdout check."""
    cells = {}
    order = meta.get("cells") or []
    for a, adv in order:
        cells[_cell_key(a, adv)] = {"allocator": a, "adv": adv, "runs": 0, "ok": 0, "statuses": {}}
    for r in rows:
        key = _cell_key(r["allocator"], int(r["adv"]))
        c = cells.setdefault(key, {"allocator": r["allocator"], "adv": int(r["adv"]), "runs": 0, "ok": 0,
                                   "statuses": {}})
        c["runs"] += 1
        c["statuses"][r["status"]] = c["statuses"].get(r["status"], 0) + 1
        if r["status"] == "ok":
            c["ok"] += 1
    for key, c in cells.items():
        ok_rows = [r for r in rows if _cell_key(r["allocator"], int(r["adv"])) == key and r["status"] == "ok"]
        for m in METRICS:
            c[m] = _stats([float(r[m]) for r in ok_rows if r.get(m) not in (None, "")])
        # Each ok run's program time by round, so that any two cells can be compared
        # round by round (results.paired_difference), not only through their medians.
        c["program_s_runs"] = sorted([int(r["repeat"]), float(r["program_s"])] for r in ok_rows
                                     if r.get("program_s") not in (None, ""))
    # Ratios to the baseline cell's median.
    base_key = meta.get("baseline")
    base = cells.get(base_key)
    for c in cells.values():
        for m in ("wall_s", "program_s", "user_s", "max_rss_kb"):
            ratio = None
            if base and base.get(m) and c.get(m) and base[m]["median"]:
                ratio = c[m]["median"] / base[m]["median"]
            c[f"{m}_ratio"] = ratio
    # The spread of the program-time ratio: each run over the baseline's run of the same round.
    from alloclab import results as results_mod
    spreads = results_mod.ratio_spreads({"meta": meta}, rows)
    for key, c in cells.items():
        sp = spreads.get(key)
        c["program_s_ratio_spread"] = sp.as_dict() if sp else None
    # stdout: the most common digest among ok runs is the reference.
    digests = Counter(r["stdout_sha256"] for r in rows if r["status"] == "ok" and r["stdout_sha256"])
    reference = digests.most_common(1)[0][0] if digests else None
    differing = [{"run": int(r["run"]), "allocator": r["allocator"], "adv": int(r["adv"]),
                  "repeat": int(r["repeat"]), "stdout_sha256": r["stdout_sha256"]}
                 for r in rows if r["status"] == "ok" and reference and r["stdout_sha256"] != reference]
    for c in cells.values():
        c["stdout_differs"] = sum(1 for d in differing if d["allocator"] == c["allocator"] and d["adv"] == c["adv"])
    cache = meta.get("cache_results") or {}
    for key, c in cells.items():
        c["cache"] = cache.get(key)
    return {"meta": meta, "cells": list(cells.values()), "stdout_reference": reference,
            "stdout_differs": differing, "rows": len(rows)}


def compare_exit_code(summary: dict) -> int:
    """1 when some cell has no ok run (its numbers are missing), else 0."""
    return 1 if any(c["ok"] == 0 for c in summary["cells"]) else 0


def _fmt_time(s) -> str:
    if s is None:
        return "-"
    return f"{s['median']:.4f} [{s['min']:.4f}-{s['max']:.4f}]"


def format_ratio(ratio, spread, dash: str = "-") -> str:
    """A ratio with the min-max of its paired ratios, e.g. 1.023 (0.98-1.07)."""
    if not ratio:
        return dash
    if spread and spread["n"] > 1:
        return f"{ratio:.3f} ({spread['min']:.2f}{dash}{spread['max']:.2f})"
    return f"{ratio:.3f}"


def format_table(summary: dict) -> str:
    """A plain-text table of medians [min-max] and ratios to the baseline."""
    meta = summary["meta"]
    head = ["allocator", "adv", "ok/runs", "wall s median [min-max]", "x base", "program s", "x base",
            "litter s", "user s", "x base", "sys s", "max RSS MiB", "x base"]
    has_cache = any(c.get("cache") for c in summary["cells"])
    if has_cache:
        head += ["D1 misses*", "LL misses*"]
    lines = [head]
    for c in summary["cells"]:
        rss = c["max_rss_kb"]
        row = [c["allocator"], f"Adv_{c['adv']}", f"{c['ok']}/{c['runs']}", _fmt_time(c["wall_s"]),
               f"{c['wall_s_ratio']:.3f}" if c["wall_s_ratio"] else "-",
               f"{c['program_s']['median']:.4f}" if c["program_s"] else "-",
               format_ratio(c["program_s_ratio"], c.get("program_s_ratio_spread")),
               f"{c['litter_s']['median']:.4f}" if c["litter_s"] else "-",
               f"{c['user_s']['median']:.4f}" if c["user_s"] else "-",
               f"{c['user_s_ratio']:.3f}" if c["user_s_ratio"] else "-",
               f"{c['sys_s']['median']:.4f}" if c["sys_s"] else "-",
               f"{rss['median'] / 1024:.1f}" if rss else "-",
               f"{c['max_rss_kb_ratio']:.3f}" if c["max_rss_kb_ratio"] else "-"]
        if has_cache:
            ch = c.get("cache") or {}
            row += [f"{ch['program_d1_misses']:,}" if ch.get("program_d1_misses") is not None else "-",
                    f"{ch['program_ll_misses']:,}" if ch.get("program_ll_misses") is not None else "-"]
        if c["stdout_differs"]:
            row[0] += " (stdout differs!)"
        lines.append(row)
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(head))]
    out = ["  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    out.append(f"baseline: {meta.get('baseline')}; medians over ok runs; ratio = median / baseline median, "
               "for program s with the min-max of the ratios of runs of the same round; "
               "program s = wall s - litter s (the time littering itself took, from its log)")
    if has_cache:
        out.append(f"* {meta.get('cache_method')}, once per cell, the littering's own misses subtracted "
                   "(`true` littered the same way minus `true` alone)")
    if summary["stdout_differs"]:
        out.append(f"WARNING: {len(summary['stdout_differs'])} run(s) printed different stdout than the others")
    for c in summary["cells"]:
        bad = {k: v for k, v in c["statuses"].items() if k != "ok"}
        if bad:
            out.append(f"WARNING: {c['allocator']} Adv_{c['adv']}: " + ", ".join(f"{v} {k}" for k, v in bad.items()))
    return "\n".join(out)


def _utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_matrix(cmd, allocators=("glibc",), advs=(0, 1, 3, 10), repeat: int = 5, outdir: str = "out/compare",
               timeout: float | None = None, cache: str = "off", baseline: str | None = None,
               profile: str | dict | None = None, seed: int = litter.DEFAULT_SEED, warmup: bool = True,
               progress=sys.stderr, report: bool = True, shuffle: bool = True, prepare: str | None = None,
               show_output: bool = False) -> dict:
    """Run the matrix and write DIR/results.csv, summary.json, plots, report.html.

    allocators  names/paths or Allocator objects
    advs        littering levels from litter.PRESETS
    baseline    "ALLOCATOR" or "ALLOCATOR/Adv_N" (default: first allocator at its lowest level;
                glibc Adv_0 with the default lists)
    profile     a profile path or dict; default: profile cmd once on glibc (DIR/profile.json)
    shuffle     visit the cells of each round in a fresh (seeded) random order, so that no
                cell always runs right after the same neighbour (e.g. the largest footprint)
    warmup      unrecorded runs per cell before the measured ones (True: 1, False: 0)
    prepare     shell command run before every run, untimed (a failure stops the matrix)
    show_output the program's stdout and stderr go to the terminal (not hashed)
    When the program leaves no profile (it crashed under the profiling shim), the
    littered cells are not run: they stay in the summary with no runs and a note
    (meta["skipped"]), and the clean cells run as usual.
    Returns the summary dict (also in DIR/summary.json).
    """
    runner.check_command(cmd)
    if repeat < 1:
        raise LabError("--repeat must be at least 1")
    if timeout is not None and timeout <= 0:
        raise LabError("--timeout must be positive")
    if cache not in cache_mod.METHODS:
        raise LabError(f"--cache must be one of {', '.join(cache_mod.METHODS)}")
    allocs = [a if isinstance(a, alloc_mod.Allocator) else alloc_mod.find(a) for a in allocators]
    names = [a.name for a in allocs]
    if len(set(names)) != len(names):
        raise LabError("an allocator is listed twice")
    advs = parse_advs(advs)
    cells = [(a, adv) for a in allocs for adv in advs]
    base_key = _baseline_key(baseline, names, advs)
    os.makedirs(outdir, exist_ok=True)
    say = (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)

    # Phase 1: the profile littering samples from.
    skipped_note = None
    profile_path = os.path.join(outdir, "profile.json")
    if any(adv != 0 for adv in advs):
        alloc_mod.shim("litter")  # fail early when the shims are not built
        if isinstance(profile, dict):
            profile_mod.validate(profile)
            profile_mod.write_profile(profile, profile_path)
        elif isinstance(profile, str):
            profile_mod.load_profile(profile)  # validates
            if os.path.abspath(profile) != os.path.abspath(profile_path):
                # byte for byte: every matrix littered with one profile records one sha256
                shutil.copyfile(profile, profile_path)
        else:
            say(f"profiling: {' '.join(cmd)}")
            try:
                prof = profile_mod.run_profile(cmd, out=profile_path, timeout=timeout,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except profile_mod.NoProfile as e:
                skipped_note = f"littered cells not run: {e}"
                say(f"WARNING: {skipped_note}")
            else:
                say(f"profile: {prof['allocations']} allocations, max_live {prof['max_live']}, "
                    f"{len(prof['sizes'])} sizes below {prof['cutoff']}")
                if prof["run"]["status"] != "ok":
                    say(f"WARNING: the profiled run ended with status {prof['run']['status']}; "
                        "the profile covers what it did until then")
    method = cache_mod.detect(cache)
    meta = {
        "command": list(cmd),
        "started_utc": _utc(),
        "machine": machine_info(),
        "allocators": [{"name": a.name, "path": a.path, "version": a.version} for a in allocs],
        "advs": {f"Adv_{adv}": {"multiplier": litter.preset(adv)[0], "occupancy": litter.preset(adv)[1]}
                 for adv in advs},
        "repeat": repeat,
        "order": "round-robin, shuffled per round" if shuffle else "round-robin, fixed order",
        "timeout_s": timeout,
        "seed": seed,
        "seeds": "per repeat: splitmix64(seed, repeat), shared by every cell of the repeat (column seed)",
        "program_time": "program_s = wall_s - litter_s; program_inproc_s = from the end of littering to exit, "
                        "inside the process (the litter shim's run_ms; empty when the process left without "
                        "running its destructors)",
        "baseline": base_key,
        "cache_method": method,
        "cache_geometry": cache_mod.GEOMETRY if method == "cachegrind" else None,
        "profile": profile_path if os.path.exists(profile_path) else None,
        "cells": [(a.name, adv) for a, adv in cells],
        "interrupted": False,
    }

    profile_sha = file_sha256(profile_path) if not skipped_note and any(adv != 0 for adv in advs) else ""
    meta["profile_sha256"] = profile_sha or None

    def setup(a, adv, rep_seed):
        m, o = litter.preset(adv)
        preload, env = litter.setup(a, profile_path if m else None, m, o, rep_seed)
        if not m:
            # A clean run loads the shim too, littering nothing, so that its
            # in-process time is measured exactly as a littered run's.
            preload, env = preload + [alloc_mod.shim("litter")], {**env, "LITTER_MULTIPLIER": "0"}
        return preload, env

    if skipped_note:
        meta["skipped"] = {"cells": [(a.name, adv) for a, adv in cells if adv != 0], "reason": skipped_note}
        cells = [(a, adv) for a, adv in cells if adv == 0]
    from alloclab import results as results_mod
    prog = runner.Progress(progress)
    n_warmup = int(warmup)
    meta["warmup"] = n_warmup
    run_opts = {"prepare": prepare, "show_output": show_output}
    csv_path = os.path.join(outdir, "results.csv")
    rows: list[dict] = []
    total = len(cells) * repeat
    k = 0
    try:
        with open(csv_path, "w", newline="", encoding="utf-8") as f:
            w = results_mod.row_writer(f)
            f.flush()
            for wi in range(n_warmup):
                for i, (a, adv) in enumerate(cells, 1):
                    preload, env = setup(a, adv, repeat_seed(seed, 0))
                    label = f"[warm-up {wi * len(cells) + i}/{n_warmup * len(cells)}] {a.name} Adv_{adv}"
                    prog.begin(label)
                    r, _ = _run_logged(cmd, preload, env, timeout, **run_opts)
                    say(prog.done(f"{label} {r.wall_s:.3f}s {r.status}"))
            for rep in range(1, repeat + 1):
                order = list(cells)
                if shuffle:
                    random.Random(seed * 1000003 + rep).shuffle(order)
                rep_seed = repeat_seed(seed, rep)
                for a, adv in order:
                    preload, env = setup(a, adv, rep_seed)
                    started = _utc()
                    prog.begin(f"[{k + 1}/{total}] {a.name} Adv_{adv} repeat {rep}", k, total)
                    r, log = _run_logged(cmd, preload, env, timeout, **run_opts)
                    litter_s = log.litter_s
                    k += 1
                    m, o = litter.preset(adv)
                    row = {"run": k, "allocator": a.name, "adv": adv, "multiplier": m, "occupancy": o,
                           "repeat": rep, "seed": rep_seed if m else "",
                           "profile_sha256": profile_sha if m else "", "wall_s": f"{r.wall_s:.6f}", "user_s": f"{r.user_s:.6f}",
                           "sys_s": f"{r.sys_s:.6f}", "max_rss_kb": r.max_rss_kb,
                           "exit_code": "" if r.exit_code is None else r.exit_code,
                           "signal": "" if r.signal is None else r.signal, "status": r.status,
                           "stdout_sha256": r.stdout_sha256 or "", "litter_s": f"{litter_s:.6f}",
                           "program_s": f"{max(0.0, r.wall_s - litter_s):.6f}",
                           "program_inproc_s": "" if log.inproc_s is None else f"{log.inproc_s:.6f}",
                           "started_utc": started}
                    if r.ok and m and not log.littered:
                        say(f"WARNING: {a.name} Adv_{adv}: the litter shim logged no littering; "
                            "this run's litter time is unknown (status set to no_litter_log)")
                        row["status"] = "no_litter_log"
                    w.writerow(row)
                    f.flush()
                    rows.append(row)
                    extra = "" if r.ok else f" {r.status.upper()}" + (f" ({r.stderr_tail.strip().splitlines()[-1][:120]})"
                                                                       if r.stderr_tail.strip() else "")
                    say(prog.done(f"[{k}/{total}] {a.name} Adv_{adv} repeat {rep} {r.wall_s:.3f}s{extra}", k, total))
            if method != "off":
                results = {}
                plain_true: dict[str, dict] = {}
                for i, (a, adv) in enumerate(cells, 1):
                    preload, env = setup(a, adv, repeat_seed(seed, 1))
                    tag = f"{a.name}-Adv_{adv}"
                    workdir = os.path.join(outdir, "cache")
                    limit = None if timeout is None else timeout * 50
                    res = cache_mod.measure(cmd, method, preload=preload, env=env, workdir=workdir, tag=tag,
                                            timeout=limit)
                    # The counts include the littering before main; measure that
                    # alone (the same littering in front of `true`) and subtract.
                    alone = plain = None
                    if env and "LITTER_PROFILE" in env:
                        true = [shutil.which("true") or "/bin/true"]
                        alone = cache_mod.measure(true, method, preload=preload, env=env, workdir=workdir,
                                                  tag=tag + "-litter-only", timeout=limit)
                        if a.name not in plain_true:
                            bare, bare_env = litter.setup(a, None, 0, 0)
                            plain_true[a.name] = cache_mod.measure(true, method, preload=bare, env=bare_env,
                                                                   workdir=workdir,
                                                                   tag=f"{a.name}-true", timeout=limit)
                        plain = plain_true[a.name]
                    cache_mod.split_littering(res, alone, plain)
                    results[_cell_key(a.name, adv)] = res
                    say(f"[cache {i}/{len(cells)}] {a.name} Adv_{adv} {method}: D1 misses "
                        f"{res['d1_misses']} LL misses {res['ll_misses']}"
                        + (f" ({res['error']})" if res.get("error") else ""))
                meta["cache_results"] = results
    except KeyboardInterrupt:
        prog.cancel()
        meta["interrupted"] = True
        say("interrupted: writing the summary and report from the runs finished so far")
    finally:
        meta["finished_utc"] = _utc()
        summary = summarise(rows, meta)
        results_mod.write_summary(summary, outdir)
        if report:
            from alloclab import report as report_mod
            report_mod.write_report(summary, outdir)
    return summary


class LitterLog:
    """What the litter shim logged for one run (every process of it)."""

    def __init__(self, litter_ms: dict | None = None, run_ms: dict | None = None):
        self.litter_ms = litter_ms or {}   # pid -> ms spent littering
        self.run_ms = run_ms or {}         # pid -> ms from the end of littering to exit

    @property
    def littered(self) -> bool:
        return bool(self.litter_ms)

    @property
    def litter_s(self) -> float:
        return sum(self.litter_ms.values()) / 1000.0

    @property
    def inproc_s(self) -> float | None:
        """The longest-lived process's run (normally the one the lab started),
        less the littering of the processes it started, which ran inside it."""
        if not self.run_ms:
            return None
        top = max(self.run_ms, key=self.run_ms.get)
        inner = sum(ms for pid, ms in self.litter_ms.items() if pid != top)
        return max(0.0, (self.run_ms[top] - inner) / 1000.0)


def _run_logged(cmd, preload, env, timeout, prepare=None, show_output=False):
    """runner.run with the litter log captured; returns (result, LitterLog).

    prepare: a shell command run first (untimed); show_output: the program's
    output goes to the terminal instead of being hashed."""
    if prepare:
        runner.run_prepare(prepare, timeout)
    out = {"stdout": "inherit", "stderr": "inherit"} if show_output else {}
    if not env or "LITTER_MULTIPLIER" not in env:
        return runner.run(cmd, preload=preload, env=env, timeout=timeout, **out), LitterLog()
    with tempfile.TemporaryDirectory(prefix="alloclab-litter-") as tmp:
        log = os.path.join(tmp, "litter.log")
        r = runner.run(cmd, preload=preload, env={**env, "LITTER_LOG": log}, timeout=timeout, **out)
        return r, read_litter_log(log)


def read_litter_log(log_path: str) -> LitterLog:
    out = LitterLog()
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                pid = re.search(r"\bpid=(\d+)", line)
                key = int(pid.group(1)) if pid else -1
                m = re.search(r"\bms=([\d.]+)", line)
                if m:
                    out.litter_ms[key] = out.litter_ms.get(key, 0.0) + float(m.group(1))
                m = re.search(r"\brun_ms=([\d.]+)", line)
                if m:
                    out.run_ms[key] = float(m.group(1))
    except OSError:
        pass
    return out


def _baseline_key(baseline: str | None, names: list[str], advs: list[int]) -> str:
    if baseline is None:
        a = "glibc" if "glibc" in names else names[0]
        return _cell_key(a, 0 if 0 in advs else min(advs))
    if "/" in baseline and baseline.rsplit("/", 1)[1].lower().startswith("adv"):
        a, lvl = baseline.rsplit("/", 1)
        adv = parse_advs(lvl)[0]
    else:
        a, adv = baseline, (0 if 0 in advs else min(advs))
    a = alloc_mod.find(a).name if a not in names else a
    if a not in names or adv not in advs:
        raise LabError(f"baseline {baseline!r} is not a cell of this comparison "
                       f"(allocators {', '.join(names)}; levels {', '.join(f'Adv_{x}' for x in advs)})")
    return _cell_key(a, adv)
