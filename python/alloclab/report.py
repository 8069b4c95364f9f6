"""Plots and the HTML report of a comparison, and the report layer both reports use.

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

The report layer: every HTML page of the lab is a Jinja2 template in
templates/ (autoescaped) that extends base.html.j2 and draws its tables,
figures and verdicts with macros.html.j2; Python only computes a context
dict. compare's page is compare.html.j2, the study's (study_report.py) is
study.html.j2.

API::

    make_plots(summary, outdir) -> list[str]   # PNG file names written ([] without matplotlib)
    context(summary, outdir, pngs) -> dict     # what compare.html.j2 shows
    write_html(summary, outdir, pngs) -> str   # path of report.html
    write_report(summary, outdir) -> str       # both
    render(template, context) -> str           # the layer: any page of templates/
    write_page(template, context, outdir, name="report.html") -> str
    command_line(argv) -> str                  # shell-quoted, to copy and run
    machine_facts(machine) -> list[(name, value)]
"""

from __future__ import annotations

import base64
import os

from alloclab import compare as compare_mod
from alloclab.present import plots
from alloclab import results as results_mod


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
        d = results_mod.paired_difference(best, ref)
        out.append(f"{level}, {best['allocator']} is fastest: {gain:.1f}% less program time than "
                   f"{ref['allocator']} ({_secs(b['median'])} vs {_secs(r['median'])}, medians of "
                   f"{b['n']} and {r['n']} runs); {d['why']}: "
                   + ("a clear difference." if d["clear"] else "not a clear difference."))
    return " ".join(out) or "One cell only: nothing to compare."


def _results_table(summary: dict) -> dict:
    has_cache = any(c.get("cache") for c in summary["cells"])
    head = ["allocator", "littering", "ok / runs", "program time (median)", "min – max", "× baseline",
            "wall time (median)", "littering", "user CPU", "peak RSS", "× baseline"]
    if has_cache:
        head += ["D1 misses", "LL misses"]
    rows = []
    for c in summary["cells"]:
        p, w, lt, u, rss = (c.get(k) for k in ("program_s", "wall_s", "litter_s", "user_s", "max_rss_kb"))
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
        rows.append({"cells": vals, "cls": "warn" if c["ok"] < c["runs"] or c["ok"] == 0 else ""})
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
    "cache.png": "Data-cache (D1) and last-level (LL) misses per cell, measured once per cell, with the "
                 "littering's own misses subtracted.",
}


# ------------------------------------------------------------ the report layer
# Both HTML reports (this one and study_report's) are rendered here, from the
# Jinja2 templates in templates/: base.html.j2 (head, style, header with the
# headline and the command, footer), macros.html.j2 (tables, figures with
# their captions, the verdict table, a section's blocks) and one page each.

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "present", "templates")
_ENV = None


def environment():
    """The Jinja2 environment of the report templates (autoescaped)."""
    global _ENV
    if _ENV is None:
        try:
            import jinja2
        except ImportError as e:
            from alloclab import LabError
            raise LabError(f"cannot write the report: jinja2 cannot be imported ({e}); it is a declared "
                           "dependency (pip install jinja2)") from None
        _ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                  trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return _ENV


def render(template: str, context: dict) -> str:
    """The page `template` (a file in templates/) rendered with `context`."""
    return environment().get_template(template).render(**context)


def write_page(template: str, context: dict, outdir: str, name: str = "report.html") -> str:
    """Render `template` to DIR/name; returns the path."""
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)
    text = render(template, context)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def command_line(argv) -> str:
    """A command as a shell would take it back (each word quoted as needed)."""
    import shlex
    return shlex.join(str(a) for a in argv or [])


def machine_facts(m: dict) -> list[tuple[str, str]]:
    """(name, value) of what compare.machine_info() recorded, memory in MiB/GiB."""
    return [("memory" if k == "memory_kb" else k, _size_kib(m[k]) if k == "memory_kb" else m[k])
            for k in ("cpu", "cpus", "memory_kb", "kernel", "machine", "hostname", "python") if k in m]


def context(summary: dict, outdir: str, pngs: list[str]) -> dict:
    """What compare.html.j2 shows, computed from a summary."""
    from alloclab import results as results_mod

    meta = summary["meta"]
    m = meta.get("machine", {})
    n = meta.get("repeat")
    figures = []
    for p in pngs:
        with open(os.path.join(outdir, p), "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        figures.append({"data": data, "caption": CAPTIONS.get(p, p).format(n=n)})
    bad = [f"{_cell_name(c)}: " + ", ".join(f"{v} {k}" for k, v in c["statuses"].items() if k != "ok")
           for c in summary["cells"] if any(k != "ok" for k in c["statuses"])]
    machine = machine_facts(m)
    allocs = [[a["name"], a["version"], a["path"] or "(system allocator)"] for a in meta.get("allocators", [])]
    levels = [[name, f"{s['multiplier']:g}", "–" if not s["multiplier"] else f"{s['occupancy']:g}"]
              for name, s in meta.get("advs", {}).items()]
    return {
        "title": "alloclab compare", "heading": "alloclab compare", "headline": headline(summary),
        "command": command_line(meta.get("command", [])),
        "started": meta.get("started_utc"), "finished": meta.get("finished_utc"),
        "interrupted": meta.get("interrupted"), "runs": n, "warmup": meta.get("warmup", 1),
        "order": meta.get("order", "round-robin"), "seed": meta.get("seed"),
        "timeout_s": f"{meta['timeout_s']:g}" if meta.get("timeout_s") else None,
        "baseline": meta.get("baseline"), "results": _results_table(summary),
        "warnings": bad + results_mod.warnings(summary),
        "stdout_differs": [f"run {d['run']}: {d['allocator']} Adv_{d['adv']} repeat {d['repeat']}"
                           for d in summary.get("stdout_differs") or []],
        "figures": figures, "machine": machine,
        "allocators": {"head": ["name", "version", "library"], "rows": allocs, "scroll": True},
        "levels": {"head": ["level", "multiplier", "occupancy"], "rows": levels},
        "cache_method": meta.get("cache_method", "off"), "geometry": meta.get("cache_geometry"),
        "profile": meta.get("profile"),
    }


def write_html(summary: dict, outdir: str, pngs: list[str]) -> str:
    return write_page("compare.html.j2", context(summary, outdir, pngs), outdir)


def write_report(summary: dict, outdir: str) -> str:
    pngs = make_plots(summary, outdir)
    return write_html(summary, outdir, pngs)
