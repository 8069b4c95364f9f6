"""`alloclab drag`: how long heap objects outlive their last use (reaps §6.1, §7.3).

    alloclab drag [-o DIR] [--allocator NAME] [--timeout S] -- CMD ARGS...

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

DIR/drag.json holds the figures, DIR/drag.png the memory-over-time plot
(Figure 7b): heap bytes against allocation time, both curves.
"""

from __future__ import annotations

import json
import os
import sys

from alloclab import args as A
from alloclab.measure import memtool

FORMAT_VERSION = 1  # of drag.json (docs/formats.md)


def add_arguments(sp) -> None:
    A.add_output_dir(sp, "out/drag")
    A.add_allocator(sp)
    A.add_timeout(sp, A.DEFAULT_TOOL_TIMEOUT)
    sp.add_argument("--no-plot", action="store_true", help="skip the PNG")
    A.add_command(sp)


def analyse(obj: dict, clock_end: int) -> dict:
    """The drag figures from the tool's object records (memtool.read_objects)."""
    import numpy as np

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
        "area_actual": area_actual,
        "area_immediate": area_immediate,
        "mean_object_drag": round(float(np.mean(free - last)), 3) if n else 0.0,
        "time_unit": "bytes allocated",
    }


def curves(obj: dict):
    """(t, actual, immediate): heap bytes from each t on, at every change."""
    import numpy as np

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
    import numpy as np

    if t.size <= limit:
        return (t, *ys)
    step = int(np.ceil(t.size / limit))
    idx = np.arange(0, t.size, step)
    return (t[idx], *[np.maximum.reduceat(y, idx) for y in ys])


def plot(obj: dict, path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, act, imm = _thin(*curves(obj))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.step(t, act, where="post", label="actual (freed when the program frees)")
    ax.step(t, imm, where="post", label="freed immediately after last use")
    ax.set_xlabel("allocation time (bytes allocated)")
    ax.set_ylabel("heap bytes live")
    ax.set_title(title)
    ax.legend()
    ax.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_drag(cmd, outdir: str, allocator=None, timeout=None, make_plot=True) -> dict:
    r = memtool.run(cmd, outdir, "drag", allocator=allocator, objects=True, timeout=timeout)
    obj = memtool.read_objects(r.prefix + ".objects")
    res = {"format_version": FORMAT_VERSION, **analyse(obj, r.summary.get("clock", 0))}
    res.update({
        "command": list(cmd),
        "allocator": getattr(allocator, "name", allocator) or "glibc",
        "status": r.status,
        "tool": r.summary,
        "tool_wall_s": round(r.wall_s, 3),
    })
    if make_plot and res["objects"]:
        png = os.path.join(outdir, "drag.png")
        plot(obj, png, f"memory over time: {os.path.basename(cmd[0])} (total drag {res['total_drag']})")
        res["plot"] = png
    os.unlink(r.prefix + ".objects")
    os.unlink(r.prefix + ".summary")
    with open(os.path.join(outdir, "drag.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    return res


def main(args) -> int:
    cmd = A.command(args)
    res = run_drag(cmd, args.output, allocator=args.allocator, timeout=args.timeout,
                   make_plot=not args.no_plot)
    drag = res["total_drag"]
    print(f"objects: {res['objects']} ({res['objects_never_freed']} never freed), "
          f"{res['bytes_allocated']} bytes allocated")
    print(f"total drag: {drag if drag is not None else 'undefined (no object outlives its allocation)'}")
    inc = res["peak_increase_percent"]
    print(f"peak memory: actual {res['peak_bytes_actual']} bytes, immediate free "
          f"{res['peak_bytes_immediate']} bytes" + (f" (+{inc:.1f}%)" if inc is not None else ""))
    print(f"results: {os.path.join(args.output, 'drag.json')}"
          + (f"  plot: {res['plot']}" if "plot" in res else ""))
    if res["tool"].get("nested_objects_ignored"):
        print(f"alloclab: note: {res['tool']['nested_objects_ignored']} objects nested inside other "
              "objects were ignored", file=sys.stderr)
    if res["status"] != 0:
        print(f"alloclab: warning: the program ended with status {res['status']}", file=sys.stderr)
        return res["status"]
    return 0


if __name__ == "__main__":
    from alloclab.cli import main as _main
    sys.exit(_main(["drag", *sys.argv[1:]]))
