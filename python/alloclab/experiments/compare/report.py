"""A comparison's plots and its HTML page (present/templates/compare.html.j2).

Plots follow the paper's Figures 4–6: bars grouped by allocator, one bar per
littering level, height = median program time (wall time minus the time the
litter shim spent before main) divided by the baseline's median, whiskers =
min and max of the runs (also divided by the baseline median); wall.png is
the same with littering included, user.png the same for user CPU time
(steadier than wall time on a shared machine). A second figure does the same
for peak RSS, and, when cache counts exist, a third shows D1 and LL misses per
cell.

The report (DIR/report.html) is one self-contained file: the PNGs are
embedded as data: URIs (and also written next to it), and it states the
machine, allocator versions, command, cache method and geometry.

API::

    make_plots(summary, outdir) -> list[str]   # PNG file names written ([] without matplotlib)
    context(summary, outdir, pngs) -> dict     # what compare.html.j2 shows
    write_html(summary, outdir, pngs) -> str   # path of report.html
    write_report(summary, outdir) -> str       # both
"""

from __future__ import annotations

import os
import sys

from alloclab.core.results.series import read_rss_series
from alloclab.core.results.summary import Summary
from alloclab.experiments.compare.summary import warnings
from alloclab.experiments.compare.text import format_ratio, headline
from alloclab.present import plots
from alloclab.present.html import command_line, machine_facts, png_data, secs, size_kib, write_page


def _levels(summary: Summary):
    return sorted({c.adv for c in summary.cells})


def _allocs(summary: Summary):
    return list(dict.fromkeys(c.allocator for c in summary.cells))


def _bars(ax, summary: Summary, metric, normalise: bool, ylabel: str, title: str):
    levels, allocs = _levels(summary), _allocs(summary)
    base_cell = summary.baseline
    base_stat = getattr(base_cell, metric) if base_cell else None
    base = base_stat.median if normalise and base_stat else None
    div = base if base else (1024.0 if metric == "max_rss_kb" else 1.0)
    values = {}
    for c in summary.cells:
        st = getattr(c, metric)
        if st:
            values[(c.allocator, c.adv)] = {"median": st.median / div, "low": st.low / div, "high": st.high / div,
                                            "n": st.n}
    plots.grouped_bars(ax, allocs, levels, values, ref=1.0 if base else None,
                       series_label=lambda adv: f"Adv_{adv}")
    ax.set_xticklabels(allocs)
    ax.set_ylabel(ylabel)
    ax.set_title(title, wrap=True)  # a narrow figure (two allocators) would cut a long title off
    ax.legend(title="littering", fontsize="small")


def _cache_plot(plt, summary: Summary, size, outdir: str) -> bool:
    cached = [c for c in summary.cells if c.cache and c.cache.get("program_d1_misses") is not None]
    if not cached:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(size[0] * 1.6, size[1]))
    levels, allocs = _levels(summary), _allocs(summary)
    width = 0.8 / max(1, len(levels))
    for ax, key, label in ((axes[0], "program_d1_misses", "D1 misses"), (axes[1], "program_ll_misses", "LL misses")):
        for j, adv in enumerate(levels):
            xs, ys = [], []
            for i, a in enumerate(allocs):
                c = next((c for c in cached if c.allocator == a and c.adv == adv), None)
                if c and c.cache.get(key) is not None:
                    xs.append(i + (j - (len(levels) - 1) / 2) * width)
                    ys.append(c.cache[key])
            if xs:
                ax.bar(xs, ys, width, label=f"Adv_{adv}")
        ax.set_xticks(range(len(allocs)))
        ax.set_xticklabels(allocs)
        ax.set_title(f"{label}, littering itself subtracted ({summary.meta.cache_method})", wrap=True)
        ax.legend(title="littering", fontsize="small")
    plots.save(fig, os.path.join(outdir, "cache.png"))
    return True


def _rss_series_plot(plt, summary: Summary, size, outdir: str) -> bool:
    """RSS over time, one line per cell (compare --rss-series)."""
    if not summary.meta.rss_series:
        return False
    series = read_rss_series(os.path.join(outdir, summary.meta.rss_series["file"]))
    if not any(series.values()):
        return False
    fig, ax = plt.subplots(figsize=(size[0] * 1.6, size[1] * 1.2))
    for (allocator, level), samples in series.items():
        if samples:
            ax.plot([t for t, _ in samples], [kb / 1024.0 for _, kb in samples], label=f"{allocator} {level.label}",
                    linestyle="-" if not level.littered else "--")
    ax.set_xlabel("seconds since the program started")
    ax.set_ylabel("resident MiB")
    ax.set_title("Resident memory over time (one run per cell, littering included)", wrap=True)
    ax.legend(fontsize="small", ncol=2)
    plots.save(fig, os.path.join(outdir, "rss_series.png"))
    return True


def make_plots(summary: Summary, outdir: str) -> list[str]:
    plt = plots.pyplot()
    if plt is None:
        print("alloclab: warning: no plots: matplotlib cannot be imported; it is a declared "
              "dependency (pip install matplotlib)", file=sys.stderr)
        return []
    if not any(c.wall_s for c in summary.cells):
        return []
    written = []
    base = summary.meta.baseline
    size = (max(5.0, 1.6 * len(_allocs(summary)) + 2), 3.8)
    charts = (
        ("time.png", "program_s", True, f"time / {base}",
         "Program time (wall minus littering) normalised to the baseline"),
        ("wall.png", "wall_s", True, f"wall time / {base}",
         "Wall time, littering included, normalised to the baseline"),
        ("user.png", "user_s", True, f"user CPU time / {base}",
         "User CPU time (littering included) normalised to the baseline"),
        ("rss.png", "max_rss_kb", False, "peak RSS (MiB)", "Peak resident set size"),
    )
    for name, metric, normalise, ylabel, title in charts:
        fig, ax = plt.subplots(figsize=size)
        _bars(ax, summary, metric, normalise, ylabel, title)
        plots.save(fig, os.path.join(outdir, name))
        written.append(name)
    if _cache_plot(plt, summary, size, outdir):
        written.append("cache.png")
    if _rss_series_plot(plt, summary, size, outdir):
        written.append("rss_series.png")
    return written


def _results_table(summary: Summary) -> dict:
    has_cache = any(c.cache for c in summary.cells)
    head = ["allocator", "littering", "ok / runs", "program time (median)", "min – max", "× baseline",
            "wall time (median)", "littering", "user CPU", "peak RSS", "× baseline"]
    if has_cache:
        head += ["D1 misses", "LL misses"]
    rows = []
    for c in summary.cells:
        p, w, lt, u, rss = c.program_s, c.wall_s, c.litter_s, c.user_s, c.max_rss_kb
        vals = [c.allocator + (" (stdout differs!)" if c.stdout_differs else ""), f"Adv_{c.adv}",
                f"{c.ok} / {c.runs}", secs(p and p.median), f"{secs(p.low)} – {secs(p.high)}" if p else "–",
                format_ratio(c.program_s_ratio, c.program_s_ratio_spread, "–"),
                secs(w and w.median), secs(lt and lt.median), secs(u and u.median), size_kib(rss and rss.median),
                f"{c.max_rss_kb_ratio:.3f}" if c.max_rss_kb_ratio else "–"]
        if has_cache:
            ch = c.cache or {}
            vals += [f"{ch[k]:,}" if ch.get(k) is not None else "–"
                     for k in ("program_d1_misses", "program_ll_misses")]
        rows.append({"cells": vals, "cls": "warn" if c.ok < c.runs or c.ok == 0 else ""})
    return {"head": head, "rows": rows, "cls": "results", "scroll": True}


CAPTIONS = {
    "time.png": "Program time (wall time minus the time littering took before main), median of the runs of "
                "each cell divided by the baseline's median; whiskers: min and max of the {n} runs, divided "
                "the same way. Below the dashed line at 1 is faster than the baseline.",
    "wall.png": "Wall time with littering included, normalised to the baseline's median; whiskers: min and "
                "max of the {n} runs.",
    "user.png": "User CPU time (littering included), normalised to the baseline's median; whiskers: min and "
                "max of the {n} runs. Steadier than wall time on a shared machine.",
    "rss.png": "Peak resident set size in MiB, median of the runs; whiskers: min and max of the {n} runs.",
    "rss_series.png": "Resident memory (RSS as the kernel counts it: pages given back with MADV_FREE count until "
                      "reclaimed) of the program and its descendants, sampled every {every} ms during one "
                      "extra run per cell after the timed rounds; littered cells (dashed) include the "
                      "littering before main.",
    "cache.png": "Data-cache (D1) and last-level (LL) misses per cell, measured once per cell, with the "
                 "littering's own misses subtracted.",
}


def context(summary: Summary, outdir: str, pngs: list[str]) -> dict:
    """What compare.html.j2 shows, computed from a summary."""
    meta = summary.meta
    n = meta.repeat
    every = round(meta.rss_series["every_s"] * 1000) if meta.rss_series else None
    figures = [{"data": png_data(os.path.join(outdir, p)), "caption": CAPTIONS.get(p, p).format(n=n, every=every)}
               for p in pngs]
    bad = [f"{c.name}: " + ", ".join(f"{v} {k}" for k, v in c.statuses.items() if k != "ok")
           for c in summary.cells if any(k != "ok" for k in c.statuses)]
    allocs = [[a["name"], a["version"], a["path"] or "(system allocator)"] for a in meta.allocators]
    levels = [[name, f"{s['multiplier']:g}", "–" if not s["multiplier"] else f"{s['occupancy']:g}"]
              for name, s in meta.advs.items()]
    return {
        "title": "alloclab compare", "heading": "alloclab compare", "headline": headline(summary),
        "command": command_line(meta.command), "started": meta.started_utc, "finished": meta.finished_utc,
        "interrupted": meta.interrupted, "runs": n, "warmup": meta.warmup,
        "order": meta.order or "round-robin", "seed": meta.seed,
        "timeout_s": f"{meta.timeout_s:g}" if meta.timeout_s else None,
        "baseline": meta.baseline, "results": _results_table(summary),
        "warnings": bad + warnings(summary),
        "stdout_differs": [f"run {d['run']}: {d['allocator']} Adv_{d['adv']} repeat {d['repeat']}"
                           for d in summary.stdout_differs or []],
        "figures": figures, "machine": machine_facts(meta.machine),
        "allocators": {"head": ["name", "version", "library"], "rows": allocs, "scroll": True},
        "levels": {"head": ["level", "multiplier", "occupancy"], "rows": levels},
        "cache_method": meta.cache_method or "off", "geometry": meta.cache_geometry, "profile": meta.profile,
    }


def write_html(summary: Summary, outdir: str, pngs: list[str]) -> str:
    return write_page("compare.html.j2", context(summary, outdir, pngs), outdir)


def write_report(summary: Summary, outdir: str) -> str:
    return write_html(summary, outdir, make_plots(summary, outdir))
