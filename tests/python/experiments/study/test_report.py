"""The study's report page (experiments/study/report.py, sections.py, ablation_section.py), rendered
from the templates without running a study: a small synthetic findings, and a synthetic
ablation.json in the layout `alloclab ablation` writes (docs/formats.md)."""

import json
import shutil
import subprocess

import pytest

from alloclab.core.results.findings import Findings, Verdict
from alloclab.experiments.study.report import write_report


EVIL = "<script>alert(1)</script>"


def _row(**kw):
    row = {"median": 0.9, "low": 0.85, "high": 0.95, "n": 3}
    row.update(kw)
    return row


def _analysis(program="gp_mix"):
    verdict = {"id": "rq1-x", "paper": "2026", "claim": "Per-class free lists save 2.3%", "paper_value": "2.3%",
               "measured": 0.01, "low": 0.005, "high": 0.02, "n": 3, "verdict": "confirmed",
               "rule": "confirmed if the spread lies within [0.01, 0.05]", "what": "boxed_sim on glibc",
               "unit": "%"}
    return {"meta": {"format_version": 1, "mode": "quick", "allocators": ["glibc", "vam"], "advs": [0, 3],
                     "repeat": 3, "seed": 42, "scale": "0.1", "programs": [], "elapsed_s": 12.0, "notes": [],
                     "allocator_info": [{"name": "glibc", "version": "2.36", "path": None}],
                     "machine": {"cpu": "test cpu", "memory_kb": 2 * 1024 * 1024}},
            "verdicts": [verdict],
            "tables": {"rq1": [_row(workload="boxed_sim", allocator="glibc", adv=0),
                               _row(workload="boxed_sim", allocator="vam", adv=0)],
                       "general": [_row(program=program, allocator="glibc", adv=0, rss_kb=4096, rss_ratio=1.0),
                                   _row(program=program, allocator="vam", adv=0, rss_kb=3072, rss_ratio=0.75)]}}


def _ablation(program="gp_mix"):
    def row(switch, value, default, ratio, winner, d1=1.0):
        return {"program": program, "switch": switch, "value": value, "is_default": default, "n": 3,
                "time_ratio": ratio, "time_lo": ratio - 0.01, "time_hi": ratio + 0.02, "d1_ratio": d1,
                "ll_ratio": None, "rss_ratio": 1.0, "winner": winner}
    return {"format_version": 1, "kind": "ablation", "command": ["alloclab", "ablation", "--quick"],
            "geometry": "I1=32768,8,64 D1=32768,8,64 LL=33554432,16,64",
            "switches": [{"name": "VAM_CLASSES", "default": "fine", "values": ["fine", "coarse"]},
                         {"name": "VAM_RECLAIM", "default": "on", "values": ["on", "off"]}],
            "rows": [row("VAM_CLASSES", "fine", True, 1.0, False),
                     row("VAM_CLASSES", "coarse", False, 0.93, True, d1=0.97),
                     row("VAM_RECLAIM", "on", True, 1.0, True)],
            "notes": ["one switch at a time, the others at their defaults"]}


def _render(tmp_path, analysis, ablation=None):
    if ablation is not None:
        (tmp_path / "ablation").mkdir()
        (tmp_path / "ablation" / "ablation.json").write_text(
            ablation if isinstance(ablation, str) else json.dumps(ablation))
    findings = Findings(analysis["tables"], [Verdict(**v) for v in analysis["verdicts"]], analysis["meta"])
    return open(write_report(findings, str(tmp_path))).read()


def test_the_study_page_opens_with_the_headline_and_the_verdict_table(tmp_path):
    doc = _render(tmp_path, _analysis())
    # the fixture is a --quick run: its headline says it is a smoke run
    assert ("<p class='headline'>A smoke run (--quick: too few runs to judge the timed claims), not a "
            "study. Of 1 claims of the three papers tested on this machine: 1 confirmed.</p>") in doc
    assert "<code>alloclab study --quick -r 3</code>" in doc  # the fixture ran 3, quick makes 2
    assert "<b class='verdict v-confirmed'>confirmed</b>" in doc
    assert "<td>+1.0%</td><td>+0.5% – +2.0%</td><td>3</td>" in doc
    assert doc.index("id='verdicts'") < doc.index("id='rq1'") < doc.index("id='general'") < doc.index("id='setup'")
    assert "<td>0.90 [0.85–0.95] n=3</td>" in doc and "<td>4.0 MiB</td>" in doc
    assert "memory 2.0 GiB" in doc
    assert "id='ablation'" not in doc                       # no ablation.json, no section


def test_the_headline_says_when_the_machine_was_busy(tmp_path):
    from alloclab.experiments.study.report import busy_words
    quiet = {"machine": {"load": {"busy": False, "others_share": 0.02, "steal_share": 0.0}}}
    busy = {"machine": {"load": {"busy": True, "others_share": 0.35, "steal_share": 0.05}}}
    assert busy_words(quiet) == "" and busy_words({}) == ""
    assert "The machine was busy: other processes (or the hypervisor) took 40% of its CPUs" in busy_words(busy)


def test_every_figure_says_what_its_whiskers_are_and_n(tmp_path):
    doc = _render(tmp_path, _analysis())
    caps = doc.split("<figcaption>")[1:]
    assert len(caps) == 2, "RQ1 and one littering level of the general-purpose section"
    for cap in caps:
        assert "Bars: medians; whiskers: min and max of the 3 runs." in cap.split("</figcaption>")[0]


def test_the_ablation_section_shows_one_table_per_switch(tmp_path):
    doc = _render(tmp_path, _analysis(), _ablation())
    assert doc.index("id='general'") < doc.index("<h2 id='ablation'>") < doc.index("id='setup'")
    sec = doc[doc.index("<h2 id='ablation'>"):doc.index("<footer>")]
    assert sec.count("<table class='ablation'>") == 2
    assert "<h3 id='ablation-VAM_CLASSES'>VAM_CLASSES (default fine)</h3>" in sec
    assert "<th>fine (default)</th><th>coarse</th>" in sec
    # the winner bold, with its interval, and the cache and RSS ratios; an unmeasured ratio is n/a
    assert ("<td class='winner'><b>time 0.93 [0.92–0.95] n=3<br>D1 0.97 · LL n/a · RSS 1.00</b></td>" in sec)
    assert "<td>time 1.00 [0.99–1.02] n=3<br>" in sec
    assert "<code>alloclab ablation --quick</code>" in sec and "LL=33554432,16,64" in sec
    assert "one switch at a time, the others at their defaults" in sec
    assert "<a href='ablation/ablation.json'>" in doc


def test_the_ablation_section_gives_the_control_and_the_paired_verdicts(tmp_path):
    a = _ablation()
    paired = {"ratio": 0.962, "low": 0.91, "high": 1.016, "p": 0.13, "rounds": 5, "verdict": "level"}
    a["summary"] = [{"switch": "VAM_CLASSES", "default": "fine", "best_by_time": "coarse", "clearly_faster": [],
                     "values": [{"value": "fine", "is_default": True, "time_paired": None},
                                {"value": "coarse", "is_default": False, "time_paired": paired}]}]
    a["control"] = dict(paired, ratio=0.982, low=0.913, high=1.055, rss_geomean=1.0)
    sec = _render(tmp_path, _analysis(), a)
    sec = sec[sec.index("<h2 id='ablation'>"):]
    assert "A/A control: the default setting run again in every round" in sec
    assert "0.982 (95% 0.913–1.055), level" in sec
    assert "Across the programs, paired by round: coarse 0.962 (95% 0.910–1.016), level." in sec
    assert sec.index("Across the programs") > sec.index("<h3 id='ablation-VAM_CLASSES'>")


def test_an_unreadable_or_newer_ablation_file_is_said_so_and_the_rest_is_drawn(tmp_path):
    (tmp_path / "a").mkdir()
    doc = _render(tmp_path / "a", _analysis(), "{not json")
    assert "<h2 id='ablation'>" in doc and "cannot be read" in doc and "id='setup'" in doc
    (tmp_path / "b").mkdir()
    doc = _render(tmp_path / "b", _analysis(), dict(_ablation(), format_version=2))
    assert "cannot be read" in doc and "ablation format version 2; this alloclab reads version 1" in doc


def test_hostile_names_are_escaped_everywhere(tmp_path):
    doc = _render(tmp_path, _analysis(program=EVIL), _ablation(program=EVIL))
    assert "<script>" not in doc
    # two rows of the general-purpose table (its figure's axis is inside the PNG), one of each ablation table
    assert doc.count("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>") == 4


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium to render the report")
def test_the_study_page_with_an_ablation_fits_1280_px(tmp_path):
    _render(tmp_path, _analysis(), _ablation())
    page = tmp_path / "report.html"
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace(
        "</body>", "<script>document.title = 'width=' + document.documentElement.scrollWidth;</script></body>"))
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                        "--dump-dom", f"file://{probe}"], capture_output=True, text=True, timeout=120)
    import re
    m = re.search(r"<title>width=(\d+)</title>", r.stdout)
    assert m, r.stderr[-2000:]
    assert int(m.group(1)) <= 1280


def test_without_matplotlib_the_page_says_which_plot_is_missing(tmp_path, monkeypatch):
    from alloclab.present import plots
    monkeypatch.setattr(plots, "pyplot", lambda: None)
    doc = _render(tmp_path, _analysis())
    assert "data:image/png" not in doc
    assert ("<p class='note'>(plot not drawn, matplotlib is not installed: RQ1: custom / naive time per workload "
            "and littering level, one bar per allocator.)</p>") in doc
    assert "<table class='verdicts'>" in doc


def test_the_command_line_names_the_runs_when_they_are_not_the_modes(tmp_path):
    """A study run with -r N says so where the report gives its command (quick makes 2)."""
    a = _analysis()
    page = _render(tmp_path, a)
    assert "alloclab study --quick -r 3" in page
    a["meta"]["repeat"] = 2
    (tmp_path / "two").mkdir()
    page = _render(tmp_path / "two", a)
    assert "alloclab study --quick" in page and "-r 2" not in page


def test_each_verdict_row_says_how_its_interval_was_taken(tmp_path):
    a = _analysis()
    a["verdicts"][0]["spread"] = "min-max of 3 repeats: holds the median with probability 0.75"
    page = _render(tmp_path, a)
    assert "[0.01, 0.05]. Interval: min-max of 3 repeats: holds the median with probability 0.75." in page


def test_the_command_is_the_one_typed_when_the_run_record_has_it(tmp_path):
    """A kept run's report gives the command its record holds, not one made up from the mode."""
    a = _analysis()
    a["meta"]["record"] = {"command": ["make", "study", "STUDY_ARGS=-o out/study quiet"]}
    page = _render(tmp_path, a)
    assert "make study &#39;STUDY_ARGS=-o out/study quiet&#39;" in page or \
        "make study 'STUDY_ARGS=-o out/study quiet'" in page
    assert "alloclab study --quick -r 3" not in page
