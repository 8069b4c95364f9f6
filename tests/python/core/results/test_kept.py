"""core/results/kept.py: a bench run's record, its JSON read and written, and keeping it in
docs/runs/NAME — on made-up runs (nothing here is timed)."""

import gzip
import json
import os

import pytest

from alloclab import LabError
from alloclab.core import allocators, machine, paths
from alloclab.core.load import LoadWatch
from alloclab.core.results import kept
from alloclab.core.results.files import Format

FMT = Format("corpus", 2, reads=(1, 2))
REPORT = lambda doc: "report\n"  # noqa: E731 (what the bench renders from any run here)
GOOD = {"commit": "0123456789abcdef0123456789abcdef01234567", "changed": False}


def test_a_bench_runs_provenance_is_what_a_study_records():
    load = LoadWatch.start().stop()
    p = kept.provenance(["bench/corpus", "-o", "out"], "2026-11-29T05:00:00Z", load, [allocators.find("glibc")])
    assert set(p) == {"record", "machine", "allocator_info"}
    assert p["record"]["command"] == ["bench/corpus", "-o", "out"] and p["record"]["started"] == "2026-11-29T05:00:00Z"
    assert p["record"]["commit"] == machine.record([], "")["commit"]
    assert p["machine"]["load"] == load.as_dict()
    assert p["allocator_info"] == [allocators.find("glibc").info()]


def test_only_a_committed_tree_can_be_cited():
    assert kept.record_problems({"record": GOOD}) == []
    assert "no commit" in kept.record_problems({"record": dict(GOOD, commit=None)})[0]
    assert "no commit" in kept.record_problems({"record": dict(GOOD, commit="abc")})[0]
    assert "changes" in kept.record_problems({"record": dict(GOOD, changed=True)})[0]
    assert "changes" in kept.record_problems({"record": dict(GOOD, changed=None)})[0]
    assert len(kept.record_problems({})) == 2


def test_the_report_says_where_the_run_came_from():
    doc = {"record": dict(GOOD, started="S", finished="F"),
           "machine": {"load": {"cpus": 2, "others_share": 0.25, "steal_share": 0.0, "busy": True}},
           "allocator_info": [{"name": "glibc", "version": "glibc 2.36", "path": None},
                              {"name": "vam64", "version": "b", "path": "lib/libvam.so", "env": ["VAM_X=64"]}]}
    assert kept.record_line(doc) == (f"Run: commit {GOOD['commit']}, S to F; busy: other processes used 25% "
                                     "of the 2 CPUs' time, 0% stolen")
    doc["record"]["changed"] = True
    assert "with changes" in kept.record_line(doc)
    assert "no record" in kept.record_line({})
    assert kept.allocators_line(doc) == "glibc = the C library (glibc 2.36); vam64 = lib/libvam.so (b) VAM_X=64"


def test_a_bench_json_is_read_plain_compressed_or_from_its_directory(tmp_path):
    path = kept.write_bench(str(tmp_path / "corpus.json"), {"rounds": 3}, FMT)
    with open(path) as f:
        assert json.load(f) == {"format_version": 2, "rounds": 3}
    assert kept.read_bench(path, FMT)["rounds"] == 3
    assert kept.read_bench(str(tmp_path), FMT)["rounds"] == 3
    with open(path, "rb") as f, gzip.open(str(tmp_path / "c.json.gz"), "wb") as z:
        z.write(f.read())
    assert kept.read_bench(str(tmp_path / "c.json.gz"), FMT)["rounds"] == 3
    os.rename(tmp_path / "c.json.gz", tmp_path / "corpus.json.gz")
    os.remove(path)
    assert kept.read_bench(str(tmp_path / "corpus.json"), FMT)["rounds"] == 3  # only the .gz is there


def test_a_bench_json_of_another_version_or_no_object_is_refused(tmp_path):
    (tmp_path / "old.json").write_text('{"rounds": 3}')  # written before versions: version 0
    with pytest.raises(LabError, match="corpus format version 0"):
        kept.read_bench(str(tmp_path / "old.json"), FMT)
    (tmp_path / "new.json").write_text('{"format_version": 3}')
    with pytest.raises(LabError, match="newer"):
        kept.read_bench(str(tmp_path / "new.json"), FMT)
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(LabError, match="not a JSON object"):
        kept.read_bench(str(tmp_path / "list.json"), FMT)
    with pytest.raises(LabError, match="does not exist"):
        kept.read_bench(str(tmp_path / "none.json"), FMT)


def _run(out, doc, md="report\n"):
    os.makedirs(out, exist_ok=True)
    kept.write_bench(os.path.join(out, "corpus.json"), doc, FMT)
    with open(os.path.join(out, "corpus.md"), "w") as f:
        f.write(md)
    return str(out)


def test_keeping_a_run_stores_its_json_compressed_and_its_report(tmp_path):
    out = _run(tmp_path / "out", {"record": GOOD, "rounds": 3})
    dest = tmp_path / "runs" / "NAME"
    dest.mkdir(parents=True)
    (dest / "stale.txt").write_text("from before")
    files = kept.keep_bench(out, FMT, REPORT, str(dest))
    assert sorted(os.listdir(dest)) == ["corpus.json.gz", "corpus.md"] and len(files) == 2
    assert kept.bench_kind(str(dest)) == "corpus"
    assert kept.read_bench(str(dest), FMT)["rounds"] == 3
    assert (dest / "corpus.md").read_text() == "report\n"
    first = (dest / "corpus.json.gz").read_bytes()
    kept.keep_bench(out, FMT, REPORT, str(dest))
    assert (dest / "corpus.json.gz").read_bytes() == first  # no name or time in the gzip header


def test_a_run_is_not_kept_unless_it_re_renders_to_its_report_from_a_committed_tree(tmp_path):
    dest = tmp_path / "runs" / "NAME"
    dest.mkdir(parents=True)
    (dest / "keep.txt").write_text("untouched")
    out = _run(tmp_path / "out", {"record": GOOD})
    with pytest.raises(LabError, match="not what corpus.json renders"):
        kept.keep_bench(out, FMT, lambda doc: "another report\n", str(dest))
    out = _run(tmp_path / "changed", {"record": dict(GOOD, changed=True)})
    with pytest.raises(LabError, match="cannot be kept: its tree had changes"):
        kept.keep_bench(out, FMT, REPORT, str(dest))
    with pytest.raises(LabError, match="not a corpus run's directory"):
        kept.keep_bench(str(tmp_path), FMT, REPORT, str(dest))
    assert os.listdir(dest) == ["keep.txt"]


def test_a_kept_bench_run_is_its_json_and_its_report_and_nothing_else(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    assert kept.bench_kind(str(d)) is None
    (d / "originals.json.gz").write_bytes(b"")
    (d / "originals.md").write_text("")
    assert kept.bench_kind(str(d)) == "originals"
    (d / "extra").write_text("")
    assert kept.bench_kind(str(d)) is None
    os.remove(d / "extra")
    os.rename(d / "originals.md", d / "corpus.md")
    assert kept.bench_kind(str(d)) is None
    assert kept.bench_kind(str(tmp_path / "missing")) is None


def test_a_run_is_rendered_again_from_its_json_alone(tmp_path):
    out = _run(tmp_path / "out", {"record": GOOD, "rounds": 3}, md="stale\n")
    text = kept.rerender(out, FMT, lambda doc: f"{doc['rounds']} rounds\n", str(tmp_path / "again"))
    assert text == "3 rounds\n" and (tmp_path / "again" / "corpus.md").read_text() == text
    assert (tmp_path / "out" / "corpus.md").read_text() == "stale\n"  # nothing written without OUTPUT
    assert kept.rerender(out, FMT, lambda doc: "x") == "x"


def test_a_kept_run_names_the_trees_files_relative_to_the_tree(tmp_path):
    """Where one machine had the tree is no part of what a run measured: keeping writes paths
    under the source tree relative to it, and the report is rendered from those."""
    root = paths.SOURCE_ROOT
    lib = os.path.join(root, "build", "release", "src", "vam", "libvam.so")
    render = lambda doc: f"vam = {doc['lib']}; tree {doc['tree']}\n"  # noqa: E731
    doc = {"record": GOOD, "lib": lib, "tree": root, "other": root + "-elsewhere/x"}
    out = _run(tmp_path / "out", doc, md=render(doc))
    dest = tmp_path / "runs" / "NAME"
    kept.keep_bench(out, FMT, render, str(dest))
    again = kept.read_bench(str(dest), FMT)
    assert again["lib"] == "build/release/src/vam/libvam.so" and again["tree"] == "."
    assert again["other"] == root + "-elsewhere/x"  # a sibling directory is not the tree
    assert (dest / "corpus.md").read_text() == "vam = build/release/src/vam/libvam.so; tree .\n"
    assert root + os.sep not in gzip.decompress((dest / "corpus.json.gz").read_bytes()).decode()


def test_a_kept_run_names_a_library_inside_the_checkout_by_its_path_there(tmp_path):
    root = tmp_path / "checkout"
    lib = root / "build" / "release" / "src" / "vam" / "libvam.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"\x7fELF")
    info = {"name": "vam", "version": "v", "path": str(lib)}
    assert kept.in_checkout(info, str(root))["path"] == "build/release/src/vam/libvam.so"
    # reached through a link to the checkout, too
    os.symlink(root, tmp_path / "link")
    linked = {**info, "path": str(tmp_path / "link" / "build" / "release" / "src" / "vam" / "libvam.so")}
    assert kept.in_checkout(linked, str(root))["path"] == "build/release/src/vam/libvam.so"
    # a system library, the C library and a library beside the checkout keep what they were
    for other in ({"name": "mimalloc", "path": "/lib/x86_64-linux-gnu/libmimalloc.so.2"},
                  {"name": "glibc", "path": None},
                  {"name": "mine", "path": str(tmp_path / "checkout-2" / "libvam.so")}):
        assert kept.in_checkout(other, str(root)) == other



def test_paths_outside_the_checkout_are_found_in_a_runs_command():
    inside = os.path.join(paths.SOURCE_ROOT, "build", "release", "src", "vam", "libvam.so")
    cmd = ["bench/corpus", "--allocators",
           f"glibc,/usr/lib/x86_64-linux-gnu/libmimalloc.so.2,{inside}@VAM_ORDER=fifo,old=/scratch/lib.so@V=1",
           "-o", "/scratch/run", "--build", paths.SOURCE_ROOT, "--rounds", "3"]
    doc = {"record": {"command": cmd}}
    assert kept.paths_outside(doc) == ["/scratch/lib.so", "/scratch/run"]
    assert kept.paths_outside({"record": {"command": ["bench/corpus", "-o", "out/x"]}}) == []
    assert kept.paths_outside({}) == []
