"""`alloclab compare` as a hyperfine-like runner (commands/compare.py): --runs, --warmup,
--setup/--prepare/--cleanup, --show-output, warnings, and its bad input."""

import pytest

from conftest import compare_cli, csv_rows, run_cli

from alloclab.core.results.summary import read_summary


def test_prepare_runs_before_every_warmup_and_measured_run(tmp_path):
    count = tmp_path / "count"
    r = compare_cli(tmp_path, "--runs", "3", "--warmup", "2", "--prepare", f"echo x >> {count}", "--", "true")
    assert r.returncode == 0, r.stderr
    assert len(count.read_text().splitlines()) == 5
    assert len(csv_rows(tmp_path / "o")) == 3


def test_setup_runs_once_first_and_cleanup_once_last(tmp_path):
    log = tmp_path / "log"
    r = compare_cli(tmp_path, "--runs", "2", "--warmup", "1", "--setup", f"echo setup >> {log}", "--prepare",
                 f"echo prepare >> {log}", "--cleanup", f"echo cleanup >> {log}", "--", "true")
    assert r.returncode == 0, r.stderr
    assert log.read_text().split() == ["setup"] + ["prepare"] * 3 + ["cleanup"]
    r = compare_cli(tmp_path, "--runs", "1", "--setup", "false", "--cleanup", f"echo cleanup >> {log}", "--", "true",
                 out="q")
    assert r.returncode == 2 and "the --setup command 'false' failed" in r.stderr
    assert not (tmp_path / "q" / "results.csv").exists()


def test_a_failing_prepare_stops_with_a_message(tmp_path):
    r = compare_cli(tmp_path, "--runs", "2", "--prepare", "exit 3", "--", "true")
    assert r.returncode == 2
    assert "the --prepare command 'exit 3' failed with status 3" in r.stderr


def test_repeat_is_an_alias_of_runs_and_no_warmup_of_warmup_0(tmp_path):
    count = tmp_path / "count"
    r = compare_cli(tmp_path, "--repeat", "2", "--no-warmup", "--prepare", f"echo x >> {count}", "--", "true")
    assert r.returncode == 0, r.stderr
    assert len(csv_rows(tmp_path / "o")) == 2 and len(count.read_text().splitlines()) == 2
    meta = read_summary(str(tmp_path / "o" / "summary.json")).meta
    assert meta.warmup == 0 and meta.repeat == 2


def test_show_output_lets_the_program_print(tmp_path):
    r = compare_cli(tmp_path, "--runs", "1", "--warmup", "0", "--show-output", "--", "sh", "-c", "echo hello-from-run")
    assert r.returncode == 0, r.stderr
    assert "hello-from-run" in r.stdout + r.stderr
    assert csv_rows(tmp_path / "o")[0]["stdout_sha256"] == ""
    r = compare_cli(tmp_path, "--runs", "1", "--warmup", "0", "--", "sh", "-c", "echo hello-from-run", out="p")
    assert "hello-from-run" not in r.stdout + r.stderr


def test_compare_prints_the_warnings(tmp_path):
    r = compare_cli(tmp_path, "--runs", "1", "--adv", "0,3", "--", "sh", "-c", "kill -SEGV $$")
    assert "alloclab: warning: glibc/Adv_3: littered cells not run" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["--allocators", "glibc,nosuch"], "unknown allocator 'nosuch'"),
    (["--allocators", "/nonexistent/libx.so"], "does not exist"),
    (["--adv", "0,5"], "Adv_5"),
    (["--repeat", "0"], "--repeat"),
    (["--baseline", "jemalloc"], "baseline"),
])
def test_compare_bad_input(tmp_path, args, message):
    r = run_cli("compare", "--allocators", "glibc", "--cache", "off", *args, "-o", str(tmp_path / "x"),
                "--", "true") if "--allocators" not in args else \
        run_cli("compare", "--cache", "off", *args, "-o", str(tmp_path / "x"), "--", "true")
    assert r.returncode == 2, r.stderr
    assert message in r.stderr


def test_compare_missing_program(tmp_path):
    r = run_cli("compare", "--allocators", "glibc", "-o", str(tmp_path / "x"), "--", "no-such-program-xyz")
    assert r.returncode == 2 and "not found" in r.stderr
    r = run_cli("compare", "--allocators", "glibc", "-o", str(tmp_path / "x"))
    assert r.returncode == 2 and "no command" in r.stderr


def test_a_malformed_variant_is_refused_before_anything_runs(tmp_path):
    r = run_cli("compare", "--allocators", "glibc,vam@VAM_ORDER", "--adv", "0", "-o", str(tmp_path / "o"),
                "--", "true")
    assert r.returncode == 2 and "expected NAME@VAR=VALUE" in r.stderr
    assert not (tmp_path / "o").exists()


def test_twin_runs_an_allocator_again_in_every_round_never_next_to_itself(tmp_path):
    """--twin: the A/A null's cell, NAME~again, in every round, apart from its original."""
    r = compare_cli(tmp_path, "--allocators", "glibc,glibc@TWIN_PROBE=1", "--twin", "glibc", "--runs", "4",
                    "--warmup", "0", "--", "true")
    assert r.returncode == 0, r.stderr
    rows = csv_rows(tmp_path / "o")
    names = [row["allocator"] for row in rows]
    assert sorted(set(names)) == ["glibc", "glibc@TWIN_PROBE=1", "glibc~again"]
    assert names.count("glibc~again") == 4
    assert not any({x, y} == {"glibc", "glibc~again"} for x, y in zip(names, names[1:])), names
    cells = {c.allocator for c in read_summary(str(tmp_path / "o" / "summary.json")).cells}
    assert "glibc~again" in cells
    bad = compare_cli(tmp_path, "--twin", "jemalloc", "--", "true", out="x")
    assert bad.returncode == 2 and "twin 'jemalloc' is not one of the allocators compared" in bad.stderr
