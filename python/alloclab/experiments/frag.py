"""`alloclab frag`: fragmentation as pages in use over live data (Vam §4.4).

    alloclab frag [--allocators LIST] [--adv LIST] [--profile FILE] [-o DIR] -- CMD ARGS...

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
the program; one is made first with `alloclab profile` unless --profile is
given.  DIR/frag.json: per allocator and setting, max_pages_in_use,
max_live_bytes, max_live_pages, fragmentation; DIR/frag.png a bar chart
(Figure 6).
"""

from __future__ import annotations

import json
import math
import os
import sys

from alloclab import args as A
from alloclab.measure import litter, memtool

FORMAT_VERSION = 1  # of frag.json (docs/formats.md)


def add_arguments(sp) -> None:
    A.add_allocators(sp)
    A.add_levels(sp, default="0")
    sp.add_argument("--profile", default=None, help="profile JSON for littering (default: profile first)")
    A.add_seed(sp)
    A.add_timeout(sp, A.DEFAULT_TOOL_TIMEOUT)
    sp.add_argument("--no-plot", action="store_true", help="skip the PNG")
    A.add_output_dir(sp, "out/frag")
    A.add_command(sp)


def fragmentation(max_pages_in_use: int, max_live_bytes: int) -> tuple[int, float | None]:
    live_pages = math.ceil(max_live_bytes / memtool.PAGE_SIZE)
    return live_pages, (round(max_pages_in_use / live_pages, 6) if live_pages else None)


def run_frag(cmd, outdir, allocs, advs, profile_path=None, seed=litter.DEFAULT_SEED, timeout=None) -> dict:
    tools = memtool.find_memtools()
    if any(a != 0 for a in advs) and profile_path is None:
        from alloclab.measure import profile
        profile_path = os.path.join(outdir, "profile.json")
        profile.run_profile(cmd, out=profile_path, timeout=timeout, stdout=None, stderr=None)
    res = {"format_version": FORMAT_VERSION, "command": list(cmd), "page_size": memtool.PAGE_SIZE,
           "profile": profile_path, "seed": seed,
           "allocators": {}}
    for a in allocs:
        row = {}
        for adv in advs:
            m, o = litter.preset(adv)
            preload, env = litter.setup(a, profile_path, m, o, seed=seed)
            # litter.setup puts the allocator first; memtool.run adds it itself.
            extra = [p for p in preload if p not in a.preload]
            label = litter.adv_label(adv)
            r = memtool.run(cmd, outdir, f"{a.name}-{label}", allocator=a, preload=extra, env=env,
                            timeout=timeout, tools=tools)
            os.unlink(r.prefix + ".summary")
            s = r.summary
            live_pages, frag = fragmentation(s["max_pages_in_use"], s["max_live_bytes"])
            row[label] = {"max_pages_in_use": s["max_pages_in_use"], "max_live_bytes": s["max_live_bytes"],
                          "max_live_pages": live_pages, "fragmentation": frag, "status": r.status,
                          "multiplier": m, "occupancy": o}
        res["allocators"][a.name] = row
    return res


def plot(res: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(args) -> int:
    cmd = A.command(args)
    allocs = A.parse_allocators(args.allocators)
    advs = A.parse_levels(args.adv)
    if args.profile is not None and any(advs):
        from alloclab.measure import profile
        profile.load_profile(args.profile)
    os.makedirs(args.output, exist_ok=True)
    res = run_frag(cmd, args.output, allocs, advs, profile_path=args.profile, seed=args.seed,
                   timeout=args.timeout)
    if not args.no_plot:
        res["plot"] = os.path.join(args.output, "frag.png")
        plot(res, res["plot"])
    with open(os.path.join(args.output, "frag.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    status = 0
    print(f"{'allocator':<10} {'setting':<7} {'pages in use':>12} {'live pages':>10} {'fragmentation':>13}")
    for name, row in res["allocators"].items():
        for lab, r in row.items():
            fr = f"{r['fragmentation']:.3f}" if r["fragmentation"] is not None else "-"
            print(f"{name:<10} {lab:<7} {r['max_pages_in_use']:>12} {r['max_live_pages']:>10} {fr:>13}")
            if r["status"] != 0:
                print(f"alloclab: warning: {name}/{lab}: the program ended with status {r['status']}",
                      file=sys.stderr)
                status = 1
    print(f"results: {os.path.join(args.output, 'frag.json')}")
    return status


if __name__ == "__main__":
    from alloclab.cli import main as _main
    sys.exit(_main(["frag", *sys.argv[1:]]))
