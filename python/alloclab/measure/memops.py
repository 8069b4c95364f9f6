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

API::

    measure(cmd, timeout=None, extra=None) -> dict
    share_from_callgrind(path, extra=None) -> dict

`python -m alloclab.measure.memops PROGRAM [ARGS...]` prints the share as JSON.
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


def measure(cmd: list[str], timeout: float | None = None, extra: str | None = None) -> dict:
    """Runs `cmd` under callgrind and returns
    {"memops_share", "instructions", "memops_instructions", "method": "callgrind"}.
    The program must exit with status 0."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise LabError("valgrind is not installed: the memory-operations share is measured with "
                       "callgrind (Debian: apt-get install valgrind)")
    if not cmd:
        raise LabError("memops.measure: empty command")
    with tempfile.TemporaryDirectory(prefix="alloclab-memops-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        full = [valgrind, "--tool=callgrind", "--quiet", f"--callgrind-out-file={out}", *cmd]
        # glibc, as the paper's numbers are for the system allocator: nothing preloaded
        r = runner.run(full, timeout=timeout, unset=("LD_PRELOAD",))
        if r.status == "timeout":
            raise LabError(f"memops: {' '.join(cmd)} did not finish under callgrind in {timeout} s")
        if not r.ok:
            raise LabError(f"memops: {' '.join(cmd)} exited with status {r.exit_status} under "
                           f"callgrind:\n{r.stderr_tail[-2000:]}")
        if not os.path.exists(out):
            raise LabError(f"memops: callgrind wrote no profile for {' '.join(cmd)}")
        return share_from_callgrind(out, extra)


def main(argv: list[str] | None = None) -> int:
    """python -m alloclab.measure.memops PROGRAM [ARGS...]: prints the share as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m alloclab.measure.memops PROGRAM [ARGS...]", file=sys.stderr)
        return 2 if not args else 0
    try:
        print(json.dumps(measure(args)))
    except LabError as e:
        print(f"alloclab: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
