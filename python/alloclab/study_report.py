"""The study's HTML report: the papers' scorecard first, then the evidence.

It reads only the analysis dict that alloclab.study writes to
DIR/findings.json, so `alloclab report DIR` (study.rerender) can draw it again
without running anything. Plots show medians with min-max whiskers over the
repeats and say n; a value that was not measured is marked "n/a" on the
axis, never drawn as a zero bar. When DIR/ablation/ablation.json exists
(`alloclab ablation`), an Ablation section shows it: one table per switch.

The page is templates/study.html.j2, rendered by the report layer in
report.py; this module only computes its context: the header (headline,
command), a list of sections, each a list of blocks (paragraphs, tables,
figures, the verdict table), and the setup in the footer.

API::

    write_report(analysis, outdir) -> str   # DIR/report.html
    context(analysis, outdir) -> dict       # what study.html.j2 shows
    ablation_section(studydir) -> dict | None
    bar_chart(groups, series, values, title, ylabel, ref=1.0) -> (str | None, str | None)   # base64 PNG, n
    bar_figure(groups, series, values, title, ylabel, ref=1.0) -> str | None   # base64 PNG
"""

from __future__ import annotations

import base64
import json
import os

from alloclab.present import plots
from alloclab import report, verdicts
from alloclab.verdicts import show

ABLATION_FORMAT = 1   # the format_version of ablation/ablation.json this report renders


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


def bar_chart(groups, series, values, title, ylabel, ref=1.0):
    """groups on the x axis, one bar per series; values[(group, series)] = row
    with median/low/high/n. Returns (base64 PNG or None without matplotlib,
    the n of the bars drawn as text, e.g. "3" or "2, 3")."""
    plt = plots.pyplot()
    if plt is None:
        return None, None
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
    return data, nn


def bar_figure(groups, series, values, title, ylabel, ref=1.0):
    """bar_chart's PNG alone (base64), or None without matplotlib."""
    return bar_chart(groups, series, values, title, ylabel, ref)[0]


# A section is {"id", "title", "blocks"}; a block is a mapping with a kind that
# macros.html.j2's blocks() draws: p, h3, table, figure, verdicts, list, code.

def _p(text, cls="") -> dict:
    return {"kind": "p", "text": text, "cls": cls}


def _tab(head, rows, cls="") -> dict:
    return {"kind": "table", "table": {"head": head, "rows": rows, "cls": cls, "scroll": True}}


def _fig(chart, caption) -> dict:
    data, n = chart
    return {"kind": "figure", "figure": {"data": data, "caption": caption, "n": n}}


def _verdict_rows(vs) -> list[dict]:
    rows = []
    for v in vs:
        if v["n"]:
            unit = v.get("unit", "%")
            meas = show(v["measured"], unit)
            spread = f"{show(v['low'], unit)} – {show(v['high'], unit)}"
        else:
            meas, spread = "–", "–"
        rows.append({"paper": v["paper"], "claim": v["claim"], "paper_value": v["paper_value"], "measured": meas,
                     "spread": spread, "n": v["n"], "verdict": v["verdict"], "what": v.get("what", ""),
                     "rule": (v["rule"].rstrip(".") + f". Interval: {v['spread']}." if v["n"] and v.get("spread")
                              else v["rule"]),
                     "notes": " ".join(x for x in (v.get("note"), v.get("weight_note")) if x)})
    return rows


def _command(meta: dict) -> str:
    """The study's command as far as the findings tell it: its mode, and -r N when the runs per
    cell were not the mode's."""
    from alloclab.study import MODES
    mode = meta.get("mode")
    cmd = "alloclab study" + {"quick": " --quick", "full": " --full"}.get(mode, "")
    repeat = meta.get("repeat")
    if mode in MODES and repeat is not None and repeat != MODES[mode]["repeat"]:
        cmd += f" -r {repeat}"
    return cmd


def _headline(vs) -> str:
    counts = {}
    for v in vs:
        counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
    order = ("confirmed", "stronger", "weaker", "refuted", "inconclusive")
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    return (f"Of {len(vs)} claims of the three papers tested on this machine: " + ", ".join(parts) + "."
            if vs else "No claim could be tested: no run succeeded.")


def _ratio(x, fmt="{:.2f}") -> str:
    return fmt.format(x) if isinstance(x, (int, float)) else "n/a"


def _paired(t: dict) -> str:
    """An ablation setting's paired verdict: 0.982 (95% 0.913–1.055), level."""
    r = {k: _ratio(t.get(k), "{:.3f}") for k in ("ratio", "low", "high")}
    return f"{r['ratio']} (95% {r['low']}–{r['high']}), {t.get('verdict')}"


def ablation_section(studydir: str) -> dict | None:
    """The section of STUDYDIR/ablation/ablation.json (written by `alloclab ablation`), or
    None when there is none: one table per switch, programs down, the switch's values across."""
    path = os.path.join(studydir, "ablation", "ablation.json")
    if not os.path.exists(path):
        return None
    sec = {"id": "ablation", "title": "Ablation: vam's switches one at a time", "blocks": []}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sec["blocks"].append(_p(f"ablation/ablation.json cannot be read: {e}", "warn"))
        return sec
    if not isinstance(data, dict) or data.get("kind") != "ablation" or data.get("format_version") != ABLATION_FORMAT:
        v = data.get("format_version") if isinstance(data, dict) else None
        sec["blocks"].append(_p(f"ablation/ablation.json has format_version {v}; this alloclab renders "
                                f"{ABLATION_FORMAT} (run the ablation again).", "warn"))
        return sec
    rows = data.get("rows") or []
    ns = sorted({r.get("n") for r in rows if r.get("n")})
    b = sec["blocks"]
    b.append(_p("Each switch of vam is set to each of its values in turn, the others left at their defaults. A "
                "cell is the program's time with that value over its time with the default: the median, with "
                "the min–max in brackets, over n = " + (", ".join(str(n) for n in ns) or "0") + " runs; then "
                "its D1 misses, LL misses and peak RSS over the default's (n/a: not measured). Below 1 is "
                "better than the default. Bold: the value that wins for that program."))
    if data.get("command"):
        b.append({"kind": "code", "label": "Command:", "text": report.command_line(data["command"])})
    if data.get("geometry"):
        b.append(_p(f"Cache geometry: {data['geometry']}."))
    c = data.get("control")
    if c:
        b.append(_p(f"A/A control: the default setting run again in every round, judged like an alternative: "
                    f"{_paired(c)}. That is what the method reports when nothing changed; a setting is called "
                    "faster or slower only when its interval, paired by round over the programs, excludes 1."))
    paired = {(sw.get("switch"), v.get("value")): v.get("time_paired") for sw in data.get("summary") or []
              for v in sw.get("values") or []}
    switches = list(data.get("switches") or [])
    known = {s.get("name") for s in switches}
    for name in dict.fromkeys(r.get("switch") for r in rows):
        if name not in known:
            switches.append({"name": name, "default": None, "values": []})
    for sw in switches:
        name = sw.get("name")
        mine = [r for r in rows if r.get("switch") == name]
        values = list(dict.fromkeys(list(sw.get("values") or []) + [r.get("value") for r in mine]))
        default = sw.get("default")
        b.append({"kind": "h3", "id": f"ablation-{name}", "text": f"{name} (default {default})"})
        verdicts = [f"{v} {_paired(paired[(name, v)])}" for v in values if paired.get((name, v))]
        if verdicts:
            b.append(_p("Across the programs, paired by round: " + "; ".join(verdicts) + "."))
        cells = {(r.get("program"), r.get("value")): r for r in mine}
        table_rows = []
        for prog in dict.fromkeys(r.get("program") for r in mine):
            row = [prog]
            for val in values:
                r = cells.get((prog, val))
                if r is None:
                    row.append("n/a")
                    continue
                time = _ratio(r.get("time_ratio"))
                if r.get("time_lo") is not None and r.get("time_hi") is not None:
                    time += f" [{_ratio(r['time_lo'])}–{_ratio(r['time_hi'])}]"
                row.append({"lines": [f"time {time} n={r.get('n')}",
                                      f"D1 {_ratio(r.get('d1_ratio'))} · LL {_ratio(r.get('ll_ratio'))} · "
                                      f"RSS {_ratio(r.get('rss_ratio'))}"],
                            "b": bool(r.get("winner")), "cls": "winner" if r.get("winner") else ""})
            table_rows.append(row)
        head = ["program"] + [f"{v} (default)" if v == default else str(v) for v in values]
        b.append(_tab(head, table_rows, "ablation") if table_rows else _p("No runs.", "note"))
    if data.get("notes"):
        b.append({"kind": "list", "entries": [str(n) for n in data["notes"]], "cls": "note"})
    return sec


def context(analysis: dict, outdir: str) -> dict:
    """What study.html.j2 shows, computed from the analysis (findings.json) and, when
    present, OUTDIR/ablation/ablation.json."""
    t = analysis["tables"]
    meta = analysis.get("meta", {})
    allocs = meta.get("allocators", [])
    vs = analysis.get("verdicts", [])
    sections = [{"id": "verdicts", "title": "The papers' claims", "blocks": [
        _p("Each row is computed from this run. A measurement is one value per repeat (each repeat "
           f"littered with its own seed, so it samples heap layouts); its spread is the interval that holds "
           f"the values' median with probability at least {verdicts.LEVEL:.2f} whatever their distribution "
           "(min–max of three to five repeats, the second from each end of six to eight, narrower with "
           "more); deterministic instruments give one exact value. A spread that straddles the paper's "
           "threshold is inconclusive, and so is a timed claim with fewer than three repeats. Times for the 2026 "
           "claims are measured inside the process from the end of littering to exit, as the paper's "
           "litterer does; the 2002 and 2005 claims use the wall time of clean runs."),
        {"kind": "verdicts", "rows": _verdict_rows(vs)}]}]

    rq1 = t.get("rq1", [])
    if rq1:
        groups = sorted({f"{x['workload']} Adv_{x['adv']}" for x in rq1})
        vals = {(f"{x['workload']} Adv_{x['adv']}", x["allocator"]): x for x in rq1}
        sections.append({"id": "rq1", "title": "RQ1: per-class allocators against naive allocation", "blocks": [
            _p("Time of the custom variant over the naive variant on the same allocator and heap, paired by "
               "repeat (same littering seed); below 1 the custom allocator wins. CPython's pymalloc and "
               "SQLite's lookaside are the real programs' own per-class allocators."),
            _fig(bar_chart(groups, allocs, vals, "RQ1: per-class allocator time / naive time", "custom / malloc"),
                 "RQ1: custom / naive time per workload and littering level, one bar per allocator."),
            _tab(["workload", "allocator", "littering", "custom / naive"],
                 [[x["workload"], x["allocator"], f"Adv_{x['adv']}", _spread(x)] for x in rq1])]})
    rq2 = t.get("rq2", [])
    if rq2:
        core = [x for x in rq2 if x["variant"] in ("custom", "reap")]
        groups = sorted({f"{x['workload']} {x['variant']}" for x in core})
        vals = {(f"{x['workload']} {x['variant']}", x["allocator"]): x for x in core}
        sections.append({"id": "rq2", "title": "RQ2: regions against general-purpose allocation (clean heap)",
                         "blocks": [
            _p("The naive variant is built as the 2026 paper's Table 4 builds it (regions keep their chunk list "
               "with one object per chunk; the parser calls malloc directly; the mempool keeps its live-object "
               "set)."),
            _fig(bar_chart(groups, allocs, vals, "RQ2: region variant time / naive time (clean heap)",
                           "variant / malloc"),
                 "RQ2: custom and reap time over naive time per workload, one bar per allocator."),
            _tab(["workload", "variant", "allocator", "time / naive"],
                 [[x["workload"], x["variant"], x["allocator"], _spread(x)] for x in rq2])]})
    rq3 = t.get("rq3", [])
    if rq3:
        blocks = [_p("Every variant of a program is littered with that program's one profile (taken from its "
                     "naive variant), so the region variants meet the same fragmented heap as naive allocation. "
                     "Partly-regioned programs are marked.")]
        advs = sorted({x["adv"] for x in rq3})
        groups = sorted({f"{x['workload']} {x['variant']}" for x in rq3})
        for a in allocs:
            vals = {(f"{x['workload']} {x['variant']}", f"Adv_{x['adv']}"): x for x in rq3 if x["allocator"] == a}
            if vals:
                blocks.append(_fig(bar_chart(groups, [f"Adv_{v}" for v in advs], vals,
                                             f"RQ3 on {a}: time under littering / own clean time", "slowdown"),
                                   f"RQ3 on {a}: each region and hybrid variant's time under littering over its "
                                   f"own clean time."))
        blocks.append(_tab(["workload", "variant", "allocator", "littering", "slowdown"],
                           [[x["workload"] + (" (partly regioned)" if x.get("partial") else ""), x["variant"],
                             x["allocator"], f"Adv_{x['adv']}", _spread(x)] for x in rq3]))
        sections.append({"id": "rq3", "title": "RQ3: region and hybrid allocators on littered heaps",
                         "blocks": blocks})
    like = t.get("like", [])
    emu = t.get("emulator", [])
    fp = t.get("server_footprint", {})
    blocks = [_p("Clean heap, glibc underneath: each variant's wall time over the reap variant's, and its peak "
                 "RSS. talloc, APR pools and std::pmr carry the same region calls the reap variant makes.")]
    blocks.append(_tab(["workload", "variant", "time / reap", "peak RSS", "RSS / reap"],
                       [[x["workload"], x["variant"], _spread(x), _mib(x.get("rss_kb")), _f(x.get("rss_over_reap"))]
                        for x in like]) if like else _p("Not measured."))
    if emu:
        blocks += [_p("The 2002 region emulator's bookkeeping (an out-of-band record of every object) against "
                      "the Table 4 naive variant, glibc:"),
                   _tab(["workload", "emulator / naive time"], [[x["workload"], _spread(x)] for x in emu])]
    if fp:
        blocks += [_p("Server peak footprint by variant (the workload's own accounting):"),
                   _tab(["variant", "peak footprint"], [[v, _mib(b / 1024)] for v, b in sorted(fp.items())])]
    sections.append({"id": "reaps", "title": "Reaps against allocators of like semantics (2002, Figure 6)",
                     "blocks": blocks})
    gp = t.get("general", [])
    if gp:
        groups = sorted({x["program"] for x in gp})
        blocks = []
        summ = t.get("general_summary") or []
        if summ:
            n = summ[0]["programs"]
            blocks += [_p(f"Over all {n} programs: geometric mean of each allocator's time and peak RSS over "
                          "glibc's; the time mean is taken one repeat at a time (median, and in brackets the least and "
                          "greatest); lowest first at each level."),
                       _tab(["allocator", "littering", "time / glibc", "x the best", "peak RSS / glibc"],
                            [[r["allocator"], f"Adv_{r['adv']}",
                              f"{r['time']:.3f} [{r['low']:.3f}, {r['high']:.3f}]", f"{r['over_best']:.3f}",
                              _f(r.get("rss"), "{:.3f}")]
                             for r in sorted(summ, key=lambda r: (r["adv"], r["time"]))])]
        for adv in sorted({x["adv"] for x in gp}):
            vals = {(x["program"], x["allocator"]): x for x in gp if x["adv"] == adv}
            blocks.append(_fig(bar_chart(groups, allocs, vals, f"Naive variants and real programs, Adv_{adv}: "
                                         "time / glibc", "time / glibc"),
                               f"General-purpose allocators at Adv_{adv}: program time over glibc's."))
        blocks.append(_tab(["program", "allocator", "littering", "time / glibc", "peak RSS", "RSS / glibc"],
                           [[x["program"], x["allocator"], f"Adv_{x['adv']}", _spread(x), _mib(x.get("rss_kb")),
                             _f(x.get("rss_ratio"))] for x in gp]))
        sections.append({"id": "general", "title": "General-purpose allocators", "blocks": blocks})
    cache = t.get("cache", [])
    if cache:
        geo = cache[0].get("geometry") or {}
        sections.append({"id": "locality", "title": "Locality (the Vam paper's claim)", "blocks": [
            _p(f"cachegrind, clean heap, geometry {json.dumps(geo)}, ASLR off where possible."),
            _tab(["program", "allocator", "D1 misses", "LL misses"],
                 [[x["program"], x["allocator"],
                   f"{x['d1_misses']:,}" if x.get("d1_misses") is not None else "–",
                   f"{x['ll_misses']:,}" if x.get("ll_misses") is not None else "–"] for x in cache])]})
    mem = t.get("memory") or {}
    if mem:
        drag_rows = [[d["workload"], "regions (emulated)" if d["variant"] in ("malloc", "emulator") else "reaps",
                      d.get("objects"), _f(d.get("total_drag")), _mib((d.get("peak_bytes_actual") or 0) / 1024),
                      _mib((d.get("peak_bytes_immediate") or 0) / 1024)] for d in mem.get("drag", [])]
        frag_rows = [[x["program"], x["allocator"], x["adv"], x["max_pages_in_use"], x["max_live_pages"],
                      _f(x["fragmentation"])] for x in mem.get("frag", [])]
        blocks = [_p(f"Workloads at scale {mem.get('scale')}, every load and store instrumented. Drag: the area "
                     "under the heap curve over the area with each object freed right after its last use (1.0 is "
                     "ideal). At this size a constant start-up object (libstdc++'s emergency exception pool) "
                     "weighs in the drag of every C++ workload.")]
        if drag_rows:
            blocks.append(_tab(["workload", "variant", "objects", "total drag", "peak actual",
                                "peak if freed at last use"], drag_rows))
        if frag_rows:
            blocks += [_p("Fragmentation: the most heap pages in use over the most live data in pages."),
                       _tab(["program", "allocator", "littering", "max pages in use", "max live pages",
                             "fragmentation"], frag_rows)]
        png = mem.get("pages_png")
        if png and os.path.exists(png):
            with open(png, "rb") as f:
                blocks.append(_fig((base64.b64encode(f.read()).decode(), None),
                                   "gp_mix: simulated LRU page misses for every memory size (Vam Figure 8)."))
        sections.append({"id": "memory", "title": "Memory over time: drag, fragmentation and pages",
                         "blocks": blocks})
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
            rows.append([name, s.get("allocations", "–"), s.get("max_live", "–"), _f(s.get("mean_size"), "{:.1f}"),
                         _f(share * 100 if share is not None else None, "{:.1f}%"), w.get("paper_program") or "–",
                         _f(paper * 100 if paper is not None else None, "{:.1f}%"),
                         {True: "yes", False: {"text": "no", "b": True}, None: "–"}[band]])
        scale = next(iter(w8.values()), {}).get("scale", "?")
        sections.append({"id": "stats", "title": "Allocation statistics and weights (the 2002 paper's Table 3)",
                         "blocks": [
            _p("Objects, max live and mean size from each program's profile (its naive variant); the "
               "memory-operations share is callgrind's count of instructions inside the allocator over the "
               f"program's, on glibc, at scale {scale}, beside the paper program's share. A verdict drawn from a "
               "workload outside a factor of 1.5 of its program says so."),
            _tab(["program", "objects", "max live objects", "mean size", "memory ops share", "paper program",
                  "its share", "within 1.5x"], rows)]})
    abl = ablation_section(outdir)
    if abl:
        sections.append(abl)
    return {
        "title": "alloclab study", "heading": "alloclab study: the papers' claims on this machine",
        "headline": _headline(vs),
        "command": _command(meta),
        "sections": sections,
        "allocators": {"head": ["allocator", "version", "path"], "scroll": True,
                       "rows": [[a["name"], a.get("version"), a.get("path") or "(the C library)"]
                                for a in meta.get("allocator_info", [])]},
        "mode": meta.get("mode"), "advs": ", ".join("Adv_%d" % a for a in meta.get("advs", [])),
        "repeat": meta.get("repeat"), "seed": meta.get("seed"), "scale": meta.get("scale"),
        "programs": len(meta.get("programs", [])), "elapsed": _f(meta.get("elapsed_s"), "{:.0f}"),
        "time_measure": meta.get("time_measure", ""), "machine": report.machine_facts(meta.get("machine", {})),
        "notes": meta.get("notes", []), "ablation": abl is not None,
    }


def write_report(analysis: dict, outdir: str) -> str:
    return report.write_page("study.html.j2", context(analysis, outdir), outdir)
