"""A comparison in words and text tables: the headline, the terminal's table and the
Markdown export (present.tables).

API::

    headline(summary) -> str                   # the fastest cell per level, against the baseline
    format_table(summary) -> str               # the terminal's table, within WIDTH (100) columns
    format_ratio(ratio, spread, dash="-") -> str   # 1.023 (0.98-1.07)
    markdown_table(summary, rows=None) -> str  # ratios with the min-max of the paired ratios
"""

from __future__ import annotations

import textwrap

from alloclab.core.results.summary import Summary
from alloclab.experiments.compare.summary import paired_difference, ratio_spreads, reference
from alloclab.present import tables
from alloclab.present.html import secs


def headline(summary: Summary) -> str:
    """One sentence from the data: the fastest allocator on the clean heap and on the most
    littered one, by how much against the baseline, and whether that exceeds the noise."""
    cells = [c for c in summary.cells if c.program_s]
    if not cells:
        return "No run succeeded: there is nothing to compare (see the warnings below)."
    base = next((c for c in cells if c.key == summary.meta.baseline), None)
    out = []
    for adv in sorted({c.adv for c in cells}):
        row = [c for c in cells if c.adv == adv]
        if len(row) < 2 and not (base and base.adv != adv):
            continue
        best = min(row, key=lambda c: c.program_s.median)
        ref = reference(summary, best) if base and best.allocator != base.allocator else None
        ref = ref if ref is not None and ref.program_s else None
        level = "On a clean heap" if adv == 0 else f"At Adv_{adv}"
        if ref is None or ref is best:
            out.append(f"{level}, {best.allocator} is fastest ({secs(best.program_s.median)} median program time).")
            continue
        b, r = best.program_s, ref.program_s
        gain = 100.0 * (1 - b.median / r.median) if r.median else 0.0
        d = paired_difference(best, ref)
        out.append(f"{level}, {best.allocator} is fastest: {gain:.1f}% less program time than "
                   f"{ref.allocator} ({secs(b.median)} vs {secs(r.median)}, medians of "
                   f"{b.n} and {r.n} runs); {d.why}: "
                   + ("a clear difference." if d.clear else "not a clear difference."))
    return " ".join(out) or "One cell only: nothing to compare."


WIDTH = 100  # the terminal table's width; the report and the exports carry every column


def format_ratio(ratio, spread, dash: str = "-") -> str:
    """A ratio with the min-max of its paired ratios, e.g. 1.023 (0.98-1.07)."""
    if not ratio:
        return dash
    if spread and spread.n > 1:
        return f"{ratio:.3f} ({spread.low:.2f}{dash}{spread.high:.2f})"
    return f"{ratio:.3f}"


def _x(ratio) -> str:
    return f"{ratio:.3f}" if ratio else "-"


def _med(s, scale: float = 1.0, spec: str = "{:.4f}") -> str:
    return spec.format(s.median / scale) if s else "-"


def _count(n) -> str:
    """A count in 4 significant characters: 2.14M, 60.7k, 912."""
    if n is None:
        return "-"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            v = n / div
            return f"{v:.{2 if abs(v) < 10 else 1 if abs(v) < 100 else 0}f}{unit}"
    return str(n)


def _columns(head: list, rows: list) -> list[str]:
    lines = [head] + rows
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(head))]
    out = ["  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def _name(c) -> str:
    return c.allocator + (" (stdout differs!)" if c.stdout_differs else "")


def format_table(summary: Summary) -> str:
    """The terminal's table, within WIDTH columns: per cell the median program time, its ratio
    to the baseline with the min-max of the paired ratios, the littering's time and peak RSS; the
    cache counts beside them when they fit, else in a second table. Wall, user and system time
    are in the report, the Markdown and the JSON exports."""
    meta = summary.meta
    has_cache = any(c.cache for c in summary.cells)
    head = ["allocator", "adv", "runs", "program s", "x base (min-max)", "litter s", "RSS MiB", "x base"]
    rows = [[_name(c), f"Adv_{c.adv}", f"{c.ok}/{c.runs}", _med(c.program_s),
             format_ratio(c.program_s_ratio, c.program_s_ratio_spread), _med(c.litter_s),
             _med(c.max_rss_kb, 1024, "{:.1f}"), _x(c.max_rss_kb_ratio)] for c in summary.cells]
    misses = [[_count((c.cache or {}).get(k)) for k in ("program_d1_misses", "program_ll_misses")]
              for c in summary.cells]
    out = _columns(head, rows)
    if has_cache:
        wide = _columns(head + ["D1 miss*", "LL miss*"], [r + m for r, m in zip(rows, misses)])
        if max(len(x) for x in wide) <= WIDTH:
            out = wide
        else:
            out += [""] + _columns(["allocator", "adv", "D1 miss*", "LL miss*"],
                                   [r[:2] + m for r, m in zip(rows, misses)])
    notes = [f"baseline {meta.baseline}; medians over ok runs; x base: median / the baseline's median, "
             "for program s with the min-max of the ratios of runs of the same round; program s = wall s - "
             "litter s (the littering's own time, from its log); wall, user and sys time: report.html"]
    if has_cache:
        notes.append(f"* {meta.cache_method}, once per cell, the littering's own misses subtracted "
                     "(`true` littered the same way minus `true` alone)")
    if summary.stdout_differs:
        notes.append(f"WARNING: {len(summary.stdout_differs)} run(s) printed different stdout than the others")
    for c in summary.cells:
        bad = {k: v for k, v in c.statuses.items() if k != "ok"}
        if bad:
            notes.append(f"WARNING: {c.allocator} Adv_{c.adv}: " + ", ".join(f"{v} {k}" for k, v in bad.items()))
    for n in notes:
        out += textwrap.wrap(n, WIDTH, subsequent_indent="  ")
    return "\n".join(out)


def _fmt(x, spec="{:.4f}"):
    return "-" if x is None else spec.format(x)


def markdown_table(summary: Summary, rows: list | None = None) -> str:
    """The results as a Markdown table; with the runs, the ratio carries the min-max of the
    paired ratios (each run over the baseline's run of the same round)."""
    meta = summary.meta
    spreads = ratio_spreads(meta.baseline, rows) if rows else {}
    head = ["allocator", "level", "ok/runs", "program s median", "min", "max", "x baseline", "wall s median",
            "peak RSS MiB"]
    body = []
    for c in summary.cells:
        p, w, rss = c.program_s, c.wall_s, c.max_rss_kb
        ratio = _fmt(c.program_s_ratio, "{:.3f}")
        sp = spreads.get(c.key)
        if sp and ratio != "-" and sp.n > 1:
            ratio += f" ({sp.low:.3f}–{sp.high:.3f})"
        body.append([c.allocator, f"Adv_{c.adv}", f"{c.ok}/{c.runs}", _fmt(p and p.median), _fmt(p and p.low),
                     _fmt(p and p.high), ratio, _fmt(w and w.median),
                     _fmt(rss and rss.median / 1024.0, "{:.1f}")])
    lines = tables.markdown(head, body, "lll" + "r" * (len(head) - 3)).splitlines()
    cmd = " ".join(meta.command or [])
    lines += ["", f"Baseline {meta.baseline}; medians over the ok runs, min and max of the same runs; "
                  "x baseline: ratio of the medians"
                  + (", in brackets the min-max of the ratios of runs of the same round" if spreads else "")
                  + f"; command `{cmd}`."]
    return "\n".join(lines) + "\n"
