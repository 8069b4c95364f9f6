"""Running a program under the alloclab-mem Valgrind tool (docs/memory.md).

The tool (``alloclab-mem-amd64-linux``) is an external Valgrind tool: it is
run as ``valgrind --tool=alloclab-mem`` with ``VALGRIND_LIB`` naming a
directory that holds it next to Valgrind's own files (vgpreload_core, the
suppressions, ...).  We make such a directory per run: symbolic links to the
system's Valgrind files plus the tool.

Heap objects reach the tool from ``liballoclab_memshim.so``, preloaded in
front of the allocator under test, which it forwards to; the allocator runs
unchanged.

API::

    find_memtools() -> MemTools            # raises LabError when not built
    run(cmd, outdir, name, allocator=None, preload=(), env=None,
        objects=False, trace=False, timeout=None) -> ToolRun   # through core.runner, like every run
    read_objects(path) -> dict of numpy arrays (alloc, last, free, size, freed, startup)
    pagesim(trace, sizes=(), fractions=()) -> dict

The tool, the shim and the simulator are found through alloclab.core.paths (the
one search order of every native part; see docs/lab.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import shutil
import subprocess
import tempfile

from alloclab import LabError
from alloclab.core import paths, runner
from alloclab.core.allocators import Allocator

TOOL_NAME = "alloclab-mem"
TOOL_FILE = "alloclab-mem-amd64-linux"
SHIM_FILE = "liballoclab_memshim.so"
PAGESIM_FILE = "alloclab-pagesim"
PAGE_SIZE = 4096

VALGRIND_LIBDIRS = ["/usr/libexec/valgrind", "/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib/valgrind",
                    "/usr/lib64/valgrind", "/usr/local/libexec/valgrind", "/usr/local/lib/valgrind"]


@dataclasses.dataclass(frozen=True)
class MemTools:
    tool: str      # the Valgrind tool binary
    shim: str      # liballoclab_memshim.so
    pagesim: str   # alloclab-pagesim
    valgrind: str  # the valgrind launcher
    vglib: str     # Valgrind's own library directory (vgpreload_core, default.supp)


@dataclasses.dataclass
class ToolRun:
    status: int             # the program's exit status (128+signal when killed)
    summary: dict           # PREFIX.summary, numbers by key
    prefix: str             # the tool's output files: PREFIX.summary, PREFIX.objects, PREFIX.trace
    wall_s: float
    stdout: str = ""        # the file that holds what the program wrote on its standard output


def _valgrind_libdir() -> str | None:
    cands = list(VALGRIND_LIBDIRS)
    vg = shutil.which("valgrind")
    if vg:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(vg)))
        cands[:0] = [os.path.join(prefix, "libexec", "valgrind"), os.path.join(prefix, "lib", "valgrind")]
    for d in cands:
        if os.path.isfile(os.path.join(d, "vgpreload_core-amd64-linux.so")):
            return d
    return None


def can_build_tool() -> bool:
    """Whether this machine has what src/memtools needs to build the tool (amd64,
    Valgrind's pub_tool headers and static core libraries)."""
    if platform.machine() not in ("x86_64", "amd64"):
        return False
    heads = ["/usr/include/valgrind", "/usr/local/include/valgrind"]
    libs = ["/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib/valgrind", "/usr/libexec/valgrind",
            "/usr/local/lib/valgrind", "/usr/local/libexec/valgrind"]
    return (any(os.path.isfile(os.path.join(d, "pub_tool_basics.h")) for d in heads)
            and any(os.path.isfile(os.path.join(d, "libcoregrind-amd64-linux.a")) for d in libs))


def find_memtools() -> MemTools:
    """The built memory tools, or LabError saying what is missing."""
    vg = shutil.which("valgrind")
    if not vg:
        raise LabError("valgrind is not installed (apt-get install valgrind)")
    vglib = _valgrind_libdir()
    if not vglib:
        raise LabError("Valgrind's library directory (vgpreload_core-amd64-linux.so) not found")
    found = {}
    for key, name, exe in (("tool", TOOL_FILE, True), ("shim", SHIM_FILE, False),
                           ("pagesim", PAGESIM_FILE, True)):
        p = paths.find(name, exe)
        if not p:
            raise LabError(f"{name} not found ({paths.describe()})")
        found[key] = p
    return MemTools(valgrind=vg, vglib=vglib, **found)


def _launcher(valgrind: str) -> str:
    """The real launcher binary (Debian wraps it in a script that execs valgrind.bin)."""
    real = os.path.realpath(valgrind)
    if os.path.isfile(real + ".bin") and os.access(real + ".bin", os.X_OK):
        return real + ".bin"
    return real


def _make_vglib(tools: MemTools, where: str) -> str:
    """A VALGRIND_LIB directory: Valgrind's files plus our tool."""
    d = os.path.join(where, "vglib")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(tools.vglib):
        os.symlink(os.path.join(tools.vglib, f), os.path.join(d, f))
    os.symlink(tools.tool, os.path.join(d, TOOL_FILE))
    return d


def read_summary(path: str) -> dict:
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                out[parts[0]] = int(parts[1])
    return out


def _gather(base: str, prefix: str) -> int:
    """Remove the files of the processes other than the one started (BASE.<pid>.*, other pids);
    how many of them wrote a summary."""
    others = 0
    d, stem = os.path.dirname(base), os.path.basename(base)
    for f in os.listdir(d):
        if f.startswith(stem + ".") and not f.startswith(os.path.basename(prefix) + "."):
            rest = f[len(stem) + 1:].split(".")
            if len(rest) == 2 and rest[0].isdigit() and rest[1] in ("summary", "objects", "trace"):
                others += rest[1] == "summary"
                os.unlink(os.path.join(d, f))
    return others


def run(cmd, outdir: str, name: str, allocator: Allocator | None = None, preload=(), env=None, objects=False,
        trace=False, timeout=None, tools: MemTools | None = None) -> ToolRun:
    """Run cmd under the tool; its files are outdir/name.<pid>.{summary,objects,trace}, and the
    program's standard output goes to outdir/name.stdout (the command's own stdout is its report;
    the program's stderr stays the terminal's).

    allocator  the allocator to run on (default glibc); preload: extra
    shims (e.g. the litter shim) placed after the allocator.
    """
    runner.check_command(cmd)
    tools = tools or find_memtools()
    os.makedirs(outdir, exist_ok=True)
    base = os.path.abspath(os.path.join(outdir, name))
    libs = [tools.shim] + (allocator.preload if allocator else []) + [p for p in preload if p]
    with tempfile.TemporaryDirectory(prefix="alloclab-mem-") as tmp:
        vglib = _make_vglib(tools, tmp)
        # Start the tool as Valgrind's launcher would (VALGRIND_LAUNCHER names it), so
        # that LD_PRELOAD reaches the program only, never the launcher (or the shell
        # script some distributions wrap it in).
        e = dict(allocator.environ if allocator else {}, **(env or {}), VALGRIND_LIB=vglib,
                 VALGRIND_LAUNCHER=_launcher(tools.valgrind))
        # Execs are followed (a wrapper script execs the real program in the same
        # process); every traced process writes BASE.<pid>.*, and the result is
        # that of the process we start (directly: its pid names its files).
        argv = [os.path.join(vglib, TOOL_FILE), "-q", "--trace-children=yes", f"--tool={TOOL_NAME}",
                f"--out={base}", f"--objects={'yes' if objects else 'no'}",
                f"--trace={'yes' if trace else 'no'}", *cmd]
        with open(base + ".stdout", "wb") as out:
            r = runner.run(argv, preload=libs, env=e, timeout=timeout, stdout=out, stderr="inherit", direct=True)
    if r.status == "timeout":
        raise LabError(f"{cmd[0]!r} did not finish within {timeout} s under the tool")
    prefix = f"{base}.{r.pid}"
    others = _gather(base, prefix)
    if not os.path.exists(prefix + ".summary"):
        raise LabError(f"the tool wrote no summary for {cmd[0]!r} (status {r.exit_status}); "
                       "did Valgrind fail to start it?")
    summary = read_summary(prefix + ".summary")
    summary["other_processes"] = others
    return ToolRun(status=r.exit_status, summary=summary, prefix=prefix, wall_s=r.wall_s, stdout=base + ".stdout")


def read_objects(path: str) -> dict:
    """PREFIX.objects as numpy arrays: alloc, last, free (allocation-clock
    times), size (requested bytes), freed (1 when the program freed it),
    startup (1 when it was made before main and not used after main began;
    all 0 from a tool that wrote five columns)."""
    import numpy as np  # heavy, and only drag reads objects

    with open(path, "rb") as f:
        data = f.read()
    flat = np.array(data.split(), dtype=np.int64) if data.strip() else np.zeros(0, dtype=np.int64)
    first = data.split(b"\n", 1)[0].split()
    rows = flat.reshape(-1, 6 if len(first) == 6 else 5)
    startup = rows[:, 5] if rows.shape[1] == 6 else np.zeros(rows.shape[0], dtype=np.int64)
    return {"alloc": rows[:, 0], "last": rows[:, 1], "free": rows[:, 2], "size": rows[:, 3],
            "freed": rows[:, 4], "startup": startup}


def pagesim(trace: str, sizes=(), fractions=(), tools: MemTools | None = None) -> dict:
    """Run alloclab-pagesim over a page trace (see src/memtools/pagesim.cpp)."""
    tools = tools or find_memtools()
    argv = [tools.pagesim, trace]
    if sizes:
        argv += ["--sizes", ",".join(str(int(s)) for s in sizes)]
    if fractions:
        argv += ["--fractions", ",".join(repr(float(x)) for x in fractions)]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise LabError(f"alloclab-pagesim failed: {r.stderr.strip()}")
    return json.loads(r.stdout)
