"""The profile shim (littering §3.1) and the merge of its records (measure/profile.py): exact
counts, peaks, threads, fork/exec."""

import json
import os
import subprocess

import pytest

from conftest import peers_installed, run_cli

from alloclab.measure import profile as profile_mod


KNOWN_PATTERN = r"""
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>
int main(void) {
  static void *small[1000], *big[10], *tmp[5], *al[2];
  for (int i = 0; i < 1000; i++) small[i] = malloc(24);
  for (int i = 0; i < 10; i++) big[i] = malloc(5000);          /* peak: 1010 objects, 74000 bytes */
  for (int i = 0; i < 10; i++) free(big[i]);
  for (int i = 0; i < 5; i++) tmp[i] = calloc(4, 8);            /* 5 x 32 */
  for (int i = 0; i < 5; i++) free(tmp[i]);
  small[0] = realloc(small[0], 100);                            /* one allocation of 100 */
  for (int i = 0; i < 2; i++) if (posix_memalign(&al[i], 64, 48)) return 3;
  for (int i = 0; i < 2; i++) if ((uintptr_t)al[i] % 64) return 4;
  for (int i = 0; i < 2; i++) free(al[i]);
  for (int i = 0; i < 1000; i++) free(small[i]);
  free(NULL);
  write(1, "done\n", 5);
  return 0;
}
"""

def run_profiled(exe, profile_so, out, extra_env=None, args=()):
    env = dict(os.environ, LD_PRELOAD=profile_so, ALLOCLAB_PROFILE_OUT=str(out))
    env.pop("ALLOCLAB_PROFILE_CHILD", None)
    env.update(extra_env or {})
    return subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=60)


def test_known_pattern_gives_exact_counts(cbuild, profile_so, tmp_path):
    exe = cbuild(KNOWN_PATTERN, "known")
    out = tmp_path / "p.json"
    r = run_profiled(exe, profile_so, out)
    assert r.returncode == 0 and r.stdout == "done\n"
    p = json.loads(out.read_text())
    assert p["sizes"] == {"24": 1000, "32": 5, "48": 2, "100": 1}
    assert p["allocations"] == 1018
    assert p["ignored"] == 10
    assert p["bytes"] == 24000 + 50000 + 160 + 100 + 96
    assert p["max_live"] == 1010
    assert p["max_live_bytes"] == 74000
    assert p["live_at_exit"] == 0
    assert p["unknown_frees"] == 0
    assert p["cutoff"] == 4096
    assert p["pid"] > 0
    assert abs(p["mean_size"] - p["bytes"] / p["allocations"]) < 0.001


def test_cutoff_moves_sizes_between_histogram_and_ignored(cbuild, profile_so, tmp_path):
    exe = cbuild(KNOWN_PATTERN, "known_cut")
    out = tmp_path / "p.json"
    run_profiled(exe, profile_so, out, {"ALLOCLAB_PROFILE_CUTOFF": "40"})
    p = json.loads(out.read_text())
    assert p["cutoff"] == 40
    assert p["sizes"] == {"24": 1000, "32": 5}
    assert p["ignored"] == 13


@pytest.mark.parametrize("name", ["jemalloc", "mimalloc", "tcmalloc", "vam"])
def test_profile_runs_on_every_installed_peer(cbuild, profile_so, tmp_path, name):
    """One case per peer, skipped (visibly) when that peer is not installed, never passing empty."""
    exe = cbuild(KNOWN_PATTERN, "known_peers")
    from alloclab import LabError
    from alloclab.core import allocators
    try:
        lib = allocators.find(name).path
    except LabError as e:
        pytest.skip(f"peer {name} is not installed here: {e}")
    if True:
        out = tmp_path / f"{name}.json"
        r = run_profiled(exe, profile_so, out, {"LD_PRELOAD": f"{profile_so} {lib}"})
        assert r.returncode == 0, (name, r.stderr)
        p = json.loads(out.read_text())
        assert p["sizes"]["24"] == 1000 and p["max_live"] >= 1010, name
        assert os.path.basename(lib) in p["allocator"], (name, p["allocator"])


NEW_DELETE = r"""
#include <cstdio>
#include <new>
struct alignas(64) Line { char c[64]; };
int main() {
  static int *one[300];
  static char *arr[200];
  static Line *al[20];
  for (int i = 0; i < 300; i++) one[i] = new int(i);              // 300 x 4
  for (int i = 0; i < 200; i++) arr[i] = new char[40];            // 200 x 40
  for (int i = 0; i < 20; i++) al[i] = new Line;                  // 20 x 64, aligned new
  int *nt = new (std::nothrow) int[3];                            // 1 x 12
  for (int i = 0; i < 300; i++) delete one[i];
  for (int i = 0; i < 200; i++) delete[] arr[i];
  for (int i = 0; i < 20; i++) delete al[i];
  delete[] nt;
  std::puts("done");
  return 0;
}
"""


@pytest.mark.parametrize("allocator", ["glibc", "vam", *peers_installed()])
def test_new_and_delete_are_counted_on_every_allocator(tmp_path, profile_so, allocator):
    """Peers and libvam define operator new without calling malloc: the shim wraps it too."""
    import shutil
    from alloclab.core import allocators
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    src = tmp_path / "newdel.cpp"
    src.write_text(NEW_DELETE)
    exe = tmp_path / "newdel"
    subprocess.run(["g++", "-O1", "-o", str(exe), str(src)], check=True)
    lib = allocators.find(allocator).path
    out = tmp_path / "p.json"
    env = {"LD_PRELOAD": f"{profile_so} {lib}"} if lib else None
    r = run_profiled(str(exe), profile_so, out, env)
    assert r.returncode == 0 and r.stdout == "done\n", (allocator, r.stderr)
    p = json.loads(out.read_text())
    assert p["sizes"].get("4") == 300 and p["sizes"].get("40") == 200, (allocator, p["sizes"])
    assert p["sizes"].get("64") == 20 and p["sizes"].get("12") == 1, (allocator, p["sizes"])
    assert p["live_at_exit"] <= 5 and p["unknown_frees"] == 0, allocator


THREADS = r"""
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_barrier_t all_live;
static void *work(void *arg) {
  (void)arg;
  void *keep[100];
  for (int round = 0; round < 100; round++) {
    for (int i = 0; i < 100; i++) keep[i] = malloc(72);
    if (round == 50) pthread_barrier_wait(&all_live);   /* here 4 x 100 objects are live at once */
    for (int i = 0; i < 100; i++) free(keep[i]);
  }
  return NULL;
}
int main(void) {
  pthread_t t[4];
  pthread_barrier_init(&all_live, NULL, 4);
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, NULL);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  return 0;
}
"""


@pytest.mark.parametrize("allocator", ["glibc", *peers_installed()])
def test_threads_are_counted_exactly(cbuild, profile_so, tmp_path, allocator):
    from alloclab.core import allocators
    exe = cbuild(THREADS, "threads")
    out = tmp_path / "p.json"
    lib = allocators.find(allocator).path
    env = {"LD_PRELOAD": f"{profile_so} {lib}"} if lib else None
    assert run_profiled(exe, profile_so, out, env).returncode == 0
    p = json.loads(out.read_text())
    assert p["sizes"]["72"] == 4 * 100 * 100
    assert 400 <= p["max_live"] <= 400 + 20   # 4 threads x 100 live at the barrier, plus libc's own
    assert p["unknown_frees"] == 0


FORKS = r"""
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char **argv) {
  static void *volatile p[100], *volatile q[50];
  for (int i = 0; i < 100; i++) p[i] = malloc(16);
  pid_t c = fork();
  if (c == 0) {
    for (int i = 0; i < 50; i++) q[i] = malloc(40);
    if (q[49] == q[48]) return 9;   /* keeps the allocations observable */
    if (argc > 1) execl("/bin/true", "true", (char *)0);
    exit(0);
  }
  waitpid(c, NULL, 0);
  for (int i = 0; i < 100; i++) free(p[i]);
  return 0;
}
"""


def test_fork_child_writes_its_own_record(cbuild, profile_so, tmp_path):
    exe = cbuild(FORKS, "forks")
    out = tmp_path / "p.json"
    assert run_profiled(exe, profile_so, out).returncode == 0
    records = profile_mod.read_records(str(out))
    assert len(records) == 2
    root = [r for r in records if r["root"]]
    child = [r for r in records if not r["root"]]
    assert len(root) == 1 and len(child) == 1
    assert root[0]["sizes"] == {"16": 100}
    # The child counts only what it allocated itself; inherited objects stay live.
    assert child[0]["sizes"] == {"40": 50}
    assert child[0]["max_live"] == 150
    merged = profile_mod.merge_records(records)
    assert merged["sizes"] == {"16": 100, "40": 50}
    assert merged["max_live"] == 150
    assert len(merged["processes"]) == 2


def test_exec_writes_a_record_before_the_image_goes(cbuild, profile_so, tmp_path):
    exe = cbuild(FORKS, "forks_exec")
    out = tmp_path / "p.json"
    assert run_profiled(exe, profile_so, out, args=["exec"]).returncode == 0
    records = profile_mod.read_records(str(out))
    whens = sorted(r["written_at"] for r in records)
    assert "exec" in whens                      # the forked child, just before execl
    assert any(r["exe"].endswith("true") for r in records)   # the exec'd image
    merged = profile_mod.merge_records(records)
    assert merged["sizes"]["40"] == 50 and merged["sizes"]["16"] == 100


def test_cli_profile_merges_processes(cbuild, tmp_path, libdir):
    exe = cbuild(FORKS, "forks_cli")
    out = tmp_path / "prof.json"
    r = run_cli("profile", "-o", str(out), "--", exe)
    assert r.returncode == 0, r.stderr
    p = json.loads(out.read_text())
    for key in ("allocations", "bytes", "max_live", "max_live_bytes", "mean_size", "cutoff", "ignored",
                "sizes", "pid"):
        assert key in p
    assert p["sizes"] == {"16": 100, "40": 50}
    assert p["max_live"] == 150
    assert len(p["processes"]) == 2
    assert "merged from 2 processes" in r.stderr


def _profile_of(exe="/usr/bin/sort", allocations=50_000, ignored=10, max_live=5_000):
    from alloclab.core.results.profile import Profile
    return Profile({"allocations": allocations, "bytes": allocations * 64, "max_live": max_live,
                    "max_live_bytes": max_live * 64, "mean_size": 64.0, "cutoff": 4096, "ignored": ignored,
                    "sizes": {"64": allocations}, "processes": [{"pid": 1, "exe": exe}]})


def test_profile_warns_when_pymalloc_hides_the_objects_and_when_few_are_live():
    from alloclab.measure.profile import FEW_LIVE, warnings
    assert warnings(_profile_of(), {}) == []
    py = warnings(_profile_of("/usr/bin/python3.11"), {})
    assert len(py) == 1 and "pymalloc" in py[0] and "PYTHONMALLOC=malloc" in py[0], py
    assert warnings(_profile_of("/usr/bin/python3.11"), {"PYTHONMALLOC": "malloc"}) == []
    few = warnings(_profile_of(max_live=FEW_LIVE - 1), {})
    assert len(few) == 1 and f"at most {FEW_LIVE - 1:,} objects were live" in few[0], few
    assert warnings(_profile_of(max_live=FEW_LIVE), {}) == []
    arena = warnings(_profile_of(allocations=100, ignored=60), {})
    assert len(arena) == 1 and "60 of 100 requests" in arena[0], arena


def test_the_profile_command_prints_the_warnings(tmp_path, libdir):
    r = run_cli("profile", "-o", str(tmp_path / "p.json"), "--", "true")
    assert r.returncode == 0, r.stderr
    assert "alloclab: warning: at most" in r.stderr and "littering will change little" in r.stderr, r.stderr
