"""bench/replace_micro: the free-then-malloc pair at random slots; the same checksum on every
allocator, and bad arguments refused. Taken from build/release (or $ALLOCLAB_BENCH_BUILD)."""

import os
import re
import subprocess

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("ALLOCLAB_BENCH_BUILD") or os.path.join(ROOT, "build", "release"))
EXE = os.path.join(BUILD, "bench", "replace_micro")
LINE = re.compile(r"^ns_per_step (\d+\.\d\d) checksum ([0-9a-f]{16})$")
PEERS = ["/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"]


def run(*args, preload=None):
    if not os.access(EXE, os.X_OK):
        pytest.fail(f"{EXE} is not built (cmake --build {BUILD} --target replace_micro)")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = preload
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=env, timeout=60)


def test_every_allocator_reads_back_the_same_checksum():
    libvam = os.path.join(BUILD, "src", "vam", "libvam.so")
    assert os.path.exists(libvam), f"{libvam} is not built"
    sums = {}
    for label, pre in [("glibc", None), ("vam", libvam)] + [(p, p) for p in PEERS if os.path.exists(p)]:
        for read in ("0", "1"):
            cp = run("3000", "200000", read, preload=pre)
            assert cp.returncode == 0, (label, cp.stdout, cp.stderr)
            m = LINE.match(cp.stdout.strip())
            assert m and float(m.group(1)) > 0, (label, cp.stdout)
            sums.setdefault(read, {})[label] = m.group(2)
    for read, by in sums.items():
        assert len(set(by.values())) == 1, (read, by)
    # what is read back is part of the sum: reading changes it
    assert sums["0"]["glibc"] != sums["1"]["glibc"]


@pytest.mark.parametrize("bad", [["0"], ["x"], ["-5"], ["16777217"], ["10", "0"], ["10", "5", "2"],
                                 ["10", "5", "1", "extra"], ["10", "5x"]])
def test_bad_arguments_exit_2_with_the_usage(bad):
    cp = run(*bad)
    assert cp.returncode == 2, (bad, cp.stdout, cp.stderr)
    assert "usage: replace_micro" in cp.stderr and cp.stdout == ""
