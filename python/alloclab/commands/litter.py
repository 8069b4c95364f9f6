"""`alloclab litter`: run a program once on a littered heap."""

from __future__ import annotations

import dataclasses

from alloclab import LabError
from alloclab.commands import arguments as A
from alloclab.core import runner
from alloclab.core.allocators import Allocator
from alloclab.core.results.profile import read_profile
from alloclab.measure import litter

NAME = "litter"
HELP = "run a program once on a littered heap"


def add_arguments(sl) -> None:
    sl.add_argument("--profile", required=True, help="profile JSON from `alloclab profile`")
    A.add_level(sl)
    sl.add_argument("--multiplier", type=A.fraction_type(), help="M: allocate M x max_live objects")
    sl.add_argument("--occupancy", type=A.fraction_type(), help="O: fraction left live, in [0,1]")
    A.add_seed(sl)
    A.add_allocator(sl)
    sl.add_argument("--log", type=A.typed(A.parse_output_file), default=None, metavar="FILE",
                    help="append the litter log line here instead of stderr")
    A.add_timeout(sl, A.DEFAULT_TIMEOUT)
    A.add_command(sl)


@dataclasses.dataclass
class Plan:
    cmd: list
    profile: str
    multiplier: float
    occupancy: float
    seed: int
    allocator: Allocator | None
    log: str | None
    timeout: float | None
    clean: bool = False        # --adv 0: no littering, on the chosen allocator all the same


def plan(ns) -> Plan:
    cmd = A.command(ns)
    if ns.adv is not None:
        if ns.multiplier is not None or ns.occupancy is not None:
            raise LabError("give either --adv or --multiplier/--occupancy, not both")
        m, o = ns.adv.multiplier, ns.adv.occupancy
    else:
        if ns.multiplier is None or ns.occupancy is None:
            raise LabError("give --adv, or both --multiplier and --occupancy")
        m, o = ns.multiplier, ns.occupancy
    clean = ns.adv is not None and not ns.adv.littered
    if not clean:
        litter.check_settings(m, o)
    read_profile(ns.profile)
    return Plan(cmd, ns.profile, m, o, ns.seed, ns.allocator, ns.log, ns.timeout, clean)


def run(p: Plan) -> runner.RunResult:
    if p.clean:
        preload, env = litter.setup(p.allocator, None, 0, 0)
        return runner.run(p.cmd, preload=preload, env=env, timeout=p.timeout, stdout="inherit", stderr="inherit")
    return litter.run_littered(p.cmd, p.profile, p.multiplier, p.occupancy, seed=p.seed, allocator=p.allocator,
                               timeout=p.timeout, log=p.log)


def write(p: Plan, r: runner.RunResult) -> int:
    return r.exit_status
