"""A comparison's runs, summarised: per-cell statistics, ratios to the baseline, the stdout
check, and what a reader of the numbers should be warned about.

Statistics come from alloclab.stats (each computed there once); this module
says which runs each one is over: a cell's ok runs, and for a ratio's spread
the pairs of runs of the same round (a cell's run over the baseline's).

API::

    summarise(rows, meta) -> Summary
    ratio_spreads(baseline_key, rows, metric="program_s") -> {cell key: stats.Spread}
    paired_difference(cell, ref) -> Difference | None   # clear or not, and why
    warnings(summary) -> list[str]                       # short runs, differences within the noise
    reference(summary, cell) -> CellSummary | None       # what the headline compares a cell with
    exit_code(summary) -> int                            # 1 when some cell has no ok run
    SHORT_RUN_S
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from alloclab import stats
from alloclab.core.levels import Level, cell_key
from alloclab.core.results.runs import RunRow
from alloclab.core.results.summary import CellSummary, Meta, Summary

METRICS = ("wall_s", "program_s", "program_inproc_s", "litter_s", "user_s", "sys_s", "max_rss_kb")
RATIOS = ("wall_s", "program_s", "user_s", "max_rss_kb")
SHORT_RUN_S = 0.005


def _cells(rows: list[RunRow], meta: Meta) -> dict[str, CellSummary]:
    """Every planned cell (in the planned order), then any other a row names; counts of runs."""
    cells = {}
    for a, adv in meta.cells:
        cells[cell_key(a, adv)] = CellSummary(a, Level.of(int(adv)))
    for r in rows:
        c = cells.setdefault(r.key, CellSummary(r.allocator, r.adv))
        c.runs += 1
        c.statuses[r.status] = c.statuses.get(r.status, 0) + 1
        c.ok += r.ok
    return cells


def _statistics(c: CellSummary, ok_rows: list[RunRow]) -> None:
    for m in METRICS:
        setattr(c, m, stats.spread(getattr(r, m) for r in ok_rows))
    # Each ok run's program time by round, so that any two cells can be compared
    # round by round (paired_difference), not only through their medians.
    c.program_s_runs = sorted([r.repeat, r.program_s] for r in ok_rows)


def _ratios(cells: dict[str, CellSummary], base: CellSummary | None) -> None:
    for c in cells.values():
        for m in RATIOS:
            ours, theirs = getattr(c, m), getattr(base, m) if base else None
            ratio = ours.median / theirs.median if (ours and theirs and theirs.median) else None
            setattr(c, f"{m}_ratio", ratio)


def _stdout(rows: list[RunRow], cells: dict[str, CellSummary]) -> tuple[str | None, list]:
    """The most common digest among ok runs is the reference; the runs that differ from it."""
    digests = Counter(r.stdout_sha256 for r in rows if r.ok and r.stdout_sha256)
    reference = digests.most_common(1)[0][0] if digests else None
    differing = [{"run": r.run, "allocator": r.allocator, "adv": r.adv, "repeat": r.repeat,
                  "stdout_sha256": r.stdout_sha256}
                 for r in rows if r.ok and reference and r.stdout_sha256 != reference]
    for c in cells.values():
        c.stdout_differs = sum(1 for d in differing if d["allocator"] == c.allocator and d["adv"] == c.adv)
    return reference, differing


def summarise(rows: list[RunRow], meta: Meta) -> Summary:
    """Per-cell statistics (over ok runs), ratios to the baseline, stdout check."""
    cells = _cells(rows, meta)
    for key, c in cells.items():
        _statistics(c, [r for r in rows if r.key == key and r.ok])
    _ratios(cells, cells.get(meta.baseline))
    spreads = ratio_spreads(meta.baseline, rows)
    for key, c in cells.items():
        c.program_s_ratio_spread = spreads.get(key)
    reference, differing = _stdout(rows, cells)
    cache = meta.cache_results or {}
    for key, c in cells.items():
        c.cache = cache.get(key)
    return Summary(meta, list(cells.values()), reference, differing, len(rows))


def ratio_spreads(baseline: str | None, rows: list[RunRow], metric: str = "program_s") -> dict:
    """cell key -> stats.Spread of the paired ratios cell / baseline of `metric`, a run of the
    cell paired with the baseline's run of the same repeat (same round)."""
    by_cell: dict[str, dict[int, float]] = {}
    for r in rows:
        v = getattr(r, metric)
        if r.ok and v is not None:
            by_cell.setdefault(r.key, {})[r.repeat] = float(v)
    out = {}
    den = by_cell.get(baseline, {})
    for key, num in by_cell.items():
        reps = sorted(set(num) & set(den))
        sp = stats.ratio_spread([num[k] for k in reps], [den[k] for k in reps])
        if sp:
            out[key] = sp
    return out


def exit_code(summary: Summary) -> int:
    """1 when some cell has no ok run (its numbers are missing), else 0."""
    return 1 if any(c.ok == 0 for c in summary.cells) else 0


@dataclasses.dataclass(frozen=True)
class Difference:
    """Whether two cells differ by more than the noise, and why (in words)."""

    clear: bool
    paired: bool
    why: str
    ratio: stats.PairedRatio | None = None


def _secs(x: float) -> str:
    return f"{x * 1000:.2f} ms" if x < 1 else f"{x:.3f} s"


def paired_difference(cell: CellSummary, ref: CellSummary) -> Difference | None:
    """Whether `cell` and `ref` differ by more than the noise, and why.

    With the runs of both cells by round (program_s_runs), the runs of one
    round are paired, and the ratios cell / ref summarised on the log scale
    (stats.paired_ratio: a paired t-test). The difference is clear when the
    95% interval of the ratio excludes 1 (PairedRatio.clear, p < 0.05). Two
    runs of one round saw the same state of the machine, so a steady lead that
    the drift between rounds hides in each cell's own min-max range still shows.
    Without the runs (a summary written before they were kept), the old, cruder
    rule: the medians differ by more than the larger min-max range.
    None when either cell has no program time."""
    a, b = cell.program_s, ref.program_s
    if not a or not b:
        return None
    if cell.program_s_runs and ref.program_s_runs:
        by_round = {int(k): float(v) for k, v in ref.program_s_runs}
        pr = stats.paired_ratio([float(v) / by_round[int(k)] for k, v in cell.program_s_runs
                                 if by_round.get(int(k))])
        if pr is None:
            return None
        side = "less" if pr.below >= pr.above else "more"
        why = (f"it took {side} time in {max(pr.below, pr.above)} of {pr.n} rounds; paired by round, "
               f"{pr.geomean:.3f}× (95% interval {pr.low:.3f}–{pr.high:.3f}, p = {pr.p:.2g})")
        return Difference(pr.clear, True, why, pr)
    diff = abs(a.median - b.median)
    noise = max(a.high - a.low, b.high - b.low)
    clear = diff >= noise
    return Difference(clear, False,
                      f"the medians differ by more than the spread of the runs ({_secs(noise)}, min-max)" if clear
                      else f"the spread of the runs ({_secs(noise)}, min-max) is larger")


def _cache_warnings(summary: Summary) -> list[str]:
    out = []
    for c in summary.cells:
        for w in (c.cache or {}).get("warnings") or []:
            out.append(f"{c.key} cache counts: {w}")
        err = (c.cache or {}).get("error")
        if err:
            out.append(f"{c.key} cache counts: {err}")
    return out


def warnings(summary: Summary) -> list[str]:
    """What a reader of the table should be told (as hyperfine does):

    * littered cells that were not run, and cache counts that went wrong;
    * a cell whose median wall time is under SHORT_RUN_S: start-up and timer
      noise dominate; make the program do more work;
    * a cell whose difference from its reference (median program time) is within the
      noise (paired_difference): the reference is the one the headline compares it
      with (reference()), so a warning never contradicts the headline.
    """
    out = []
    skipped = summary.meta.skipped
    if skipped:
        cells = ", ".join(cell_key(a, adv) for a, adv in skipped["cells"])
        out.append(f"{cells}: {skipped['reason']}")
    out += _cache_warnings(summary)
    short = [c.key for c in summary.cells if c.wall_s and c.wall_s.median < SHORT_RUN_S]
    if short:
        out.append(f"runs take under {SHORT_RUN_S * 1000:g} ms ({', '.join(short)}): process start-up and "
                   "timer resolution dominate; give the program more work")
    for c in summary.cells:
        ref = reference(summary, c)
        if ref is None or not c.program_s or not ref.program_s:
            continue
        d = paired_difference(c, ref)
        if d is None or d.clear:
            continue
        b = ref.program_s
        diff = abs(c.program_s.median - b.median)
        rel = 100.0 * diff / b.median if b.median else 0.0
        out.append(f"{c.key} differs from {ref.key} by {rel:.1f}% "
                   f"({_secs(diff)}), but {d.why}: the difference is within the noise; add --runs")
    return out


def reference(summary: Summary, cell: CellSummary) -> CellSummary | None:
    """The cell the headline compares `cell` with: the baseline's allocator at the same level
    (allocators are compared on one heap), and for the baseline allocator's own littered cells the
    baseline itself (what littering cost it). None for the baseline, or when that cell is missing."""
    base = summary.baseline
    if base is None or cell is base:
        return None
    if cell.allocator == base.allocator:
        return base
    return next((c for c in summary.cells if c.allocator == base.allocator and c.adv == cell.adv), None)
