"""core/machine.py: what a run records about the machine and the tree it came from."""

import re
import subprocess

from alloclab.core import machine, paths


def test_a_checkout_records_its_commit_and_whether_it_had_changes():
    src = machine.source(paths.SOURCE_ROOT)
    if src["commit"] is None:  # an installed package: nothing to read
        return
    head = subprocess.run(["git", "-C", paths.SOURCE_ROOT, "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert src["commit"] == head and re.fullmatch(r"[0-9a-f]{40}", head)
    assert src["changed"] in (True, False)


def test_a_tree_with_changes_says_so(tmp_path):
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    (tmp_path / "f").write_text("one")
    subprocess.run(git + ["add", "f"], check=True)
    subprocess.run(git + ["commit", "-qm", "one"], check=True)
    assert machine.source(str(tmp_path))["changed"] is False
    (tmp_path / "f").write_text("two")
    assert machine.source(str(tmp_path))["changed"] is True


def test_a_directory_that_is_not_a_checkout_records_no_commit(tmp_path):
    src = machine.source(str(tmp_path))
    assert src["commit"] is None and src["changed"] is None and src["alloclab"]


def test_a_run_record_is_the_tree_the_command_and_its_start_and_end():
    rec = machine.record(("bench/corpus", "--rounds", "3"), "2026-11-29T05:00:00Z")
    assert rec["command"] == ["bench/corpus", "--rounds", "3"] and rec["started"] == "2026-11-29T05:00:00Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", rec["finished"])
    assert {k: rec[k] for k in ("alloclab", "commit", "changed")} == machine.source(paths.SOURCE_ROOT)


def test_the_machine_during_a_run_carries_its_load():
    class Load:
        def as_dict(self):
            return {"others_share": 0.5}
    info = machine.during(Load())
    assert info["load"] == {"others_share": 0.5} and info["cpus"] == machine.machine_info()["cpus"]


def _device(sys, name, ident, features):
    d = sys / "bus" / "virtio" / "devices" / name
    d.mkdir(parents=True)
    (d / "device").write_text(ident + "\n")
    (d / "features").write_text(features + "\n")


REPORTING = "01100101" + "0" * 56   # a balloon's features with bit 5, free page reporting
NO_REPORTING = "01100001" + "0" * 56


def test_a_balloon_that_reports_free_pages_is_named_with_its_order(tmp_path):
    _device(tmp_path, "virtio0", "0x0001", REPORTING)  # a network card: bit 5 means something else
    _device(tmp_path, "virtio3", "0x0005", REPORTING)
    params = tmp_path / "module" / "page_reporting" / "parameters"
    params.mkdir(parents=True)
    (params / "page_reporting_order").write_text("9\n")
    assert machine.free_page_reporting(str(tmp_path)) == "on (virtio3's balloon, blocks of order 9 and up)"


def test_no_balloon_or_one_without_reporting_is_no_reporting(tmp_path):
    assert machine.free_page_reporting(str(tmp_path)) is None   # no virtio bus at all
    _device(tmp_path, "virtio0", "0x0002", REPORTING)
    _device(tmp_path, "virtio1", "0x0005", NO_REPORTING)
    assert machine.free_page_reporting(str(tmp_path)) is None


def test_the_record_and_the_reports_carry_it_where_the_machine_has_it():
    from alloclab.present.html import machine_facts
    info = machine.machine_info()
    assert ("free_page_reporting" in info) == (machine.free_page_reporting() is not None)
    facts = dict(machine_facts({**info, "free_page_reporting": "on (virtio0's balloon)"}))
    assert facts["free page reporting"] == "on (virtio0's balloon)"
