"""Littering a program's heap before it starts (littering §3.2, Algorithm 3).

The presets are the paper's Table 3::

    Adv_0   no littering
    Adv_1   M = 1,  O = 0.33
    Adv_3   M = 3,  O = 0.66
    Adv_10  M = 10, O = 0.8

API::

    PRESETS                                      # {adv: (multiplier, occupancy)}
    preset(adv) -> (multiplier, occupancy)       # raises LabError for an unknown level
    check_settings(multiplier, occupancy)        # raises LabError
    litter_env(profile_path, multiplier, occupancy, seed=42, log=None) -> dict
    setup(allocator, profile_path, multiplier, occupancy, seed=42, log=None)
        -> (preload list, env dict)              # what a littered run needs
    run_littered(cmd, profile_path, multiplier, occupancy, seed=42, allocator=None,
                 timeout=None, stdout="inherit", stderr="inherit", log=None) -> RunResult
"""

from __future__ import annotations

import math

from alloclab import LabError
from alloclab.core import allocators, runner
from alloclab.measure import profile as profile_mod

PRESETS: dict[int, tuple[float, float]] = {0: (0.0, 0.0), 1: (1.0, 0.33), 3: (3.0, 0.66), 10: (10.0, 0.8)}
DEFAULT_SEED = 42


def preset(adv: int) -> tuple[float, float]:
    if adv not in PRESETS:
        raise LabError(f"unknown littering level Adv_{adv}; choose from {', '.join(map(str, PRESETS))}")
    return PRESETS[adv]


def adv_label(adv) -> str:
    return f"Adv_{adv}"


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


def setup(allocator, profile_path: str | None, multiplier: float, occupancy: float,
          seed: int = DEFAULT_SEED, log: str | None = None) -> tuple[list[str], dict[str, str]]:
    """Preload list and environment for one run (the allocator variant's own
    variables included); multiplier 0 means no littering.

    The allocator comes first in LD_PRELOAD (it defines malloc); the litter
    shim defines no allocator symbol, so it litters whatever malloc resolves to.
    """
    alloc = allocators.find(allocator) if isinstance(allocator, str) else allocator
    preload = list(alloc.preload) if alloc else []
    own = alloc.environ if alloc else {}  # a variant's options (allocators.find)
    if multiplier == 0:
        return preload, own
    check_settings(multiplier, occupancy)
    if int(seed) < 0:
        raise LabError("seed must be a non-negative integer")
    if profile_path is None:
        raise LabError("littering needs a profile (run `alloclab profile` first)")
    import os
    env = {**own, **litter_env(os.path.abspath(profile_path), multiplier, occupancy, seed, log)}
    return preload + [allocators.shim("litter")], env


def run_littered(cmd, profile_path: str, multiplier: float, occupancy: float, seed: int = DEFAULT_SEED,
                 allocator=None, timeout: float | None = None, stdout="inherit", stderr="inherit",
                 log: str | None = None) -> runner.RunResult:
    """Run cmd once on a heap littered per Algorithm 3 (validates the profile first)."""
    check_settings(multiplier, occupancy)
    profile_mod.load_profile(profile_path)
    runner.check_command(cmd)
    preload, env = setup(allocator, profile_path, multiplier, occupancy, seed, log)
    return runner.run(cmd, preload=preload, env=env, timeout=timeout, stdout=stdout, stderr=stderr)
