"""The papers' claims: for each, the number a paper reports, the rule that judges it
(rules.py) and how the same number is measured here (on data.py's StudyData; the claims of
deterministic instruments are measured in exact.py).

API::

    Claim, CLAIMS                              # every claim the study can test
    evaluate(data, claims=CLAIMS, staged=(), looks=1) -> list[Verdict]   # one per claim, inconclusive without data
    unsettled_cells(data, staged=(), looks=1) -> {claim id: [cells]}    # what staged repeats run again
    region_best(data) -> str | None            # the allocator the "on the best allocator" claims take
    for_paper(data, paper) -> StudyData        # data without the workloads that have no counterpart in PAPER
    show(value, unit) -> str                   # a measured value as the reports print it
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Callable

from alloclab import stats
from alloclab.core.results.findings import Verdict
from alloclab.experiments.study.verdicts import exact
from alloclab.experiments.study.verdicts.data import (NAIVE, StudyData, aa, best_allocator, gain, geo_effect,
                                                      null_between, paired, per_repeat, slowdown)
from alloclab.experiments.study.verdicts.rules import (DECISIVE, AtLeast, AtMost, Band, UpTo, around, judge,
                                                       spread_words)
from alloclab.experiments.workloads import PAPER_TABLE3, feeds, find


@dataclasses.dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    claim: str
    paper_value: str
    rule: object
    measure: Callable          # StudyData -> (values, what was measured, exact)
    unit: str = "%"            # "%": an effect (a fraction, shown as a percentage); "x": a plain ratio
    weigh_as: tuple = ()       # (workload, paper program) where the claim's program is not the catalog's row
    null: Callable | None = None   # StudyData -> the null's per-repeat values (a timed claim); None: not timed
    margin: float | None = None    # a count of programs within this margin: unsettled when the floor reaches it


def _m_rq1_boxed(d):
    return gain(d, "boxed_sim", "custom", "malloc", "mimalloc", 0), \
        "boxed_sim on mimalloc, Adv_0: naive time / custom time - 1", False


def _m_rq1_micro(alloc):
    def m(d):
        return gain(d, "freelist_micro", "custom", "malloc", alloc, 0), \
            f"freelist_micro on {alloc}, Adv_0: naive time / free-list time - 1", False
    return m


def _region_like(d):
    return [w for w in d.workloads("region", "hybrid") if w not in d.partial]


def _m_rq2_gap(d):
    ws = _region_like(d)
    best = best_allocator(d, ws)
    if not best:
        return [], "no allocator ran every region workload", False
    vals = per_repeat([gain(d, w, "custom", d.naive(w), best, 0) for w in ws], max)
    return vals, (f"largest gain of custom regions over naive, over {_named(d, ws)}, on the best allocator "
                  f"({best}), Adv_0"), False


def _m_rq2_one(workload, label):
    def m(d):
        best = best_allocator(d, _region_like(d))
        if not best:
            return [], "no best allocator", False
        return gain(d, workload, "custom", d.naive(workload), best, 0), \
            f"{workload} ({label}) on the best allocator ({best}), Adv_0: naive / custom - 1", False
    return m


def _regions_2002(d):
    """The region programs, as the 2002 paper's (lcc, mudlle, 176.gcc, Apache): kind region, wholly
    regioned (a partly-regioned Clang is the 2026 paper's; 197.parser's xalloc is no region)."""
    return [w for w in d.workloads("region") if w not in d.partial]


def _named(d, ws, emulator_first=False):
    """The workloads, each with the naive variant compared where it is not NAIVE."""
    return ", ".join(w if d.naive(w, emulator_first) == NAIVE else f"{w} ({d.naive(w, emulator_first)})"
                     for w in ws)


def _emulated_2002(d):
    """The 2002 region programs with a custom run and an emulated (else naive) run on glibc."""
    return [w for w in _regions_2002(d) if gain(d, w, "custom", d.naive(w, True), "glibc", 0)]


def _m_rq2_2002(d):
    ws = _emulated_2002(d)
    vals = per_repeat([gain(d, w, "custom", d.naive(w, True), "glibc", 0) for w in ws], max)
    return vals, (f"largest gain of the custom regions over the region emulator, glibc (a Lea descendant), Adv_0: "
                  f"emulator (naive where the emulator did not run) time / custom time - 1, over "
                  f"{_named(d, ws, True) or 'no region program'}"), False


def _m_rq3_naive(workload, alloc, label):
    def m(d):
        return slowdown(d, workload, "malloc", alloc, 3), \
            f"{workload} ({label}) naive on {alloc}: time at Adv_3 / time at Adv_0 - 1", False
    return m


def _m_rq3_resilient(d):
    ws = _region_like(d)
    lists = [slowdown(d, w, "custom", a, 3) for w in ws for a in d.allocators()]
    return per_repeat(lists, max), \
        f"largest slowdown of the custom variant under Adv_3 over {', '.join(ws)} and every allocator", False


def _m_rq3_partial(alloc):
    def m(d):
        ws = list(d.partial)
        if not ws:
            return [], "no partly-regioned workload", False
        vals = per_repeat([gain(d, w, "custom", d.naive(w), alloc, 3) for w in ws], geo_effect)
        return vals, f"{', '.join(ws)} on {alloc} at Adv_3: naive / custom - 1", False
    return m


def _m_reaps(d):
    ws = [w for w in d.workloads("region", "hybrid")]
    lists = [gain(d, w, "custom", "reap", "glibc", 0) for w in ws]
    return per_repeat(lists, geo_effect), \
        f"reap time / custom time - 1 on glibc, geometric mean over {', '.join(ws)}", False


def _m_like(variant, label):
    def m(d):
        ws = _having(d, variant)
        lists = [gain(d, w, "reap", variant, "glibc", 0) for w in ws]
        return per_repeat(lists, geo_effect), \
            (f"{label} time / reap time - 1 on glibc, clean heap, geometric mean over {', '.join(ws)}"
             if ws else f"no workload ran with {label}"), False
    return m


# The rq1 microbenchmark: built so that its free list wins (16-byte objects, nothing else), it
# bounds what a per-class allocator can gain; it is no program with a per-class allocator.
BUILT_TO_LOSE = ("freelist_micro",)


def _perclass(d):
    """The programs with a per-class allocator of their own: the per-class workloads and real
    programs (a real program's kind is its allocator's, so pymalloc and GSlice, small-object
    general-purpose allocators, are not among them), without the microbenchmark built to lose."""
    return [w for w in d.workloads("per-class") if w not in BUILT_TO_LOSE]


def _m_gp_perclass(d):
    ws = _perclass(d)
    lists = [paired(d.times(w, "malloc", "glibc", 0), d.times(w, "custom", "glibc", 0),
                    lambda n, c: 1.0 if n <= c * 1.05 else 0.0) for w in ws]
    ws = [w for w, x in zip(ws, lists) if x]
    return per_repeat(lists, lambda xs: sum(xs) / len(xs)), \
        (f"share of the programs with a per-class allocator ({', '.join(ws) or 'none measured'}) where naive glibc "
         f"is within 5% of the custom allocator"), False


def _m_vam_time(d):
    ws = d.workloads("general", "real") + [w for w in d.workloads("per-class", "region", "hybrid")]
    lists = []
    for w in ws:
        a = d.times(w, "malloc", "vam", 0) or d.times(w, "real", "vam", 0)
        b = d.times(w, "malloc", "glibc", 0) or d.times(w, "real", "glibc", 0)
        lists.append(paired(b, a, lambda g, v: g / v - 1.0))
    return per_repeat(lists, geo_effect), \
        "glibc time / vam time - 1, naive variants and real programs, clean heap, geometric mean", False


def _having(d, variant):
    return [w for w in d.workloads("region", "hybrid") if d.times(w, variant, "glibc", 0)]


# ---------------------------------------------------------------- the nulls
# Each timed claim's null is its measurement taken on A/A pairs (data.aa: a program's cell on
# glibc against its twin in the same rounds, at the levels the claim's ratio compares:
# data.null_between), combined over programs as the claim combines them.

_NAIVE = ("malloc", "real", "custom")
_SLOWDOWN = (3, 0)       # a ratio of a run at Adv_3 to one at Adv_0
_LITTERED = (3, 3)       # a ratio of two runs at Adv_3


def _n_one(workload, variants=_NAIVE, levels=(0, 0)):
    return lambda d: null_between(d, workload, variants, *levels)


def _n_max(ws_of):
    """The null's own maximum over the same workloads, per repeat (rules taking the largest gain)."""
    return lambda d: per_repeat([aa(d, w, _NAIVE) for w in ws_of(d)], max)


def _n_geo(ws_of, variants=_NAIVE, levels=(0, 0)):
    return lambda d: per_repeat([null_between(d, w, variants, *levels) for w in ws_of(d)], geo_effect)


def _n_resilient(d):
    """The largest of |workloads| x |allocators| slowdowns is held to the largest of as many null
    values: each repeat draws that many from the pooled A/A values of the same workloads (seeded),
    since the twin runs on one allocator only."""
    ws = _region_like(d)
    pool = [z for w in ws for z in null_between(d, w, ("custom",), *_SLOWDOWN)]
    cells = len(ws) * len(d.allocators())
    reps = len(null_between(d, ws[0], ("custom",), *_SLOWDOWN)) if ws else 0
    if not pool or not cells:
        return []
    rng = random.Random(len(pool) * 7919 + cells)
    return [max(rng.choice(pool) for _ in range(cells)) for _ in range(reps)]


def _n_perclass(d):
    """The per-class programs' A/A values, the one furthest from no effect in each repeat."""
    return per_repeat([aa(d, w, ("malloc", "custom")) for w in _perclass(d)],
                      lambda xs: max(xs, key=abs))


def _all_programs(d):
    return d.workloads("general", "real", "per-class", "region", "hybrid")


# ------------------------------------------ the programs where the 2026 paper found no effect

def _m_rq3_little(workload, label):
    def m(d):
        lists = [slowdown(d, workload, "malloc", a, 3) for a in d.allocators()]
        return per_repeat(lists, max), \
            f"{workload} ({label}) naive: the largest slowdown at Adv_3 over every allocator (time / Adv_0 - 1)", False
    return m


def _n_drawn_max(workload, variants=("malloc",)):
    """A measurement that takes the largest of one cell per allocator is held to the largest of as
    many null values, drawn per repeat from the workload's A/A values of a slowdown (seeded; the
    twin runs on one allocator only)."""
    def n(d):
        pool, cells = null_between(d, workload, variants, *_SLOWDOWN), len(d.allocators())
        if not pool or not cells:
            return []
        rng = random.Random(len(pool) * 7919 + cells)
        return [max(rng.choice(pool) for _ in range(cells)) for _ in pool]
    return n


CLAIMS = (
    Claim("rq1-boxed-sim", "2026", "Per-class free lists save only 2.3% over naive allocation on mimalloc (boxed-sim)",
          "2.3%", around(0.023), _m_rq1_boxed,
          null=_n_one("boxed_sim")),
    Claim("rq1-micro-glibc", "2026", "Per-class upper bound (16-byte objects, intrusive free list) over glibc",
          "24%", around(0.24), _m_rq1_micro("glibc"),
          null=_n_one("freelist_micro")),
    Claim("rq1-micro-jemalloc", "2026", "Per-class upper bound over jemalloc", "11%", around(0.11),
          _m_rq1_micro("jemalloc"), null=_n_one("freelist_micro")),
    Claim("rq1-micro-mimalloc", "2026", "Per-class upper bound over mimalloc", "8%", around(0.08),
          _m_rq1_micro("mimalloc"), null=_n_one("freelist_micro")),
    Claim("rq2-gap", "2026", "On the best allocator, regions beat naive allocation by at most 15%", "<= 15%",
          AtMost(0.15), _m_rq2_gap, null=_n_max(_region_like)),
    Claim("rq2-mudlle", "2026", "mudlle's regions beat naive allocation by 15% on the best allocator", "15%",
          around(0.15), _m_rq2_one("interp", "mudlle"), null=_n_one("interp")),
    Claim("rq2-parser", "2026", "197.parser's allocator beats naive allocation by 7.1% on the best allocator",
          "7.1%", around(0.071), _m_rq2_one("xalloc_parser", "197.parser"),
          null=_n_one("xalloc_parser")),
    Claim("rq2-2002", "2002", "Regions beat general-purpose allocation by up to 44% (Lea allocator)", "0-44%",
          UpTo(0.44), _m_rq2_2002, null=_n_max(_emulated_2002)),
    Claim("rq3-mudlle-mimalloc", "2026", "Adv_3 slows naive mudlle by 18% on mimalloc", "18%", around(0.18),
          _m_rq3_naive("interp", "mimalloc", "mudlle"), null=_n_one("interp", ("malloc",), _SLOWDOWN)),
    Claim("rq3-parser-mimalloc", "2026", "Adv_3 slows naive 197.parser by 25% on mimalloc", "25%", around(0.25),
          _m_rq3_naive("xalloc_parser", "mimalloc", "197.parser"),
          null=_n_one("xalloc_parser", ("malloc",), _SLOWDOWN)),
    Claim("rq3-gcc-mimalloc", "2026", "Adv_3 slows naive 176.gcc by 27% on mimalloc", "27%", around(0.27),
          _m_rq3_naive("compiler", "mimalloc", "176.gcc"), weigh_as=(("compiler", "176.gcc"),),
          null=_n_one("compiler", ("malloc",), _SLOWDOWN)),
    Claim("rq3-mudlle-glibc", "2026", "Adv_3 slows naive mudlle more than 2x on glibc", "> 2x (+100%)",
          AtLeast(1.0), _m_rq3_naive("interp", "glibc", "mudlle"), null=_n_one("interp", ("malloc",), _SLOWDOWN)),
    Claim("rq3-parser-glibc", "2026", "Adv_3 slows naive 197.parser more than 2x on glibc", "> 2x (+100%)",
          AtLeast(1.0), _m_rq3_naive("xalloc_parser", "glibc", "197.parser"),
          null=_n_one("xalloc_parser", ("malloc",), _SLOWDOWN)),
    Claim("rq3-resilient", "2026", "Region and hybrid allocators are unaffected by littering (Adv_3)",
          "~0% (taken as <= 5%)", AtMost(0.05), _m_rq3_resilient, null=_n_resilient),
    Claim("rq3-partial-mimalloc", "2026", "A partly-regioned program (Clang) still gains 3.2% at Adv_3 on mimalloc",
          "3.2%", around(0.032), _m_rq3_partial("mimalloc"),
          null=_n_geo(lambda d: list(d.partial), levels=_LITTERED)),
    Claim("rq3-partial-glibc", "2026", "A partly-regioned program (Clang) still gains 9.4% at Adv_3 on glibc",
          "9.4%", around(0.094), _m_rq3_partial("glibc"),
          null=_n_geo(lambda d: list(d.partial), levels=_LITTERED)),
    Claim("reaps-vs-regions", "2002", "Reaps cost 0-8% against the programs' own regions", "<= 8%",
          AtMost(0.08), _m_reaps,
          null=_n_geo(lambda d: d.workloads("region", "hybrid"), ("reap", "custom"))),
    Claim("reaps-vs-talloc", "2002", "Reaps are the fastest regions-with-free (Windows Heaps 68-100% slower)",
          "others slower", AtLeast(0.0), _m_like("talloc", "talloc"),
          null=_n_geo(lambda d: _having(d, "talloc"), ("reap",))),
    Claim("reaps-vs-apr", "2002", "Reaps beat other region allocators (Vmalloc 43%-4x slower)", "others slower",
          AtLeast(0.0), _m_like("apr", "APR pools"),
          null=_n_geo(lambda d: _having(d, "apr"), ("reap",))),
    Claim("reaps-vs-pmr", "2002", "Reaps beat other region allocators (C++ pmr pools, today's equivalent)",
          "others slower", AtLeast(0.0), _m_like("pmr", "std::pmr"),
          null=_n_geo(lambda d: _having(d, "pmr"), ("reap",))),
    Claim("regions-footprint", "2002", "Regions raise peak footprint 6-63% (average 23%) (Table 4)", "6-63%",
          Band(0.06, 0.63), exact.m_footprint),
    Claim("bc-footprint", "2002", "Apache's bc module: pools hold 7.4 MB where reaps hold 240 KB", "31x",
          around(7.4e6 / 240e3), exact.m_bc, unit="x"),
    Claim("gp-matches-perclass", "2002", "A general-purpose allocator (Lea) matches most per-class allocators",
          "most (> 50%)", AtLeast(0.5, strict=True), _m_gp_perclass, null=_n_perclass, margin=0.05),
    Claim("drag-regions", "2002", "Programs with regions show drag (176.gcc 1.16, mudlle 1.23, lcc 3.34)",
          "1.16-3.34", Band(1.16, 3.34, null=1.0), exact.m_drag, unit="x"),
    Claim("vam-locality", "2005", "Vam has fewer cache misses than DLmalloc (L2, on average)", "-39%",
          around(0.39), exact.m_vam_cache),
    Claim("vam-frag", "2005", "Vam keeps fragmentation low (pages in use / live pages)", "< 1.1",
          AtMost(1.1), exact.m_vam_frag, unit="x"),
    Claim("vam-time", "2005", "Vam is 8% faster than DLmalloc on average", "8%", around(0.08), _m_vam_time, null=_n_geo(_all_programs)),
    Claim("rq2-vpr", "2026", "175.vpr: naive allocation on the best allocator (mimalloc) is equal or nearly equal "
          "to its regions", "~0% (taken as <= 5%)", AtMost(0.05), _m_rq2_one("vpr", "175.vpr"),
          null=_n_one("vpr")),
    Claim("rq2-geometry", "2026", "geometry_nodes' LinearAllocator beats naive allocation by 14% on the best "
          "allocator (mimalloc)", "14%", around(0.14), _m_rq2_one("geometry_nodes", "Blender LinearAllocator"),
          null=_n_one("geometry_nodes")),
    Claim("rq3-vpr-little", "2026", "175.vpr sees little impact from littering, whatever the allocator (naive, Adv_3)",
          "little (taken as <= 10%, under mudlle's 18%)", AtMost(0.10), _m_rq3_little("vpr", "175.vpr"),
          null=_n_drawn_max("vpr")),
    Claim("rq3-geometry-little", "2026", "geometry_nodes sees little impact from littering, whatever the allocator "
          "(naive, Adv_3)", "little (taken as <= 10%, under mudlle's 18%)", AtMost(0.10),
          _m_rq3_little("geometry_nodes", "Blender LinearAllocator"), null=_n_drawn_max("geometry_nodes")),
)


def show(value, unit: str) -> str:
    """A measured value as the reports print it: effects as signed percentages."""
    if value is None:
        return "–"
    return f"{value * 100:+.1f}%" if unit == "%" else f"{value:.3g}"


def _mentions(text: str, word: str) -> bool:
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])", text) is not None


def _weight_note(c: Claim, d: StudyData, what: str) -> str | None:
    """Which workloads the measurement draws on whose memory-operations share is outside 1.5x of
    their paper program's, in words; None when there is none."""
    off = [w for w, m in sorted((d.memops or {}).items())
           if m.get("within_band") is False and _mentions(what, w) and w not in dict(c.weigh_as)]
    for w, prog in c.weigh_as:
        share = ((d.memops or {}).get(w) or {}).get("memops_share")
        paper = (PAPER_TABLE3.get(prog) or {}).get("memops_share")
        if share and paper and not (1 / 1.5 <= share / paper <= 1.5):
            off.append(f"{w} ({share * 100:.1f}% against {prog}'s {paper * 100:.1f}%)")
    if not off:
        return None
    return ("drawn from workloads whose memory-operations share is outside 1.5x of "
            "their paper program's: " + ", ".join(off))


def _stand_in_words(c: Claim) -> str | None:
    """Why claim C gets no decisive verdict: a workload it weighs as a program its catalog row is not
    calibrated to (the stand-ins' calibration, docs/study.md); None when every one is."""
    other = [(w, prog) for w, prog in c.weigh_as if find(w).paper_program != prog]
    if not other:
        return None
    return "; ".join(f"{w} is calibrated to {find(w).paper_program}, not {prog}: no stand-in for {prog}, "
                     "so no decisive verdict" for w, prog in other)


def _fill(row: Verdict, c: Claim, d: StudyData, looks: int, stage: int | None):
    """Judge claim C on D into ROW; the Judgement (None when nothing was measured)."""
    values, what, exact = c.measure(d)
    null = c.null(d) if c.null and not exact else None
    j = judge(c.rule, values, null=null, exact=exact, looks=looks, margin=c.margin)
    row.what, row.spread = what, spread_words(0, 0.0, exact)
    if not j:
        row.note = "not measured in this run"
        return None
    row.measured = stats.median(values) if j.estimate is None else j.estimate
    row.low, row.high, row.n, row.verdict = j.low, j.high, j.n, j.verdict
    row.coverage, row.spread = j.coverage, spread_words(j.n, j.coverage, exact, j.k, j.m)
    if c.null and not exact:
        row.measure, row.null, row.noise_floor = d.time_measure, null or None, j.floor
        row.judged_low, row.judged_high, row.level, row.stage, row.why = (j.judged_low, j.judged_high, j.level,
                                                                          stage, j.why)
    if j.n < 2 and not exact:
        row.note = "one run: no spread, so no verdict"
    elif j.coverage < j.level and not exact:
        row.note = (f"{j.n} runs: their interval holds what it estimates with probability {j.coverage:.2f}, "
                    f"under the {j.level:.2f} a verdict needs ({'3 runs at least' if looks == 1 else 'more runs'})")
    return j


def _program_of(item: dict) -> str:
    return item.get("workload") or str(item.get("program") or "").split("/")[0]


def for_paper(d: StudyData, paper: str) -> StudyData:
    """D without the workloads that have no counterpart in PAPER (workloads.feeds): a claim of a
    paper is measured on its counterparts only (geometry_nodes, a 2026 program, feeds no 2002 rule)."""
    drop = {w for w in d.kinds if not feeds(w, paper)}
    if not drop:
        return d

    def keep(items):
        return None if items is None else [x for x in items if _program_of(x) not in drop]
    return dataclasses.replace(
        d, rows=[r for r in d.rows if r.workload not in drop], drag=keep(d.drag), frag=keep(d.frag),
        cache=keep(d.cache), memops=None if d.memops is None else {w: m for w, m in d.memops.items() if w not in drop},
        partial=tuple(w for w in d.partial if w not in drop), footprint=d.footprint,
        kinds={w: k for w, k in d.kinds.items() if w not in drop})


def evaluate(d: StudyData, claims=CLAIMS, staged=(), looks: int = 1) -> list[Verdict]:
    """One verdict per claim; claims without data are 'inconclusive' with n = 0 and a reason.
    STAGED: StudyData of the repeats added in stages, cumulative (stage 1; stages 1-2; ...): a
    timed claim the study's rounds leave unsettled is judged on them, look by look, each at the
    level corrected for LOOKS looks, until a look is not unsettled."""
    out = []
    views: dict = {}   # paper -> (its view of D, its views of the stages)
    for c in claims:
        if c.paper not in views:
            views[c.paper] = (for_paper(d, c.paper), [for_paper(ds, c.paper) for ds in staged])
        d_paper, staged_paper = views[c.paper]
        row = Verdict(c.id, c.paper, c.claim, c.paper_value, rule=c.rule.text(), unit=c.unit)
        j = _fill(row, c, d_paper, 1, None)
        first = (row.low, row.high)
        for k, ds in enumerate(staged_paper if (j and j.verdict == "unsettled" and c.null) else (), 1):
            if not c.measure(ds)[0]:
                break
            later = Verdict(c.id, c.paper, c.claim, c.paper_value, rule=c.rule.text(), unit=c.unit)
            j = _fill(later, c, ds, looks, k)
            later.note = (f"the study's rounds left it unsettled (over its null {show(first[0], c.unit)} … "
                          f"{show(first[1], c.unit)}); judged on the {later.n} repeats of stage{'s 1-' if k > 1 else ' '}"
                          f"{k}, of at most {looks}, each look at probability {later.level:.3g}")
            row = later
            if j is None or j.verdict != "unsettled":
                break
        row.weight_note = _weight_note(c, d_paper, row.what)
        if row.verdict in DECISIVE and _stand_in_words(c):
            row.verdict, row.note = "inconclusive", _stand_in_words(c)
        out.append(row)
    return out


def unsettled_cells(d: StudyData, staged=(), looks: int = 1, claims=CLAIMS) -> dict:
    """Claim id -> the cells (workload, variant, allocator, level) its measurement and its null
    read, for every timed claim whose verdict is still unsettled."""
    out = {}
    fixed = dataclasses.replace(d, best=region_best(d))   # so that tracing reads the best allocator's cells only
    for c, v in zip(claims, evaluate(d, claims, staged, looks)):
        if v.verdict == "unsettled" and c.null:
            out[c.id] = sorted(for_paper(fixed, c.paper).cells_read(c.measure, c.null))
    return out


def region_best(d: StudyData) -> str | None:
    """The best allocator of the "on the best allocator" claims, on D's rows."""
    return best_allocator(d, _region_like(d))
