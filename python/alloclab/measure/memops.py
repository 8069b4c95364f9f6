"""The share of a program's work spent in memory-management operations.

The 2002 paper's Table 3 gives, per program, the percentage of runtime in
memory-management operations (197.parser 41.8%, mudlle 33.7%, ...). This
module measures the same quantity deterministically: it runs the program
under callgrind and divides the instructions executed inside the allocator
by all the instructions the program executed.

"Inside the allocator" is the inclusive cost of every call that enters an
allocator function from a function that is not one: the call edges of the
callgrind profile, read from its output file, so that a call to malloc from
operator new, or to _int_malloc from malloc, is not counted twice, and what
the allocator itself calls (mmap, brk, memset in calloc) is counted once.
Allocator functions are glibc's entry points (malloc, free, calloc, realloc,
the memalign family, malloc_usable_size), their internals (_int_malloc,
_int_free, sysmalloc, malloc_consolidate, tcache_*, ...) and C++'s
operator new and delete; `extra` adds names of a custom allocator's own
functions (a regular expression, e.g. r"^reap_").

The program is run as is, on glibc (no LD_PRELOAD is added); the study uses
the naive (malloc) variant, as the paper measured with the custom allocator
replaced by the system's.

Instructions are not time: an allocator's instructions miss the caches more
or less often than the program's own. `measure_cycles` estimates the share of
*time* instead: it runs the program under cachegrind at the lab's fixed cache
geometry (measure/cache.py's GEOMETRY, address randomization off) and weighs
each function's counts into cycles as

    cycles = Ir + 10 * (I1mr + D1mr + D1mw) + 100 * (ILmr + DLmr + DLmw)

that is, one cycle per instruction, ten per first-level miss and a hundred
per last-level miss: KCachegrind's cycle estimate, with the per-miss costs of
the order the Cachegrind manual gives (an L1 miss about 10 cycles, an LL miss
up to 200); branch mispredictions are not simulated. Cachegrind counts per
function, without call edges, so the share is the allocator functions' own
(exclusive) cycles: what they call outside themselves (memcpy in realloc,
memset in calloc, the mmap and brk wrappers) is the program's.

API::

    measure(cmd, timeout=None, extra=None) -> dict
    share_from_callgrind(path, extra=None) -> dict
    measure_cycles(cmd, timeout=None, extra=None) -> dict
    cycles_from_cachegrind(path, extra=None) -> dict
    CYCLE_WEIGHTS                                  # event -> cycles per event

`python -m alloclab.measure.memops [--cycles] PROGRAM [ARGS...]` prints the share as JSON.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile

from alloclab import LabError
from alloclab.core import runner
from alloclab.measure.cache import GEOMETRY, no_aslr

# glibc's public entry points and C++'s allocation operators
_ENTRY = re.compile(
    r"^(?:__libc_|__GI___libc_|__GI_)?"
    r"(?:malloc|free|cfree|calloc|realloc|reallocarray|memalign|posix_memalign|aligned_alloc"
    r"|valloc|pvalloc|malloc_usable_size|malloc_trim)$"
    r"|^operator new(?:\[\])?\(|^operator delete(?:\[\])?\("
)
# glibc malloc's internals (malloc/malloc.c, malloc/arena.c)
_INTERNAL = re.compile(
    r"^(?:_int_(?:malloc|free|realloc|memalign)|sysmalloc|systrim|malloc_consolidate|tcache_\w+"
    r"|ptmalloc_init\S*|arena_get2\S*|_int_new_arena|new_heap|heap_trim|shrink_heap"
    r"|munmap_chunk|mremap_chunk|unlink_chunk\S*|malloc_printerr|__malloc_arena_thread_freeres"
    r"|_mid_memalign|__libc_malloc2?|_int_free_merge_chunk|_int_free_create_chunk"
    r"|_int_free_maybe_consolidate)(?:\.part\.\d+|\.constprop\.\d+|\.isra\.\d+)*$"
)


def is_allocator_function(name: str, extra: re.Pattern | None = None) -> bool:
    return bool(_ENTRY.search(name) or _INTERNAL.search(name) or (extra is not None and extra.search(name)))


def share_from_callgrind(path: str, extra: str | None = None) -> dict:
    """Reads a callgrind output file: the program's instructions (the Ir
    summary) and the inclusive instructions of calls entering the allocator
    from outside it."""
    extra_re = re.compile(extra) if extra else None
    names: dict[str, str] = {}     # compressed id -> function name
    is_alloc: dict[str, bool] = {}  # name -> allocator function?
    total = None
    memops = 0
    caller = ""
    callee = ""
    pending_call = False
    ir_index = None
    npos = 1  # position columns before the costs ("positions: line" by default)

    def resolve(spec: str) -> str:
        spec = spec.strip()
        m = re.match(r"\((\d+)\)\s*(.*)$", spec)
        if not m:
            return spec
        ident, name = m.group(1), m.group(2)
        if name:
            names[ident] = name
            return name
        return names.get(ident, "?" + ident)

    def alloc(name: str) -> bool:
        v = is_alloc.get(name)
        if v is None:
            v = is_alloc[name] = is_allocator_function(name, extra_re)
        return v

    with open(path, errors="replace") as f:
        for line in f:
            if pending_call:
                pending_call = False
                fields = line.split()
                # "<positions> <Ir> ..." (a position may be compressed: +N, -N, *)
                if ir_index is not None and len(fields) > npos + ir_index:
                    if alloc(callee) and not alloc(caller):
                        memops += int(fields[npos + ir_index])
                continue
            if line.startswith("fn="):
                caller = resolve(line[3:])
            elif line.startswith("cfn="):
                callee = resolve(line[4:])
            elif line.startswith("calls="):
                pending_call = True
            elif line.startswith("positions:"):
                npos = len(line.split()[1:])
            elif line.startswith("events:"):
                events = line.split()[1:]
                if "Ir" not in events:
                    raise LabError(f"{path}: no Ir event in the callgrind output")
                ir_index = events.index("Ir")
            elif line.startswith("summary:") or line.startswith("totals:"):
                values = line.split()[1:]
                if ir_index is not None and len(values) > ir_index:
                    total = int(values[ir_index])
    if not total:
        raise LabError(f"{path}: no instruction total in the callgrind output")
    return {"memops_share": memops / total, "instructions": total,
            "memops_instructions": memops, "method": "callgrind"}


def _under_valgrind(tool: str, options: list[str], cmd: list[str], timeout, read, extra):
    """Runs `cmd` under valgrind's TOOL (OPTIONS before the program) on glibc and returns
    READ(its output file, EXTRA). The program must exit with status 0."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise LabError(f"valgrind is not installed: the memory-operations share is measured with {tool} "
                       "(Debian: apt-get install valgrind)")
    if not cmd:
        raise LabError("memops: empty command")
    with tempfile.TemporaryDirectory(prefix="alloclab-memops-") as tmp:
        out = os.path.join(tmp, f"{tool}.out")
        prefix = no_aslr() if tool == "cachegrind" else []
        full = [*prefix, valgrind, f"--tool={tool}", *options, f"--{tool}-out-file={out}", *cmd]
        # glibc, as the paper's numbers are for the system allocator: nothing preloaded
        r = runner.run(full, timeout=timeout, unset=("LD_PRELOAD",))
        if r.status == "timeout":
            raise LabError(f"memops: {' '.join(cmd)} did not finish under {tool} in {timeout} s")
        if not r.ok:
            raise LabError(f"memops: {' '.join(cmd)} exited with status {r.exit_status} under "
                           f"{tool}:\n{r.stderr_tail[-2000:]}")
        if not os.path.exists(out):
            raise LabError(f"memops: {tool} wrote no profile for {' '.join(cmd)}")
        return read(out, extra)


def measure(cmd: list[str], timeout: float | None = None, extra: str | None = None) -> dict:
    """Runs `cmd` under callgrind and returns
    {"memops_share", "instructions", "memops_instructions", "method": "callgrind"}.
    The program must exit with status 0."""
    return _under_valgrind("callgrind", ["--quiet"], cmd, timeout, share_from_callgrind, extra)


# cycles per event of the cycle estimate (see the module's docstring)
CYCLE_WEIGHTS = {"Ir": 1, "I1mr": 10, "D1mr": 10, "D1mw": 10, "ILmr": 100, "DLmr": 100, "DLmw": 100}


def _cycles(events: list[str], values: list[int]) -> int:
    return sum(CYCLE_WEIGHTS.get(e, 0) * v for e, v in zip(events, values))


def cycles_from_cachegrind(path: str, extra: str | None = None) -> dict:
    """Reads a cachegrind output file: the estimated cycles of the whole run and of the
    allocator's functions (their own counts), and the share they make."""
    extra_re = re.compile(extra) if extra else None
    events: list[str] = []
    per_fn: dict[str, list[int]] = {}
    summary = None
    current = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("fn="):
                current = per_fn.setdefault(line[3:].strip(), [0] * len(events))
            elif line[:1].isdigit() and current is not None:
                for i, v in enumerate(line.split()[1:len(events) + 1]):
                    current[i] += int(v)
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = [int(v) for v in line.split()[1:]]
    missing = [e for e in CYCLE_WEIGHTS if e not in events]
    if missing:
        raise LabError(f"{path}: cachegrind counted no {', '.join(missing)} (run it with --cache-sim=yes)")
    if summary is None:
        summary = [sum(c[i] for c in per_fn.values()) for i in range(len(events))]
    total = _cycles(events, summary)
    alloc = [c for name, c in per_fn.items() if is_allocator_function(name, extra_re)]
    memops = sum(_cycles(events, c) for c in alloc)
    ir = events.index("Ir")
    if not total:
        raise LabError(f"{path}: no counts in the cachegrind output")
    return {"memops_share": memops / total, "cycles": total, "memops_cycles": memops,
            "instructions": summary[ir], "memops_instructions": sum(c[ir] for c in alloc),
            "method": "cachegrind cycle estimate"}


def measure_cycles(cmd: list[str], timeout: float | None = None, extra: str | None = None) -> dict:
    """Runs `cmd` under cachegrind (GEOMETRY, no address randomization) on glibc and returns
    cycles_from_cachegrind's dict. The program must exit with status 0."""
    geometry = [f"--{level}={GEOMETRY[level]}" for level in ("I1", "D1", "LL")]
    return _under_valgrind("cachegrind", ["--cache-sim=yes", *geometry], cmd, timeout, cycles_from_cachegrind,
                           extra)


def main(argv: list[str] | None = None) -> int:
    """python -m alloclab.measure.memops PROGRAM [ARGS...]: prints the share as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m alloclab.measure.memops [--cycles] PROGRAM [ARGS...]", file=sys.stderr)
        return 2 if not args else 0
    try:
        if args[0] == "--cycles":
            print(json.dumps(measure_cycles(args[1:])))
        else:
            print(json.dumps(measure(args)))
    except LabError as e:
        print(f"alloclab: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
