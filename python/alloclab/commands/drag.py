"""`alloclab drag`: object drag, heap size against freeing at last use (needs valgrind)."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab.commands import arguments as A
from alloclab.core.allocators import Allocator
from alloclab.experiments import drag

NAME = "drag"
HELP = "object drag: heap size vs. freeing at last use (needs valgrind)"


def add_arguments(sp) -> None:
    A.add_output_dir(sp, "out/drag")
    A.add_allocator(sp)
    A.add_timeout(sp, A.DEFAULT_TOOL_TIMEOUT)
    sp.add_argument("--no-plot", action="store_true", help="skip the PNG")
    A.add_command(sp)


@dataclasses.dataclass
class Plan:
    cmd: list
    outdir: str
    allocator: Allocator | None
    timeout: float | None
    plot: bool


def plan(ns) -> Plan:
    return Plan(A.command(ns), ns.output, ns.allocator, ns.timeout, not ns.no_plot)


def run(p: Plan) -> dict:
    return drag.run_drag(p.cmd, p.outdir, allocator=p.allocator, timeout=p.timeout, make_plot=p.plot)


def write(p: Plan, res: dict) -> int:
    total = res["total_drag"]
    print(f"objects: {res['objects']} ({res['objects_never_freed']} never freed), "
          f"{res['bytes_allocated']} bytes allocated")
    if res.get("startup_objects"):
        print(f"left out: {res['startup_objects']} start-up objects ({res['startup_bytes']} bytes) made before "
              "main and never used once it began")
    elif not res["tool"].get("main_seen"):
        print("alloclab: note: no function `main` was seen (a stripped program?): start-up objects are counted "
              "as the program's", file=sys.stderr)
    print(f"total drag: {total if total is not None else 'undefined (no object outlives its allocation)'}")
    inc = res["peak_increase_percent"]
    print(f"peak memory: actual {res['peak_bytes_actual']} bytes, immediate free "
          f"{res['peak_bytes_immediate']} bytes" + (f" (+{inc:.1f}%)" if inc is not None else ""))
    print(f"results: {os.path.join(p.outdir, 'drag.json')}" + (f"  plot: {res['plot']}" if "plot" in res else "")
          + f"  the program's output: {os.path.join(p.outdir, res['program_stdout'])}")
    if res["tool"].get("nested_objects_ignored"):
        print(f"alloclab: note: {res['tool']['nested_objects_ignored']} objects nested inside other "
              "objects were ignored", file=sys.stderr)
    if res["status"] != 0:
        print(f"alloclab: warning: the program ended with status {res['status']}", file=sys.stderr)
        return res["status"]
    return 0
