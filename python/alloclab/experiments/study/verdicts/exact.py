"""The claims measured by deterministic instruments, each giving one exact value: the drag
instrument (peak footprint and drag, 2002 Table 4 and Figure 7), cachegrind (the Vam paper's
locality), the fragmentation simulator and the server's own footprint accounting. Each takes a
StudyData and returns (values, what was measured, exact), as claims.py's measures do.

API::

    m_bc(d), m_footprint(d), m_drag(d), m_vam_cache(d), m_vam_frag(d)
"""

from __future__ import annotations

from alloclab import stats
from alloclab.experiments import workloads
from alloclab.experiments.study.verdicts.data import EMULATOR, NAIVE
from alloclab.measure import cache


def m_bc(d):
    fp = d.footprint or {}
    if not fp.get("custom") or not fp.get("reap"):
        return [], "server footprint not measured", True
    return [fp["custom"] / fp["reap"]], \
        "server (Apache + bc): peak footprint with its pools / with reaps (the workload's accounting)", True


def _catalog_kind(name):
    return next((w.kind for w in workloads.CATALOG if w.name == name), None)


def _region_drag(d):
    """The drag instrument's rows of the region workloads (2002 Table 4 and Figure 7 measure region
    programs) with their regions emulated (each object freed when its region is)."""
    return [x for x in (d.drag or []) if x.get("variant") in (NAIVE, EMULATOR)
            and (d.kinds.get(x.get("workload")) or _catalog_kind(x.get("workload"))) == "region"
            and x.get("workload") not in d.partial]


def m_footprint(d):
    rows = [x for x in _region_drag(d) if x.get("peak_bytes_immediate") and x.get("peak_bytes_actual")]
    if not rows:
        return [], "drag not measured", True
    incs = [x["peak_bytes_actual"] / x["peak_bytes_immediate"] - 1.0 for x in rows]
    return [sum(incs) / len(incs)], (
        "peak heap bytes with regions (emulated) over with each object freed at its last use - 1, the program's "
        "own objects (the drag instrument, small inputs), mean over " +
        ", ".join(f"{x['workload']} {v * 100:+.1f}%" for x, v in zip(rows, incs))), True


def m_drag(d):
    rows = [x for x in _region_drag(d) if x.get("total_drag")]
    if not rows:
        return [], "drag not measured", True
    return [stats.geomean([x["total_drag"] for x in rows])], (
        "geometric mean of the region workloads' total drag with regions (emulated), the program's own objects "
        "(objects made before main and never used once it began left out), small inputs under the exact "
        "instrument: " + ", ".join(f"{x['workload']} {x['total_drag']:.3g}" for x in rows)), True


def _cache_ratios(rows, ll: str) -> list:
    """vam LL misses / glibc LL misses per program, at the last level LL (cachegrind's --LL)."""
    rows = [r for r in rows if (r.get("geometry") or {}).get("LL") == ll]
    ratios = []
    for prog in sorted({r["program"] for r in rows}):
        v = next((r for r in rows if r["program"] == prog and r["allocator"] == "vam"), None)
        g = next((r for r in rows if r["program"] == prog and r["allocator"] == "glibc"), None)
        if v and g and v.get("ll_misses") and g.get("ll_misses"):
            ratios.append(v["ll_misses"] / g["ll_misses"])
    return ratios


def m_vam_cache(d):
    ratios = _cache_ratios(d.cache or [], cache.L2_512K["LL"])
    if not ratios:
        return [], "cache misses not measured at the paper's 512 KiB L2", True
    today = _cache_ratios(d.cache or [], cache.GEOMETRY["LL"])
    beside = (f"; at a 32 MiB last level ({cache.GEOMETRY['LL']}) {(1.0 - stats.geomean(today)) * 100:+.1f}%"
              if today else "")
    return [1.0 - stats.geomean(ratios)], (
        f"1 - vam LL misses / glibc LL misses, cachegrind at the paper's L2 ({cache.geometry_words(cache.L2_512K)}),"
        f" geometric mean over {len(ratios)} programs{beside}"), True


def m_vam_frag(d):
    vals = [x["fragmentation"] for x in (d.frag or []) if x.get("allocator") == "vam"
            and x.get("adv") in ("Adv_0", 0) and x.get("fragmentation")]
    if not vals:
        return [], "fragmentation not measured", True
    scales = sorted({str(x.get("scale")) for x in (d.frag or []) if x.get("scale")})
    return [max(vals)], ("vam's largest fragmentation (pages in use / live pages), clean heap"
                         + (f", gp_mix at scale {', '.join(scales)}" if scales else "")), True
