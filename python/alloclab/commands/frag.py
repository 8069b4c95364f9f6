"""`alloclab frag`: fragmentation, max heap pages in use over max live data (needs valgrind)."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab.commands import arguments as A
from alloclab.core.results.profile import read_profile
from alloclab.experiments import frag

NAME = "frag"
HELP = "fragmentation: max heap pages in use / max live data (needs valgrind)"


def add_arguments(sp) -> None:
    A.add_allocators(sp)
    A.add_levels(sp, default="0")
    sp.add_argument("--profile", default=None, help="profile JSON for littering (default: profile first)")
    A.add_seed(sp)
    A.add_timeout(sp, A.DEFAULT_TOOL_TIMEOUT)
    sp.add_argument("--no-plot", action="store_true", help="skip the PNG")
    A.add_output_dir(sp, "out/frag")
    A.add_command(sp)


@dataclasses.dataclass
class Plan:
    cmd: list
    outdir: str
    allocators: list     # Allocator
    levels: list         # Level
    profile: str | None
    seed: int
    timeout: float | None
    plot: bool


def plan(ns) -> Plan:
    cmd = A.command(ns)
    if ns.profile is not None and any(lv.littered for lv in ns.adv):
        read_profile(ns.profile)
    return Plan(cmd, ns.output, ns.allocators, ns.adv, ns.profile, ns.seed, ns.timeout, not ns.no_plot)


def run(p: Plan) -> dict:
    os.makedirs(p.outdir, exist_ok=True)
    res = frag.run_frag(p.cmd, p.outdir, p.allocators, p.levels, profile_path=p.profile, seed=p.seed,
                        timeout=p.timeout)
    return res


def write(p: Plan, res: dict) -> int:
    frag.write(res, p.outdir, p.plot)
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
    print(f"results: {os.path.join(p.outdir, 'frag.json')}")
    return status
