"""The study page's evidence sections, after the verdicts: each a function of the findings'
tables (findings.json "tables") and the allocators, returning a section or None when its
table is empty.

API::

    evidence(tables, allocators) -> list[dict]    # RQ1, RQ2, RQ3, reaps, general, locality, memory, stats,
                                                  # calibration
"""

from __future__ import annotations

import json
import os

from alloclab.experiments.study.blocks import bar_chart, fig, mib, number, p, spread, tab
from alloclab.present.html import png_data


def _rq1(t: dict, allocs: list) -> dict | None:
    """RQ1: per-class allocators against naive allocation."""
    rq1 = t.get("rq1", [])
    if rq1:
        groups = sorted({f"{x['workload']} Adv_{x['adv']}" for x in rq1})
        vals = {(f"{x['workload']} Adv_{x['adv']}", x["allocator"]): x for x in rq1}
        return {"id": "rq1", "title": "RQ1: per-class allocators against naive allocation", "blocks": [
            p("Time of the custom variant over the naive variant on the same allocator and heap, paired by "
              "repeat (same littering seed); below 1 the custom allocator wins. CPython's pymalloc and "
              "SQLite's lookaside are the real programs' own per-class allocators."),
            fig(bar_chart(groups, allocs, vals, "RQ1: per-class allocator time / naive time", "custom / malloc"),
                "RQ1: custom / naive time per workload and littering level, one bar per allocator."),
            tab(["workload", "allocator", "littering", "custom / naive"],
                [[x["workload"], x["allocator"], f"Adv_{x['adv']}", spread(x)] for x in rq1])]}
    return None


def _rq2(t: dict, allocs: list) -> dict | None:
    """RQ2: regions against general-purpose allocation, clean heap."""
    rq2 = t.get("rq2", [])
    if rq2:
        core = [x for x in rq2 if x["variant"] in ("custom", "reap")]
        groups = sorted({f"{x['workload']} {x['variant']}" for x in core})
        vals = {(f"{x['workload']} {x['variant']}", x["allocator"]): x for x in core}
        return {"id": "rq2", "title": "RQ2: regions against general-purpose allocation (clean heap)",
                "blocks": [
            p("The naive variant is built as the 2026 paper's Table 4 builds it (regions keep their chunk list "
              "with one object per chunk; the parser calls malloc directly; the mempool keeps its live-object "
              "set); a region program without one (svn) is compared with its region emulator, the column "
              "`naive` says which."),
            fig(bar_chart(groups, allocs, vals, "RQ2: region variant time / naive time (clean heap)",
                           "variant / malloc"),
                 "RQ2: custom and reap time over naive time per workload, one bar per allocator."),
            tab(["workload", "variant", "allocator", "naive", "time / naive"],
                [[x["workload"], x["variant"], x["allocator"], x.get("naive", "malloc"), spread(x)] for x in rq2])]}
    return None


def _rq3(t: dict, allocs: list) -> dict | None:
    """RQ3: region and hybrid allocators on littered heaps."""
    rq3 = t.get("rq3", [])
    if rq3:
        blocks = [p("Every variant of a program is littered with that program's one profile (taken from its "
                    "naive variant), so the region variants meet the same fragmented heap as naive allocation. "
                    "Partly-regioned programs are marked.")]
        advs = sorted({x["adv"] for x in rq3})
        groups = sorted({f"{x['workload']} {x['variant']}" for x in rq3})
        for a in allocs:
            vals = {(f"{x['workload']} {x['variant']}", f"Adv_{x['adv']}"): x for x in rq3 if x["allocator"] == a}
            if vals:
                blocks.append(fig(bar_chart(groups, [f"Adv_{v}" for v in advs], vals,
                                             f"RQ3 on {a}: time under littering / own clean time", "slowdown"),
                                   f"RQ3 on {a}: each region and hybrid variant's time under littering over its "
                                   f"own clean time."))
        blocks.append(tab(["workload", "variant", "allocator", "littering", "slowdown"],
                          [[x["workload"] + (" (partly regioned)" if x.get("partial") else ""), x["variant"],
                             x["allocator"], f"Adv_{x['adv']}", spread(x)] for x in rq3]))
        return {"id": "rq3", "title": "RQ3: region and hybrid allocators on littered heaps",
                "blocks": blocks}
    return None


def _reaps(t: dict, allocs: list) -> dict | None:
    """Reaps against allocators of like semantics (2002, Figure 6), the emulator, the server's footprint."""
    like = t.get("like", [])
    emu = t.get("emulator", [])
    fp = t.get("server_footprint", {})
    blocks = [p("Clean heap, glibc underneath: each variant's wall time over the reap variant's, and its peak "
                "RSS. talloc, APR pools and std::pmr carry the same region calls the reap variant makes.")]
    blocks.append(tab(["workload", "variant", "time / reap", "peak RSS", "RSS / reap"],
                      [[x["workload"], x["variant"], spread(x), mib(x.get("rss_kb")), number(x.get("rss_over_reap"))]
                        for x in like]) if like else p("Not measured."))
    if emu:
        blocks += [p("The 2002 region emulator's bookkeeping (an out-of-band record of every object) against "
                     "the Table 4 naive variant, glibc:"),
                   tab(["workload", "emulator / naive time"], [[x["workload"], spread(x)] for x in emu])]
    if fp:
        blocks += [p("Server peak footprint by variant (the workload's own accounting):"),
                   tab(["variant", "peak footprint"], [[v, mib(b / 1024)] for v, b in sorted(fp.items())])]
    return {"id": "reaps", "title": "Reaps against allocators of like semantics (2002, Figure 6)", "blocks": blocks}


def _general(t: dict, allocs: list) -> dict | None:
    """The general-purpose allocators: naive variants and real programs over glibc."""
    gp = t.get("general", [])
    if gp:
        groups = sorted({x["program"] for x in gp})
        blocks = []
        summ = t.get("general_summary") or []
        if summ:
            n = summ[0]["programs"]
            blocks += [p(f"Over all {n} programs: geometric mean of each allocator's time and peak RSS over "
                         "glibc's; the time mean is taken one repeat at a time (median, and in brackets the least and "
                         "greatest); lowest first at each level."),
                       tab(["allocator", "littering", "time / glibc", "x the best", "peak RSS / glibc"],
                           [[r["allocator"], f"Adv_{r['adv']}",
                              f"{r['time']:.3f} [{r['low']:.3f}, {r['high']:.3f}]", f"{r['over_best']:.3f}",
                              number(r.get("rss"), "{:.3f}")]
                             for r in sorted(summ, key=lambda r: (r["adv"], r["time"]))])]
        for adv in sorted({x["adv"] for x in gp}):
            vals = {(x["program"], x["allocator"]): x for x in gp if x["adv"] == adv}
            blocks.append(fig(bar_chart(groups, allocs, vals, f"Naive variants and real programs, Adv_{adv}: "
                                         "time / glibc", "time / glibc"),
                               f"General-purpose allocators at Adv_{adv}: program time over glibc's."))
        blocks.append(tab(["program", "allocator", "littering", "time / glibc", "peak RSS", "RSS / glibc"],
                          [[x["program"], x["allocator"], f"Adv_{x['adv']}", spread(x), mib(x.get("rss_kb")),
                             number(x.get("rss_ratio"))] for x in gp]))
        return {"id": "general", "title": "General-purpose allocators", "blocks": blocks}
    return None


def _locality(t: dict, allocs: list) -> dict | None:
    """Locality: the naive variants' cache misses on glibc and vam."""
    cache = t.get("cache", [])
    if cache:
        geos = []
        for x in cache:
            if x.get("geometry") and x["geometry"] not in geos:
                geos.append(x["geometry"])
        return {"id": "locality", "title": "Locality (the Vam paper's claim)", "blocks": [
            p("cachegrind, clean heap, ASLR off where possible, geometr" + ("ies " if len(geos) > 1 else "y ") +
              "; ".join(json.dumps(g) for g in geos) + ". The claim is judged at the Vam paper's 512 KiB L2; "
              "the 32 MiB last level is shown beside it."),
            tab(["program", "allocator", "last level", "D1 misses", "LL misses"],
                [[x["program"], x["allocator"], x.get("last_level") or (x.get("geometry") or {}).get("LL", "–"),
                   f"{x['d1_misses']:,}" if x.get("d1_misses") is not None else "–",
                   f"{x['ll_misses']:,}" if x.get("ll_misses") is not None else "–"] for x in cache])]}
    return None


def _memory(t: dict, allocs: list) -> dict | None:
    """Memory over time: drag, fragmentation and pages."""
    mem = t.get("memory") or {}
    if mem:
        drag_rows = [[d["workload"], "regions (emulated)" if d["variant"] in ("malloc", "emulator") else "reaps",
                      d.get("objects"), d.get("startup_objects", "–"), number(d.get("total_drag")),
                      mib((d.get("peak_bytes_actual") or 0) / 1024),
                      mib((d.get("peak_bytes_immediate") or 0) / 1024)] for d in mem.get("drag", [])]
        frag_rows = [[x["program"], x["allocator"], x["adv"], x["max_pages_in_use"], x["max_live_pages"],
                      number(x["fragmentation"])] for x in mem.get("frag", [])]
        blocks = [p(f"Workloads at scale {mem.get('scale')}, every load and store instrumented. Drag: the area "
                    "under the heap curve over the area with each object freed right after its last use (1.0 is "
                    "ideal), over the program's own objects: objects made before main and never used once it "
                    "began (libstdc++'s emergency exception pool) are left out and counted apart.")]
        if drag_rows:
            blocks.append(tab(["workload", "variant", "objects", "start-up objects left out", "total drag",
                                "peak actual", "peak if freed at last use"], drag_rows))
        if frag_rows:
            blocks += [p("Fragmentation: the most heap pages in use over the most live data in pages."),
                       tab(["program", "allocator", "littering", "max pages in use", "max live pages",
                             "fragmentation"], frag_rows)]
        png = mem.get("pages_png")
        if png and os.path.exists(png):
            blocks.append(fig((png_data(png), None),
                              "gp_mix: simulated LRU page misses for every memory size (Vam Figure 8)."))
        return {"id": "memory", "title": "Memory over time: drag, fragmentation and pages",
                "blocks": blocks}
    return None


def _stats(t: dict, allocs: list) -> dict | None:
    """Allocation statistics and weights (the 2002 paper's Table 3)."""
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
            rows.append([name, s.get("allocations", "–"), s.get("max_live", "–"),
                         number(s.get("mean_size"), "{:.1f}"),
                         number(share * 100 if share is not None else None, "{:.1f}%"), w.get("paper_program") or "–",
                         number(paper * 100 if paper is not None else None, "{:.1f}%"),
                         {True: "yes", False: {"text": "no", "b": True}, None: "–"}[band]])
        scale = next(iter(w8.values()), {}).get("scale", "?")
        return {"id": "stats", "title": "Allocation statistics and weights (the 2002 paper's Table 3)",
                "blocks": [
            p("Objects, max live and mean size from each program's profile (its naive variant); the "
              "memory-operations share is callgrind's count of instructions inside the allocator over the "
              f"program's, on glibc, at scale {scale}, beside the paper program's share. A verdict drawn from a "
              "workload outside a factor of 1.5 of its program says so."),
            tab(["program", "objects", "max live objects", "mean size", "memory ops share", "paper program",
                  "its share", "within 1.5x"], rows)]}
    return None


def _calibration_row(r: dict, live_now) -> list:
    band = "in band" if r.get("in_band") else {"text": "flagged: " + "; ".join(r.get("why") or []), "b": True}
    pct = "{:.1f}%"
    return [r.get("workload"), r.get("paper_program"),
            number(r["paper_share"] * 100 if r.get("paper_share") is not None else None, pct),
            number(r["memops_share"] * 100 if r.get("memops_share") is not None else None, pct),
            number(r.get("share_ratio"), "{:.2f}x"), number(r.get("paper_max_live"), "{:,}"),
            number(r.get("max_live"), "{:,}"), number(r.get("live_ratio"), "{:.2f}x"),
            number(live_now, "{:,}"), number(r.get("seconds"), "{:.2f} s"), band]


def _calibration(t: dict, allocs: list) -> dict | None:
    """The stand-ins against their paper programs (2002 Table 3) on what the claims depend on."""
    cal = t.get("calibration") or {}
    if not cal.get("rows"):
        return None
    stats_now = t.get("alloc_stats", {})
    rows = [_calibration_row(r, (stats_now.get(r.get("workload")) or {}).get("max_live")) for r in cal["rows"]]
    blocks = [p("Each stand-in beside the program of the 2002 paper's Table 3 it stands for, on its naive variant on "
                f"glibc at the default study's size (--scale {cal.get('scale')}): the share of time in memory "
                f"operations ({cal.get('method')}; the allocator's own functions over the whole run) and the most "
                "objects live at once (the profile's max_live). In band: time share within 1.5x of the program's, "
                "max live within 2x, a run of at least 0.2 s. Measured by "
                f"`{cal.get('command')}` on tree {cal.get('commit')} (workloads/calibration.json); "
                "\"this run\" is this study's own profile of the stand-in, at this run's size."),
              tab(["stand-in", "paper program", "Table 3 share", "measured share", "ratio", "Table 3 max live",
                   "measured max live", "ratio", "this run's max live", "run time", "band"], rows)]
    if cal.get("stale"):
        blocks.append(p("Stale (the study now runs these with other arguments; remake with scripts/calibrate): "
                        + "; ".join(cal["stale"]), cls="warn"))
    return {"id": "calibration", "title": "Calibration: the stand-ins against their paper programs",
            "blocks": blocks}


def evidence(t: dict, allocs: list) -> list[dict]:
    """Every evidence section that has something to show, in the page's order."""
    return [s for s in (fn(t, allocs) for fn in (_rq1, _rq2, _rq3, _reaps, _general, _locality, _memory, _stats,
                                                 _calibration)) if s]
