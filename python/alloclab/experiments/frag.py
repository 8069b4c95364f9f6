"""Fragmentation as pages in use over live data (Vam §4.4; `alloclab frag`).

Each allocator x littering level runs once under the alloclab-mem Valgrind
tool, which only observes.  A page is in use from the first load or store to
it until it is discarded (madvise DONTNEED/FREE/REMOVE), unmapped, mapped
over, or given back by a brk shrink; only heap pages count: the program break
and anonymous private mappings other than thread stacks (MAP_STACK).  Live
data is what the process requested and has not freed (sizes as asked of
malloc/new, or of a reap), tracked exactly by the tool; on a littered heap it
includes the litter objects the preconditioner leaves live.

    fragmentation = max pages in use / ceil(max live bytes / 4096)

Littering (Adv_1, Adv_3, Adv_10: littering paper Table 3) needs a profile of
the program; one is made first unless a profile is given. DIR/frag.json
(core.results.documents.FRAG): per allocator and setting, max_pages_in_use,
max_live_bytes, max_live_pages, fragmentation; DIR/frag.png a bar chart
(Figure 6).

API::

    run_frag(cmd, outdir, allocators, levels, profile_path=None, seed=42, timeout=None) -> dict
    write(result, outdir, plot=True) -> str    # DIR/frag.json (and frag.png)
    fragmentation(max_pages_in_use, max_live_bytes) -> (live pages, ratio | None)
"""

from __future__ import annotations

import math
import os

from alloclab.core.results.documents import FRAG, write_document
from alloclab.measure import litter, memtool
from alloclab.measure import profile as profiling
from alloclab.present import plots


def fragmentation(max_pages_in_use: int, max_live_bytes: int) -> tuple[int, float | None]:
    live_pages = math.ceil(max_live_bytes / memtool.PAGE_SIZE)
    return live_pages, (round(max_pages_in_use / live_pages, 6) if live_pages else None)


def _one(cmd, outdir, a, level, profile_path, seed, timeout, tools) -> dict:
    preload, env = litter.setup_level(a, level, profile_path, seed)
    # litter.setup puts the allocator first; memtool.run adds it itself.
    extra = [p for p in preload if p not in a.preload]
    r = memtool.run(cmd, outdir, f"{a.name}-{level.label}", allocator=a, preload=extra, env=env,
                    timeout=timeout, tools=tools)
    os.unlink(r.prefix + ".summary")
    s = r.summary
    live_pages, frag = fragmentation(s["max_pages_in_use"], s["max_live_bytes"])
    return {"max_pages_in_use": s["max_pages_in_use"], "max_live_bytes": s["max_live_bytes"],
            "max_live_pages": live_pages, "fragmentation": frag, "status": r.status,
            "multiplier": level.multiplier, "occupancy": level.occupancy}


def run_frag(cmd, outdir, allocs, levels, profile_path=None, seed=litter.DEFAULT_SEED, timeout=None) -> dict:
    """Every allocator (Allocator) at every level (Level) once under the tool; the figures."""
    tools = memtool.find_memtools()
    if any(lv.littered for lv in levels) and profile_path is None:
        profile_path = os.path.join(outdir, "profile.json")
        profiling.run_profile(cmd, out=profile_path, timeout=timeout, stdout=None, stderr=None)
    res = {"format_version": FRAG.version, "command": list(cmd), "page_size": memtool.PAGE_SIZE,
           "profile": profile_path, "seed": seed, "allocators": {}}
    for a in allocs:
        res["allocators"][a.name] = {lv.label: _one(cmd, outdir, a, lv, profile_path, seed, timeout, tools)
                                     for lv in levels}
    return res


def plot(res: dict, path: str) -> bool:
    """The bar chart of every allocator's fragmentation per level in PATH; False without matplotlib."""
    plt = plots.pyplot()
    if plt is None:
        return False
    names = list(res["allocators"])
    labels = sorted({k for r in res["allocators"].values() for k in r}, key=lambda x: int(x.split("_")[1]))
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(names) * len(labels)), 4.5))
    w = 0.8 / max(1, len(labels))
    for j, lab in enumerate(labels):
        ys = [(res["allocators"][n].get(lab) or {}).get("fragmentation") or 0 for n in names]
        ax.bar([i + j * w for i in range(len(names))], ys, width=w, label=lab)
    ax.set_xticks([i + w * (len(labels) - 1) / 2 for i in range(len(names))])
    ax.set_xticklabels(names)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_ylabel("max pages in use / max live pages")
    ax.set_title("fragmentation")
    ax.legend()
    plots.save(fig, path)
    return True


def write(res: dict, outdir: str, plot_it: bool = True) -> str:
    """DIR/frag.json (and, with PLOT_IT, DIR/frag.png, named in it); the JSON's path."""
    png = os.path.join(outdir, "frag.png")
    if plot_it and plot(res, png):
        res["plot"] = png
    return write_document(FRAG, os.path.join(outdir, "frag.json"), res)
