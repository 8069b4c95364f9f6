"""Shared fixtures for the lab's tests: the package on sys.path, the built
shims (found exactly as the command line finds them), and a C compiler."""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from alloclab.core import allocators, paths  # noqa: E402

LAUNCHER = os.path.join(ROOT, "alloclab")


@pytest.fixture(scope="session")
def libdir():
    d = allocators.lab_libdir()
    if d is None:
        pytest.fail("the lab's shims are not built; run `make` (searched: "
                    + ", ".join(paths.search_dirs()) + ")")
    return d


@pytest.fixture(scope="session")
def profile_so(libdir):
    return allocators.shim("profile")


@pytest.fixture(scope="session")
def litter_so(libdir):
    return allocators.shim("litter")


@pytest.fixture(scope="session")
def cbuild(tmp_path_factory):
    """cbuild(source, name) -> path of a program compiled from C source."""
    d = tmp_path_factory.mktemp("progs")

    def build(source, name, flags=()):
        src = d / f"{name}.c"
        src.write_text(textwrap.dedent(source))
        exe = d / name
        subprocess.run(["gcc", "-O1", "-Wno-unused-result", "-o", str(exe), str(src), "-lpthread", *flags],
                       check=True)
        return str(exe)

    return build


def run_cli(*args, env=None, timeout=300, cwd=None):
    """Run ./alloclab ARGS; returns CompletedProcess with text stdout/stderr."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([LAUNCHER, *args], capture_output=True, text=True, env=e, timeout=timeout, cwd=cwd)


PEERS = ("jemalloc", "mimalloc", "tcmalloc")


def peers_installed():
    """The peers the registry finds here. Only "not installed" leaves one out: any other error
    (a peer the registry no longer knows, a bug in find) fails the collection of the tests."""
    out = []
    for name in PEERS:
        try:
            out.append(allocators.find(name).name)
        except allocators.NotInstalled:
            pass
    return out


# Each peer's library as a distribution installs it, looked for on disk by file name, in every
# directory the dynamic linker's usual places hold (not through the registry, nor ldconfig).
PEER_FILES = {"jemalloc": ("libjemalloc.so*",), "mimalloc": ("libmimalloc.so*",),
              "tcmalloc": ("libtcmalloc_minimal.so*", "libtcmalloc.so*")}
LIB_GLOBS = ("/usr/lib", "/usr/lib/*", "/usr/lib64", "/usr/local/lib", "/usr/local/lib/*", "/lib", "/lib/*",
             "/lib64")


def peers_on_disk() -> dict:
    """peer name -> the real paths of its shared objects found on disk (empty: not installed)."""
    import glob
    out = {}
    for name, patterns in PEER_FILES.items():
        found = set()
        for d in LIB_GLOBS:
            for pat in patterns:
                found |= {os.path.realpath(p) for p in glob.glob(os.path.join(d, pat)) if os.path.isfile(p)}
        out[name] = found
    return out


@pytest.fixture(scope="session")
def tools():
    """The memory instrument (drag, frag, pages), built by make."""
    import shutil
    from alloclab import LabError
    from alloclab.measure import memtool
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    try:
        return memtool.find_memtools()
    except LabError as e:
        if not memtool.can_build_tool():
            pytest.skip("Valgrind's tool-building files are not installed, so the tool is not built")
        pytest.fail(str(e))


def make_row(row_type=None, **fields):
    """A results.csv row (RunRow, or row_type) with every field not given set to a plain default."""
    from alloclab.core.levels import Level
    from alloclab.core.results.runs import RunRow
    base = {"run": 1, "allocator": "glibc", "adv": Level.ADV_0, "multiplier": 0.0, "occupancy": 0.0, "repeat": 1,
            "seed": None, "profile_sha256": "", "wall_s": 1.0, "user_s": 1.0, "sys_s": 0.0, "max_rss_kb": 1000,
            "exit_code": 0, "signal": None, "status": "ok", "stdout_sha256": "", "litter_s": 0.0,
            "program_s": 1.0, "program_inproc_s": None, "started_utc": "2026-01-01T00:00:00Z",
            "program_cpu_s": None, "private_dirty_kb": None, "lazyfree_kb": None, "anon_huge_kb": None}
    if row_type is not None and row_type is not RunRow:
        base.update(program="p", workload="w", variant="malloc", kind="general", origin="bundled")
    base.update(fields)
    if "adv" in fields:
        base["adv"] = Level.of(int(fields["adv"]))
    return (row_type or RunRow)(**base)
