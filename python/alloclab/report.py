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
from alloclab import plots


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
    div = base if base else (1024.0 if metric == "max_rss_kb" else 1.0)
    values = {}
    for (a, adv), c in cells.items():
        st = c.get(metric)
        if st:
            values[(a, adv)] = {"median": st["median"] / div, "low": st["min"] / div, "high": st["max"] / div,
                                "n": st.get("n", 1)}
    plots.grouped_bars(ax, allocs, levels, values, ref=1.0 if base else None,
                       series_label=lambda adv: f"Adv_{adv}")
    ax.set_xticklabels(allocs)
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


def _size_kib(kib) -> str:
    """A size given in KiB, in KiB, MiB or GiB."""
    if kib is None:
        return "–"
    kib = float(kib)
    if kib >= 1024 * 1024:
        return f"{kib / 1024 / 1024:.1f} GiB"
    if kib >= 1024:
        return f"{kib / 1024:.1f} MiB"
    return f"{kib:.0f} KiB"


def _secs(x) -> str:
    if x is None:
        return "–"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.3f} s"


def _cell_name(c) -> str:
    return f"{c['allocator']} Adv_{c['adv']}"


def headline(summary: dict) -> str:
    """One sentence from the data: the fastest allocator on the clean heap and on the most
    littered one, by how much against the baseline, and whether that exceeds the noise."""
    cells = [c for c in summary["cells"] if c.get("program_s")]
    if not cells:
        return "No run succeeded: there is nothing to compare (see the warnings below)."
    base_key = summary["meta"].get("baseline")
    base = next((c for c in cells if f"{c['allocator']}/Adv_{c['adv']}" == base_key), None)
    out = []
    for adv in sorted({c["adv"] for c in cells}):
        row = [c for c in cells if c["adv"] == adv]
        if len(row) < 2 and not (base and base["adv"] != adv):
            continue
        best = min(row, key=lambda c: c["program_s"]["median"])
        ref = next((c for c in row if base and c["allocator"] == base["allocator"]), None)
        level = "On a clean heap" if adv == 0 else f"At Adv_{adv}"
        if ref is None or ref is best:
            out.append(f"{level}, {best['allocator']} is fastest "
                       f"({_secs(best['program_s']['median'])} median program time).")
            continue
        b, r = best["program_s"], ref["program_s"]
        gain = 100.0 * (1 - b["median"] / r["median"]) if r["median"] else 0.0
        noise = max(b["max"] - b["min"], r["max"] - r["min"])
        within = (r["median"] - b["median"]) < noise
        out.append(f"{level}, {best['allocator']} is fastest: {gain:.1f}% less program time than "
                   f"{ref['allocator']} ({_secs(b['median'])} vs {_secs(r['median'])}, medians of "
                   f"{b['n']} and {r['n']} runs)" + (", which is within the spread of the runs: not a clear "
                                                     "difference." if within else ", more than the spread of "
                                                     "the runs."))
    return " ".join(out) or "One cell only: nothing to compare."


def _results_table(summary: dict) -> list[str]:
    has_cache = any(c.get("cache") for c in summary["cells"])
    head = ["allocator", "littering", "ok / runs", "program time (median)", "min – max", "× baseline",
            "wall time (median)", "littering", "user CPU", "peak RSS", "× baseline"]
    if has_cache:
        head += ["D1 misses", "LL misses"]
    out = ["<div class='scroll'><table class='results'><thead><tr>"
           + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for c in summary["cells"]:
        p, w, lt, u, rss = (c.get(k) for k in ("program_s", "wall_s", "litter_s", "user_s", "max_rss_kb"))
        cls = " class='warn'" if c["ok"] < c["runs"] or c["ok"] == 0 else ""
        vals = [c["allocator"] + (" (stdout differs!)" if c.get("stdout_differs") else ""), f"Adv_{c['adv']}",
                f"{c['ok']} / {c['runs']}", _secs(p and p["median"]),
                f"{_secs(p['min'])} – {_secs(p['max'])}" if p else "–",
                compare_mod.format_ratio(c.get("program_s_ratio"), c.get("program_s_ratio_spread"), "–"),
                _secs(w and w["median"]), _secs(lt and lt["median"]), _secs(u and u["median"]),
                _size_kib(rss and rss["median"]),
                f"{c['max_rss_kb_ratio']:.3f}" if c.get("max_rss_kb_ratio") else "–"]
        if has_cache:
            ch = c.get("cache") or {}
            vals += [f"{ch['program_d1_misses']:,}" if ch.get("program_d1_misses") is not None else "–",
                     f"{ch['program_ll_misses']:,}" if ch.get("program_ll_misses") is not None else "–"]
        out.append(f"<tr{cls}>" + "".join(f"<td>{_e(v)}</td>" for v in vals) + "</tr>")
    out.append("</tbody></table></div>")
    return out


CAPTIONS = {
    "time.png": "Program time (wall time minus the time littering took before main), median of the runs of "
                "each cell divided by the baseline's median; whiskers: min and max of the {n} runs, divided "
                "the same way. Below the dashed line at 1 is faster than the baseline.",
    "wall.png": "Wall time with littering included, normalised to the baseline's median; whiskers: min and "
                "max of the {n} runs.",
    "user.png": "User CPU time (littering included), normalised to the baseline's median; whiskers: min and "
                "max of the {n} runs. Steadier than wall time on a shared machine.",
    "rss.png": "Peak resident set size in MiB, median of the runs; whiskers: min and max of the {n} runs.",
    "cache.png": "Data-cache (D1) and last-level (LL) misses per cell, measured once per cell, with the "
                 "littering's own misses subtracted.",
}


def write_html(summary: dict, outdir: str, pngs: list[str]) -> str:
    import shlex

    meta = summary["meta"]
    m = meta.get("machine", {})
    n = meta.get("repeat")
    warm = meta.get("warmup", 1)
    parts = ["<!doctype html><html><head><meta charset='utf-8'>"
             "<meta name='viewport' content='width=device-width, initial-scale=1'><title>alloclab compare</title>",
             "<style>body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;line-height:1.4}"
             "table{border-collapse:collapse;font-size:.92em}td,th{border:1px solid #bbb;padding:.2em .45em;"
             "text-align:right}th{background:#eee}td:first-child,td:nth-child(2),th{text-align:left}"
             ".warn{color:#a00}.scroll{max-width:100%;overflow-x:auto}img{max-width:100%;height:auto}"
             ".headline{font-size:1.15em;background:#f3f7ff;border-left:4px solid #36c;padding:.6em .8em}"
             "code{background:#f4f4f4;padding:.1em .3em;word-break:break-all}figure{margin:1.5em 0}"
             "figcaption{color:#333;font-size:.92em;max-width:60em}</style></head><body>",
             "<h1>alloclab compare</h1>",
             f"<p class='headline'>{_e(headline(summary))}</p>",
             f"<p>Command: <code>{_e(shlex.join(meta.get('command', [])))}</code></p>",
             f"<p>Started {_e(meta.get('started_utc'))}, finished {_e(meta.get('finished_utc'))}"
             + (" — <b class='warn'>interrupted; partial results</b>" if meta.get("interrupted") else "")
             + f". {_e(n)} measured run(s) per cell after {_e(warm)} warm-up run(s), "
               f"{_e(meta.get('order', 'round-robin'))}; littering seed {_e(meta.get('seed'))}"
             + (f"; each run limited to {meta['timeout_s']:g} s" if meta.get("timeout_s") else "") + ".</p>"]
    parts.append(f"<h2>Results</h2><p>Baseline: <b>{_e(meta.get('baseline'))}</b>. Times are medians over "
                 "the successful runs of each cell; min – max over the same runs; × baseline is the ratio of "
                 "medians, with the min – max of the ratios of runs of the same round in brackets.</p>")
    parts += _results_table(summary)
    from alloclab import results as results_mod
    warns = results_mod.warnings(summary)
    bad = [f"{_cell_name(c)}: " + ", ".join(f"{v} {k}" for k, v in c["statuses"].items() if k != "ok")
           for c in summary["cells"] if any(k != "ok" for k in c["statuses"])]
    if warns or bad:
        parts.append("<ul>" + "".join(f"<li class='warn'>{_e(w)}</li>" for w in bad + warns) + "</ul>")
    if summary.get("stdout_differs"):
        parts.append("<p class='warn'>Runs whose stdout differs from the most common output:</p><ul>")
        for d in summary["stdout_differs"]:
            parts.append(f"<li class='warn'>run {d['run']}: {_e(d['allocator'])} Adv_{d['adv']} "
                         f"repeat {d['repeat']}</li>")
        parts.append("</ul>")
    for p in pngs:
        with open(os.path.join(outdir, p), "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        cap = CAPTIONS.get(p, p).format(n=n)
        parts.append(f"<figure><img alt='{_e(cap)}' src='data:image/png;base64,{data}'>"
                     f"<figcaption>{_e(cap)}</figcaption></figure>")
    if not pngs:
        parts.append("<p class='warn'>No plots: matplotlib is not available, or no run succeeded.</p>")
    parts.append("<h2>Machine</h2><ul>")
    for k in ("cpu", "cpus", "memory_kb", "kernel", "machine", "hostname", "python"):
        if k in m:
            v = _size_kib(m[k]) if k == "memory_kb" else m[k]
            parts.append(f"<li>{_e('memory' if k == 'memory_kb' else k)}: {_e(v)}</li>")
    parts.append("</ul><h2>Allocators</h2><div class='scroll'><table><tr><th>name</th><th>version</th>"
                 "<th>library</th></tr>")
    for a in meta.get("allocators", []):
        parts.append(f"<tr><td>{_e(a['name'])}</td><td>{_e(a['version'])}</td>"
                     f"<td>{_e(a['path'] or '(system allocator)')}</td></tr>")
    parts.append("</table></div><h2>Littering levels (paper Table 3)</h2><table><tr><th>level</th>"
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
    parts.append("<p>Raw data: <a href='results.csv'>results.csv</a> (one row per measured run), "
                 "<a href='summary.json'>summary.json</a>"
                 + (", <a href='profile.json'>profile.json</a>" if meta.get("profile") else "")
                 + " — described in docs/formats.md.</p>")
    parts.append("</body></html>\n")
    path = os.path.join(outdir, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    return path


def write_report(summary: dict, outdir: str) -> str:
    pngs = make_plots(summary, outdir)
    return write_html(summary, outdir, pngs)
