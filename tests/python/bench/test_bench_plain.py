"""The plain C bench programs run under LD_PRELOAD of each allocator: bench/replace_micro (the
free-then-malloc pair at random slots) and bench/buffer_replace (buffers of several MiB replaced at
random) and bench/size_sweep (batches of one size allocated and freed whole over a sweep of
sizes), bench/realloc_steps (buffers grown by realloc a few bytes at a time), bench/realloc_churn
(big buffers reallocated to random sizes, shrunk as often as grown), bench/replace_sizes
(objects of random sizes replaced at random) and bench/slot_churn (alloc-test's table of slots, each
step freeing or allocating). Each reads back the same checksum on every allocator and refuses bad
arguments. Taken from build/release (or $ALLOCLAB_BENCH_BUILD)."""

import os
import re
import subprocess

import pytest

from conftest import ROOT  # noqa: E402
BUILD = os.path.abspath(os.environ.get("ALLOCLAB_BENCH_BUILD") or os.path.join(ROOT, "build", "release"))
PEERS = ["/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"]
LINE = {"replace_micro": re.compile(r"^ns_per_step (\d+\.\d\d) checksum ([0-9a-f]{16})$"),
        "buffer_replace": re.compile(r"^ms (\d+\.\d)\nchecksum ([0-9a-f]{16})$"),
        "size_sweep": re.compile(r"^ms (\d+\.\d)\nchecksum ([0-9a-f]{16})$"),
        "realloc_steps": re.compile(r"^ms (\d+\.\d)\nchecksum ([0-9a-f]{16})$"),
        "realloc_churn": re.compile(r"^ms (\d+\.\d)\nchecksum ([0-9a-f]{16})$"),
        "replace_sizes": re.compile(r"^ms (\d+\.\d)\nchecksum ([0-9a-f]{16})$"),
        "slot_churn": re.compile(r"^ms (\d+\.\d)\nchecksum ([0-9a-f]{16})$")}


def run(prog, *args, preload=None):
    exe = os.path.join(BUILD, "bench", prog)
    if not os.access(exe, os.X_OK):
        pytest.fail(f"{exe} is not built (cmake --build {BUILD} --target {prog})")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = preload
    return subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=60)


def checksums(prog, args):
    """{allocator: checksum} of one run each, with glibc, vam and the peers found."""
    libvam = os.path.join(BUILD, "src", "vam", "libvam.so")
    assert os.path.exists(libvam), f"{libvam} is not built"
    sums = {}
    for label, pre in [("glibc", None), ("vam", libvam)] + [(p, p) for p in PEERS if os.path.exists(p)]:
        cp = run(prog, *args, preload=pre)
        assert cp.returncode == 0, (label, cp.stdout, cp.stderr)
        # buffer_replace prints its time on stderr, the checksum on stdout
        out = cp.stdout.strip() if prog == "replace_micro" else cp.stderr.strip() + "\n" + cp.stdout.strip()
        m = LINE[prog].match(out)
        assert m and float(m.group(1)) > 0, (label, cp.stdout)
        sums[label] = m.group(2)
    return sums


def test_replace_micro_reads_back_the_same_checksum_on_every_allocator():
    by_read = {read: checksums("replace_micro", ["3000", "200000", read]) for read in ("0", "1")}
    for read, by in by_read.items():
        assert len(set(by.values())) == 1, (read, by)
    # what is read back is part of the sum: reading changes it
    assert by_read["0"]["glibc"] != by_read["1"]["glibc"]


def test_buffer_replace_reads_back_the_same_checksum_on_every_allocator():
    # 4 buffers of 1..6 MiB, 40 steps: below and above vam's 4 MiB, and reused
    by = checksums("buffer_replace", ["4", "40", "1", "6"])
    assert len(set(by.values())) == 1, by
    assert set(by.values()) != {"0" * 16}, by  # bytes read back count


def test_size_sweep_reads_back_the_same_checksum_on_every_allocator():
    by = checksums("size_sweep", ["2", "4", "300"])
    assert len(set(by.values())) == 1, by


def test_realloc_steps_reads_back_the_same_checksum_on_every_allocator():
    by = checksums("realloc_steps", ["3", "16", "300"])
    assert len(set(by.values())) == 1, by


def test_realloc_churn_reads_back_the_same_checksum_on_every_allocator():
    # 4 buffers of 64 KiB..2 MiB: vam's large objects and its huge ones, shrunk and grown
    by = checksums("realloc_churn", ["4", "400", "64", "2048"])
    assert len(set(by.values())) == 1, by
    assert set(by.values()) != {"0" * 16}, by  # bytes read back count
    # the range moves what is read back: the arguments are used
    assert checksums("realloc_churn", ["4", "400", "64", "1024"])["glibc"] != by["glibc"]


def test_replace_sizes_reads_back_the_same_checksum_on_every_allocator():
    by = checksums("replace_sizes", ["300", "20000", "1000", "40000"])
    assert len(set(by.values())) == 1, by


def test_slot_churn_reads_back_the_same_checksum_on_every_allocator():
    # up to 4 KiB: vam's small classes and past them
    by = checksums("slot_churn", ["2000", "60000", "4096"])
    assert len(set(by.values())) == 1, by
    assert set(by.values()) != {"0" * 16}, by  # bytes read back count
    # the largest size moves what is read back: the argument is used
    assert checksums("slot_churn", ["2000", "60000", "8"])["glibc"] != by["glibc"]
    # malloc/free instead of new[]/delete[]: the same requests, the same bytes
    assert set(checksums("slot_churn", ["2000", "60000", "4096", "malloc"]).values()) == set(by.values())


@pytest.mark.parametrize("prog,bad", [
    *[("replace_micro", b) for b in (["0"], ["x"], ["-5"], ["16777217"], ["10", "0"], ["10", "5", "2"],
                                     ["10", "5", "1", "extra"], ["10", "5x"])],
    *[("buffer_replace", b) for b in (["0"], ["1025"], ["4", "0"], ["4", "5", "0"], ["4", "5", "6", "5"],
                                      ["4", "5", "1", "2", "extra"], ["4x"], ["-1"])],
    *[("size_sweep", b) for b in (["0"], ["65"], ["1", "0"], ["1", "1", "0"], ["1", "1", "100001"],
                                  ["1", "1", "1", "extra"], ["2x"])],
    *[("realloc_steps", b) for b in (["0"], ["1", "0"], ["1", "4097"], ["1", "1", "0"], ["1", "1", "100001"],
                                     ["1", "1", "1", "extra"], ["-3"])],
    *[("realloc_churn", b) for b in (["0"], ["1025"], ["1", "0"], ["1", "1", "0"], ["1", "1", "9", "8"],
                                     ["1", "1", "1", "1048577"], ["1", "1", "1", "2", "extra"], ["3q"])],
    *[("replace_sizes", b) for b in (["0"], ["1048577"], ["1", "0"], ["1", "1", "0"], ["1", "1", "9", "8"],
                                     ["1", "1", "1", "2", "extra"], ["5y"])],
    *[("slot_churn", b) for b in (["0"], ["16777217"], ["1", "0"], ["1", "1", "0"], ["1", "1", "4"],
                                  ["1", "1", "1000"], ["1", "1", "33554432"], ["1", "1", "8", "calloc"],
                                  ["1", "1", "8", "new", "extra"], ["7z"])]])
def test_bad_arguments_exit_2_with_the_usage(prog, bad):
    cp = run(prog, *bad)
    assert cp.returncode == 2, (bad, cp.stdout, cp.stderr)
    assert f"usage: {prog}" in cp.stderr and cp.stdout == ""
