"""`alloclab allocators`: the allocators found on this machine, and where the lab's parts are."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab.commands import arguments as A
from alloclab.core import allocators, paths

NAME = "allocators"
HELP = "list the allocators found on this machine and where the lab's parts are"


def add_arguments(sa) -> None:
    sa.add_argument("paths", nargs="*", type=A.typed(A.parse_allocator), help="extra .so paths to describe")


@dataclasses.dataclass
class Plan:
    extras: list        # Allocator, given as paths


@dataclasses.dataclass
class Result:
    found: list         # Allocator
    missing: list       # "name: why"
    shims: str | None   # the directory of the lab's shims


def plan(ns) -> Plan:
    return Plan(list(ns.paths or []))


def run(p: Plan) -> Result:
    missing: list = []
    found = allocators.available(missing=missing)
    return Result(found + p.extras, missing, allocators.lab_libdir())


def write(p: Plan, r: Result) -> int:
    rows = [("name", "version", "library")]
    rows += [(a.name, a.version, a.path or "(system allocator, nothing preloaded)") for a in r.found]
    w = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(v.ljust(w[i]) for i, v in enumerate(row)).rstrip())
    for m in r.missing:
        print(f"not available: {m}", file=sys.stderr)
    print(f"lab shims: {r.shims or 'not found'}", file=sys.stderr)
    env = os.environ.get(paths.ENV)
    print(f"native parts are searched in: ${paths.ENV} (" + (env or "unset") + "), "
          + ", ".join(d for d in paths.roots() if d not in (env or "").split(":")), file=sys.stderr)
    return 0
