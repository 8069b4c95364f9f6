"""The study's Subversion repository (experiments/study/svnrepo.py): made from a generated
dump, the same history on every machine, made once and kept."""

import os
import shutil
import subprocess

import pytest

from alloclab.experiments.study import svnrepo


def test_the_dump_is_the_same_every_time_and_grows_with_its_revisions():
    a, b = svnrepo.dump(12), svnrepo.dump(12)
    assert a == b and a.startswith(b"SVN-fs-dump-format-version: 2\n")
    assert a.count(b"Revision-number: ") == 13 and len(svnrepo.dump(24)) > len(a)


def test_the_repository_holds_the_dumps_history_and_is_kept_once_made(tmp_path):
    if not shutil.which("svnadmin") or not shutil.which("svn"):
        pytest.fail("subversion is not installed (scripts/bootstrap installs it)")
    path = str(tmp_path / "repo")
    url = svnrepo.make_repo(path, 12)
    assert url == "file://" + path
    youngest = subprocess.run(["svnlook", "youngest", path], capture_output=True, text=True, check=True).stdout
    assert youngest.strip() == "12"
    log = subprocess.run(["svn", "log", "--config-dir", str(tmp_path / "conf"), "-r", "3", url],
                         capture_output=True, text=True, check=True).stdout
    assert "r3 | dev0 | 2026-01-01 21:03:00 +0000" in log and "r3: edit" in log
    stamp = os.path.getmtime(os.path.join(path, svnrepo.STAMP))
    assert svnrepo.make_repo(path, 12) == url and os.path.getmtime(os.path.join(path, svnrepo.STAMP)) == stamp
