"""The study's measurements besides the timed matrix: the server's own footprint
accounting, each workload's memory-operations share (callgrind), cache misses
(cachegrind), and memory over time (drag, fragmentation, page misses under the
alloclab-mem tool). Each adds a note to the plan where it could not measure.

API::

    server_footprints(plan) -> dict
    weights(plan, say) -> dict
    locality(plan, say) -> list
    memory_over_time(plan, say) -> dict
"""

from __future__ import annotations

import os
import re
import subprocess

from alloclab import LabError
from alloclab.core.levels import Level
from alloclab.experiments import drag, frag, pages, workloads
from alloclab.experiments.study.plan import Plan
from alloclab.measure import cache, memops, memtool


def server_footprints(p: Plan) -> dict:
    """The server workload reports its peak footprint per variant (stderr)."""
    binary = workloads.binary("server")
    out = {}
    if not binary:
        return out
    for v in workloads.accepted_variants("server"):
        try:
            cp = subprocess.run([binary, "--alloc", v, "--scale", p.scale], capture_output=True, text=True,
                                timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.search(r"footprint_peak_bytes\s+(\d+)", cp.stderr + cp.stdout)
        if m:
            out[v] = int(m.group(1))
    return out


def _band(paper, share):
    if paper and share:
        return (1 / 1.5) <= share / paper <= 1.5
    if paper is not None and paper == 0 and share is not None:
        return share < 0.01
    return None


def weights(p: Plan, say, names=None) -> dict:
    """Each bundled workload's share of instructions in memory operations
    (callgrind, naive variant on glibc) beside its paper program's (2002 Table 3);
    NAMES: only these workloads (None: every one)."""
    out = {}
    for w in workloads.CATALOG:
        if names is not None and w.name not in names:
            continue
        binary = workloads.binary(w.name)
        if not binary:
            continue
        say(f"== study weight {w.name}/malloc (callgrind, scale {p.weights_scale})")
        try:
            m = memops.measure([binary, "--alloc", "malloc", *workloads.size_args(w.name, p.weights_scale)],
                               timeout=1800)
        except LabError as e:
            p.notes.append(f"memory-operations share of {w.name}: {e}")
            continue
        row = workloads.PAPER_TABLE3.get(w.paper_program) if w.paper_program else None
        paper = row.get("memops_share") if row else None
        share = m.get("memops_share")
        out[w.name] = {"memops_share": share, "paper_program": w.paper_program or None, "paper_share": paper,
                       "within_band": _band(paper, share), "scale": p.weights_scale,
                       "instructions": m.get("instructions")}
    return out


# The programs whose cache misses judge vam's locality: the naive variants of the general,
# per-class and region workloads the Vam paper's claim can be tried on.
LOCALITY_PROGRAMS = ("bignum_factor", "gp_mix", "boxed_sim", "compiler", "interp")
# The last levels simulated: the Vam paper's 512 KiB L2 (what the claim is judged at), and the
# 32 MiB one of the lab's other cache measurements (shown beside it).
LOCALITY_GEOMETRIES = (("512 KiB", cache.L2_512K), ("32 MiB", cache.GEOMETRY))


def locality(p: Plan, say) -> list:
    """D1 and LL misses (cachegrind, at each of LOCALITY_GEOMETRIES) of the naive variants on glibc
    and vam, clean heap: the Vam paper's locality claim."""
    if "vam" not in p.allocator_names:
        p.notes.append("vam is not among the allocators: its locality was not measured")
        return []
    try:
        method = cache.detect("cachegrind")
    except LabError as e:
        p.notes.append(f"cache misses not measured: {e}")
        return []
    out = []
    for name in LOCALITY_PROGRAMS:
        binary = workloads.binary(name)
        if not binary:
            continue
        for a in p.allocators:
            if a.name not in ("glibc", "vam"):
                continue
            for label, geo in LOCALITY_GEOMETRIES:
                say(f"== study cache {name}/malloc on {a.name} (last level {label})")
                res = cache.measure([binary, "--alloc", "malloc", *workloads.size_args(name, p.memory_scale)], method,
                                    preload=list(a.preload), env=a.environ, workdir=os.path.join(p.outdir, "cache"),
                                    tag=f"{name}-{a.name}", timeout=900, geometry=geo)
                if res.get("error"):
                    p.notes.append(f"cachegrind of {name} on {a.name} (last level {label}): {res['error']}")
                    continue
                out.append({"program": f"{name}/malloc", "allocator": a.name, "last_level": label,
                            "d1_misses": res.get("d1_misses"), "ll_misses": res.get("ll_misses"), "geometry": geo})
    return out


def _drag(p: Plan, mdir: str, say) -> list:
    """Drag and peak footprint with objects freed at their last use (2002 paper, Figure 7 and
    Table 4) of the region workloads under emulated regions and under reaps, over each program's
    own objects (drag.analyse leaves out start-up objects)."""
    out = []
    for name in ("compiler", "interp", "xalloc_parser", "server"):
        binary = workloads.binary(name)
        if not binary:
            continue
        accepted = workloads.accepted_variants(name)
        regions = "emulator" if "emulator" in accepted else "malloc"
        for v in (regions, "reap"):
            say(f"== study drag {name}/{v}")
            try:
                r = drag.run_drag([binary, "--alloc", v, *workloads.size_args(name, p.memory_scale)],
                                  os.path.join(mdir, f"drag-{name}-{v}"), make_plot=False, timeout=600)
            except LabError as e:
                p.notes.append(f"drag of {name}/{v}: {e}")
                continue
            out.append({"workload": name, "variant": v, "objects": r.get("objects"),
                        "startup_objects": r.get("startup_objects"), "startup_bytes": r.get("startup_bytes"),
                        "total_drag": r.get("total_drag"), "peak_bytes_actual": r.get("peak_bytes_actual"),
                        "peak_bytes_immediate": r.get("peak_bytes_immediate")})
    return out


def _frag(p: Plan, mdir: str, say) -> list:
    """Fragmentation (Vam paper §4.4): heap pages in use over live pages of gp_mix. The paper's
    is a clean heap's; the littered one is for full mode (each run is a Valgrind run of a
    realistically sized heap)."""
    out = []
    levels = sorted({Level.ADV_0, max(p.advs)}) if p.mode == "full" else [Level.ADV_0]
    binary = workloads.binary("gp_mix")
    if not binary:
        return out
    say("== study frag gp_mix/malloc")
    try:
        res = frag.run_frag([binary, "--alloc", "malloc", *workloads.size_args("gp_mix", p.frag_scale)],
                            os.path.join(mdir, "frag-gp_mix"), p.allocators, levels, timeout=600)
    except LabError as e:
        p.notes.append(f"frag of gp_mix: {e}")
        return out
    for a, row in res["allocators"].items():
        for label, v in row.items():
            out.append({"program": "gp_mix/malloc", "allocator": a, "adv": label, "scale": p.frag_scale,
                        "max_pages_in_use": v["max_pages_in_use"], "max_live_pages": v["max_live_pages"],
                        "fragmentation": v["fragmentation"]})
    return out


def _pages(p: Plan, mdir: str, out: dict, say) -> None:
    """The page-level miss curves (Vam paper, Figure 8) of gp_mix on each allocator."""
    binary = workloads.binary("gp_mix")
    if not binary:
        return
    say("== study pages gp_mix/malloc")
    try:
        res = pages.run_pages([binary, "--alloc", "malloc", *workloads.size_args("gp_mix", p.memory_scale)],
                              os.path.join(mdir, "pages"),
                              p.allocators, timeout=600)
        pngs = pages.plot(res, os.path.join(mdir, "pages"))
        out["pages"] = {a: {"max_pages_in_use": r.get("max_pages_in_use"), "prefetch": r.get("prefetch")}
                        for a, r in res["allocators"].items()}
        out["pages_png"] = pngs[0] if pngs else None
    except LabError as e:
        p.notes.append(f"pages of gp_mix: {e}")


def memory_over_time(p: Plan, say) -> dict:
    """Drag, fragmentation and page misses; small inputs: every load and store runs under the
    instrument."""
    try:
        memtool.find_memtools()
    except LabError as e:
        p.notes.append(f"drag and pages left out: {e}")
        return {}
    mdir = os.path.join(p.outdir, "memory")
    out = {"scale": p.memory_scale, "drag": _drag(p, mdir, say), "pages": None, "pages_png": None}
    out["frag"] = _frag(p, mdir, say)
    _pages(p, mdir, out, say)
    return out
