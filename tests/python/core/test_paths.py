"""Where the native parts are found (core/paths.py): one search order, ALLOCLAB_PREFIX first."""

import os


from conftest import ROOT

from alloclab.core import paths


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


def test_the_packages_own_native_parts_come_after_alloclab_prefix_and_before_the_build_tree(tmp_path, monkeypatch):
    """pip install . puts the parts in alloclab/native (an install prefix): searched second."""
    native = tmp_path / "native"
    (native / "lib").mkdir(parents=True)
    (native / "lib" / "liballoclab_litter.so").write_bytes(b"\x7fELF")
    monkeypatch.setattr(paths, "NATIVE_DIR", str(native))
    monkeypatch.delenv("ALLOCLAB_PREFIX", raising=False)
    build = os.path.join(ROOT, "build", "release")
    assert paths.roots()[:2] == [str(native), build]
    assert paths.find("liballoclab_litter.so") == str(native / "lib" / "liballoclab_litter.so")
    monkeypatch.setenv("ALLOCLAB_PREFIX", str(tmp_path / "mine"))
    assert paths.roots()[:3] == [str(tmp_path / "mine"), str(native), build]
    monkeypatch.setattr(paths, "NATIVE_DIR", str(tmp_path / "absent"))
    assert str(tmp_path / "absent") not in paths.roots()
