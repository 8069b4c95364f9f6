"""What the study runs: its mode's sizes and littering levels, the allocators, and every
program (the bundled workloads in each variant their binary accepts, and the real programs).

Core variants (naive `malloc`, the program's `custom` allocator, `reap`) take
the whole matrix: every allocator, every littering level. The others (the
2002 region emulator, talloc, APR pools, std::pmr) answer clean-heap
questions on glibc only.

API::

    MODES, CORE_VARIANTS, PREFERRED, LOOKS
    Plan                                             # .groups(): workload -> its programs
    default_allocators(mode, notes) -> list[Allocator]   # the PREFERRED ones found here
    plan(mode="default", allocators=None, outdir="out/study", runs=None, ablation=False,
         stage_budget=None) -> Plan
"""

from __future__ import annotations

import dataclasses

from alloclab import LabError
from alloclab.core import allocators as registry
from alloclab.core.levels import Level
from alloclab.experiments import workloads
from alloclab.experiments.study.programs import Program, real_programs

# Variants that take the whole matrix (every allocator, every littering
# level); the others answer clean-heap questions on glibc only.
CORE_VARIANTS = ("malloc", "custom", "reap")

MODES = {
    # scale passed to --scale, littering levels, repeats, warm-up, real programs' size,
    # how many allocators, whether the clean-only variants (emulator, talloc, apr, pmr) run
    "quick": {"scale": "0.1", "advs": [0, 3], "repeat": 2, "warmup": False, "real": 0.15,
              "max_allocators": 4, "like_variants": False, "memory_scale": "0.02",
              "frag_scale": "0.05", "weights_scale": "0.02", "stage_budget": 0},
    "default": {"scale": "0.5", "advs": [0, 3], "repeat": 3, "warmup": False, "real": 1.0,
                "max_allocators": 5, "like_variants": True, "memory_scale": "0.05",
                "frag_scale": "0.3", "weights_scale": "0.5", "stage_budget": 180},
    "full": {"scale": "3", "advs": [0, 1, 3, 10], "repeat": 5, "warmup": True, "real": 3.0,
             "max_allocators": 5, "like_variants": True, "memory_scale": "0.1",
             "frag_scale": "0.3", "weights_scale": "0.5", "stage_budget": 300},
}
# The most staged looks a timed claim may get (stages.py); each look's level is corrected for them.
LOOKS = 2
PREFERRED = ["glibc", "jemalloc", "mimalloc", "vam", "tcmalloc"]


@dataclasses.dataclass
class Plan:
    mode: str
    allocators: list          # Allocator objects, glibc first
    advs: list                # Level
    repeat: int
    warmup: bool
    scale: str
    memory_scale: str
    programs: list            # Program
    notes: list
    seed: int = 42
    frag_scale: str = "0.3"    # fragmentation needs a heap of realistic size: pages round up small ones
    weights_scale: str = "0.5"  # the memory-operations share, measured at the size the study times
    outdir: str = "out/study"
    ablation: bool = False     # also run vam's design-switch ablation (always in full mode)
    stage_budget: float = 0.0  # seconds the staged repeats of unsettled claims may take (stages.py)
    looks: int = LOOKS         # the most stages; each staged look is judged at the level corrected for them
    staged: dict = dataclasses.field(default_factory=dict)   # what the stages ran (run_stages)
    command: list = dataclasses.field(default_factory=list)  # the alloclab command line (the run record)
    phases: dict = dataclasses.field(default_factory=dict)   # seconds each phase took (meta.phases_s)

    def groups(self) -> dict:
        """workload -> its programs, naive variant first."""
        out: dict = {}
        for prog in self.programs:
            out.setdefault(prog.workload, []).append(prog)
        return out

    @property
    def allocator_names(self) -> list:
        return [a.name for a in self.allocators]


def default_allocators(mode: str, notes: list) -> list:
    """The PREFERRED allocators found here, at most the mode's number; why others are left out."""
    allocs = []
    for name in PREFERRED:
        try:
            allocs.append(registry.find(name))
        except LabError as e:
            notes.append(f"{name} left out: {e}")
    return allocs[: MODES[mode]["max_allocators"]]


def _with_glibc(allocs: list) -> list:
    allocs = list(allocs)
    if not any(a.name == "glibc" for a in allocs):
        allocs.insert(0, registry.find("glibc"))
    allocs.sort(key=lambda a: a.name != "glibc")
    return allocs


def _workload_programs(m: dict, notes: list) -> list[Program]:
    programs = []
    for w in workloads.CATALOG:
        binary = workloads.binary(w.name)
        if not binary:
            notes.append(f"workload {w.name} is not built (run make): left out")
            continue
        accepted = workloads.accepted_variants(w.name)
        for v in accepted:
            core = v in CORE_VARIANTS
            if not core and not m["like_variants"]:
                continue
            size = workloads.size_args(w.name, m["scale"])
            programs.append(Program(f"{w.name}/{v}", w.name, v, w.kind, [binary, "--alloc", v, *size],
                                    clean_only=not core, partial=w.partial))
        missing = [v for v in w.variants if v not in accepted]
        if missing:
            notes.append(f"{w.name}: its binary does not accept {', '.join(missing)} (built without them)")
    return programs


def plan(mode: str = "default", allocators=None, outdir: str = "out/study", runs=None,
         ablation: bool = False, stage_budget=None) -> Plan:
    """ALLOCATORS: Allocator objects (default: default_allocators); glibc is always added.
    RUNS: timed runs per program, allocator and level, in place of the mode's. STAGE_BUDGET:
    seconds for the staged repeats of unsettled claims, in place of the mode's (0: none)."""
    if mode not in MODES:
        raise LabError(f"unknown study mode {mode!r} (quick, default, full)")
    if runs is not None and (not isinstance(runs, int) or runs < 1):
        raise LabError(f"runs must be a whole number of at least 1, not {runs!r}")
    if stage_budget is not None and not stage_budget >= 0:
        raise LabError(f"the stages' budget must be a number of seconds, at least 0, not {stage_budget!r}")
    m = MODES[mode]
    notes: list = []
    allocs = _with_glibc(allocators if allocators else default_allocators(mode, notes))
    programs = _workload_programs(m, notes)
    if not m["like_variants"]:
        notes.append(f"{mode} mode: the emulator, talloc, APR and pmr variants are left out")
    programs += real_programs(outdir, m["real"], notes)
    if not programs:
        raise LabError("nothing to run: build the workloads first (make)")
    return Plan(mode, allocs, [Level.of(n) for n in m["advs"]], runs or m["repeat"], m["warmup"], m["scale"],
                m["memory_scale"], programs, notes, frag_scale=m["frag_scale"], weights_scale=m["weights_scale"],
                outdir=outdir, ablation=ablation or mode == "full",
                stage_budget=float(m["stage_budget"] if stage_budget is None else stage_budget))
