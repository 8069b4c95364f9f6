"""compare's HTML report (experiments/compare/report.py): a headline computed from the data, a real
table, captions that say what the whiskers are, the command shell-quoted; checked in a real browser
(headless chromium) at 1280 px."""

import os
import re
import shlex
import shutil
import subprocess

import markupsafe
import pytest

from conftest import make_cell, run_cli

from alloclab.core.results.summary import Meta, Summary
from alloclab.experiments.compare import report


@pytest.fixture(scope="module")
def compared(tmp_path_factory, libdir):
    out = tmp_path_factory.mktemp("report") / "o"
    cmd = ["sh", "-c", "echo 'a b' > /dev/null"]
    r = run_cli("compare", "--allocators", "glibc,vam", "--adv", "0", "--runs", "3", "--cache", "off", "-o", str(out),
                "--", *cmd)
    assert r.returncode == 0, r.stderr
    return out, cmd


def test_report_is_a_result_not_a_log(compared):
    out, cmd = compared
    text = (out / "report.html").read_text()
    assert "<p class='headline'>On a clean heap, " in text
    assert "<pre>" not in text and "<table class='results'>" in text
    assert "whiskers: min and max of the 3 runs" in text
    import html
    assert f"<code>{markupsafe.escape(shlex.join(cmd))}</code>" in text
    assert shlex.join(cmd) in html.unescape(text)
    assert re.search(r"<td>\d+\.\d MiB</td>", text)          # sizes in KiB/MiB, not raw KiB counts
    assert "<figcaption>time.png</figcaption>" not in text  # captions say what a plot shows


@pytest.mark.skipif(shutil.which("chromium") is None and shutil.which("chromium-browser") is None,
                    reason="no chromium to render the report")
def test_report_fits_1280_px_in_a_browser(compared, tmp_path):
    out, _ = compared
    probe = tmp_path / "probe.html"
    probe.write_text((out / "report.html").read_text().replace(
        "</body>", "<script>document.title = 'width=' + document.documentElement.scrollWidth;</script></body>"))
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900", "--dump-dom",
                        f"file://{probe}"], capture_output=True, text=True, timeout=120)
    m = re.search(r"<title>width=(\d+)</title>", r.stdout)
    assert m, r.stderr[-2000:]
    assert int(m.group(1)) <= 1280, "the report scrolls sideways at 1280 px"
    shot = tmp_path / "shot.png"
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,2000",
                    f"--screenshot={shot}", f"file://{out / 'report.html'}"], capture_output=True, timeout=120)
    assert shot.exists() and os.path.getsize(shot) > 20000


def _summary(allocator="vam", command=("/bin/true",)):
    meta = Meta(baseline="glibc/Adv_0", command=list(command), repeat=5, seed=42,
                started_utc="2026-01-01T00:00:00Z", finished_utc="2026-01-01T00:01:00Z",
                machine={"cpu": "test cpu", "memory_kb": 8 * 1024 * 1024},
                allocators=[{"name": "glibc", "version": "2.36", "path": None},
                            {"name": allocator, "version": "1", "path": "/x/lib.so"}],
                advs={"Adv_0": {"multiplier": 0, "occupancy": 0}}, cache_method="off")
    return Summary(meta, [make_cell("glibc", 0, 1.0, 0.99, 1.01), make_cell(allocator, 0, 0.8, 0.79, 0.81)])


def test_the_compare_page_is_rendered_from_the_templates(tmp_path):
    (tmp_path / "time.png").write_bytes(b"\x89PNG not really")
    path = report.write_html(_summary(), str(tmp_path), ["time.png"])
    text = open(path).read()
    assert text.startswith("<!doctype html>") and text.rstrip().endswith("</html>")
    assert "<p class='headline'>On a clean heap, vam is fastest: 20.0% less program time than glibc" in text
    assert "<table class='results'>" in text and "<th>program time (median)</th>" in text
    assert "whiskers: min and max of the 5 runs" in text            # the caption says what whiskers are, and n
    assert "<td>2.0 MiB</td>" in text and "memory: 8.0 GiB" in text  # sizes in KiB/MiB/GiB
    assert "<footer>" in text and "<h2 id='machine'>Machine</h2>" in text
    assert text.index("<header>") < text.index("<table class='results'>") < text.index("<footer>")


def test_a_hostile_name_is_shown_not_run(tmp_path):
    evil = "<script>alert(1)</script>"
    path = report.write_html(_summary(allocator=evil, command=["./prog", evil]), str(tmp_path), [])
    text = open(path).read()
    assert "<script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "No plots" in text
