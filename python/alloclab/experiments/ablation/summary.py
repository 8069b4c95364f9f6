"""The ablation's numbers: per program and setting, ratios to the default setting; per
switch, geometric means over the programs and a verdict paired by round.

API::

    Measured                                     # what the runs gave: times, peak RSS, cache counts
    per_program(measured, programs) -> list[dict]   # one per program x switch value (ablation.json "rows")
    summarise(rows, programs) -> list[dict]      # per switch (ablation.json "summary")
    paired_by_round(times, key, programs) -> dict | None
    control(measured, programs) -> dict | None   # the A/A control's paired verdict, with its RSS
"""

from __future__ import annotations

import dataclasses

from alloclab import stats
from alloclab.experiments.ablation.switches import CONTROL, SWITCHES


@dataclasses.dataclass
class Measured:
    """program -> setting key -> per-round values (None for a failed run), and cache counts."""

    times: dict
    rss: dict
    counts: dict                 # program -> setting key -> measure.cache counts


def _ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _group(m: Measured, program: str, sw) -> list[dict]:
    group = []
    for v in sw.values:
        key = "default" if v == sw.default else f"{sw.name}={v}"
        t = stats.ratio_spread(m.times[program][key], m.times[program]["default"])
        rs = stats.ratio_spread(m.rss[program][key], m.rss[program]["default"])
        c, c0 = m.counts[program].get(key) or {}, m.counts[program].get("default") or {}
        group.append({
            "program": program, "switch": sw.name, "value": v, "is_default": v == sw.default,
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
    return group


def per_program(m: Measured, programs: list) -> list[dict]:
    """Per program and switch value: time (median and min-max of the per-round ratios to the
    default), D1/LL and peak RSS ratios; the program's winner per switch (lowest time)."""
    out = []
    for q in programs:
        for sw in SWITCHES:
            out.extend(_group(m, q, sw))
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


def control(m: Measured, programs: list) -> dict | None:
    """The A/A control (the default run again) judged like an alternative, with its RSS ratio."""
    c = paired_by_round(m.times, CONTROL, programs)
    rss = stats.geomean(r.median for r in (stats.ratio_spread(m.rss[q][CONTROL], m.rss[q]["default"])
                                            for q in programs) if r)
    return dict(c, rss_geomean=rss) if c else None


def verdicts(summary: list, m: Measured, programs: list) -> None:
    """Each alternative's paired verdict (time_paired), and the switch's clearly faster values."""
    for sw in summary:
        for v in sw["values"]:
            v["time_paired"] = None if v["is_default"] else paired_by_round(
                m.times, f"{sw['switch']}={v['value']}", programs)
        sw["clearly_faster"] = [v["value"] for v in sorted(sw["values"], key=lambda v: v["time_geomean"] or 9)
                                if (v.get("time_paired") or {}).get("verdict") == "faster"]
