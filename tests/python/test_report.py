"""compare's HTML report: a headline computed from the data, a real table, captions
that say what the whiskers are, the command shell-quoted; checked in a real browser
(headless chromium) at 1280 px."""

import dataclasses
import os
import re
import shlex
import shutil
import subprocess

import markupsafe
import pytest

from alloclab.core.levels import Level
from alloclab.core.results.summary import CellSummary, Meta, Summary
from alloclab.experiments.compare import report
from alloclab.experiments.compare.summary import warnings
from alloclab.experiments.compare.text import headline
from alloclab.stats import Spread
from conftest import run_cli


def _cell(a, adv, med, lo, hi, n=5):
    st = Spread(med, lo, hi, med, n)
    return CellSummary(a, Level.of(adv), runs=n, ok=n, statuses={"ok": n}, wall_s=st, program_s=st, user_s=st,
                       max_rss_kb=Spread(2048, 2048, 2048, 2048, n))


def test_headline_names_the_fastest_and_says_whether_it_exceeds_the_noise():
    meta = Meta(baseline="glibc/Adv_0")
    clear = Summary(meta, [_cell("glibc", 0, 1.0, 0.99, 1.01), _cell("vam", 0, 0.8, 0.79, 0.81)])
    h = headline(clear)
    assert h.startswith("On a clean heap, vam is fastest: 20.0% less program time than glibc")
    assert "more than the spread" in h
    noisy = Summary(meta, [_cell("glibc", 0, 1.0, 0.7, 1.3), _cell("vam", 0, 0.95, 0.8, 1.2)])
    assert "the spread of the runs (600.00 ms, min-max) is larger: not a clear difference" in headline(noisy)
    assert headline(Summary(meta, [])).startswith("No run succeeded")


def _rounds(cell, times):
    return dataclasses.replace(cell, program_s_runs=[[i + 1, t] for i, t in enumerate(times)])


def test_headline_judges_by_the_rounds_when_it_has_them():
    """The machine drifts between rounds: both cells' ranges overlap, yet vam is 10% faster in every
    round. Paired round by round, that is a clear difference; a split of 5 rounds to 4 is not, however
    far apart the medians."""
    meta = Meta(baseline="glibc/Adv_0")
    glibc = [1.0, 1.4, 1.8, 1.2, 1.6, 1.1, 1.5, 1.3, 1.7]
    steady = [t * f for t, f in zip(glibc, [0.90, 0.91, 0.89, 0.90, 0.92, 0.88, 0.90, 0.91, 0.89])]
    drift = Summary(meta, [_rounds(_cell("glibc", 0, 1.4, 1.0, 1.8, n=9), glibc),
                           _rounds(_cell("vam", 0, 1.26, 0.9, 1.62, n=9), steady)])
    h = headline(drift)
    assert "vam is fastest: 10.0% less program time than glibc" in h, h
    assert "it took less time in 9 of 9 rounds; paired by round, 0.900× (95% interval 0.89" in h, h
    assert h.endswith(": a clear difference."), h
    assert not any(w.startswith("vam/Adv_0") for w in warnings(drift))
    split = [0.5, 0.5, 0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5]
    mixed = Summary(meta, [_rounds(_cell("glibc", 0, 1.4, 1.0, 1.8, n=9), glibc),
                           _rounds(_cell("vam", 0, 0.7, 0.5, 2.7, n=9), [t * f for t, f in zip(glibc, split)])])
    h = headline(mixed)
    assert "it took less time in 5 of 9 rounds" in h and h.endswith(": not a clear difference."), h
    w = [x for x in warnings(mixed) if x.startswith("vam/Adv_0")]
    assert w and "but it took less time in 5 of 9 rounds" in w[0] and "within the noise" in w[0], w
    # Only rounds both cells ran are paired; one shared round cannot show anything.
    one = Summary(meta, [_rounds(_cell("glibc", 0, 1.4, 1.0, 1.8, n=9), glibc),
                         dataclasses.replace(_cell("vam", 0, 0.5, 0.5, 0.5, n=1), program_s_runs=[[4, 0.5]])])
    assert "1 of 1 rounds" in headline(one) and "not a clear difference" in headline(one)


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
    return Summary(meta, [_cell("glibc", 0, 1.0, 0.99, 1.01), _cell(allocator, 0, 0.8, 0.79, 0.81)])


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
