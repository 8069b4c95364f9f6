"""Shared fixtures for the lab's tests: the package on sys.path, the built
shims (found exactly as the command line finds them), and a C compiler."""

import csv
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from alloclab.core import allocators, paths  # noqa: E402

LAUNCHER = os.path.join(ROOT, "alloclab")


def pytest_configure(config):
    config.addinivalue_line("markers", "install: builds the wheel and installs it into a fresh virtual "
                            "environment (test_install.py; `pytest -m 'not install'` leaves it out)")


# The files whose module fixtures run a whole command for a minute or so (the quick study, the
# wheel build and a study from it, the quick ablation, ...), longest first. They are collected
# first, so that `make test`'s two processes (pytest-xdist, a file to each, in collection order:
# --no-loadscope-reorder) start on them together instead of one finishing the last of them alone.
LONG_FILES = ("experiments/study/test_run.py", "test_install.py", "experiments/ablation/test_run.py",
              "experiments/study/verdicts/test_rules.py", "commands/test_report.py", "test_kept_runs.py",
              "bench/test_littered_slowdown.py")


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))

    def rank(item):
        rel = os.path.relpath(str(item.path), here).replace(os.sep, "/")
        return LONG_FILES.index(rel) if rel in LONG_FILES else len(LONG_FILES)

    items.sort(key=rank)   # stable: the rest keep their order


@pytest.fixture(scope="session")
def libdir():
    d = allocators.lab_libdir()
    if d is None:
        pytest.fail("the lab's shims are not built; run `make` (searched: "
                    + ", ".join(paths.search_dirs()) + ")")
    return d


@pytest.fixture(scope="session")
def exit_memory(libdir):
    """The lab's probe program that exits holding 32 MiB dirty and 16 MiB lazily freed
    (tests/lab/exit_memory.c): the build tree's test programs sit beside its shims."""
    exe = os.path.join(os.path.dirname(os.path.dirname(libdir)), "tests", "lab", "lab_exit_memory")
    if not os.path.exists(exe):
        pytest.fail(f"{exe} is not built (make)")
    return exe


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


def csv_rows(d):
    """DIR/results.csv as its text, row by row (what a user's script would read)."""
    with open(os.path.join(d, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


def compare_cli(tmp_path, *extra, out="o"):
    """`alloclab compare` on glibc, clean heap, no cache counts, into TMP_PATH/OUT, with EXTRA."""
    return run_cli("compare", "--allocators", "glibc", "--adv", "0", "--cache", "off", "-o", str(tmp_path / out),
                   *extra)


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
        base.update(program="p", workload="w", variant="malloc", kind="general", origin="bundled", stage=0, custom_ops=None)
    base.update(fields)
    if "adv" in fields:
        base["adv"] = Level.of(int(fields["adv"]))
    return (row_type or RunRow)(**base)


# Helpers the test programs share: calls the optimiser cannot remove or merge.
TOOL_HELPERS = r"""
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
static char *volatile sink;
__attribute__((noinline)) static char *al(size_t n) { char *p = malloc(n); sink = p; return p; }
__attribute__((noinline)) static void touch(char *p, size_t n) { memset(p, 7, n); sink = p; }
__attribute__((noinline)) static void rel(void *p) { free(p); }
"""


def make_cell(a, adv, med, lo, hi, n=5, **more):
    """A comparison's cell summary: n ok runs of program (and wall, user) time med [lo, hi]."""
    from alloclab.core.levels import Level
    from alloclab.core.results.summary import CellSummary
    from alloclab.stats import Spread
    st = Spread(med, lo, hi, med, n)
    return CellSummary(a, Level.of(adv), runs=n, ok=n, statuses={"ok": n}, wall_s=st, program_s=st, user_s=st,
                       max_rss_kb=Spread(2048, 2048, 2048, 2048, n), **more)


def make_summary(*cells, **meta):
    """A comparison's summary of CELLS, glibc/Adv_0 its baseline unless META says otherwise."""
    from alloclab.core.results.summary import Meta, Summary
    return Summary(Meta(**{"baseline": "glibc/Adv_0", **meta}), list(cells))


def study_rows(spec):
    """spec: {(workload, variant, allocator, adv): [time per repeat]} -> the study's rows (StudyRow)."""
    from alloclab.core.results.runs import StudyRow
    out = []
    for (w, v, a, adv), times in spec.items():
        for rep, t in enumerate(times, 1):
            out.append(make_row(StudyRow, workload=w, variant=v, allocator=a, adv=adv, repeat=rep, kind="per-class",
                                program_inproc_s=t, program_s=t, wall_s=t))
    return out


# Allocates N objects of one size back to back and prints the fraction of
# consecutive pairs whose address difference equals the most common small
# positive difference: 1.0 means perfectly contiguous, near 0 scattered.
PROBE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#define N 2000
int main(int argc, char **argv) {
  size_t size = argc > 1 ? (size_t)atoi(argv[1]) : 24;
  static void *volatile p[N];
  static long d[N];
  for (int i = 0; i < N; i++) p[i] = malloc(size);
  for (int i = 1; i < N; i++) d[i] = (long)((intptr_t)p[i] - (intptr_t)p[i - 1]);
  long best = 0; int bestn = 0;
  for (int i = 1; i < N; i++) {
    if (d[i] <= 0 || d[i] > 4096) continue;
    int c = 0;
    for (int j = 1; j < N; j++) c += d[j] == d[i];
    if (c > bestn) { bestn = c; best = d[i]; }
  }
  printf("stride=%ld fraction=%.3f\n", best, bestn / (double)(N - 1));
  return 0;
}
"""


@pytest.fixture(scope="module")
def probe(cbuild, tmp_path_factory, libdir):
    """(the probe program, a profile of it): a program whose output says how scattered its heap is."""
    exe = cbuild(PROBE, "probe")
    prof = tmp_path_factory.mktemp("probe") / "probe.json"
    r = run_cli("profile", "-o", str(prof), "--", exe)
    assert r.returncode == 0, r.stderr
    return exe, str(prof)
