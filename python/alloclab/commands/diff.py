"""`alloclab diff A B`: what moved between two profiles' allocation sites, or two comparisons."""

from __future__ import annotations

import dataclasses
import os

from alloclab import LabError
from alloclab.commands import sites as sites_command
from alloclab.core.results.runs import read_rows
from alloclab.experiments.compare.diff import diff_runs
from alloclab.measure import sites as site_data

NAME = "diff"
HELP = ("compare two runs: two `profile --stacks` profiles (each site's change in bytes and calls) "
        "or two `compare` directories (each cell's ratio of medians, paired interval)")


def add_arguments(sp) -> None:
    sp.add_argument("a", help="the first: a profile made with --stacks (or its sites directory), "
                              "or a compare output directory")
    sp.add_argument("b", help="the second, of the same kind")
    sp.add_argument("--top", type=int, default=20, help="sites to list (default %(default)s)")


@dataclasses.dataclass
class Plan:
    kind: str      # "sites" | "runs"
    a: str
    b: str
    top: int


def _kind(path: str) -> str:
    if os.path.isdir(path) and os.path.exists(os.path.join(path, "results.csv")):
        return "runs"
    if os.path.exists(path):
        return "sites"
    raise LabError(f"{path}: no such file or directory")


def plan(ns) -> Plan:
    ka, kb = _kind(ns.a), _kind(ns.b)
    if ka != kb:
        raise LabError(f"{ns.a} and {ns.b} are not of one kind (a comparison directory and a profile)")
    if ns.top < 1:
        raise LabError("--top must be at least 1")
    return Plan(ka, ns.a, ns.b, ns.top)


def run(p: Plan):
    if p.kind == "runs":
        return diff_runs(read_rows(os.path.join(p.a, "results.csv")), read_rows(os.path.join(p.b, "results.csv")))
    try:
        a = site_data.load(sites_command.sites_source(p.a))
        b = site_data.load(sites_command.sites_source(p.b))
    except site_data.SitesError as e:
        raise LabError(str(e)) from None
    return site_data.diff(a, b)


def _sites_table(changes, top: int) -> list[str]:
    out = [f"{'bytes change':>14}  {'calls change':>12}  {'A bytes':>12}  {'B bytes':>12}  function"]
    for c in changes[:top]:
        out.append(f"{c.bytes_change:>+14,}  {c.calls_b - c.calls_a:>+12,}  {c.bytes_a:>12,}  {c.bytes_b:>12,}  "
                   f"{c.function.label()}")
    return out


def _runs_table(moves) -> list[str]:
    out = [f"{'cell':<28} {'A median s':>10} {'B median s':>10} {'B/A':>7}  paired 95% interval"]
    for m in moves:
        iv = (f"{m.paired.low:.3f}-{m.paired.high:.3f}" if m.paired and m.paired.n > 1
              else "(one round: no interval)")
        verdict = "moved" if m.clear else "level"
        out.append(f"{m.cell:<28} {m.median_a:>10.4f} {m.median_b:>10.4f} {m.ratio:>7.3f}  {iv} {verdict}")
    return out


def write(p: Plan, result) -> int:
    if p.kind == "runs":
        if not result:
            print("alloclab: the two comparisons have no cell in common")
            return 1
        print("\n".join(_runs_table(result)))
    else:
        print("\n".join(_sites_table(result, p.top)))
    return 0
