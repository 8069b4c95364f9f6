"""Kept runs (docs/runs/NAME/): the runs docs/results.md cites, kept compressed in the
repository — study runs, and runs of the benches that can be kept (bench/corpus,
bench/threads/originals). Re-rendering a study run recomputes its tables and verdicts from its
results.csv and the instruments' measurements in its findings.json, and must give exactly what
the run wrote; re-rendering a bench run recomputes its report from the times in its JSON and must
give its .md exactly; the page's quoted tables must be what the kept run renders."""

import gzip
import json
import os
import re
import shutil

import pytest

from alloclab.core import paths
from alloclab.core.results.files import compress, load_json
from alloclab.core.results.kept import bench_kind, read_bench, record_problems
from alloclab.core.results.findings import read_findings
from alloclab.experiments.study.outputs import KEPT, rerender
from alloclab.experiments.study.text import kept_blocks

from bench import synthetic

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


def test_no_kept_run_says_where_this_machine_has_the_tree():
    """Kept files name the tree's files relative to it (keeping strips the tree's path)."""
    for name in os.listdir(RUNS) if os.path.isdir(RUNS) else []:
        for f in os.listdir(os.path.join(RUNS, name)):
            path = os.path.join(RUNS, name, f)
            data = gzip.decompress(open(path, "rb").read()) if f.endswith(".gz") else open(path, "rb").read()
            assert not re.search(re.escape(paths.SOURCE_ROOT.encode()) + rb"(?![\w.-])", data), path


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


def _quoted_blocks_match(page: str, runs: str, rendered: dict) -> None:
    """Every table PAGE quotes between kept-run markers is the block its run renders: a study run
    re-rendered (RENDERED: name -> its directory), or a bench run in RUNS re-rendered from its JSON."""
    for name, block, text in BLOCK.findall(page):
        if name in rendered:
            want = kept_blocks(read_findings(os.path.join(rendered[name], "findings.json")))
        else:
            kind = bench_kind(os.path.join(runs, name))
            assert kind, f"docs/results.md quotes {name}, which docs/runs does not keep"
            want = _bench_run_blocks(os.path.join(runs, name))
        assert block in want, f"no block {block!r} (one of {sorted(want)})"
        assert text.strip() == want[block].strip(), f"docs/results.md's {name} {block} differs from the run"


def test_the_results_page_quotes_kept_runs_as_they_render(rendered):
    with open(RESULTS, encoding="utf-8") as f:
        page = f.read()
    assert BLOCK.findall(page), "docs/results.md quotes no kept run"
    _quoted_blocks_match(page, RUNS, rendered)


# ---- kept bench runs: KIND.json.gz (every time measured, and the run's record) and KIND.md

def _bench_runs(runs: str = RUNS) -> list:
    if not os.path.isdir(runs):
        return []
    return sorted(n for n in os.listdir(runs) if bench_kind(os.path.join(runs, n)))


def _bench_run_blocks(path: str) -> dict:
    """Check the kept bench run at PATH — its JSON re-renders to its .md exactly, and its record
    names a commit with no changes — and return the blocks docs/results.md may quote from it."""
    kind = bench_kind(path)
    assert kind in synthetic.BENCHES, f"{path}: no bench keeps {kind!r} runs"
    mod = synthetic.bench(kind)
    doc = read_bench(path, mod.FORMAT)
    with open(os.path.join(path, kind + ".md"), encoding="utf-8") as f:
        assert mod.render_doc(doc) == f.read(), f"{path}: {kind}.json.gz does not re-render to {kind}.md"
    assert record_problems(doc) == [], f"{path}: {record_problems(doc)}"
    assert re.fullmatch(r"[0-9a-f]{40}", doc["record"]["commit"]) and doc["record"]["changed"] is False
    assert doc["machine"]["load"] and doc["allocator_info"], f"{path}: no machine load or allocators"
    return mod.blocks(doc)


def test_every_directory_of_docs_runs_is_a_kept_run():
    assert sorted(_kept() + _bench_runs()) == sorted(os.listdir(RUNS))


def test_each_kept_bench_run_re_renders_exactly_and_came_from_a_committed_tree():
    """Over every kept bench run there is (none yet is no failure: the checks' own test is below)."""
    for name in _bench_runs():
        assert _bench_run_blocks(os.path.join(RUNS, name)), f"{name} renders no table to quote"


def _keep_by_hand(doc: dict, kind: str, dest, md: str | None = None) -> str:
    """A kept run of KIND made in DEST without keep_bench's checks, so that a broken one can be made."""
    os.makedirs(dest, exist_ok=True)
    plain = os.path.join(os.path.dirname(str(dest)), f"{os.path.basename(str(dest))}-{kind}.json")
    with open(plain, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    compress(plain, os.path.join(dest, kind + ".json.gz"))
    with open(os.path.join(dest, kind + ".md"), "w", encoding="utf-8") as f:
        f.write(synthetic.bench(kind).render_doc(doc) if md is None else md)
    return str(dest)


@pytest.mark.parametrize("kind", list(synthetic.BENCHES))
def test_the_checks_of_kept_bench_runs_pass_a_good_one_and_fail_a_broken_one(tmp_path, kind):
    doc = synthetic.DOCS[kind]()
    runs = tmp_path / "runs"
    good = _keep_by_hand(doc, kind, runs / "good")
    blocks = _bench_run_blocks(good)
    assert "vam" in blocks
    # a page quoting the run as it renders passes; one block changed by a digit fails
    quote = f"<!-- kept-run good vam -->\n{blocks['vam']}\n<!-- /kept-run -->"
    _quoted_blocks_match(f"text\n{quote}\nmore\n", str(runs), {})
    wrong = quote.replace("0.", "9.", 1)
    assert wrong != quote
    with pytest.raises(AssertionError, match="differs from the run"):
        _quoted_blocks_match(wrong, str(runs), {})
    with pytest.raises(AssertionError, match="does not keep"):
        _quoted_blocks_match(quote.replace("good", "absent"), str(runs), {})
    # a kept .md that is not what the JSON renders
    text = synthetic.bench(kind).render_doc(doc)
    bad = _keep_by_hand(doc, kind, runs / "edited", md=text.replace("0.", "9.", 1))
    with pytest.raises(AssertionError, match="does not re-render"):
        _bench_run_blocks(bad)
    # a run from a tree with changes, or from no commit
    for record in (dict(doc["record"], changed=True), dict(doc["record"], commit=None)):
        bad = _keep_by_hand(dict(doc, record=record), kind, runs / f"tree-{record['changed']}")
        with pytest.raises(AssertionError, match="commit|changes"):
            _bench_run_blocks(bad)


@pytest.mark.parametrize("kind", list(synthetic.BENCHES))
def test_re_rendering_a_kept_bench_run_recomputes_rather_than_echoes(tmp_path, kind):
    """One time changed in a copy of the kept JSON: the re-render follows it, so the kept .md
    no longer matches and the check fails."""
    doc = synthetic.DOCS[kind]()
    good = _keep_by_hand(doc, kind, tmp_path / "good")
    with gzip.open(os.path.join(good, kind + ".json.gz"), "rt") as f:
        copy = json.load(f)
    if kind == "corpus":
        copy["programs"]["jq"]["times"]["vam"][0][1] *= 0.5
    else:
        copy["runs"][-1]["score"] *= 0.5
    mod = synthetic.bench(kind)
    assert mod.render_doc(copy) != mod.render_doc(doc)
    assert mod.blocks(copy)["vam"] != mod.blocks(doc)["vam"]
    changed = _keep_by_hand(copy, kind, tmp_path / "changed", md=mod.render_doc(doc))
    with pytest.raises(AssertionError, match="does not re-render"):
        _bench_run_blocks(changed)


def test_kept_bench_runs_from_before_the_twin_render_without_an_aa_null():
    """The runs kept before the benches had an A/A null hold no twin, and render as they did: no
    A/A column, no rule, their words unchanged (the re-render check above holds them to their .md)."""
    old = ["2026-11-29-corpus", "2026-11-29-originals"]
    assert set(old) <= set(_bench_runs())
    for name in old:
        path = os.path.join(RUNS, name)
        kind = bench_kind(path)
        mod = synthetic.bench(kind)
        doc = read_bench(path, mod.FORMAT)
        assert "twin" not in doc
        text = mod.render_doc(doc)
        assert "A/A" not in text and "~again" not in text and "no verdict" not in text
        with open(os.path.join(path, kind + ".md"), encoding="utf-8") as f:
            assert text == f.read()


def test_kept_bench_runs_with_a_twin_carry_their_aa_null():
    """A kept bench run made with the A/A twin records it, and its report reads vam against it."""
    twin = [n for n in _bench_runs() if n.endswith("-twin")]
    assert {"2026-11-29-corpus-twin", "2026-11-29-originals-twin"} <= set(twin)
    for name in twin:
        path = os.path.join(RUNS, name)
        kind = bench_kind(path)
        mod = synthetic.bench(kind)
        doc = read_bench(path, mod.FORMAT)
        assert doc.get("twin")
        text = mod.render_doc(doc)
        assert "A/A null" in text and doc["twin"] + "~again" in text
