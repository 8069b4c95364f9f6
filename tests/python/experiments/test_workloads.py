"""The workload catalog agrees with the workloads' sources and binaries."""

import os
import re

import pytest

from alloclab import LabError
from alloclab.experiments import workloads

from conftest import ROOT  # noqa: E402


def test_every_built_workload_is_in_the_catalog_and_back():
    with open(os.path.join(ROOT, "workloads", "CMakeLists.txt")) as f:
        text = f.read()
    listed = set(re.search(r"set\(_workloads ([^)]*)\)", text).group(1).split())
    assert listed == {w.name for w in workloads.CATALOG}


def test_catalog_rows_are_well_formed():
    for w in workloads.CATALOG:
        assert w.kind in workloads.KINDS, w
        assert w.variants[0] == "malloc", f"{w.name}: the naive variant comes first"
        assert len(set(w.variants)) == len(w.variants), w
        assert w.paper_program == "" or w.paper_program in workloads.PAPER_TABLE3, w
    kinds = {w.name: w.kind for w in workloads.CATALOG}
    assert kinds["mempool_iter"] == "hybrid" and kinds["xalloc_parser"] == "hybrid"


def test_paper_table3_as_printed():
    row = workloads.PAPER_TABLE3["197.parser"]
    assert row["memops_share"] == 0.418 and row["objects"] == 9_334_022 and row["total_over_max"] == 109.7
    shares = {k: v["memops_share"] for k, v in workloads.PAPER_TABLE3.items()}
    assert (shares["mudlle"], shares["lcc"], shares["176.gcc"], shares["boxed-sim"],
            shares["espresso"], shares["253.perlbmk"]) == (0.337, 0.242, 0.067, 0.002, 0.108, 0.126)


def test_find_names_the_known_ones_when_it_fails():
    assert workloads.find("interp").paper_program == "mudlle"
    with pytest.raises(LabError, match="interp"):
        workloads.find("nonesuch")


def test_binary_honours_the_environment(tmp_path, monkeypatch):
    (tmp_path / "workloads").mkdir()
    fake = tmp_path / "workloads" / "interp"
    fake.write_text("#!/bin/sh\necho malloc custom\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ALLOCLAB_PREFIX", str(tmp_path))
    assert workloads.binary("interp") == str(fake)
    # only what the binary says it accepts, in the catalog's order
    assert workloads.accepted_variants("interp") == ("malloc", "custom")


@pytest.mark.parametrize("w", workloads.CATALOG, ids=lambda w: w.name)
def test_catalog_variants_are_what_the_binary_accepts(w):
    path = workloads.binary(w.name)
    if path is None:
        pytest.skip(f"{w.name} is not built")
    if workloads._binary_variants(path, os.path.getmtime(path)) is None:
        pytest.skip(f"{path} predates --variants (rebuild it)")
    assert workloads.accepted_variants(w.name) == w.variants


def test_the_no_effect_programs_have_region_stand_ins_fed_only_to_their_papers():
    vpr, geo = workloads.find("vpr"), workloads.find("geometry_nodes")
    assert (vpr.kind, geo.kind) == ("region", "region")
    assert vpr.paper_program == "175.vpr" and geo.paper_program == ""      # geometry_nodes has no Table 3 row
    for w in (vpr, geo):
        assert w.variants[:4] == ("malloc", "custom", "reap", "emulator") and not w.partial
    row = workloads.PAPER_TABLE3["175.vpr"]
    assert (row["objects"], row["max_live"], row["mean_size"], row["memops_share"]) == (3_897, 3_813, 44, 0.001)
    assert workloads.feeds("vpr", "2002") and workloads.feeds("vpr", "2026") and not workloads.feeds("vpr", "2005")
    assert workloads.feeds("geometry_nodes", "2026") and not workloads.feeds("geometry_nodes", "2002")
    # rows whose papers are not sorted, and programs outside the catalog, feed every paper
    assert workloads.feeds("interp", "2002") and workloads.feeds("python3", "2002")
