"""The study's tables, computed from its rows and its other instruments' results: RQ1-RQ3,
reaps against allocators of like semantics, the general-purpose allocators, and the
verdicts (verdicts/claims.py). Re-rendering a report computes them again from the saved
rows, so a later alloclab applies its rules to the same data.

API::

    Extra                                   # what the other instruments measured
    analyse(rows, extra, allocators, levels, looks=1) -> Findings   # tables and verdicts (meta left empty)
    study_data(rows, extra, stages=(0,)) -> StudyData
    staged_data(rows, extra) -> list[StudyData]   # the staged repeats, cumulative by stage
    general_summary(data, programs, allocators, levels) -> list[dict]
    collect_profiles(outdir) -> dict        # each workload's profile, in brief
"""

from __future__ import annotations

import dataclasses
import os

from alloclab import LabError, stats
from alloclab.core.results.findings import Findings
from alloclab.core.results.profile import read_profile
from alloclab.experiments import workloads
from alloclab.experiments.study import counters
from alloclab.experiments.study.verdicts import claims
from alloclab.experiments.study.verdicts.data import StudyData, paired, per_repeat


@dataclasses.dataclass
class Extra:
    """The study's measurements besides its timed rows (each as findings.json keeps it)."""

    memory: dict | None = None       # drag, fragmentation, pages
    weights: dict | None = None      # each workload's memory-operations share
    cache: list | None = None        # D1/LL misses of the naive variants on glibc and vam
    footprints: dict | None = None   # the server workload's peak footprint per variant
    profiles: dict | None = None     # each workload's profile, in brief
    ablation: str | None = None      # the ablation's ablation.json, relative to the study's directory
    calibration: dict | None = None  # the stand-ins' calibration (calibration.report)


def _ratio_row(num: dict, den: dict) -> dict | None:
    s = stats.spread(paired(num, den, lambda a, b: a / b))
    return None if s is None else {"median": s.median, "low": s.low, "high": s.high, "n": s.n}


def _rss(rows: list) -> dict:
    """(workload, variant, allocator, adv) -> median peak RSS in KiB over ok runs."""
    acc: dict = {}
    for r in rows:
        if r.ok and r.stage == 0:
            acc.setdefault((r.workload, r.variant, r.allocator, int(r.adv)), []).append(float(r.max_rss_kb))
    return {k: stats.median(v) for k, v in acc.items()}


def study_data(rows: list, extra: Extra, stages=(0,), best=None) -> StudyData:
    kinds = {r.workload: r.kind for r in rows}
    partial = tuple(w.name for w in workloads.CATALOG if w.partial and w.name in kinds)
    mem = extra.memory or {}
    return StudyData(rows, drag=mem.get("drag"), frag=mem.get("frag"), cache=extra.cache, memops=extra.weights,
                     partial=partial, kinds=kinds, footprint=extra.footprints, stages=tuple(stages), best=best)


def staged_data(rows: list, extra: Extra) -> list[StudyData]:
    """The repeats added in stages, cumulative: [stage 1, stages 1-2, ...] (empty without any), each
    judging the "best allocator" claims on the allocator the first rounds found best."""
    last = max((r.stage for r in rows), default=0)
    best = claims.region_best(study_data(rows, extra)) if last else None
    return [study_data(rows, extra, range(1, k + 1), best) for k in range(1, last + 1)]


def _variants(rows: list) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(r.workload, [])
        if r.variant not in out[r.workload]:
            out[r.workload].append(r.variant)
    return out


def _rq1(d: StudyData, allocs, advs) -> list:
    """Per-class allocators (bundled and real) against naive allocation."""
    out = []
    for w in d.workloads("per-class"):
        for a in allocs:
            for adv in advs:
                x = _ratio_row(d.times(w, "custom", a, adv), d.times(w, "malloc", a, adv))
                if x:
                    out.append({"workload": w, "allocator": a, "adv": adv, **x})
    return out


def _rq2(d: StudyData, variants, allocs) -> list:
    """Region and hybrid variants against naive (d.naive: svn's is its emulator), clean heap."""
    out = []
    for w in d.workloads("region", "hybrid"):
        naive = d.naive(w)
        for v in variants.get(w, []):
            if v == naive:
                continue
            for a in allocs:
                x = _ratio_row(d.times(w, v, a, 0), d.times(w, naive, a, 0))
                if x:
                    out.append({"workload": w, "variant": v, "allocator": a, "naive": naive, **x})
    return out


def _rq3(d: StudyData, allocs, advs) -> list:
    """Each variant under littering against its own clean run (region and hybrid; the naive
    variant is d.naive's, svn's emulator)."""
    out = []
    for w in d.workloads("region", "hybrid"):
        for v in dict.fromkeys(("custom", "reap", d.naive(w))):
            for a in allocs:
                for adv in advs:
                    if adv == 0:
                        continue
                    x = _ratio_row(d.times(w, v, a, adv), d.times(w, v, a, 0))
                    if x:
                        out.append({"workload": w, "variant": v, "allocator": a, "adv": adv,
                                    "partial": w in d.partial, **x})
    return out


def _like(d: StudyData, variants, rss) -> tuple[list, list]:
    """Reaps against allocators of like semantics (2002 Figure 6), and the emulator's
    bookkeeping: clean heap, glibc."""
    like = []
    for w in d.workloads("region", "hybrid"):
        for v in variants.get(w, []):
            if v == "reap":
                continue
            x = _ratio_row(d.times(w, v, "glibc", 0), d.times(w, "reap", "glibc", 0))
            if x:
                r_v, r_r = rss.get((w, v, "glibc", 0)), rss.get((w, "reap", "glibc", 0))
                like.append({"workload": w, "variant": v, **x, "rss_kb": r_v,
                             "rss_over_reap": (r_v / r_r) if r_v and r_r else None})
    emu = []
    for w in d.workloads("region", "hybrid"):
        x = _ratio_row(d.times(w, "emulator", "glibc", 0), d.times(w, "malloc", "glibc", 0))
        if x:
            emu.append({"workload": w, **x})
    return like, emu


def _naive(vs: list) -> str | None:
    return "malloc" if "malloc" in vs else ("real" if "real" in vs else None)


def _general(d: StudyData, variants, allocs, advs, rss) -> list:
    """General-purpose allocators: naive variants and real programs, time and RSS over glibc."""
    gp = []
    for w in sorted(variants):
        v = _naive(variants[w])
        if v is None:
            continue
        for a in allocs:
            for adv in advs:
                x = _ratio_row(d.times(w, v, a, adv), d.times(w, v, "glibc", adv))
                if x:
                    r_a, r_g = rss.get((w, v, a, adv)), rss.get((w, v, "glibc", adv))
                    gp.append({"program": f"{w}/{v}" if v != "real" else w, "allocator": a, "adv": adv, **x,
                               "rss_kb": r_a, "rss_ratio": (r_a / r_g) if r_a and r_g else None})
    return gp


def analyse(rows: list, extra: Extra, allocs: list, advs: list, looks: int = 1) -> Findings:
    """The tables and verdicts of ROWS (StudyRow) and EXTRA; allocator names, levels as ints; LOOKS:
    the most staged looks the study could take (the level of each is corrected for them). The
    tables are the study's own rounds; the staged repeats only judge the claims they were run for."""
    rows, unverified = counters.drop_unverified(rows)
    d = study_data(rows, extra)
    variants = _variants(rows)
    rss = _rss(rows)
    like, emu = _like(d, variants, rss)
    programs = [(w, _naive(vs)) for w, vs in sorted(variants.items()) if _naive(vs)]
    tables = {"memory": extra.memory or {}, "weights": extra.weights or {}, "cache": extra.cache or [],
              "server_footprint": extra.footprints or {},
              "rq1": _rq1(d, allocs, advs), "rq2": _rq2(d, variants, allocs), "rq3": _rq3(d, allocs, advs),
              "like": like, "emulator": emu, "general": _general(d, variants, allocs, advs, rss),
              "general_summary": general_summary(d, programs, allocs, advs),
              "alloc_stats": extra.profiles or {}, "unverified_pairs": unverified,
              "calibration": extra.calibration or {}}
    return Findings(tables, claims.evaluate(d, staged=staged_data(rows, extra), looks=looks))


def _allocator_summary(d: StudyData, programs: list, a: str, adv: int) -> dict | None:
    rsss, reps = [], []
    for w, v in programs:
        rs = paired(d.times(w, v, a, adv), d.times(w, v, "glibc", adv), lambda x, g: x / g)
        if not rs:
            return None  # an allocator that missed a program is not ranked on fewer programs
        reps.append(rs)
        rx = paired(d.rss(w, v, a, adv), d.rss(w, v, "glibc", adv), lambda x, g: x / g)
        if rx:
            rsss.append(stats.median(rx))
    per_rep = per_repeat(reps, stats.geomean)
    return {"allocator": a, "adv": adv, "programs": len(programs), "time": stats.median(per_rep),
            "low": min(per_rep), "high": max(per_rep), "repeats": len(per_rep),
            "rss": stats.geomean(rsss) if len(rsss) == len(programs) else None}


def general_summary(d: StudyData, programs: list, allocs: list, advs: list) -> list[dict]:
    """Per allocator and level: the geometric mean, over PROGRAMS ((workload, variant) pairs that
    every allocator ran), of time and peak RSS over glibc's. The time mean is taken one repeat at a
    time (each program's ratio to glibc's run of the same repeat): `time` is the median of those
    means, `low`/`high` the least and greatest; `over_best` is `time` over the lowest `time` of that
    level, so the ranking of the general-purpose allocators is read from the run, not computed by
    hand. Peak RSS: the mean of the per-program median ratios."""
    out = []
    if not programs:
        return out
    for adv in advs:
        rows = [r for r in (_allocator_summary(d, programs, a, adv) for a in allocs) if r]
        if rows:
            best = min(r["time"] for r in rows)
            for r in rows:
                r["over_best"] = r["time"] / best
            out += rows
    return out


def collect_profiles(outdir: str) -> dict:
    """Each workload's profile (DIR/profiles/<workload>.json), in brief."""
    d = os.path.join(outdir, "profiles")
    out = {}
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not name.endswith(".json"):
            continue
        try:
            pr = read_profile(os.path.join(d, name))
        except LabError:
            continue
        out[name[:-5]] = {k: pr.data.get(k) for k in ("allocations", "bytes", "max_live", "max_live_bytes",
                                                       "mean_size")}
    return out
