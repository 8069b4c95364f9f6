"""Kept runs (docs/runs/NAME/): the study runs docs/results.md cites, kept compressed in the
repository. Re-rendering one recomputes its tables and verdicts from its results.csv and the
instruments' measurements in its findings.json, and must give exactly what the run wrote; the
page's quoted tables must be what the kept run renders."""

import gzip
import os
import re
import shutil

import pytest

from alloclab.core.results.files import compress, load_json
from alloclab.core.results.findings import read_findings
from alloclab.experiments.study.outputs import KEPT, rerender
from alloclab.experiments.study.text import kept_blocks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNS = os.path.join(ROOT, "docs", "runs")
RESULTS = os.path.join(ROOT, "docs", "results.md")
BLOCK = re.compile(r"<!-- kept-run (\S+) (\w+) -->\n(.*?)\n<!-- /kept-run -->", re.S)


def _kept() -> list:
    if not os.path.isdir(RUNS):
        return []
    return sorted(n for n in os.listdir(RUNS) if os.path.exists(os.path.join(RUNS, n, "findings.json.gz")))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """Each kept run re-rendered into a fresh directory: name -> that directory."""
    out = {}
    for name in _kept():
        dest = tmp_path_factory.mktemp(name)
        rerender(os.path.join(RUNS, name), str(dest))
        out[name] = str(dest)
    return out


def test_the_results_page_has_kept_runs_to_cite():
    assert _kept(), "docs/runs holds no kept study run"
    for name in _kept():
        assert sorted(os.listdir(os.path.join(RUNS, name))) == sorted(k + ".gz" for k in KEPT)


@pytest.mark.parametrize("name", _kept())
def test_re_rendering_a_kept_run_recomputes_its_verdicts_exactly(rendered, name):
    again = load_json(os.path.join(rendered[name], "verdicts.json"), "recomputed verdicts")
    kept = load_json(os.path.join(RUNS, name, "verdicts.json"), "kept verdicts")
    assert again == kept


@pytest.mark.parametrize("name", _kept())
def test_re_rendering_a_kept_run_recomputes_its_tables_exactly(rendered, name):
    again = load_json(os.path.join(rendered[name], "findings.json"), "recomputed findings")
    kept = load_json(os.path.join(RUNS, name, "findings.json"), "kept findings")
    assert again["tables"] == kept["tables"]
    assert again["verdicts"] == kept["verdicts"]


@pytest.mark.parametrize("name", _kept())
def test_each_kept_run_records_where_it_came_from(name):
    meta = read_findings(os.path.join(RUNS, name, "findings.json")).meta
    rec = meta["record"]
    assert re.fullmatch(r"[0-9a-f]{40}", rec["commit"] or ""), rec
    assert rec["changed"] is False, "a kept run must come from a committed tree"
    assert rec["command"][:2] == ["alloclab", "study"]
    assert "load" in meta["machine"] and meta["allocator_info"]


def test_re_rendering_recomputes_rather_than_reading_the_kept_verdicts(tmp_path):
    """Without the kept verdicts.json, and with its results.csv changed, a re-render follows
    the data: it cannot be echoing the verdicts the run wrote."""
    name = _kept()[0]
    src = tmp_path / "run"
    shutil.copytree(os.path.join(RUNS, name), src)
    os.remove(src / "verdicts.json.gz")
    rerender(str(src), str(tmp_path / "a"))
    kept = load_json(os.path.join(RUNS, name, "verdicts.json"), "kept verdicts")
    assert load_json(str(tmp_path / "a" / "verdicts.json"), "re-rendered") == kept
    # every naive time on glibc doubled: the claims that set glibc against its peers move
    with gzip.open(src / "results.csv.gz", "rt") as f:
        lines = f.read().splitlines()
    head = lines[0].split(",")
    a, v, t = head.index("allocator"), head.index("variant"), head.index("program_cpu_s")
    out = [lines[0]]
    for line in lines[1:]:
        c = line.split(",")
        if c[a] == "glibc" and c[v] in ("malloc", "real") and c[t]:
            c[t] = repr(float(c[t]) * 2)
        out.append(",".join(c))
    plain = tmp_path / "results.csv"
    plain.write_text("\n".join(out) + "\n")
    compress(str(plain), str(src / "results.csv.gz"))
    rerender(str(src), str(tmp_path / "b"))
    assert load_json(str(tmp_path / "b" / "verdicts.json"), "re-rendered") != kept


def test_the_results_page_quotes_kept_runs_as_they_render(rendered):
    with open(RESULTS, encoding="utf-8") as f:
        page = f.read()
    blocks = BLOCK.findall(page)
    assert blocks, "docs/results.md quotes no kept run"
    for name, block, text in blocks:
        assert name in rendered, f"docs/results.md quotes {name}, which docs/runs does not keep"
        want = kept_blocks(read_findings(os.path.join(rendered[name], "findings.json")))
        assert block in want, f"no block {block!r} (one of {sorted(want)})"
        assert text.strip() == want[block].strip(), f"docs/results.md's {name} {block} differs from the run"
