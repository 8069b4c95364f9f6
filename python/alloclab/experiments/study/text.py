"""The study in text: the verdict lines and the general-purpose summary the command prints,
and verdicts.md (the verdict table as Markdown, for the results page).

API::

    verdict_lines(verdicts) -> list[str]
    verdicts_markdown(verdicts) -> str
    summary_lines(general_summary) -> list[str]
"""

from __future__ import annotations

from alloclab.experiments.study.verdicts.claims import show
from alloclab.present import tables


def verdict_lines(vs: list) -> list[str]:
    out = []
    for v in vs:
        if v.n:
            m = f"measured {show(v.measured, v.unit)} [{show(v.low, v.unit)}, {show(v.high, v.unit)}], n={v.n}"
        else:
            m = "not measured"
        if v.noise_floor is not None:
            m += f"; noise ±{v.noise_floor:.1%} on {v.measure}" + (f", stage {v.stage}" if v.stage else "")
        out.append(f"  {v.verdict:<12} {v.id:<22} paper {v.paper_value}; {m}")
    return out


def verdicts_markdown(vs: list) -> str:
    """The verdict table as Markdown (for docs/results.md: the numbers of one named run)."""
    rows = []
    for v in vs:
        meas = show(v.measured, v.unit) if v.n else tables.MISSING
        spread = f"{show(v.low, v.unit)} … {show(v.high, v.unit)}" if v.n else tables.MISSING
        note = f" ({v.notes})" if v.notes else ""
        rows.append([v.id, v.paper, v.claim, v.paper_value, meas, spread, v.n, f"**{v.verdict}**{note}"])
    return tables.markdown(["id", "paper", "claim", "paper", "measured", "spread", "n", "verdict"], rows,
                           "llllrlrl")


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
