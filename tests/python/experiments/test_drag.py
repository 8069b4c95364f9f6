"""`alloclab drag` and the alloclab-mem tool's object view: programs whose
allocation clock, last uses and frees are known by construction."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, TOOL_HELPERS, run_cli

from alloclab.experiments import drag
from alloclab.measure import memtool

PYTHON = sys.executable



# A: 1000 B, used again after B is allocated; B: 2000 B, freed late;
# C: 3000 B, freed at once; D: 500 B, never freed.
# Clock (bytes allocated):  A 0->1000, B 1000->3000, (A used at 3000), C 3000->6000,
# frees of B, C, A at 6000; D 6000->6500, used at 6500, never freed (end 6500).
DRAG_PROG = TOOL_HELPERS + r"""
int main(void) {
  char *a = al(1000); touch(a, 1000);
  char *b = al(2000); touch(b, 2000);
  touch(a, 10);
  char *c = al(3000); touch(c, 3000);
  rel(b); rel(c); rel(a);
  char *d = al(500); touch(d, 500);
  return 0;
}
"""

def test_object_records_have_exact_allocation_last_use_and_free_times(tools, cbuild, tmp_path):
    exe = cbuild(DRAG_PROG, "drag_exact")
    r = memtool.run([exe], str(tmp_path), "t", objects=True, tools=tools)
    assert r.status == 0
    obj = memtool.read_objects(r.prefix + ".objects")
    rows = sorted(zip(*(obj[k].tolist() for k in ("alloc", "last", "free", "size", "freed"))))
    assert rows == [(1000, 3000, 6000, 1000, 1), (3000, 3000, 6000, 2000, 1),
                    (6000, 6000, 6000, 3000, 1), (6500, 6500, 6500, 500, 0)]
    assert r.summary["clock"] == 6500
    assert r.summary["max_live_bytes"] == 6000
    assert r.summary["unknown_frees"] == 0


def test_drag_figures_are_exact(tools, cbuild, tmp_path):
    exe = cbuild(DRAG_PROG, "drag_cli")
    out = tmp_path / "out"
    p = run_cli("drag", "-o", str(out), "--", exe)
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "drag.json").read_text())
    # Each object occupies [clock before its allocation, free or last use].
    actual = 1000 * 6000 + 2000 * 5000 + 3000 * 3000 + 500 * 500
    immediate = 1000 * 3000 + 2000 * 2000 + 3000 * 3000 + 500 * 500
    assert res["area_actual"] == actual
    assert res["area_immediate"] == immediate
    assert res["total_drag"] == round(actual / immediate, 6)
    assert res["peak_bytes_actual"] == 6000          # A, B and C together
    assert res["peak_bytes_immediate"] == 3000       # C alone; or A and B at clock 3000
    assert res["peak_bytes_actual"] == res["tool"]["max_live_bytes"]
    assert res["objects"] == 4 and res["objects_never_freed"] == 1
    assert os.path.getsize(res["plot"]) > 1000
    assert f"total drag: {round(actual / immediate, 6)}" in p.stdout


def test_no_drag_when_every_object_is_freed_after_its_last_use(tools, cbuild, tmp_path):
    exe = cbuild(TOOL_HELPERS + r"""
int main(void) {
  for (int i = 0; i < 50; i++) { char *p = al(100 + i); touch(p, 100 + i); rel(p); }
  return 0;
}
""", "drag_none")
    res = drag.run_drag([exe], str(tmp_path), make_plot=False)
    assert res["objects"] == 50
    assert res["total_drag"] == 1.0
    assert res["peak_bytes_actual"] == res["peak_bytes_immediate"] == 149


def test_kernel_writes_and_reads_count_as_uses(tools, cbuild, tmp_path):
    # A is last used by read(2) filling it, after B is allocated; B by write(2).
    exe = cbuild(TOOL_HELPERS + r"""
int main(void) {
  char *a = al(4096);
  char *b = al(1000); touch(b, 1000);
  int fd = open("/dev/zero", O_RDONLY);
  if (read(fd, a, 4096) != 4096) return 1;
  close(fd);
  char *c = al(24);
  fd = open("/dev/null", O_WRONLY);
  if (write(fd, b, 1000) != 1000) return 1;
  close(fd);
  rel(c); rel(b); rel(a);
  return 0;
}
""", "drag_syscalls")
    r = memtool.run([exe], str(tmp_path), "t", objects=True, tools=tools)
    obj = memtool.read_objects(r.prefix + ".objects")
    last = {s: l for s, l in zip(obj["size"].tolist(), obj["last"].tolist())}
    assert last[4096] == 5096     # read() after B's allocation
    assert last[1000] == 5120     # write() after C's allocation


def test_calloc_realloc_and_cxx_new_are_objects(tools, tmp_path):
    src = tmp_path / "cxx.cpp"
    src.write_text(r"""
#include <cstdlib>
#include <cstring>
#include <new>
static void *volatile sink;
int main() {
  char *p = static_cast<char *>(std::calloc(10, 10)); sink = p;      // 100
  p = static_cast<char *>(std::realloc(p, 300)); sink = p;           // 300
  std::memset(p, 1, 300);
  int *q = new int[25]; sink = q; q[3] = 1;                          // 100
  delete[] q;
  std::free(p);
  return 0;
}
""")
    exe = tmp_path / "cxx"
    subprocess.run(["g++", "-O1", "-o", str(exe), str(src)], check=True)
    r = memtool.run([str(exe)], str(tmp_path), "t", objects=True, tools=tools)
    obj = memtool.read_objects(r.prefix + ".objects")
    sizes = obj["size"].tolist()
    # libstdc++ allocates its emergency exception pool first: one more object, made before main
    # and never used once main began, which the tool marks as a start-up object.
    mine = [s for s in sizes if s in (100, 300)]
    assert sorted(mine) == [100, 100, 300]
    assert r.summary["unknown_frees"] == 0
    assert r.summary["live_objects_at_exit"] == len(sizes) - 3
    assert r.summary["main_seen"] == 1
    startup = [s for s, f in zip(sizes, obj["startup"].tolist()) if f]
    assert startup and sorted(startup) == sorted(s for s in sizes if s not in (100, 300))
    assert sorted(s for s, f in zip(sizes, obj["startup"].tolist()) if not f) == [100, 100, 300]


# A start-up object made by a constructor before main and never used again, one made before main
# and used in main, and one made in main; the first is not the program's.
STARTUP_PROG = TOOL_HELPERS + r"""
static char *early_unused, *early_used;
__attribute__((constructor)) static void early(void) {
  early_unused = al(4000); touch(early_unused, 4000);
  early_used = al(300); touch(early_used, 300);
}
int main(void) {
  char *m = al(100); touch(m, 100);
  touch(early_used, 1);
  rel(m);
  return 0;
}
"""


def test_an_object_made_before_main_and_never_used_in_it_is_left_out_of_the_drag(tools, cbuild, tmp_path):
    exe = cbuild(STARTUP_PROG, "drag_startup")
    r = memtool.run([exe], str(tmp_path), "t", objects=True, tools=tools)
    obj = memtool.read_objects(r.prefix + ".objects")
    flags = dict(zip(obj["size"].tolist(), obj["startup"].tolist()))
    assert flags == {4000: 1, 300: 0, 100: 0}
    assert r.summary["main_seen"] == 1 and r.summary["main_clock"] == 4300
    res = drag.analyse(obj, r.summary["clock"])
    assert res["objects"] == 2 and res["startup_objects"] == 1 and res["startup_bytes"] == 4000
    # early_used: clock 4000 -> 4300, last used at 4400, never freed (end 4400); m: 4300 -> 4400, freed at once
    assert res["area_actual"] == 300 * 400 + 100 * 100
    assert res["area_immediate"] == 300 * 400 + 100 * 100
    assert res["total_drag"] == 1.0


def test_the_drag_figures_leave_out_marked_start_up_objects():
    obj = {"alloc": np.array([72704, 72804]), "last": np.array([72704, 72804]), "free": np.array([72904, 72904]),
           "size": np.array([72704, 100]), "freed": np.array([0, 1]), "startup": np.array([1, 0])}
    res = drag.analyse(obj, 72904)
    assert res["objects"] == 1 and res["startup_bytes"] == 72704
    assert res["peak_bytes_actual"] == 100 and res["area_actual"] == 100 * 200 and res["area_immediate"] == 100 * 100


@pytest.fixture(scope="module")
def reap_flags():
    """Compiler flags to build a program against the built libreap."""
    libdir = os.path.join(ROOT, "build", "release", "src", "reap")
    if not os.path.exists(os.path.join(libdir, "libreap.so")):
        pytest.fail("libreap is not built; run make")
    return (f"-I{ROOT}/include", f"-L{libdir}", "-lreap", f"-Wl,-rpath,{libdir}")


def test_reap_objects_are_heap_objects(tools, cbuild, reap_flags, tmp_path):
    exe = cbuild(r"""
#include <alloclab/reap.h>
#include <string.h>
int main(void) {
  reap_t *r = reap_create(NULL);
  char *p[10];
  for (int i = 0; i < 10; i++) { p[i] = reap_malloc(r, 100); memset(p[i], i, 100); }
  reap_free(r, p[3]);
  p[0][0] = 1;
  reap_destroy(r);
  return 0;
}
""", "reap_prog", flags=reap_flags)
    r = memtool.run([exe], str(tmp_path), "t", objects=True, tools=tools)
    assert r.summary["pool_objects"] == 10
    obj = memtool.read_objects(r.prefix + ".objects")
    reap_rows = [i for i, s in enumerate(obj["size"].tolist()) if 100 <= s < 128]
    assert len(reap_rows) == 10
    assert all(obj["freed"][i] == 1 for i in reap_rows)  # reap_destroy frees them all
    # p[0] is used after the last allocation: its last use is the final clock value.
    lasts = sorted(int(obj["last"][i]) for i in reap_rows)
    allocs = sorted(int(obj["alloc"][i]) for i in reap_rows)
    first = min(reap_rows, key=lambda i: obj["alloc"][i])
    assert obj["last"][first] == allocs[-1] and lasts[-1] == allocs[-1]


def test_drag_reports_bad_commands(tools, tmp_path):
    p = run_cli("drag", "-o", str(tmp_path), "--", str(tmp_path / "missing"))
    assert p.returncode == 2 and "does not exist" in p.stderr
    p = run_cli("drag", "-o", str(tmp_path))
    assert p.returncode == 2 and "no command" in p.stderr


def test_a_wrapper_script_that_execs_the_program_gives_the_programs_result(tools, cbuild, tmp_path):
    exe = cbuild(DRAG_PROG, "drag_wrapped")
    script = tmp_path / "wrapper.sh"
    script.write_text(f"#!/bin/sh\n/bin/true\nexec {exe} \"$@\"\n")
    script.chmod(0o755)
    direct = drag.run_drag([exe], str(tmp_path / "a"), make_plot=False)
    wrapped = drag.run_drag([str(script)], str(tmp_path / "b"), make_plot=False)
    for k in ("total_drag", "peak_bytes_actual", "peak_bytes_immediate", "objects", "area_actual"):
        assert wrapped[k] == direct[k], k
    assert wrapped["tool"]["other_processes"] >= 1     # /bin/true ran under the tool too
    assert sorted(x for x in os.listdir(tmp_path / "b") if x != ".alloclab-output") == ["drag.json", "drag.stdout"]


def test_a_resized_reap_object_ends_and_a_new_one_begins(tools, cbuild, reap_flags, tmp_path):
    exe = cbuild(r"""
#include <alloclab/reap.h>
#include <string.h>
int main(void) {
  reap_t *r = reap_create(NULL);
  char *p = reap_malloc(r, 100); memset(p, 1, 100);
  char *q = reap_malloc(r, 50); memset(q, 1, 50);
  p = reap_realloc(r, p, 3000); memset(p, 2, 3000);
  reap_destroy(r);
  return 0;
}
""", "reap_resize", flags=reap_flags)
    r = memtool.run([exe], str(tmp_path), "t", objects=True, tools=tools)
    assert r.summary["unknown_frees"] == 0 and r.summary["pool_objects"] == 3
    obj = memtool.read_objects(r.prefix + ".objects")
    rows = {int(s): (int(a), int(l), int(f)) for a, l, f, s in
            zip(obj["alloc"], obj["last"], obj["free"], obj["size"]) if s < 72704}
    grown = rows[3000]
    old = rows[min(s for s in rows if s >= 100 and s != 3000)]   # reaps report usable sizes (104)
    # the old 100-byte object is read by the copy and freed when the 3000-byte one begins
    assert old[1] == old[2] == grown[0]


def test_a_system_call_over_several_objects_uses_each_of_them(tools, cbuild, tmp_path):
    # glibc puts three 100-byte blocks side by side (112-byte chunks); one write(2)
    # starting in the middle of the first and ending in the third reads all three.
    exe = cbuild(TOOL_HELPERS + r"""
int main(void) {
  char *a = al(100), *b = al(100), *c = al(100);
  touch(a, 100); touch(b, 100); touch(c, 100);
  if (b - a != 112 || c - b != 112) return 3;
  char *d = al(24); touch(d, 24);
  int fd = open("/dev/null", O_WRONLY);
  if (write(fd, a + 50, (size_t)(c + 10 - (a + 50))) < 0) return 1;
  close(fd);
  rel(d); rel(c); rel(b); rel(a);
  return 0;
}
""", "drag_span")
    r = memtool.run([exe], str(tmp_path), "t", objects=True, tools=tools)
    if r.status == 3:
        pytest.skip("this glibc does not place the blocks side by side")
    obj = memtool.read_objects(r.prefix + ".objects")
    last = sorted(zip(obj["alloc"].tolist(), obj["last"].tolist()))
    assert last == [(100, 324), (200, 324), (300, 324), (324, 324)]


def test_the_programs_output_goes_to_a_file_not_into_the_report(tools, tmp_path):
    out = tmp_path / "out"
    p = run_cli("drag", "-o", str(out), "--no-plot", "--", "sh", "-c", "echo from-the-program; echo on-stderr >&2")
    assert p.returncode == 0, p.stderr
    assert "from-the-program" not in p.stdout + p.stderr
    assert "on-stderr" in p.stderr
    assert (out / "drag.stdout").read_text() == "from-the-program\n"
    assert f"the program's output: {out / 'drag.stdout'}" in p.stdout
