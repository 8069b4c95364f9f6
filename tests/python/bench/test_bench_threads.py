"""bench/threads: the five thread benchmarks run and agree across allocators; the runner's tables.

The benchmarks are taken from build/release (or $ALLOCLAB_BENCH_BUILD), as
bench/threads/run takes them.
"""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT  # noqa: E402
from bench import synthetic  # noqa: E402
from alloclab import LabError  # noqa: E402
from alloclab.core import allocators  # noqa: E402
BUILD = os.path.abspath(os.environ.get("ALLOCLAB_BENCH_BUILD") or os.path.join(ROOT, "build", "release"))
RUNNER = os.path.join(ROOT, "bench", "threads", "run")
BENCHES = ["larson", "rptest", "mstress", "xmalloc", "glibc_thread"]
LAST = re.compile(r"^checksum [0-9a-f]{16} ops [1-9][0-9]*$")


def exe(name):
    path = os.path.join(BUILD, "bench", f"thr_{name}")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (cmake --build {BUILD} --target thread_benches)")
    return path


def libvam():
    path = os.path.join(BUILD, "src", "vam", "libvam.so")
    if not os.path.exists(path):
        pytest.fail(f"{path} is not built")
    return path


def run_bench(name, *args, preload=None, timeout=30):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = preload
    return subprocess.run([exe(name), *args], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.parametrize("name", BENCHES)
def test_benchmark_runs_small_on_glibc_and_vam_with_the_same_checksum(name):
    lines = {}
    for label, pre in (("glibc", None), ("vam", libvam())):
        cp = run_bench(name, "2", "0.01", preload=pre)
        assert cp.returncode == 0, f"{name} on {label}: {cp.returncode}\n{cp.stdout}{cp.stderr}"
        last = cp.stdout.strip().splitlines()[-1]
        assert LAST.match(last), f"{name} on {label}: last line {last!r}"
        lines[label] = last
    # the checksum is a sum over objects, independent of the interleaving and of the allocator
    assert lines["glibc"] == lines["vam"]


@pytest.mark.parametrize("name", BENCHES)
def test_benchmark_documents_its_arguments_and_rejects_bad_ones(name):
    cp = run_bench(name, "--help")
    assert cp.returncode == 0 and "usage:" in cp.stdout and "[threads] [scale]" in cp.stdout
    for bad in (["0"], ["2", "-1"], ["2", "0"], ["x"], ["2", "1", "extra"], ["257"]):
        cp = run_bench(name, *bad)
        assert cp.returncode == 2, (bad, cp.stdout, cp.stderr)
        assert "checksum" not in cp.stdout and cp.stderr


def test_rptest_does_the_originals_work_whatever_the_interleaving():
    # Two rounds of two threads, two passes of 500 loops: the allocations the suite's rptest makes
    # (about 380,000), the same count and checksum on every run; one thread hands nothing over.
    runs = [run_bench("rptest", "2").stdout.split() for _ in range(2)]
    assert runs[0] == runs[1] and runs[0][-2:] == ["ops", "386356"]
    alone = run_bench("rptest", "1").stdout.split()
    assert alone[-2:] == ["ops", "128778"]
    # the scale multiplies the rounds of threads, so the passes keep the original's length
    assert run_bench("rptest", "2", "2").stdout.split()[-1] == str(2 * 386356)


def test_scale_multiplies_the_work():
    one = run_bench("larson", "1", "0.01").stdout.split()
    more = run_bench("larson", "1", "0.02").stdout.split()
    assert int(more[-1]) > int(one[-1])


def test_runner_tables_have_a_row_per_benchmark(tmp_path):
    env = dict(os.environ, ALLOCLAB_BENCH_BUILD=BUILD)
    libvam()
    args = [sys.executable, RUNNER, "--repeat", "1", "--scale", "0.01", "--allocators", "glibc,vam",
            "-o", str(tmp_path)]
    syscalls = shutil.which("strace") is not None
    if syscalls:
        args.append("--syscalls")
    cp = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    assert cp.returncode == 0, cp.stdout + cp.stderr[-3000:]
    doc = json.loads((tmp_path / "threads.json").read_text())
    assert doc["baseline"] == "glibc"  # mimalloc was not asked for
    assert set(doc["benchmarks"]) == set(BENCHES)
    assert doc["allocators"]["vam"]["path"] == os.path.join(BUILD, "src", "vam", "libvam.so")
    for b in BENCHES:
        for a in ("glibc", "vam"):
            cell = doc["benchmarks"][b][a]
            assert cell["failed"] == 0 and len(cell["runs"]) == 1
            run = cell["runs"][0]
            assert run["status"] == "ok" and run["ops"] > 0 and run["max_rss_kb"] > 0
            ratio = cell["ratio_to_glibc"]
            assert ratio["n"] == 1
            assert ratio["median"] == pytest.approx(run["wall_s"] / doc["benchmarks"][b]["glibc"]["runs"][0]["wall_s"])
            if syscalls:
                counts = cell["syscalls"]
                assert "error" not in counts, counts
                assert counts["mmap"] > 0  # at least the thread stacks
        assert doc["benchmarks"][b]["glibc"]["runs"][0]["checksum"] == doc["benchmarks"][b]["vam"]["runs"][0]["checksum"]
    md = (tmp_path / "threads.md").read_text()
    assert md == cp.stdout.rstrip("\n") + "\n" or md.strip() in cp.stdout
    first_table = md.split("\n\n")[2].splitlines()
    rows = [r.split("|")[1].strip() for r in first_table[2:]]
    assert rows == BENCHES + ["geometric mean"]
    # glibc is the baseline: its column reads 1.000 (in bold where it was fastest)
    assert all(r.split("|")[2].strip().strip("*") == "1.000" for r in first_table[2:-1])
    if syscalls:
        assert "mmap / munmap / madvise" in md


def test_runner_rejects_unknown_benchmarks_and_missing_builds(tmp_path):
    cp = subprocess.run([sys.executable, RUNNER, "--benchmarks", "larson,nope"], capture_output=True, text=True,
                        timeout=30)
    assert cp.returncode == 2 and "nope" in cp.stderr
    cp = subprocess.run([sys.executable, RUNNER, "--build", str(tmp_path), "-o", str(tmp_path / "o")],
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 2 and "not built" in cp.stderr


# ---- bench/threads/originals: the public suite's programs, run as its runner runs them

ORIGINALS = os.path.join(ROOT, "bench", "threads", "originals")


def originals():
    """The runner as a module (it is a script with no .py)."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("bench_threads_originals", ORIGINALS)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_originals_give_each_program_the_suites_arguments_for_two_cores():
    o = originals()
    assert o.command("larson", 2) == ("larson", ["5", "8", "1000", "5000", "100", "4141", "2"], None)
    assert o.command("larson-sized", 2) == ("larson-sized", ["5", "8", "1000", "5000", "100", "4141", "2"], None)
    assert o.command("rptest", 2) == ("rptest", ["2", "0", "1", "2", "500", "1000", "100", "8", "16000"], None)
    assert o.command("glibc-thread", 2) == ("glibc-thread", ["2"], None)
    assert o.command("alloc-test1", 2) == ("alloc-test", ["1"], None)
    assert o.command("alloc-testN", 32) == ("alloc-test", ["16"], None)  # bench.sh caps it at 16
    assert o.command("xmalloc-test", 2) == ("xmalloc-test", ["-w", "2", "-t", "5", "-s", "64"], None)
    assert o.command("cache-scratch1", 2) == ("cache-scratch", ["1", "1000", "1", "2000000", "2"], None)
    assert o.command("cache-thrashN", 2) == ("cache-thrash", ["2", "1000", "1", "2000000", "2"], None)
    assert o.command("mstress", 2) == ("mstress", ["2", "50", "25"], None)
    assert o.command("mleak100", 2) == ("mleak", ["50"], None)
    assert all(o.command(b, 2, "/nowhere/out/bench")[0] for b in o.ALL if b not in o.INPUTS)


def test_originals_find_the_inputs_where_the_suites_runner_does(tmp_path):
    o = originals()
    build = tmp_path / "suite" / "out" / "bench"
    build.mkdir(parents=True)
    with pytest.raises(o.LabError, match="espresso: no input"):
        o.command("espresso", 2, str(build))
    for rel in ("espresso/largest.espresso", "barnes/input"):
        (tmp_path / "suite" / "bench" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "suite" / "bench" / rel).write_text("x")
    assert o.command("espresso", 2, str(build)) == (
        "espresso", [str(tmp_path / "suite" / "bench" / "espresso" / "largest.espresso")], None)
    assert o.command("barnes", 2, str(build)) == ("barnes", [], str(tmp_path / "suite" / "bench" / "barnes" / "input"))


def test_originals_refuse_an_unknown_benchmark_by_name():
    cp = subprocess.run([sys.executable, ORIGINALS, "--suite", ".", "--benchmarks", "larson,nope"],
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 2 and "not one: nope" in cp.stderr


def test_originals_read_each_programs_time_as_the_suite_does():
    o = originals()
    larson = "Throughput = 41083043 operations per second, relative time: 24.341s.\nDone sleeping...\n"
    assert o.score("larson", larson, 7.0) == pytest.approx(24.341)
    rp = "crt  2 threads random linear size [8,16000] ...: ........5064482 memory ops/CPU second (13MiB peak)\n"
    assert o.score("rptest", rp, 16.0) == pytest.approx(2_000_000 / 5064482)
    assert o.score("glibc-thread", "85850757 iterations\n", 2.0) == pytest.approx(1e9 / 85850757)
    assert o.score("alloc-test1", "anything", 4.7) == 4.7  # the process's wall time
    assert o.score("xmalloc-test", "rtime: 4.121, free/sec: 24.264 M\n", 5.0) == pytest.approx(4.121)
    assert o.score("xmalloc-test", "Killed\n", 5.0) is None
    # a run whose output lacks the figure has no time, rather than a made-up one
    assert o.score("larson", "Segmentation fault\n", 7.0) is None
    assert o.score("rptest", "crt 2 threads ...: 0 memory ops/CPU second\n", 16.0) is None


def test_originals_rotate_the_allocators_by_one_place_a_round():
    o = originals()
    names = ["glibc", "jemalloc", "mimalloc", "tcmalloc", "vam"]
    orders = [o.rotated(names, r) for r in range(5)]
    assert [order[0] for order in orders] == names  # each runs first once in five rounds
    assert all(sorted(order) == sorted(names) for order in orders)


def test_originals_judge_vam_against_the_best_peer_by_paired_ratios():
    o = originals()
    runs = []
    for rnd, (mi, tc, vam) in enumerate([(10.0, 9.0, 9.9), (11.0, 9.5, 10.2), (10.5, 9.2, 10.0)]):
        for name, t in (("mimalloc", mi), ("tcmalloc", tc), ("vam", vam)):
            runs.append({"round": rnd, "bench": "larson", "alloc": name, "score": t, "status": "ok",
                         "max_rss_kb": 1024})
    s = o.summarise(runs)["larson"]
    assert s["best_peer"] == "tcmalloc"
    # the median of the per-round ratios, not the ratio of the medians
    assert s["cells"]["vam"]["to_mimalloc"]["median"] == pytest.approx(10.0 / 10.5)
    t = s["cells"]["vam"]["to_best"]
    assert t["peer"] == "tcmalloc" and t["n"] == 3
    assert 1.0 < t["low"] <= t["geomean"] <= t["high"]  # behind in every round: the interval lies above 1
    assert "behind" in o.render(o.summarise(runs), {"rounds": 3, "procs": 2, "suite": "x", "allocators": []})
    # a failed run drops that round's pair, not the benchmark
    runs[-1] = dict(runs[-1], status="exit 1", score=None)
    assert o.summarise(runs)["larson"]["cells"]["vam"]["to_best"]["n"] == 2


def test_originals_refuse_to_run_without_the_suite(tmp_path):
    cp = subprocess.run([sys.executable, ORIGINALS, "--suite", str(tmp_path), "--rounds", "1",
                         "--allocators", "glibc", "-o", str(tmp_path / "o")], capture_output=True, text=True,
                        timeout=30)
    assert cp.returncode == 2 and "not built" in cp.stderr


def test_originals_report_and_keep_a_run_from_its_json_alone(tmp_path, capsys):
    o = originals()
    doc = synthetic.originals_doc()
    md = o.render_doc(doc)
    blocks = o.blocks(doc)
    assert sorted(blocks) == ["mimalloc", "rss", "times", "vam"] and all(b in md for b in blocks.values())
    assert "| larson | mimalloc | " in blocks["vam"] and blocks["vam"].endswith(" first |")
    assert "vam = build/release/src/vam/libvam.so (alloclab build of" in md and "Run: commit 0123456789ab" in md
    out = tmp_path / "out"
    out.mkdir()
    (out / "originals.json").write_text(json.dumps(doc))
    (out / "originals.md").write_text(md)
    capsys.readouterr()
    assert o.main(["--report", str(out / "originals.json")]) == 0 and capsys.readouterr().out == md
    dest = tmp_path / "runs" / "NAME"
    assert o.main(["--keep", str(dest), str(out)]) == 0
    assert sorted(os.listdir(dest)) == ["originals.json.gz", "originals.md"]
    capsys.readouterr()
    assert o.main(["--report", str(dest)]) == 0 and capsys.readouterr().out == md
    # one score changed: the report follows it, and the run no longer keeps
    doc["runs"][-1]["score"] = 40.0
    assert o.render_doc(doc) != md and o.blocks(doc)["vam"] != blocks["vam"]
    (out / "originals.json").write_text(json.dumps(doc))
    assert o.main(["--keep", str(dest), str(out)]) == 2 and "not what originals.json renders" in capsys.readouterr().err


def test_originals_still_render_a_run_written_before_runs_kept_a_record(tmp_path, capsys):
    o = originals()
    doc = synthetic.originals_doc()
    for k in ("format_version", "record", "machine", "allocator_info"):
        del doc[k]
    doc["allocators"] = [["glibc", [None, []]], ["vam64", ["/x/libvam.so", ["VAM_BLOCK_OBJECTS=64"]]]]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    assert o.main(["--report", str(tmp_path / "old.json")]) == 0
    text = capsys.readouterr().out
    assert "Allocators: glibc = the C library; vam64 = /x/libvam.so VAM_BLOCK_OBJECTS=64" in text
    assert "Run: " not in text
    (tmp_path / "old.md").write_text(text)
    os.rename(tmp_path / "old.json", tmp_path / "originals.json")
    os.rename(tmp_path / "old.md", tmp_path / "originals.md")
    assert o.main(["--keep", str(tmp_path / "dest"), str(tmp_path)]) == 2  # no record: not to be cited
    assert "names no commit" in capsys.readouterr().err


def test_originals_name_each_allocator_with_its_library_version_and_settings(tmp_path):
    o = originals()
    lib = tmp_path / "src" / "vam" / "libvam.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"\x7fELF")
    got = o.parse_allocators(f"glibc,vam@VAM_X=1,mine={lib}@A=b=c", str(tmp_path))
    assert [a.name for a in got] == ["glibc", "vam", "mine"]
    assert got[1].path == str(lib) and got[1].env == (("VAM_X", "1"),) and got[2].env == (("A", "b=c"),)
    assert got[1].version.startswith("alloclab build of") and got[0].path is None
    with pytest.raises(LabError, match="vam is not built"):
        o.parse_allocators("vam", str(tmp_path / "none"))


def test_originals_refuse_a_library_named_for_a_commit_it_was_not_built_from(tmp_path):
    """vam-<hex>=LIB puts <hex>'s name on LIB's times: a stale build under that name made a kept
    run compare against the wrong library. The library's own source commit must match."""
    o = originals()
    head = "9fb1ad764b04ef1418c62cb4bfb99f34271a5db1"
    lib = tmp_path / "libvam-copy.so"
    lib.write_bytes(b"\x7fELF" + bytes(64) + b"alloclab-vam-source: " + head.encode() + b"\x00")
    assert [a.name for a in o.parse_allocators(f"vam-9fb1ad7={lib}", str(tmp_path))] == ["vam-9fb1ad7"]
    with pytest.raises(LabError, match=f"vam-1e222e3 names commit 1e222e3, but {lib} was built from commit 9fb1ad764b04"):
        o.parse_allocators(f"glibc,vam-1e222e3={lib}", str(tmp_path))


def test_originals_run_a_program_on_the_cpus_given_and_refuse_others(tmp_path):
    o = originals()
    mine = sorted(os.sched_getaffinity(0))
    assert o.parse_cpus(str(mine[0])) == [mine[0]]
    assert o.parse_cpus(f"{mine[0]}-{mine[-1]}") == mine
    for bad in ("x", "1-0", "0,,1", ""):
        with pytest.raises(LabError, match="give CPUs as"):
            o.parse_cpus(bad)
    with pytest.raises(LabError, match="is not one this machine lets the run use"):
        o.parse_cpus(str(max(mine) + 1))
    # the program itself, under GNU time and env as every run, sees only the CPU given
    prog = "import os; print(sorted(os.sched_getaffinity(0)))"
    glibc = allocators.Allocator("glibc", None, "x")
    r = o.run_once(sys.executable, ["-c", prog], glibc, 30, [mine[-1]])
    assert r["status"] == "ok" and r["output"].strip() == str([mine[-1]])
    r = o.run_once(sys.executable, ["-c", prog], glibc, 30)
    assert r["status"] == "ok" and r["output"].strip() == str(mine)
    # barnes reads its input from standard input, as bench.sh feeds it
    (tmp_path / "input").write_text("12 bodies\n")
    r = o.run_once(sys.executable, ["-c", "import sys; print(sys.stdin.read().split()[0])"], glibc, 30,
                   stdin=str(tmp_path / "input"))
    assert r["status"] == "ok" and r["output"].strip() == "12"
    meta = {"rounds": 1, "procs": 2, "suite": "x", "allocators": []}
    assert "procs 2 on CPU 0 alone," in o.render({}, {**meta, "cpus": [0]})
    assert "procs 2, one run" in o.render({}, meta)


def test_originals_name_the_suite_by_its_checkout_not_by_where_it_lies(tmp_path):
    o = originals()
    repo = tmp_path / "the-suite"
    (repo / "out" / "bench").mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    (repo / "README").write_text("x")
    subprocess.run(git + ["add", "README"], check=True)
    subprocess.run(git + ["commit", "-qm", "x"], check=True)
    head = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    got = o.suite_identity(str(repo / "out" / "bench"))
    assert got == f"the-suite at {head[:12]}, out/bench" and str(tmp_path) not in got
    assert o.suite_identity(str(repo)) == f"the-suite at {head[:12]}"
    plain = tmp_path / "plain" / "bench"
    plain.mkdir(parents=True)
    assert o.suite_identity(str(plain)) == "bench"
    assert o.without_suite_path(["--rounds", "3", "--suite", "/a/b", "-o", "x"]) == \
        ["--rounds", "3", "--suite", "SUITE", "-o", "x"]
    assert o.without_suite_path(["--suite=/a/b"]) == ["--suite=SUITE"]


# ---- the originals' A/A null: one allocator run twice in every round (made-up runs)

def _vam_row(o, doc):
    table = o.blocks(doc)["vam"].splitlines()
    return [c.strip() for c in table[2].split("|")[1:-1]], table[0]


def test_originals_place_the_twin_half_way_round_so_no_rotation_puts_it_next_to_itself():
    o = originals()
    names = ["glibc", "jemalloc", "mimalloc", "tcmalloc", "vam"]
    cycle = o.with_twin(names, "mimalloc")
    assert sorted(cycle) == sorted(names + ["mimalloc~again"]) and cycle[0] == "glibc"
    for n in (3, 4, 5):
        for twin in names[:n]:
            cycle = o.with_twin(names[:n], twin)
            for r in range(len(cycle)):
                order = o.rotated(cycle, r)
                i, j = order.index(twin), order.index(twin + "~again")
                assert abs(i - j) > 1, (order, twin)
    assert o.with_twin(names, None) == names


def test_originals_record_the_twin_and_run_it_in_every_round(tmp_path, monkeypatch, capsys):
    o = synthetic.bench("originals")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "larson").write_text("#!/bin/sh\n")
    (suite / "larson").chmod(0o755)
    libs = []
    for name in ("mimalloc", "vam"):
        lib = tmp_path / f"lib{name}.so"
        lib.write_bytes(b"\x7fELF")
        libs.append(f"{name}={lib}")
    ran = []

    def run_once(exe, argv, alloc, timeout, cpus=None, stdin=None):  # no program runs: each allocator's time made up
        ran.append(alloc.name)
        t = {"glibc": 30.0, "mimalloc": 20.0, "mimalloc~again": 20.0, "vam": 19.0}[alloc.name]
        return {"wall": 1.0, "user": 1.0, "sys": 0.0, "max_rss_kb": 1024, "other_cpu": 0.0, "status": "ok",
                "output": f"relative time: {t}s\n"}
    monkeypatch.setattr(o, "run_once", run_once)
    out = tmp_path / "out"
    base = ["--suite", str(suite), "--rounds", "4", "--benchmarks", "larson",
            "--allocators", ",".join(["glibc"] + libs), "-o", str(out)]
    assert o.main(base) == 0
    doc = json.loads((out / "originals.json").read_text())
    assert doc["twin"] == "mimalloc"        # the default: mimalloc when it runs
    assert ran.count("mimalloc~again") == 4 and len(ran) == 16
    for k in range(4):                       # one round after another, never side by side
        order = ran[4 * k: 4 * k + 4]
        assert abs(order.index("mimalloc") - order.index("mimalloc~again")) > 1, order
    md = (out / "originals.md").read_text()
    assert o.render_doc(doc) == md and "A/A null: mimalloc runs a second time" in md
    assert "| larson | mimalloc | 1.000 [1.000, 1.000] holds 1 | 0.950 [0.950, 0.950] first |" in md
    capsys.readouterr()
    ran.clear()
    assert o.main(base + ["--twin", "none"]) == 0 and "mimalloc~again" not in ran
    assert json.loads((out / "originals.json").read_text())["twin"] is None
    assert o.main(base + ["--twin", "jemalloc"]) == 2
    assert "--twin 'jemalloc' is not one of the allocators run" in capsys.readouterr().err


def test_originals_a_twin_far_from_its_original_marks_the_benchmark_noisy():
    o = originals()
    row, head = _vam_row(o, synthetic.originals_twin_doc(1.0))
    assert head.split("|")[3].strip() == "A/A: mimalloc~again / mimalloc"
    assert row[2].endswith(" holds 1") and row[3].endswith(" first")   # vam ahead in every round, as before
    assert row[3] == _vam_row(o, synthetic.originals_doc())[0][2]
    row, _ = _vam_row(o, synthetic.originals_twin_doc(2.0))
    assert row[2].endswith(" noisy: A/A excludes 1") and row[3].endswith(" no verdict (noisy)")
    md = o.render_doc(synthetic.originals_twin_doc(2.0))
    assert "Where its interval excludes 1 the benchmark is marked \"noisy: A/A excludes 1\"" in md
    assert "mimalloc~again" in o.blocks(synthetic.originals_twin_doc(1.0))["times"]


@pytest.mark.parametrize("twin", ["mimalloc", "glibc", "vam"])
def test_originals_never_take_the_twin_for_the_best_peer_nor_judge_it_as_vam(twin):
    o = originals()
    doc = synthetic.originals_twin_doc(0.3, twin=twin)   # the twin the fastest of all
    s = o.summarise(doc["runs"])["larson"]
    assert s["best_peer"] == "mimalloc" and "to_best" not in s["cells"][twin + "~again"]
    row, head = _vam_row(o, doc)
    assert row[1] == "mimalloc" and head.count("vam") == (1 if twin != "vam" else 3)
    assert s["aa"]["twin"] == twin + "~again" and s["aa"]["reading"] == "noisy: A/A excludes 1"


def test_originals_runs_from_before_the_twin_render_as_they_did():
    o = originals()
    md = o.render_doc(synthetic.originals_doc())
    assert "A/A" not in md and "~again" not in md
    off = dict(synthetic.originals_doc(), twin=None)
    assert "No A/A null in this run (--twin none)" in o.render_doc(off)
    assert o.blocks(off) == o.blocks(synthetic.originals_doc())
