"""The `vam` command (alloclab/vam.py, pip's console script): the program runs with the libvam
the lab finds preloaded behind whatever LD_PRELOAD holds, as scripts/vam.in does. Run here from
the checkout, where libvam is the build tree's; test_install.py runs the installed one."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

from alloclab.core import allocators

ENTRY = "import sys; from alloclab.vam import main; sys.exit(main())"


def vam(*args, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "VAM_STATS")}
    e["PYTHONPATH"] = os.path.join(ROOT, "python")
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, env=e,
                          timeout=60)


@pytest.fixture(scope="module")
def libvam():
    lib = allocators.vam_library()
    if lib is None:
        pytest.fail("libvam.so is not built; run `make`")
    return lib


def test_the_program_runs_with_libvam_mapped(libvam):
    r = vam("cat", "/proc/self/maps")
    assert r.returncode == 0, r.stderr
    assert os.path.realpath(libvam) in r.stdout
    r = vam("python3", "-c", "print(1)")
    assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr


def test_libvam_goes_behind_a_shim_already_preloaded(libvam):
    r = vam("sh", "-c", 'echo "$LD_PRELOAD"', env={"LD_PRELOAD": "/nonexistent-front.so"})
    assert r.stdout.split() == ["/nonexistent-front.so", libvam], r.stdout


def test_stats_option_and_double_dash(libvam):
    r = vam("--stats", "/bin/true")
    assert r.returncode == 0 and "vam: statistics" in r.stderr, r.stderr
    r = vam("--", "sh", "-c", 'echo "$VAM_STATS"')
    assert r.stdout == "\n"


def test_usage_version_and_a_missing_program():
    r = vam()
    assert r.returncode == 2 and r.stderr.startswith("usage: vam")
    r = vam("--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: vam")
    assert vam("--version").stdout.startswith("vam (alloclab) ")
    r = vam("/nonexistent/program")
    assert r.returncode == 127 and "/nonexistent/program" in r.stderr
    r = vam("/etc/hostname")  # a file that is not a program
    assert r.returncode == 126 and "/etc/hostname" in r.stderr


def test_without_libvam_it_says_where_it_looked(tmp_path):
    """With nothing in the search order (roots() emptied), exit 127 naming the search."""
    code = ("import sys; from alloclab.core import paths; paths.roots = lambda: [%r]; "
            "from alloclab.vam import main; sys.exit(main())" % str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code, "/bin/true"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert r.returncode == 127 and "cannot find libvam.so" in r.stderr and "ALLOCLAB_PREFIX" in r.stderr, r.stderr


@pytest.mark.parametrize("how,env,twin", [("--secure", {}, "secure"), ("--", {"VAM_SECURE": "1"}, "secure"),
                                          ("--stats", {}, "stats")])
def test_secure_and_stats_run_the_instrumented_twins(how, env, twin):
    lib = allocators.vam_library(twin)
    if lib is None:
        pytest.fail(f"libvam-{twin}.so is not built; run `make`")
    # the program's own maps; its exit prints the report (cat would close stderr first)
    r = vam(how, sys.executable, "-c", "print(open('/proc/self/maps').read())", env=env)
    assert r.returncode == 0, r.stderr
    assert os.path.realpath(lib) in r.stdout
    if twin == "stats":
        assert "  calls " in r.stderr and "malloc" in r.stderr, r.stderr
