"""The study in text: the verdict lines and the general-purpose summary the command prints,
and verdicts.md (the verdict table as Markdown, for the results page).

API::

    verdict_lines(verdicts) -> list[str]
    verdicts_markdown(verdicts) -> str
    summary_lines(general_summary) -> list[str]
    summary_markdown(general_summary) -> str      # the same as a Markdown table (the results page)
    kept_blocks(findings) -> {name: markdown}     # what docs/results.md quotes from a kept run
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


def summary_markdown(summary: list) -> str:
    """The general-purpose summary as a Markdown table: per level, each allocator's time and peak RSS
    over glibc's (geometric means over the naive variants and real programs), best first."""
    rows = []
    for adv in sorted({r["adv"] for r in summary}):
        for r in sorted((r for r in summary if r["adv"] == adv), key=lambda r: r["time"]):
            rss = f"{r['rss']:.3f}" if r["rss"] is not None else tables.MISSING
            rows.append([f"Adv_{adv}", r["allocator"], r["programs"], f"{r['time']:.3f}",
                         f"{r['low']:.3f} … {r['high']:.3f}", f"{r['over_best']:.3f}", rss])
    return tables.markdown(["level", "allocator", "programs", "time / glibc", "per repeat (min … max)",
                            "× the best", "peak RSS / glibc"], rows, "llrrlrr")


def kept_blocks(findings) -> dict:
    """The tables docs/results.md quotes from a kept run, by the name its markers give them
    (`<!-- kept-run NAME BLOCK -->` … `<!-- /kept-run -->`): computed, never typed."""
    return {"verdicts": verdicts_markdown(findings.verdicts),
            "summary": summary_markdown(findings.tables.get("general_summary") or [])}
