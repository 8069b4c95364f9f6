"""Littering a program's heap before it starts (littering §3.2, Algorithm 3).

A run is littered by preloading liballoclab_litter.so after the allocator:
before main it allocates M x max_live objects with sizes drawn from the
profile, then frees all but a fraction O of them at random (the Level's
presets, alloclab.core.levels). The shim logs what it did and how long it
took (LITTER_LOG); read_litter_log() reads that log, so that a run's program
time is its wall time minus the littering's.

API::

    DEFAULT_SEED
    check_settings(multiplier, occupancy)        # raises LabError
    litter_env(profile_path, multiplier, occupancy, seed=42, log=None) -> dict
    setup(allocator, profile_path, multiplier, occupancy, seed=42, log=None)
        -> (preload list, env dict)              # what a littered run needs
    setup_level(allocator, level, profile_path, seed, measured=False) -> (preload, env)
    run_littered(cmd, profile_path, multiplier, occupancy, seed=42, allocator=None,
                 timeout=None, stdout="inherit", stderr="inherit", log=None) -> RunResult
    run_logged(cmd, preload, env, timeout, prepare=None, show_output=False) -> (RunResult, LitterLog)
    LitterLog, read_litter_log(path)
"""

from __future__ import annotations

import math
import os
import re
import tempfile

from alloclab import LabError
from alloclab.core import allocators, runner
from alloclab.core.allocators import Allocator
from alloclab.core.levels import Level
from alloclab.core.results.profile import read_profile

DEFAULT_SEED = 42


def check_settings(multiplier: float, occupancy: float) -> None:
    if not isinstance(multiplier, (int, float)) or math.isnan(multiplier) or multiplier <= 0:
        raise LabError(f"multiplier must be > 0 (got {multiplier})")
    if not isinstance(occupancy, (int, float)) or math.isnan(occupancy) or not 0.0 <= occupancy <= 1.0:
        raise LabError(f"occupancy must be in [0, 1] (got {occupancy})")


def litter_env(profile_path: str, multiplier: float, occupancy: float, seed: int = DEFAULT_SEED,
               log: str | None = None) -> dict[str, str]:
    env = {
        "LITTER_PROFILE": profile_path,
        "LITTER_MULTIPLIER": repr(float(multiplier)),
        "LITTER_OCCUPANCY": repr(float(occupancy)),
        "LITTER_SEED": str(int(seed)),
    }
    if log:
        env["LITTER_LOG"] = log
    return env


def setup(allocator: Allocator | None, profile_path: str | None, multiplier: float, occupancy: float,
          seed: int = DEFAULT_SEED, log: str | None = None) -> tuple[list[str], dict[str, str]]:
    """Preload list and environment for one run (the allocator variant's own
    variables included); multiplier 0 means no littering.

    The allocator comes first in LD_PRELOAD (it defines malloc); the litter
    shim defines no allocator symbol, so it litters whatever malloc resolves to.
    """
    preload = list(allocator.preload) if allocator else []
    own = allocator.environ if allocator else {}  # a variant's options (core.allocators.find)
    if multiplier == 0:
        return preload, own
    check_settings(multiplier, occupancy)
    if int(seed) < 0:
        raise LabError("seed must be a non-negative integer")
    if profile_path is None:
        raise LabError("littering needs a profile (run `alloclab profile` first)")
    env = {**own, **litter_env(os.path.abspath(profile_path), multiplier, occupancy, seed, log)}
    return preload + [allocators.shim("litter")], env


def setup_level(allocator: Allocator, level: Level, profile_path: str | None, seed: int,
                measured: bool = False) -> tuple[list[str], dict[str, str]]:
    """setup() for a Table 3 level. MEASURED: a clean run loads the shim too, littering
    nothing, so that its in-process time is measured exactly as a littered run's."""
    preload, env = setup(allocator, profile_path if level.littered else None, level.multiplier,
                         level.occupancy, seed)
    if measured and not level.littered:
        preload, env = preload + [allocators.shim("litter")], {**env, "LITTER_MULTIPLIER": "0"}
    return preload, env


def run_littered(cmd, profile_path: str, multiplier: float, occupancy: float, seed: int = DEFAULT_SEED,
                 allocator: Allocator | None = None, timeout: float | None = None, stdout="inherit",
                 stderr="inherit", log: str | None = None) -> runner.RunResult:
    """Run cmd once on a heap littered per Algorithm 3 (validates the profile first)."""
    check_settings(multiplier, occupancy)
    read_profile(profile_path)
    runner.check_command(cmd)
    preload, env = setup(allocator, profile_path, multiplier, occupancy, seed, log)
    return runner.run(cmd, preload=preload, env=env, timeout=timeout, stdout=stdout, stderr=stderr)


class LitterLog:
    """What the litter shim logged for one run (every process of it)."""

    def __init__(self, litter_ms: dict | None = None, run_ms: dict | None = None, cpu_ms: dict | None = None):
        self.litter_ms = litter_ms or {}   # pid -> ms spent littering
        self.run_ms = run_ms or {}         # pid -> ms from the end of littering to exit
        self.cpu_ms = cpu_ms or {}         # pid -> CPU ms (user + system) over the same span

    @property
    def littered(self) -> bool:
        return bool(self.litter_ms)

    @property
    def litter_s(self) -> float:
        return sum(self.litter_ms.values()) / 1000.0

    @property
    def inproc_s(self) -> float | None:
        """The longest-lived process's run (normally the one the lab started),
        less the littering of the processes it started, which ran inside it."""
        if not self.run_ms:
            return None
        top = max(self.run_ms, key=self.run_ms.get)
        inner = sum(ms for pid, ms in self.litter_ms.items() if pid != top)
        return max(0.0, (self.run_ms[top] - inner) / 1000.0)


    @property
    def cpu_s(self) -> float | None:
        """The program's CPU time after littering: every process's own, each from the end of its
        littering to its exit (a process's CPU time does not include its children's)."""
        return sum(self.cpu_ms.values()) / 1000.0 if self.cpu_ms else None


def read_litter_log(log_path: str) -> LitterLog:
    out = LitterLog()
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                pid = re.search(r"\bpid=(\d+)", line)
                key = int(pid.group(1)) if pid else -1
                m = re.search(r"\bms=([\d.]+)", line)
                if m:
                    out.litter_ms[key] = out.litter_ms.get(key, 0.0) + float(m.group(1))
                m = re.search(r"\brun_ms=([\d.]+)", line)
                if m:
                    out.run_ms[key] = float(m.group(1))
                m = re.search(r"\bcpu_ms=([\d.]+)", line)
                if m:
                    out.cpu_ms[key] = float(m.group(1))
    except OSError:
        pass
    return out


def run_logged(cmd, preload, env, timeout, prepare: str | None = None, show_output: bool = False):
    """runner.run with the litter log captured; returns (result, LitterLog).

    prepare: a shell command run first (untimed); show_output: the program's
    output goes to the terminal instead of being hashed."""
    if prepare:
        runner.run_prepare(prepare, timeout)
    out = {"stdout": "inherit", "stderr": "inherit"} if show_output else {}
    if not env or "LITTER_MULTIPLIER" not in env:
        return runner.run(cmd, preload=preload, env=env, timeout=timeout, **out), LitterLog()
    with tempfile.TemporaryDirectory(prefix="alloclab-litter-") as tmp:
        log = os.path.join(tmp, "litter.log")
        r = runner.run(cmd, preload=preload, env={**env, "LITTER_LOG": log}, timeout=timeout, **out)
        return r, read_litter_log(log)
