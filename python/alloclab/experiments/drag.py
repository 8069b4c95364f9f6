"""Drag: how long heap objects outlive their last use (reaps §6.1, §7.3; `alloclab drag`).

The program runs under the alloclab-mem Valgrind tool, which sees every load
and store and every heap object (malloc family, C++ new/delete, and reap
objects through the reap's mempool client requests).  Time is the allocation
clock: bytes requested so far.  An object of s bytes allocated when the clock
read c occupies the heap from c (its own allocation moves the clock to c+s)
until it is freed -- or until the program ends, if it never is.  Freed
"immediately", it would leave right after its last load or store (or right
after its allocation, if it is never touched).

    total drag  = area under the actual heap curve / area under the immediate-free curve
                  (1.0: every object is freed right after its last use)
    peak bytes  = the most bytes live at once, actual and immediate-free (Table 4)

Both are taken over the program's own objects: an object made before the
program's main began and never used once it had -- a library's start-up
object, such as the 72,704-byte emergency exception pool libstdc++ makes
while it loads -- is left out (the tool marks it; `startup_objects` and
`startup_bytes` say how many and how large). Such an object would weigh in
every C++ program's drag, the more the smaller its input.

DIR/drag.json holds the figures (core.results.documents.DRAG), DIR/drag.png
the memory-over-time plot (Figure 7b): heap bytes against allocation time,
both curves.

API::

    run_drag(cmd, outdir, allocator=None, timeout=None, make_plot=True) -> dict   # also DIR/drag.json
    analyse(objects, clock_end) -> dict
    curves(objects) -> (t, actual, immediate)
"""

from __future__ import annotations

import os

from alloclab.core.allocators import Allocator
from alloclab.core.results.documents import DRAG, write_document
from alloclab.measure import memtool
from alloclab.present import plots


def own(obj: dict) -> dict:
    """The program's own objects of OBJ: those the tool did not mark as start-up objects."""
    import numpy as np  # heavy: loaded only when drag is measured

    keep = obj.get("startup", np.zeros(len(obj["size"]), dtype=np.int64)) == 0
    return {k: v[keep] for k, v in obj.items()}


def analyse(obj: dict, clock_end: int) -> dict:
    """The drag figures from the tool's object records (memtool.read_objects), over the program's
    own objects (own())."""
    import numpy as np  # heavy: loaded only when drag is measured

    startup = obj.get("startup", np.zeros(len(obj["size"]), dtype=np.int64)) != 0
    startup_objects, startup_bytes = int(np.sum(startup)), int(np.sum(obj["size"][startup]))
    obj = own(obj)
    size = obj["size"].astype(np.int64)
    born_after = obj["alloc"].astype(np.int64)  # the clock just after the object's own bytes
    born = born_after - size                     # the clock when its allocation began
    free = obj["free"].astype(np.int64)
    last = np.minimum(obj["last"].astype(np.int64), free)
    n = int(size.size)
    area_actual = int(np.sum(size * (free - born)))
    area_immediate = int(np.sum(size * (last - born)))

    def peak(end):
        # Live bytes right after each allocation: born_after <= t and end >= t.
        if n == 0:
            return 0
        t = np.unique(born_after)
        order = np.argsort(born_after, kind="stable")
        cs_a = np.concatenate(([0], np.cumsum(size[order])))
        added = cs_a[np.searchsorted(born_after[order], t, side="right")]
        order_e = np.argsort(end, kind="stable")
        cs_e = np.concatenate(([0], np.cumsum(size[order_e])))
        removed = cs_e[np.searchsorted(end[order_e], t, side="left")]
        return int(np.max(added - removed))

    peak_actual = peak(free)
    peak_immediate = peak(last)
    if area_immediate > 0:
        total_drag = area_actual / area_immediate
    else:
        total_drag = 1.0 if area_actual == 0 else None
    return {
        "total_drag": round(total_drag, 6) if total_drag is not None else None,
        "peak_bytes_actual": peak_actual,
        "peak_bytes_immediate": peak_immediate,
        "peak_increase_percent": round(100.0 * (peak_actual - peak_immediate) / peak_immediate, 3)
        if peak_immediate else None,
        "objects": n,
        "objects_never_freed": int(np.sum(obj["freed"] == 0)),
        "objects_never_used": int(np.sum(last == born_after)),
        "bytes_allocated": int(clock_end),
        "startup_objects": startup_objects,
        "startup_bytes": startup_bytes,
        "area_actual": area_actual,
        "area_immediate": area_immediate,
        "mean_object_drag": round(float(np.mean(free - last)), 3) if n else 0.0,
        "time_unit": "bytes allocated",
    }


def curves(obj: dict):
    """(t, actual, immediate): heap bytes from each t on, at every change."""
    import numpy as np  # heavy: loaded only when drag is measured

    size = obj["size"].astype(np.int64)
    born = obj["alloc"].astype(np.int64) - size
    free = obj["free"].astype(np.int64)
    last = np.minimum(obj["last"].astype(np.int64), free)
    t = np.unique(np.concatenate((born, free, last, [0])))

    def level(end):
        ob, oe = np.argsort(born), np.argsort(end)
        cb = np.concatenate(([0], np.cumsum(size[ob])))
        ce = np.concatenate(([0], np.cumsum(size[oe])))
        return cb[np.searchsorted(born[ob], t, side="right")] - ce[np.searchsorted(end[oe], t, side="right")]

    return t, level(free), level(last)


def _thin(t, *ys, limit=20000):
    """At most ~limit points, keeping each bucket's maximum (peaks stay visible)."""
    import numpy as np  # heavy: loaded only when drag is measured

    if t.size <= limit:
        return (t, *ys)
    step = int(np.ceil(t.size / limit))
    idx = np.arange(0, t.size, step)
    return (t[idx], *[np.maximum.reduceat(y, idx) for y in ys])


def plot(obj: dict, path: str, title: str) -> bool:
    """The memory-over-time figure in PATH; False without matplotlib."""
    plt = plots.pyplot()
    if plt is None:
        return False
    t, act, imm = _thin(*curves(own(obj)))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.step(t, act, where="post", label="actual (freed when the program frees)")
    ax.step(t, imm, where="post", label="freed immediately after last use")
    ax.set_xlabel("allocation time (bytes allocated)")
    ax.set_ylabel("heap bytes live")
    ax.set_title(title)
    ax.legend()
    ax.set_ylim(bottom=0)
    plots.save(fig, path)
    return True


def run_drag(cmd, outdir: str, allocator: Allocator | None = None, timeout=None, make_plot=True) -> dict:
    """Run cmd under the tool and write DIR/drag.json (and DIR/drag.png); returns the figures."""
    r = memtool.run(cmd, outdir, "drag", allocator=allocator, objects=True, timeout=timeout)
    obj = memtool.read_objects(r.prefix + ".objects")
    res = {"format_version": DRAG.version, **analyse(obj, r.summary.get("clock", 0))}
    res.update({
        "command": list(cmd),
        "allocator": allocator.name if allocator else "glibc",
        "status": r.status,
        "tool": r.summary,
        "tool_wall_s": round(r.wall_s, 3),
        "program_stdout": os.path.relpath(r.stdout, outdir),
    })
    png = os.path.join(outdir, "drag.png")
    if make_plot and res["objects"] and plot(obj, png, f"memory over time: {os.path.basename(cmd[0])} "
                                                       f"(total drag {res['total_drag']})"):
        res["plot"] = png
    os.unlink(r.prefix + ".objects")
    os.unlink(r.prefix + ".summary")
    write_document(DRAG, os.path.join(outdir, "drag.json"), res)
    return res
