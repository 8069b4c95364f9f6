"""compare as a hyperfine-like runner (--runs, --warmup, --prepare, --show-output,
exports, warnings, progress), the shared argument parsers, the command
registry and the search order of the native parts."""

import argparse
import csv
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, make_row, run_cli

from alloclab import LabError, cli
from alloclab.commands import arguments as args
from alloclab.core import allocators, paths
from alloclab.core.levels import Level
from alloclab.core.progress import Progress
from alloclab.core.results.runs import read_rows
from alloclab.core.results.summary import FORMAT, CellSummary, Meta, Summary, read_summary
from alloclab.experiments.compare.summary import ratio_spreads, warnings
from alloclab.experiments.compare.text import markdown_table
from alloclab.stats import Spread


def _rows(d):
    with open(os.path.join(d, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


def _compare(tmp_path, *extra, out="o"):
    return run_cli("compare", "--allocators", "glibc", "--adv", "0", "--cache", "off", "-o", str(tmp_path / out),
                   *extra)


# --- runner options -------------------------------------------------------------------

def test_prepare_runs_before_every_warmup_and_measured_run(tmp_path):
    count = tmp_path / "count"
    r = _compare(tmp_path, "--runs", "3", "--warmup", "2", "--prepare", f"echo x >> {count}", "--", "true")
    assert r.returncode == 0, r.stderr
    assert len(count.read_text().splitlines()) == 5
    assert len(_rows(tmp_path / "o")) == 3


def test_setup_runs_once_first_and_cleanup_once_last(tmp_path):
    log = tmp_path / "log"
    r = _compare(tmp_path, "--runs", "2", "--warmup", "1", "--setup", f"echo setup >> {log}", "--prepare",
                 f"echo prepare >> {log}", "--cleanup", f"echo cleanup >> {log}", "--", "true")
    assert r.returncode == 0, r.stderr
    assert log.read_text().split() == ["setup"] + ["prepare"] * 3 + ["cleanup"]
    r = _compare(tmp_path, "--runs", "1", "--setup", "false", "--cleanup", f"echo cleanup >> {log}", "--", "true",
                 out="q")
    assert r.returncode == 2 and "the --setup command 'false' failed" in r.stderr
    assert not (tmp_path / "q" / "results.csv").exists()


def test_a_failing_prepare_stops_with_a_message(tmp_path):
    r = _compare(tmp_path, "--runs", "2", "--prepare", "exit 3", "--", "true")
    assert r.returncode == 2
    assert "the --prepare command 'exit 3' failed with status 3" in r.stderr


def test_repeat_is_an_alias_of_runs_and_no_warmup_of_warmup_0(tmp_path):
    count = tmp_path / "count"
    r = _compare(tmp_path, "--repeat", "2", "--no-warmup", "--prepare", f"echo x >> {count}", "--", "true")
    assert r.returncode == 0, r.stderr
    assert len(_rows(tmp_path / "o")) == 2 and len(count.read_text().splitlines()) == 2
    meta = read_summary(str(tmp_path / "o" / "summary.json")).meta
    assert meta.warmup == 0 and meta.repeat == 2


def test_show_output_lets_the_program_print(tmp_path):
    r = _compare(tmp_path, "--runs", "1", "--warmup", "0", "--show-output", "--", "sh", "-c", "echo hello-from-run")
    assert r.returncode == 0, r.stderr
    assert "hello-from-run" in r.stdout + r.stderr
    assert _rows(tmp_path / "o")[0]["stdout_sha256"] == ""
    r = _compare(tmp_path, "--runs", "1", "--warmup", "0", "--", "sh", "-c", "echo hello-from-run", out="p")
    assert "hello-from-run" not in r.stdout + r.stderr


def test_exports(tmp_path):
    j, m, c = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.csv"
    r = _compare(tmp_path, "--runs", "2", "--export-json", str(j), "--export-markdown", str(m), "--export-csv",
                 str(c), "--", "true")
    assert r.returncode == 0, r.stderr
    data = json.loads(j.read_text())
    assert data["format_version"] == FORMAT.version and data["kind"] == "alloclab-compare"
    assert [x["run"] for x in data["runs"]] == ["1", "2"]
    assert data["cells"][0]["ok"] == 2
    assert data["cells"][0]["program_s_ratio_spread"] == {"median": 1.0, "min": 1.0, "max": 1.0, "mean": 1.0, "n": 2}
    runs = data["cells"][0]["program_s_runs"]                # each round's time, for paired verdicts
    assert [k for k, _ in runs] == [1, 2] and all(t > 0 for _, t in runs)
    assert runs == sorted([int(x["repeat"]), float(x["program_s"])] for x in data["runs"])
    md = m.read_text()
    assert md.startswith("| allocator | level |") and "| glibc | Adv_0 | 2/2 |" in md
    assert read_rows(str(c)) == read_rows(str(tmp_path / "o" / "results.csv"))
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["kind"] == "alloclab-compare-summary"
    assert read_summary(str(j)).cells[0].program_s_runs == runs   # the export reads back as the summary


def test_report_re_renders_from_the_summary(tmp_path):
    r = _compare(tmp_path, "--runs", "1", "--", "true")
    assert r.returncode == 0
    html = tmp_path / "o" / "report.html"
    html.unlink()
    r = run_cli("report", str(tmp_path / "o"), "--export-markdown", str(tmp_path / "m.md"))
    assert r.returncode == 0, r.stderr
    assert html.exists() and (tmp_path / "m.md").exists()


# --- warnings ---------------------------------------------------------------------------

def _cell(a, adv, med, lo, hi, n=5, **more):
    st = Spread(med, lo, hi, med, n)
    return CellSummary(a, Level.of(adv), runs=n, ok=n, statuses={"ok": n}, wall_s=st, program_s=st, **more)


def _summary(*cells, **meta):
    return Summary(Meta(baseline="glibc/Adv_0", **meta), list(cells))


def test_warning_when_runs_are_shorter_than_5_ms():
    assert any("under 5 ms" in w for w in warnings(_summary(_cell("glibc", 0, 0.002, 0.001, 0.003))))
    assert warnings(_summary(_cell("glibc", 0, 0.2, 0.19, 0.21))) == []


def test_warning_when_the_spread_is_larger_than_the_difference():
    base = _cell("glibc", 0, 1.00, 0.90, 1.10)
    close = _cell("vam", 0, 1.05, 1.00, 1.08)     # 5% apart, spread 20%
    far = _cell("jemalloc", 0, 1.50, 1.45, 1.55)  # 50% apart, spread 20%
    w = warnings(_summary(base, close, far))
    assert any(x.startswith("vam/Adv_0 differs from the baseline by 5.0%") for x in w), w
    assert not any("jemalloc" in x for x in w), w


def test_compare_prints_the_warnings(tmp_path):
    r = _compare(tmp_path, "--runs", "1", "--adv", "0,3", "--", "sh", "-c", "kill -SEGV $$")
    assert "alloclab: warning: glibc/Adv_3: littered cells not run" in r.stderr


# --- progress ---------------------------------------------------------------------------

def test_progress_estimates_the_time_left_and_shows_a_long_run():
    out = io.StringIO()
    p = Progress(out, tty=False)
    p.begin("[1/4] a", 0, 4)
    line = p.done("[1/4] a 0.1s", 1, 4)
    assert line.startswith("[1/4] a 0.1s  (~") and line.endswith(" left)")
    assert p.done("[4/4] a", 4, 4) == "[4/4] a"      # nothing left, no estimate
    tty = io.StringIO()
    p = Progress(tty, tty=True)
    p.begin("[1/2] glibc Adv_0 repeat 1")
    assert "[1/2] glibc Adv_0 repeat 1: running" in tty.getvalue()   # at once, before the run ends
    p.done("x")


# --- argument parsers -----------------------------------------------------------------

@pytest.mark.parametrize("text,value", [("600", 600.0), ("1.5s", 1.5), ("250ms", 0.25), ("2m", 120.0),
                                        ("1h", 3600.0), ("0", None), ("none", None)])
def test_durations(text, value):
    assert args.parse_duration(text) == value


@pytest.mark.parametrize("text", ["5x", "-1", "", "s"])
def test_bad_durations(text):
    with pytest.raises(LabError):
        args.parse_duration(text)


def test_levels_and_allocators():
    assert args.parse_levels("0,Adv_3,adv10,3") == [0, 3, 10]
    assert all(isinstance(lv, Level) for lv in args.parse_levels("0,Adv_3"))
    with pytest.raises(LabError, match="Adv_2"):
        args.parse_levels("2")
    assert [a.name for a in allocators.find_many("glibc")] == ["glibc"]
    with pytest.raises(LabError, match="given twice"):
        allocators.find_many("glibc,system")


def test_every_subcommand_comes_from_the_registry():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == cli.command_names()
    r = run_cli("--help")
    for c in cli.COMMANDS:
        assert c.NAME in r.stdout
    assert len(set(cli.command_names())) == len(cli.COMMANDS)


# --- search order -----------------------------------------------------------------------

def test_alloclab_prefix_comes_first_and_takes_both_layouts(tmp_path, monkeypatch):
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "liballoclab_litter.so").write_bytes(b"\x7fELF")
    monkeypatch.setenv("ALLOCLAB_PREFIX", str(flat))
    assert paths.find("liballoclab_litter.so") == str(flat / "liballoclab_litter.so")
    assert paths.roots()[0] == str(flat)
    prefix = tmp_path / "prefix"
    (prefix / "libexec" / "alloclab").mkdir(parents=True)
    (prefix / "libexec" / "alloclab" / "alloclab-pagesim").write_text("")
    monkeypatch.setenv("ALLOCLAB_PREFIX", f"{tmp_path / 'nothing'}:{prefix}")
    assert paths.find("alloclab-pagesim") == str(prefix / "libexec" / "alloclab" / "alloclab-pagesim")
    assert paths.find("alloclab-pagesim", executable=True) != str(prefix / "libexec" / "alloclab" /
                                                                   "alloclab-pagesim")
    monkeypatch.delenv("ALLOCLAB_PREFIX")
    build = os.path.join(ROOT, "build", "release")
    assert paths.roots()[0] == build
    assert paths.find("liballoclab_litter.so") == os.path.join(build, "src", "lab", "liballoclab_litter.so")


def test_the_launcher_and_python_m_agree(tmp_path):
    a = run_cli("--help").stdout
    b = subprocess.run([sys.executable, "-m", "alloclab", "--help"],
                       capture_output=True, text=True, cwd=os.path.join(ROOT, "python")).stdout
    assert a == b and "compare" in a


def test_markdown_ratios_carry_the_spread_of_paired_runs():
    summary = _summary(_cell("glibc", 0, 1.0, 0.9, 1.1, n=3, program_s_ratio=1.0),
                       _cell("vam", 0, 2.0, 1.9, 2.2, n=3, program_s_ratio=2.0), command=["x"])
    rows = [make_row(allocator=a, adv=0, repeat=k, program_s=v)
            for a, vals in (("glibc", (1.0, 0.9, 1.1)), ("vam", (2.0, 2.2, 1.9))) for k, v in enumerate(vals, 1)]
    sp = ratio_spreads("glibc/Adv_0", rows)["vam/Adv_0"]
    assert (sp.low, sp.high, sp.n) == pytest.approx((1.9 / 1.1, 2.2 / 0.9, 3))
    assert f"| 2.000 ({1.9 / 1.1:.3f}–{2.2 / 0.9:.3f}) |" in markdown_table(summary, rows)
