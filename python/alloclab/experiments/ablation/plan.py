"""What the ablation runs: a mode's programs (bundled workloads in their naive `malloc`
variant, and real programs, the study's) on vam.

API::

    MODES
    AblationPlan                      # built by plan()
    plan(mode, outdir, vam, only=None, scale=None, rounds=None, cache=True, seed=1, timeout=600,
         command=None) -> AblationPlan
"""

from __future__ import annotations

import dataclasses
import shutil

from alloclab import LabError
from alloclab.core.allocators import Allocator
from alloclab.experiments import workloads
from alloclab.experiments.study.programs import Program, jq_program, real_programs

MODES = {
    # workload scale, real programs' size, timed rounds, which programs
    "quick": {"scale": "0.03", "real": 0.05, "rounds": 2,
              "workloads": ("bignum_factor", "gp_mix"), "real_programs": ("perl",)},
    "default": {"scale": "0.3", "real": 0.3, "rounds": 5,
                "workloads": ("bignum_factor", "gp_mix", "boxed_sim", "compiler", "interp"),
                "real_programs": ("python3/malloc", "perl", "sqlite3/malloc", "jq")},
    "full": {"scale": "1", "real": 1.0, "rounds": 7,
             "workloads": ("bignum_factor", "gp_mix", "boxed_sim", "compiler", "interp", "xalloc_parser",
                           "server"),
             "real_programs": ("python3/malloc", "perl", "sqlite3/malloc", "jq", "gcc")},
}


@dataclasses.dataclass
class AblationPlan:
    mode: str
    outdir: str
    vam: Allocator
    programs: list            # Program
    notes: list
    rounds: int
    scale: str
    real_size: float
    method: str               # "cachegrind" or "off": how D1 and LL misses are counted
    seed: int = 1
    timeout: float = 600
    command: list = dataclasses.field(default_factory=list)


def _workload_programs(names, scale: str, notes: list) -> list[Program]:
    progs = []
    for name in names:
        binary = workloads.binary(name)
        if not binary:
            notes.append(f"workload {name} is not built: left out")
            continue
        progs.append(Program(name, name, "malloc", workloads.find(name).kind,
                             [binary, "--alloc", "malloc", "--scale", scale]))
    return progs


def _real(m: dict, outdir: str, notes: list) -> list[Program]:
    real = {q.name: q for q in real_programs(outdir, m["real"], notes)}
    if "jq" in m["real_programs"]:
        q = jq_program(outdir, m["real"])
        if q:
            real["jq"] = q
        else:
            notes.append("jq is not installed: left out")
    return [real[name] for name in m["real_programs"] if name in real]


def plan_programs(outdir: str, mode: str, only=None, scale=None) -> tuple[list, list]:
    """The programs of a mode: bundled workloads (their naive `malloc` variant,
    every allocation through malloc) and real programs (the study's, reused)."""
    m = dict(MODES[mode])
    if scale is not None:
        m["scale"] = str(scale)
    notes: list = []
    progs = _workload_programs(m["workloads"], m["scale"], notes) + _real(m, outdir, notes)
    if only:
        unknown = [n for n in only if n not in {q.name for q in progs}]
        if unknown:
            raise LabError(f"--programs: {', '.join(unknown)} is not among this mode's programs "
                           f"({', '.join(q.name for q in progs) or 'none available'})")
        progs = [q for q in progs if q.name in only]
    if not progs:
        raise LabError("nothing to run: build the workloads (make) or install perl, python3, sqlite3 or jq")
    return progs, notes


def plan(mode: str, outdir: str, vam: Allocator, only=None, scale=None, rounds=None, cache: bool = True,
         seed: int = 1, timeout: float = 600, command=None) -> AblationPlan:
    if mode not in MODES:
        raise LabError(f"unknown ablation mode {mode!r} (quick, default, full)")
    m = dict(MODES[mode])
    if scale is not None:
        m["scale"] = str(scale)
    progs, notes = plan_programs(outdir, mode, only, scale)
    method = "cachegrind" if cache and shutil.which("valgrind") else "off"
    if cache and method == "off":
        notes.append("valgrind is not installed: D1 and LL misses were not measured")
    return AblationPlan(mode, outdir, vam, progs, notes, rounds or m["rounds"], m["scale"], m["real"], method,
                        seed, timeout, list(command) if command else ["alloclab", "ablation", f"--{mode}"])
