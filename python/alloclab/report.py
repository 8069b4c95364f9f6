"""Plots and the HTML report of a comparison.

Plots (matplotlib, Agg backend) follow the paper's Figures 4–6: bars grouped by
allocator, one bar per littering level, height = median program time (wall
time minus the time the litter shim spent before main) divided by the
baseline's median, whiskers = min and max of the runs (also divided by the
baseline median); wall.png is the same with littering included, user.png
the same for user CPU time (steadier than wall time on a shared machine). A second figure does the same for peak RSS, and, when
cache counts exist, a third shows D1 and LL misses per cell.

The report (DIR/report.html) is one self-contained file: the PNGs are
embedded as data: URIs (and also written next to it), and it states the
machine, allocator versions, command, cache method and geometry.

API::

    make_plots(summary, outdir) -> list[str]   # PNG file names written ([] without matplotlib)
    write_html(summary, outdir, pngs) -> str   # path of report.html
    write_report(summary, outdir) -> str       # both
"""

from __future__ import annotations

import base64
import html
import os

from alloclab import compare as compare_mod


def _levels(summary):
    return sorted({c["adv"] for c in summary["cells"]})


def _allocs(summary):
    return list(dict.fromkeys(c["allocator"] for c in summary["cells"]))


def _bars(ax, summary, metric, normalise: bool, ylabel: str, title: str):
    levels, allocs = _levels(summary), _allocs(summary)
    cells = {(c["allocator"], c["adv"]): c for c in summary["cells"]}
    base_cell = next((c for c in summary["cells"]
                      if compare_mod._cell_key(c["allocator"], c["adv"]) == summary["meta"]["baseline"]), None)
    base = base_cell[metric]["median"] if normalise and base_cell and base_cell.get(metric) else None
    width = 0.8 / max(1, len(levels))
    for j, adv in enumerate(levels):
        xs, ys, lo, hi = [], [], [], []
        for i, a in enumerate(allocs):
            c = cells.get((a, adv))
            st = c.get(metric) if c else None
            if not st:
                continue
            div = base if base else (1024.0 if metric == "max_rss_kb" else 1.0)
            xs.append(i + (j - (len(levels) - 1) / 2) * width)
            ys.append(st["median"] / div)
            lo.append((st["median"] - st["min"]) / div)
            hi.append((st["max"] - st["median"]) / div)
        if xs:
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=f"Adv_{adv}")
    ax.set_xticks(range(len(allocs)))
    ax.set_xticklabels(allocs)
    if base:
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(title="littering", fontsize="small")


def make_plots(summary: dict, outdir: str) -> list[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        import sys
        print(f"alloclab: warning: no plots: matplotlib cannot be imported ({e}); it is a declared "
              "dependency (pip install matplotlib)", file=sys.stderr)
        return []
    if not any(c.get("wall_s") for c in summary["cells"]):
        return []
    written = []
    base = summary["meta"]["baseline"]
    n = len(_allocs(summary))
    size = (max(5.0, 1.6 * n + 2), 3.8)

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
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, name), dpi=110)
        plt.close(fig)
        written.append(name)

    cached = [c for c in summary["cells"] if c.get("cache") and c["cache"].get("program_d1_misses") is not None]
    if cached:
        fig, axes = plt.subplots(1, 2, figsize=(size[0] * 1.6, size[1]))
        levels, allocs = _levels(summary), _allocs(summary)
        width = 0.8 / max(1, len(levels))
        for ax, key, label in ((axes[0], "program_d1_misses", "D1 misses"),
                               (axes[1], "program_ll_misses", "LL misses")):
            for j, adv in enumerate(levels):
                xs, ys = [], []
                for i, a in enumerate(allocs):
                    c = next((c for c in cached if c["allocator"] == a and c["adv"] == adv), None)
                    if c and c["cache"].get(key) is not None:
                        xs.append(i + (j - (len(levels) - 1) / 2) * width)
                        ys.append(c["cache"][key])
                if xs:
                    ax.bar(xs, ys, width, label=f"Adv_{adv}")
            ax.set_xticks(range(len(allocs)))
            ax.set_xticklabels(allocs)
            ax.set_title(f"{label}, littering itself subtracted ({summary['meta']['cache_method']})")
            ax.legend(title="littering", fontsize="small")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "cache.png"), dpi=110)
        plt.close(fig)
        written.append("cache.png")
    return written


def _e(x) -> str:
    return html.escape(str(x))


def write_html(summary: dict, outdir: str, pngs: list[str]) -> str:
    meta = summary["meta"]
    m = meta.get("machine", {})
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>alloclab compare</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.2em .5em;text-align:right}"
             "th{background:#eee}td:first-child,td:nth-child(2){text-align:left}.warn{color:#a00}"
             "pre{background:#f6f6f6;padding:.5em;overflow-x:auto}</style></head><body>",
             "<h1>alloclab compare</h1>",
             f"<p>Command: <code>{_e(' '.join(meta.get('command', [])))}</code></p>",
             f"<p>Started {_e(meta.get('started_utc'))}, finished {_e(meta.get('finished_utc'))}"
             + (" — <b class='warn'>interrupted; partial results</b>" if meta.get("interrupted") else "")
             + f". {meta.get('repeat')} measured run(s) per cell after one warm-up, "
               f"{_e(meta.get('order', 'round-robin'))}; "
               f"littering seed {_e(meta.get('seed'))}.</p>",
             "<h2>Machine</h2><ul>"]
    for k in ("cpu", "cpus", "memory_kb", "kernel", "machine", "hostname", "python"):
        if k in m:
            parts.append(f"<li>{_e(k)}: {_e(m[k])}</li>")
    parts.append("</ul><h2>Allocators</h2><table><tr><th>name</th><th>version</th><th>library</th></tr>")
    for a in meta.get("allocators", []):
        parts.append(f"<tr><td>{_e(a['name'])}</td><td>{_e(a['version'])}</td>"
                     f"<td>{_e(a['path'] or '(system allocator)')}</td></tr>")
    parts.append("</table><h2>Littering levels (paper Table 3)</h2><table><tr><th>level</th>"
                 "<th>multiplier</th><th>occupancy</th></tr>")
    for name, s in meta.get("advs", {}).items():
        occ = "–" if not s["multiplier"] else f"{s['occupancy']:g}"
        parts.append(f"<tr><td>{_e(name)}</td><td>{s['multiplier']:g}</td><td>{occ}</td></tr>")
    parts.append("</table>")
    method = meta.get("cache_method", "off")
    geo = meta.get("cache_geometry")
    parts.append(f"<p>Cache measurement: <b>{_e(method)}</b>"
                 + (f" with geometry I1={_e(geo['I1'])}, D1={_e(geo['D1'])}, LL={_e(geo['LL'])} "
                    "(size,associativity,line bytes), once per cell" if geo else "") + ".</p>")
    parts.append(f"<h2>Results</h2><p>Baseline: <b>{_e(meta.get('baseline'))}</b>.</p>")
    parts.append("<pre>" + _e(compare_mod.format_table(summary)) + "</pre>")
    if summary.get("stdout_differs"):
        parts.append("<p class='warn'>Runs whose stdout differs from the most common output:</p><ul>")
        for d in summary["stdout_differs"]:
            parts.append(f"<li class='warn'>run {d['run']}: {_e(d['allocator'])} Adv_{d['adv']} "
                         f"repeat {d['repeat']}</li>")
        parts.append("</ul>")
    for p in pngs:
        with open(os.path.join(outdir, p), "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        parts.append(f"<figure><img alt='{_e(p)}' src='data:image/png;base64,{data}'>"
                     f"<figcaption>{_e(p)}</figcaption></figure>")
    if not pngs:
        parts.append("<p>(no plots: matplotlib is not available, or no run succeeded)</p>")
    parts.append("<p>Raw data: <a href='results.csv'>results.csv</a> (one row per measured run), "
                 "<a href='summary.json'>summary.json</a>"
                 + (", <a href='profile.json'>profile.json</a>" if meta.get("profile") else "") + ".</p>")
    parts.append("</body></html>\n")
    path = os.path.join(outdir, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    return path


def write_report(summary: dict, outdir: str) -> str:
    pngs = make_plots(summary, outdir)
    return write_html(summary, outdir, pngs)
