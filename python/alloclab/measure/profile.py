"""Profiling a program's allocations (littering §3.1) with liballoclab_profile.so.

Every process of the program writes its own record (the first process
``OUT``, forked or exec'd descendants ``OUT.<pid>.<k>``, see docs/lab.md);
run_profile() merges them into one profile:

* allocations, bytes, ignored and every size count are **summed** over processes;
* max_live and max_live_bytes are the **maximum over processes** (littering
  preconditions one process's heap, so the largest single heap is what counts);
* mean_size is recomputed from the sums;
* "processes" lists each record's pid, exe, allocations and max_live.

The profile file's reader and writer are alloclab.core.results.profile.

API::

    run_profile(cmd, out=None, cutoff=4096, allocator=None, timeout=None, stacks=False) -> Profile
    sites_dir(out) -> str               # where --stacks puts the allocation sites of profile OUT
    merge_records(records: list[dict]) -> dict
    read_records(out) -> list[dict]
    NoProfile                           # LabError when the program left no record; .result is its run
    warnings(profile, env=None) -> list[str]   # what the profile cannot show, or littering cannot change
    FEW_LIVE
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile

from alloclab import LabError
from alloclab.core import allocators, runner
from alloclab.core.allocators import Allocator
from alloclab.core.results.profile import FORMAT, Profile, validate, write_profile

DEFAULT_CUTOFF = 4096
# Below this many objects live at once a heap barely fragments: littering with M times the
# profile's objects leaves the program's own allocations almost where they would be.
FEW_LIVE = 1000
# CPython's settings that let malloc see every object (its own allocator serves those up to 512 bytes).
_PYMALLOC_OFF = ("malloc", "malloc_debug")


class NoProfile(LabError):
    """The program wrote no profile record (killed by a signal, statically linked, ...)."""

    def __init__(self, message: str, result=None):
        super().__init__(message)
        self.result = result


def merge_records(records: list[dict]) -> dict:
    """One profile from per-process records (see the module docstring)."""
    if not records:
        raise LabError("no profile records to merge")
    cutoffs = {r["cutoff"] for r in records}
    if len(cutoffs) != 1:
        raise LabError(f"records disagree on the cutoff: {sorted(cutoffs)}")
    sizes: dict[int, int] = {}
    for r in records:
        for k, v in r["sizes"].items():
            sizes[int(k)] = sizes.get(int(k), 0) + int(v)
    allocations = sum(r["allocations"] for r in records)
    total = sum(r["bytes"] for r in records)
    root = next((r for r in records if r.get("root")), records[0])
    merged = {
        "format_version": FORMAT.version,
        "allocations": allocations,
        "bytes": total,
        "max_live": max(r["max_live"] for r in records),
        "max_live_bytes": max(r["max_live_bytes"] for r in records),
        "mean_size": round(total / allocations, 3) if allocations else 0.0,
        "cutoff": cutoffs.pop(),
        "ignored": sum(r["ignored"] for r in records),
        "sizes": {str(k): sizes[k] for k in sorted(sizes)},
        "pid": root.get("pid"),
        "allocator": root.get("allocator", ""),
        "unknown_frees": sum(r.get("unknown_frees", 0) for r in records),
        "merge": "counts summed over processes; max_live and max_live_bytes are the maximum over processes",
        "processes": [
            {k: r.get(k) for k in ("pid", "ppid", "root", "exe", "written_at", "allocations", "max_live",
                                   "max_live_bytes")}
            for r in records
        ],
    }
    return merged


def read_records(out: str) -> list[dict]:
    """Records written for output path `out` (the root's file and every OUT.<pid>.<k>)."""
    paths = ([out] if os.path.exists(out) else []) + sorted(glob.glob(glob.escape(out) + ".*.*"))
    records = []
    for p in paths:
        try:
            with open(p, encoding="utf-8") as f:
                records.append(json.load(f))
        except (OSError, json.JSONDecodeError) as e:
            raise LabError(f"unreadable profile record {p!r}: {e}") from None
    return records


def sites_dir(out: str) -> str:
    """The directory `--stacks` writes the allocation sites of profile OUT into: OUT.sites."""
    return out + ".sites"


def _sites_setup(out: str | None) -> tuple[list, dict]:
    """(preload, env) that record allocation sites into sites_dir(out), emptied first. The sites
    shim goes first, so the stacks it captures start in the program, not in another shim."""
    if out is None:
        raise LabError("--stacks needs an output file (-o): the sites go in a directory beside it")
    try:
        so = allocators.shim("sites")
    except LabError:
        raise LabError("--stacks needs liballoclab_sites.so, which is built only with libunwind "
                       "(scripts/bootstrap installs libunwind-dev; then make)") from None
    d = sites_dir(out)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return [so], {"ALLOCLAB_SITES_DIR": os.path.abspath(d)}


def run_profile(cmd, out: str | None = None, cutoff: int = DEFAULT_CUTOFF, allocator: Allocator | None = None,
                timeout: float | None = None, stdout="inherit", stderr="inherit", stacks: bool = False) -> Profile:
    """Run cmd under the profile shim and return the merged profile.

    out        also write the merged profile there (JSON)
    allocator  the allocator to profile on top of; default glibc
    stacks     also record allocation sites by call stack into sites_dir(out); the profile's
               "sites" names that directory (relative to the profile)
    The profile's "run" holds the RunResult fields of the run.
    Raises LabError when the program cannot run or wrote no record.
    """
    if not isinstance(cutoff, int) or cutoff < 1 or cutoff > (1 << 20):
        raise LabError("cutoff must be an integer in [1, 1048576]")
    runner.check_command(cmd)
    site_preload, site_env = _sites_setup(out) if stacks else ([], {})
    preload = site_preload + [allocators.shim("profile")] + (allocator.preload if allocator else [])
    with tempfile.TemporaryDirectory(prefix="alloclab-profile-") as tmp:
        rec = os.path.join(tmp, "record.json")
        env = {**(allocator.environ if allocator else {}), **site_env, "ALLOCLAB_PROFILE_OUT": rec,
               "ALLOCLAB_PROFILE_CUTOFF": str(cutoff)}
        res = runner.run(cmd, preload=preload, env=env, timeout=timeout, stdout=stdout,
                         stderr=stderr, unset=("ALLOCLAB_PROFILE_CHILD",))
        records = read_records(rec)
    if not records:
        why = (f"it was killed by signal {res.signal}, and a process killed by a signal writes no record"
               if res.signal else f"status {res.status}; is it statically linked?")
        raise NoProfile(f"{cmd[0]!r} wrote no profile record ({why})", res)
    merged = merge_records(records)
    merged["command"] = list(cmd)
    merged["run"] = {"status": res.status, "exit_code": res.exit_code, "signal": res.signal,
                     "wall_s": round(res.wall_s, 6)}
    if stacks:
        merged["sites"] = os.path.basename(sites_dir(out))
    profile = Profile(validate(merged))
    if out:
        write_profile(profile, out)
    return profile


def warnings(profile: Profile, env: dict | None = None) -> list[str]:
    """What a reader of the profile should know before littering with it: a program that serves
    its objects from its own allocator (CPython's pymalloc, unless PYTHONMALLOC=malloc; most of
    its requests at or above the cutoff, as from an arena), and a heap with too few live objects
    for littering to change. `env`: the run's environment (default: this process's)."""
    env = os.environ if env is None else env
    out = []
    pythons = [p for p in profile.processes if os.path.basename(p.get("exe") or "").startswith("python")]
    if pythons and env.get("PYTHONMALLOC", "") not in _PYMALLOC_OFF:
        out.append(f"{os.path.basename(pythons[0]['exe'])} serves objects of up to 512 bytes from its own "
                   f"allocator (pymalloc), which malloc never sees: the {profile.allocations:,} allocations "
                   "profiled are pymalloc's arenas and the larger objects. Run it with PYTHONMALLOC=malloc "
                   "to profile and litter what the program allocates")
    if profile.allocations and profile.ignored > profile.allocations // 2:
        out.append(f"{profile.ignored:,} of {profile.allocations:,} requests are of {profile.cutoff} bytes or "
                   "more: the program may carve its objects from arenas of its own (a bump or pool "
                   "allocator), which neither profiling nor littering sees")
    if profile.max_live < FEW_LIVE:
        out.append(f"at most {profile.max_live:,} objects were live at once (fewer than {FEW_LIVE:,}): a heap "
                   "this small barely fragments, so littering will change little; give it a larger input")
    return out
