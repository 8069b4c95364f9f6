"""`alloclab profile`: record allocation sizes and peak live objects of a program."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab.commands import arguments as A
from alloclab.core.allocators import Allocator
from alloclab.core.results.profile import Profile
from alloclab.core.runner import RunResult
from alloclab.measure import profile as profiling

NAME = "profile"
HELP = "record allocation sizes and peak live objects of a program"


def add_arguments(sp) -> None:
    A.add_output_file(sp, "alloclab-profile.json", "profile JSON")
    sp.add_argument("--cutoff", type=A.count_type(1), default=4096,
                    help="histogram sizes below this (default %(default)s)")
    A.add_allocator(sp, "allocator to profile on (default glibc)")
    sp.add_argument("--stacks", action="store_true",
                    help="also record allocation sites by call stack (into OUTPUT.sites; read them with "
                         "`alloclab sites OUTPUT`)")
    A.add_timeout(sp, A.DEFAULT_TIMEOUT)
    A.add_command(sp)


@dataclasses.dataclass
class Plan:
    cmd: list
    output: str
    cutoff: int
    allocator: Allocator | None
    timeout: float | None
    stacks: bool = False


@dataclasses.dataclass
class Result:
    profile: Profile | None
    failed: RunResult | None = None     # the program failed and left no record
    why: str = ""


def plan(ns) -> Plan:
    return Plan(A.command(ns), ns.output, ns.cutoff, ns.allocator, ns.timeout, ns.stacks)


def run(p: Plan) -> Result:
    try:
        return Result(profiling.run_profile(p.cmd, out=p.output, cutoff=p.cutoff, allocator=p.allocator,
                                            timeout=p.timeout, stacks=p.stacks))
    except profiling.NoProfile as e:
        if e.result is None or e.result.ok:
            raise
        return Result(None, e.result, str(e))


def write(p: Plan, r: Result) -> int:
    if r.profile is None:
        # The program's own failure: its status, as for any other run (no profile written).
        print(f"alloclab: {r.why}; no profile written", file=sys.stderr)
        return r.failed.exit_status
    prof = r.profile
    procs = len(prof.processes)
    print(f"alloclab: profile written to {p.output}: {prof.allocations} allocations, {prof.bytes} bytes, "
          f"max_live {prof.max_live} ({prof.max_live_bytes} bytes), mean size {prof.mean_size}, "
          f"{len(prof.sizes)} distinct sizes below {prof.cutoff}, {prof.ignored} at or above"
          + (f"; merged from {procs} processes" if procs > 1 else ""), file=sys.stderr)
    for w in profiling.warnings(prof, {**os.environ, **(p.allocator.environ if p.allocator else {})}):
        print(f"alloclab: warning: {w}", file=sys.stderr)
    if p.stacks:
        print(f"alloclab: allocation sites in {profiling.sites_dir(p.output)}: "
              f"`alloclab sites {p.output}` ranks them", file=sys.stderr)
    run_ = prof.run
    if run_["status"] != "ok":
        print(f"alloclab: warning: the program ended with status {run_['status']}"
              + (f" (signal {run_['signal']})" if run_.get("signal") else ""), file=sys.stderr)
        return run_["exit_code"] if run_["exit_code"] is not None else 128 + (run_["signal"] or 0)
    return 0
