"""The study's HTML report: the papers' scorecard first, then the evidence.

It reads only the analysis dict that alloclab.study writes to
DIR/findings.json, so `alloclab report DIR` (study.rerender) can draw it again
without running anything. Plots show medians with min-max whiskers over the
repeats and say n; a value that was not measured is marked "n/a" on the
axis, never drawn as a zero bar.

API::

    write_report(analysis, outdir) -> str   # DIR/report.html
    bar_figure(groups, series, values, title, ylabel, ref=1.0) -> str | None   # base64 PNG
"""

from __future__ import annotations

import base64
import html
import json
import os

from alloclab import plots

from alloclab.verdicts import show

VERDICT_COLOURS = {"confirmed": "#d8f0d8", "stronger": "#dde8f8", "weaker": "#fbefd0",
                   "refuted": "#f8d6d6", "inconclusive": "#eeeeee"}


def _e(x) -> str:
    return html.escape(str(x))


def _f(x, fmt="{:.2f}") -> str:
    return fmt.format(x) if isinstance(x, (int, float)) else "–"


def _spread(x: dict, fmt="{:.2f}") -> str:
    """'median [low–high] n=N' of a row with median/low/high/n."""
    if not x or x.get("median") is None:
        return "–"
    if x.get("n", 0) > 1:
        return f"{fmt.format(x['median'])} [{fmt.format(x['low'])}–{fmt.format(x['high'])}] n={x['n']}"
    return f"{fmt.format(x['median'])} (n=1)"


def _mib(kb) -> str:
    return f"{kb / 1024:.1f} MiB" if isinstance(kb, (int, float)) else "–"


def bar_figure(groups, series, values, title, ylabel, ref=1.0):
    """groups on the x axis, one bar per series; values[(group, series)] = row
    with median/low/high/n. Returns a base64 PNG, or None without matplotlib."""
    plt = plots.pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(max(6.5, 0.32 * len(groups) * max(1, len(series)) + 2.5), 3.8))
    ns = plots.grouped_bars(ax, groups, series, values, ref=ref)
    ax.set_xticklabels(groups, rotation=25, ha="right", fontsize=7)
    ax.set_ylabel(ylabel)
    nn = ", ".join(str(n) for n in sorted(ns)) or "0"
    ax.set_title(f"{title}\n(bars: median; whiskers: min–max over n = {nn} runs)", fontsize=9)
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=7, ncol=min(6, len(series)))
    data = plots.png_base64(fig)
    plt.close(fig)
    return data


def _img(data, caption) -> str:
    if not data:
        return "<p class='note'>(plot not drawn: matplotlib is not installed)</p>"
    return (f"<figure><img alt='{_e(caption)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _table(headers, rows, cls="") -> str:
    h = "".join(f"<th>{_e(x)}</th>" for x in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table class='{cls}'><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def _verdict_table(vs) -> str:
    rows = []
    for v in vs:
        colour = VERDICT_COLOURS.get(v["verdict"], "#fff")
        if v["n"]:
            unit = v.get("unit", "%")
            meas = show(v["measured"], unit)
            spread = f"{show(v['low'], unit)} – {show(v['high'], unit)}"
        else:
            meas, spread = "–", "–"
        notes = " ".join(x for x in (v.get("note"), v.get("weight_note")) if x)
        rows.append([_e(v["paper"]), _e(v["claim"]), _e(v["paper_value"]), meas, spread, str(v["n"]),
                     f"<b style='background:{colour};padding:1px 4px'>{_e(v['verdict'])}</b>",
                     f"<span class='what'>{_e(v.get('what', ''))}. {_e(v['rule'])}"
                     + (f" <i>{_e(notes)}</i>" if notes else "") + "</span>"])
    return _table(["paper", "claim", "paper's value", "measured", "spread", "n", "verdict",
                   "how it was measured and judged"], rows, cls="verdicts")


def _headline(vs) -> str:
    counts = {}
    for v in vs:
        counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
    order = ("confirmed", "stronger", "weaker", "refuted", "inconclusive")
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    return (f"Of {len(vs)} claims of the three papers tested on this machine: " + ", ".join(parts) + "."
            if vs else "No claim could be tested: no run succeeded.")


def write_report(analysis: dict, outdir: str) -> str:
    t = analysis["tables"]
    meta = analysis.get("meta", {})
    allocs = meta.get("allocators", [])
    vs = analysis.get("verdicts", [])
    sec = []
    sec.append(f"<p class='headline'>{_e(_headline(vs))}</p>"
               "<h2 id='verdicts'>The papers' claims</h2>"
               "<p>Each row is computed from this run. The spread is min–max over the repeats (each repeat "
               "littered with its own seed, so it samples heap layouts); deterministic instruments give one "
               "exact value. A spread that straddles the paper's threshold is inconclusive. Times for the 2026 "
               "claims are measured inside the process from the end of littering to exit, as the paper's "
               "litterer does; the 2002 and 2005 claims use the wall time of clean runs.</p>"
               + _verdict_table(vs))

    rq1 = t.get("rq1", [])
    if rq1:
        groups = sorted({f"{x['workload']} Adv_{x['adv']}" for x in rq1})
        vals = {(f"{x['workload']} Adv_{x['adv']}", x["allocator"]): x for x in rq1}
        fig = bar_figure(groups, allocs, vals, "RQ1: per-class allocator time / naive time", "custom / malloc")
        sec.append("<h2 id='rq1'>RQ1: per-class allocators against naive allocation</h2>"
                   "<p>Time of the custom variant over the naive variant on the same allocator and heap, "
                   "paired by repeat (same littering seed); below 1 the custom allocator wins. CPython's "
                   "pymalloc and SQLite's lookaside are the real programs' own per-class allocators.</p>"
                   + _img(fig, "RQ1: custom / naive time per workload and littering level, one bar per allocator")
                   + _table(["workload", "allocator", "littering", "custom / naive"],
                            [[_e(x["workload"]), _e(x["allocator"]), f"Adv_{x['adv']}", _spread(x)] for x in rq1]))
    rq2 = t.get("rq2", [])
    if rq2:
        core = [x for x in rq2 if x["variant"] in ("custom", "reap")]
        groups = sorted({f"{x['workload']} {x['variant']}" for x in core})
        vals = {(f"{x['workload']} {x['variant']}", x["allocator"]): x for x in core}
        fig = bar_figure(groups, allocs, vals, "RQ2: region variant time / naive time (clean heap)",
                         "variant / malloc")
        sec.append("<h2 id='rq2'>RQ2: regions against general-purpose allocation (clean heap)</h2>"
                   "<p>The naive variant is built as the 2026 paper's Table 4 builds it (regions keep their "
                   "chunk list with one object per chunk; the parser calls malloc directly; the mempool keeps "
                   "its live-object set).</p>"
                   + _img(fig, "RQ2: custom and reap time over naive time per workload, one bar per allocator")
                   + _table(["workload", "variant", "allocator", "time / naive"],
                            [[_e(x["workload"]), _e(x["variant"]), _e(x["allocator"]), _spread(x)] for x in rq2]))
    rq3 = t.get("rq3", [])
    if rq3:
        parts = []
        advs = sorted({x["adv"] for x in rq3})
        groups = sorted({f"{x['workload']} {x['variant']}" for x in rq3})
        for a in allocs:
            vals = {(f"{x['workload']} {x['variant']}", f"Adv_{x['adv']}"): x for x in rq3 if x["allocator"] == a}
            if vals:
                parts.append(_img(bar_figure(groups, [f"Adv_{v}" for v in advs], vals,
                                             f"RQ3 on {a}: time under littering / own clean time", "slowdown"),
                                  f"RQ3 on {a}: each region and hybrid variant's time under littering over its "
                                  f"own clean time"))
        sec.append("<h2 id='rq3'>RQ3: region and hybrid allocators on littered heaps</h2>"
                   "<p>Every variant of a program is littered with that program's one profile (taken from its "
                   "naive variant), so the region variants meet the same fragmented heap as naive allocation."
                   " Partly-regioned programs are marked.</p>" + "".join(parts)
                   + _table(["workload", "variant", "allocator", "littering", "slowdown"],
                            [[_e(x["workload"] + (" (partly regioned)" if x.get("partial") else "")),
                              _e(x["variant"]), _e(x["allocator"]), f"Adv_{x['adv']}", _spread(x)] for x in rq3]))
    like = t.get("like", [])
    emu = t.get("emulator", [])
    fp = t.get("server_footprint", {})
    sec.append("<h2 id='reaps'>Reaps against allocators of like semantics (2002, Figure 6)</h2>"
               "<p>Clean heap, glibc underneath: each variant's wall time over the reap variant's, and its peak "
               "RSS. talloc, APR pools and std::pmr carry the same region calls the reap variant makes.</p>"
               + (_table(["workload", "variant", "time / reap", "peak RSS", "RSS / reap"],
                         [[_e(x["workload"]), _e(x["variant"]), _spread(x), _mib(x.get("rss_kb")),
                           _f(x.get("rss_over_reap"))] for x in like]) if like else "<p>Not measured.</p>")
               + ("<p>The 2002 region emulator's bookkeeping (an out-of-band record of every object) against "
                  "the Table 4 naive variant, glibc:</p>"
                  + _table(["workload", "emulator / naive time"], [[_e(x["workload"]), _spread(x)] for x in emu])
                  if emu else "")
               + ("<p>Server peak footprint by variant (the workload's own accounting):</p>"
                  + _table(["variant", "peak footprint"], [[_e(v), _mib(b / 1024)] for v, b in sorted(fp.items())])
                  if fp else ""))
    gp = t.get("general", [])
    if gp:
        groups = sorted({x["program"] for x in gp})
        figs = []
        for adv in sorted({x["adv"] for x in gp}):
            vals = {(x["program"], x["allocator"]): x for x in gp if x["adv"] == adv}
            figs.append(_img(bar_figure(groups, allocs, vals, f"Naive variants and real programs, Adv_{adv}: "
                                        "time / glibc", "time / glibc"),
                             f"General-purpose allocators at Adv_{adv}: program time over glibc's"))
        sec.append("<h2 id='general'>General-purpose allocators</h2>" + "".join(figs)
                   + _table(["program", "allocator", "littering", "time / glibc", "peak RSS", "RSS / glibc"],
                            [[_e(x["program"]), _e(x["allocator"]), f"Adv_{x['adv']}", _spread(x),
                              _mib(x.get("rss_kb")), _f(x.get("rss_ratio"))] for x in gp]))
    cache = t.get("cache", [])
    if cache:
        geo = cache[0].get("geometry") or {}
        sec.append("<h2 id='locality'>Locality (the Vam paper's claim)</h2>"
                   f"<p>cachegrind, clean heap, geometry {_e(json.dumps(geo))}, ASLR off where possible.</p>"
                   + _table(["program", "allocator", "D1 misses", "LL misses"],
                            [[_e(x["program"]), _e(x["allocator"]), f"{x['d1_misses']:,}" if x.get("d1_misses")
                              is not None else "–", f"{x['ll_misses']:,}" if x.get("ll_misses") is not None
                              else "–"] for x in cache]))
    mem = t.get("memory") or {}
    if mem:
        drag_rows = [[_e(d["workload"]), "regions (emulated)" if d["variant"] in ("malloc", "emulator") else "reaps",
                      _e(d.get("objects")), _f(d.get("total_drag")), _mib((d.get("peak_bytes_actual") or 0) / 1024),
                      _mib((d.get("peak_bytes_immediate") or 0) / 1024)] for d in mem.get("drag", [])]
        frag_rows = [[_e(x["program"]), _e(x["allocator"]), _e(x["adv"]), _e(x["max_pages_in_use"]),
                      _e(x["max_live_pages"]), _f(x["fragmentation"])] for x in mem.get("frag", [])]
        pages_img = ""
        png = mem.get("pages_png")
        if png and os.path.exists(png):
            with open(png, "rb") as f:
                pages_img = _img(base64.b64encode(f.read()).decode(),
                                 "gp_mix: simulated LRU page misses for every memory size (Vam Figure 8)")
        sec.append("<h2 id='memory'>Memory over time: drag, fragmentation and pages</h2>"
                   f"<p>Workloads at scale {_e(mem.get('scale'))}, every load and store instrumented. Drag: the "
                   "area under the heap curve over the area with each object freed right after its last use "
                   "(1.0 is ideal). At this size a constant start-up object (libstdc++'s emergency exception "
                   "pool) weighs in the drag of every C++ workload.</p>"
                   + (_table(["workload", "variant", "objects", "total drag", "peak actual", "peak if freed at "
                              "last use"], drag_rows) if drag_rows else "")
                   + ("<p>Fragmentation: the most heap pages in use over the most live data in pages.</p>"
                      + _table(["program", "allocator", "littering", "max pages in use", "max live pages",
                                "fragmentation"], frag_rows) if frag_rows else "") + pages_img)
    st = t.get("alloc_stats", {})
    w8 = t.get("weights", {})
    if st or w8:
        rows = []
        for name in sorted(set(st) | set(w8)):
            s = st.get(name, {})
            w = w8.get(name, {})
            share = w.get("memops_share")
            paper = w.get("paper_share")
            band = w.get("within_band")
            rows.append([_e(name), _e(s.get("allocations", "–")), _e(s.get("max_live", "–")),
                         _f(s.get("mean_size"), "{:.1f}"),
                         _f(share * 100 if share is not None else None, "{:.1f}%"),
                         _e(w.get("paper_program") or "–"),
                         _f(paper * 100 if paper is not None else None, "{:.1f}%"),
                         {True: "yes", False: "<b>no</b>", None: "–"}[band]])
        sec.append("<h2 id='stats'>Allocation statistics and weights (the 2002 paper's Table 3)</h2>"
                   "<p>Objects, max live and mean size from each program's profile (its naive variant); the "
                   "memory-operations share is callgrind's count of instructions inside the allocator over the "
                   f"program's, on glibc, at scale {_e(next(iter(w8.values()), {}).get('scale', '?'))}, beside the "
                   "paper program's share. A verdict drawn from a workload outside "
                   "a factor of 1.5 of its program says so.</p>"
                   + _table(["program", "objects", "max live objects", "mean size", "memory ops share",
                             "paper program", "its share", "within 1.5x"], rows))
    notes = "".join(f"<li>{_e(n)}</li>" for n in meta.get("notes", []))
    alloc_rows = [[_e(a["name"]), _e(a.get("version")), _e(a.get("path") or "(the C library)")]
                  for a in meta.get("allocator_info", [])]
    cmdline = "alloclab study" + {"quick": " --quick", "full": " --full"}.get(meta.get("mode"), "")
    sec.append("<h2 id='setup'>Setup</h2>" + _table(["allocator", "version", "path"], alloc_rows)
               + f"<p>Command: <code>{_e(cmdline)}</code>. Mode {_e(meta.get('mode'))}; littering "
                 f"{_e(', '.join('Adv_%d' % a for a in meta.get('advs', [])))}; {_e(meta.get('repeat'))} run(s) per "
                 f"cell, seed {_e(meta.get('seed'))}; workload scale {_e(meta.get('scale'))}; "
                 f"{len(meta.get('programs', []))} programs; study time {_f(meta.get('elapsed_s'), '{:.0f}')} s. "
                 f"{_e(meta.get('time_measure', ''))}. Machine: {_e(json.dumps(meta.get('machine', {})))}</p>"
               + f"<ul>{notes}</ul><p>Raw data: <a href='results.csv'>results.csv</a>, "
                 "<a href='verdicts.json'>verdicts.json</a>, <a href='findings.json'>findings.json</a>.</p>")
    style = ("body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em;color:#222}"
             "table{border-collapse:collapse;margin:0.5em 0;font-size:0.82em}"
             "td,th{border:1px solid #bbb;padding:2px 6px;text-align:left;vertical-align:top}"
             "th{background:#eee}table.verdicts td:nth-child(4),table.verdicts td:nth-child(5){white-space:nowrap}"
             ".what{color:#555;font-size:0.9em}.headline{font-size:1.15em;font-weight:bold}"
             "img{max-width:100%;display:block;margin:0.5em 0}figcaption{font-size:0.85em;color:#444}"
             ".note{color:#777}")
    doc = (f"<!doctype html><html><head><meta charset='utf-8'><title>alloclab study</title>"
           f"<style>{style}</style></head><body><h1>alloclab study: the papers' claims on this machine</h1>"
           f"{''.join(sec)}</body></html>")
    path = os.path.join(outdir, "report.html")
    os.makedirs(outdir, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)
    return path

