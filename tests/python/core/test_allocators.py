"""The allocator registry (core/allocators.py): names, variants and peers, checked against the disk
and a fake system."""

import os

import pytest

from conftest import peers_on_disk

from alloclab import LabError
from alloclab.core import allocators


def test_a_variant_is_its_allocator_with_variables_set():
    v = allocators.find("glibc@VAM_ORDER=fifo@OTHER=a=b")
    assert v.name == "glibc@VAM_ORDER=fifo@OTHER=a=b" and v.path is None
    assert v.environ == {"VAM_ORDER": "fifo", "OTHER": "a=b"}  # a value may hold "="
    assert allocators.find("glibc@EMPTY=").environ == {"EMPTY": ""}
    assert allocators.find("glibc").env == ()
    for bad, says in [("glibc@VAM_ORDER", "expected NAME@VAR=VALUE"), ("glibc@", "expected NAME@VAR=VALUE"),
                      ("@X=1", "expected NAME@VAR=VALUE"), ("glibc@1X=2", "not an environment variable"),
                      ("glibc@X=1@X=2", "given twice"), ("glibc@LD_PRELOAD=/x.so", "set by the lab"),
                      ("glibc@LITTER_SEED=3", "set by the lab"), ("glibc@ALLOCLAB_PAD=1", "set by the lab"),
                      ("nosuchmalloc@X=1", "unknown allocator 'nosuchmalloc'")]:
        with pytest.raises(LabError, match=says):
            allocators.find(bad)


def test_an_allocators_record_is_its_name_version_library_and_variables():
    assert allocators.find("glibc").info() == {"name": "glibc", "version": allocators.glibc_version(), "path": None}
    v = allocators.find("glibc@VAM_ORDER=fifo")
    assert v.info()["env"] == ["VAM_ORDER=fifo"] and v.info()["name"] == "glibc@VAM_ORDER=fifo"


def test_vam_taken_from_a_build_tree_is_versioned_by_that_build(tmp_path):
    lib = tmp_path / "libvam.so"
    lib.write_bytes(b"\x7fELF")
    os.utime(lib, (0, 86400 * 365))
    base = allocators.Allocator("vam", "/elsewhere/libvam.so", "alloclab build of 2026-01-01 00:00 UTC")
    got = allocators.from_build([allocators.find("glibc"), base], "glibc,vam", str(lib))
    assert got[1].path == str(lib) and got[1].version == "alloclab build of 1971-01-01 00:00 UTC"
    assert got[0] == allocators.find("glibc")
    # a libvam given by path (no package owns it) says when it was built, not "unknown"
    assert allocators.find(str(lib)).version == "alloclab build of 1971-01-01 00:00 UTC"


def test_api_finds_allocators():
    assert allocators.find("glibc").path is None
    with pytest.raises(LabError):
        allocators.find("definitely-not-an-allocator")


@pytest.mark.parametrize("name", ["jemalloc", "mimalloc", "tcmalloc"])
def test_a_peer_is_found_exactly_when_its_library_is_on_disk(name):
    """Against a listing of the disk made without the registry: a peer installed here is found,
    at one of its files, with a version; one that is not raises NotInstalled."""
    on_disk = peers_on_disk()[name]
    if on_disk:
        a = allocators.find(name)
        assert os.path.realpath(a.path) in on_disk and a.version != "unknown"
    else:
        with pytest.raises(allocators.NotInstalled, match=f"allocator '{name}' is not installed"):
            allocators.find(name)


def test_find_looks_where_the_registry_says(tmp_path, monkeypatch):
    """A fake system: one library directory holding a jemalloc, ldconfig knowing nothing. find()
    returns that file (version from its name), and raises NotInstalled once it is gone."""
    lib = tmp_path / "libjemalloc.so.2"
    lib.write_bytes(b"\x7fELF" + bytes(60))
    monkeypatch.setattr(allocators, "_ldconfig", lambda: {})
    monkeypatch.setattr(allocators, "_package_version", lambda path: None)
    monkeypatch.setattr(allocators, "SYSTEM_LIBDIRS", [str(tmp_path)])
    a = allocators.find("jemalloc")
    assert (a.name, a.path, a.version) == ("jemalloc", str(lib), "2")
    v = allocators.find("jemalloc@X=1")
    assert (v.name, v.path, v.env) == ("jemalloc@X=1", str(lib), (("X", "1"),))
    lib.unlink()
    with pytest.raises(allocators.NotInstalled):
        allocators.find("jemalloc")
    assert "jemalloc" not in [x.name for x in allocators.available()]


def test_a_variant_whose_options_the_allocator_rejects_is_refused_before_anything_runs(libdir):
    """libvam warns and falls back to its default on a bad value; the variant would be measured as
    default vam under another name. The registry refuses it and quotes the allocator's own words."""
    with pytest.raises(LabError, match=r"vam rejects its options .*VAM_ORDER=random ignored"):
        allocators.find("vam@VAM_ORDER=random")
    with pytest.raises(LabError, match=r"unknown option VAM_NO_SUCH"):
        allocators.find("vam@VAM_NO_SUCH=1")
    assert allocators.find("vam@VAM_ORDER=fifo").environ == {"VAM_ORDER": "fifo"}
    # an option the allocator does not read itself (a program's own variable) passes
    assert allocators.find("vam@PYTHONMALLOC=malloc").environ == {"PYTHONMALLOC": "malloc"}


def test_vams_instrumented_builds_are_found_by_name_but_not_among_all(libdir):
    for twin in allocators.VAM_TWINS:
        a = allocators.find(twin)
        assert a.name == twin and a.path.endswith(f"libvam-{twin.split('-')[1]}.so"), a
    assert not set(allocators.VAM_TWINS) & {a.name for a in allocators.available()}


def _lib_with_source(tmp_path, name, sid):
    lib = tmp_path / name
    body = b"\x7fELF" + bytes(100)
    if sid is not None:
        body += b"\x00alloclab-vam-source: " + sid.encode() + b"\x00" + bytes(50)
    lib.write_bytes(body)
    os.utime(lib, (0, 86400 * 365))
    return lib


HEX = "9fb1ad764b04ef1418c62cb4bfb99f34271a5db1"


@pytest.mark.parametrize("sid, version", [
    (HEX, "alloclab build of 1971-01-01 00:00 UTC from commit 9fb1ad764b04"),
    (HEX + "+changes", "alloclab build of 1971-01-01 00:00 UTC from commit 9fb1ad764b04 with changes"),
    ("unknown", "alloclab build of 1971-01-01 00:00 UTC, source commit unknown"),
    (None, "alloclab build of 1971-01-01 00:00 UTC"),
])
def test_a_vam_library_is_versioned_by_the_commit_it_says_it_was_built_from(tmp_path, sid, version):
    """The time alone said when a file was written: a copy of an old build read as new."""
    lib = _lib_with_source(tmp_path, "libvam-copy.so", sid)
    assert allocators.source_id(str(lib)) == sid
    assert allocators.find(str(lib)).version == version


def test_a_library_named_for_a_commit_must_have_been_built_from_it(tmp_path):
    good = _lib_with_source(tmp_path, "good.so", HEX)
    allocators.check_claimed_commit("vam-9fb1ad7", str(good))
    allocators.check_claimed_commit("anything-else", str(good))  # no claim, nothing to check
    for sid, says in [("1e222e3" + HEX[7:], "was built from commit 1e222e3"),
                      (HEX + "+changes", "with changes"),
                      (None, "does not say which commit"),
                      ("unknown", "does not say which commit")]:
        lib = _lib_with_source(tmp_path, "lib.so", sid)
        with pytest.raises(LabError, match=f"vam-9fb1ad7 names commit 9fb1ad7, but .*{says}"):
            allocators.check_claimed_commit("vam-9fb1ad7", str(lib))


def test_the_built_vam_says_which_commit_it_was_built_from():
    """The build writes the commit into every vam library (cmake/vam_source_id.cmake): the
    checkout's libvam.so names the checkout's HEAD."""
    import subprocess
    lib = allocators.vam_library()
    assert lib is not None, "libvam.so is not built; run `make`"
    sid = allocators.source_id(lib)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        assert sid == "unknown"
    else:
        assert sid is not None and sid.partition("+")[0] == head.stdout.strip(), (lib, sid)
