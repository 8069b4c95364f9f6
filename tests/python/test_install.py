"""`pip install .` brings the whole tool: the wheel builds the native parts with the project's
CMake (scikit-build-core), and in a fresh virtual environment, from another directory, with
nothing else set (no ALLOCLAB_PREFIX, no PYTHONPATH, no `make`), `alloclab compare`, `alloclab
study --quick` and `vam PROGRAM` run on the parts the package carries (docs/lab.md, "Installing
the command with pip").

The package is installed offline (--no-build-isolation --no-index) from the checkout, with the
build backend and the lab's dependencies taken from the test's own environment (.venv, which
scripts/bootstrap fills from python/requirements.txt). The CMake build goes to build/wheel and is
kept, so a second run of the suite rebuilds only what changed."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.install

WHEEL_BUILD_DIR = os.path.join(ROOT, "build", "wheel")


def _fresh_venv(where):
    """A venv without pip that sees the test environment's packages through a .pth file, so
    pip, scikit-build-core, numpy, matplotlib and jinja2 come from there and nothing is
    downloaded; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    py = str(where / "bin" / "python")
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    outer = [p for p in sys.path if p.endswith("-packages") and os.path.isdir(p)]
    with open(os.path.join(site, "_outer.pth"), "w") as f:
        f.write("\n".join(outer) + "\n")
    return py, site


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(bin dir, site-packages) of a fresh venv with the checkout installed by pip."""
    try:
        import scikit_build_core  # noqa: F401
    except ImportError as e:
        pytest.fail(f"building the wheel offline needs scikit-build-core in the test's environment: {e} "
                    "(scripts/bootstrap installs python/requirements.txt)")
    venv = tmp_path_factory.mktemp("pip") / "v"
    py, site = _fresh_venv(venv)
    env = dict(_clean_env(), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "-C", f"build-dir={WHEEL_BUILD_DIR}", ROOT],
                       capture_output=True, text=True, env=env, cwd=venv, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return venv / "bin", site


def _clean_env(**extra):
    """The environment of a user who did nothing but pip install: no hint where the lab is."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ALLOCLAB_PREFIX", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def _run(installed, cmd, cwd, timeout=300):
    bindir, _ = installed
    env = _clean_env(PATH=f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    return subprocess.run([str(bindir / cmd[0]), *cmd[1:]], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)


def test_the_wheel_carries_the_native_parts(installed):
    _, site = installed
    native = os.path.join(site, "alloclab", "native")
    want = ["lib/libvam.so", "lib/liballoclab_profile.so", "lib/liballoclab_litter.so",
            "libexec/alloclab/alloclab-exec", "libexec/alloclab/workloads/boxed_sim"]
    # The shims and tools built only when their libraries are on this machine (as CMake decides).
    built = os.path.join(ROOT, "build", "release")
    for name, rel in (("src/lab/liballoclab_sites.so", "lib/liballoclab_sites.so"),
                      ("src/lab/liballoclab_apr.so", "lib/liballoclab_apr.so"),
                      ("src/memtools/alloclab-mem-amd64-linux", "libexec/alloclab/alloclab-mem-amd64-linux"),
                      ("src/memtools/liballoclab_memshim.so", "lib/liballoclab_memshim.so"),
                      ("src/memtools/alloclab-pagesim", "libexec/alloclab/alloclab-pagesim")):
        if os.path.exists(os.path.join(built, name)):
            want.append(rel)
    missing = [w for w in want if not os.path.isfile(os.path.join(native, w))]
    assert missing == []
    # Not the C++ tests or benchmarks, nor what only `make install` is for.
    assert not os.path.exists(os.path.join(native, "include"))
    assert not any(f.endswith(".a") for f in os.listdir(os.path.join(native, "lib")))
    assert not os.path.exists(os.path.join(WHEEL_BUILD_DIR, "tests"))
    assert not os.path.exists(os.path.join(WHEEL_BUILD_DIR, "bench"))
    # The man pages, in the environment's share/man.
    for page in ("man1/alloclab.1", "man1/vam.1", "man3/vam.3", "man3/reap.3"):
        assert (installed[0].parent / "share" / "man" / page).is_file(), page


def test_compare_runs_glibc_and_vam_littered_from_another_directory(installed, tmp_path):
    r = _run(installed, ["alloclab", "compare", "--allocators", "glibc,vam", "--adv", "0,3", "--runs", "2",
                         "--cache", "off", "--export-json", "r.json", "--", "/bin/true"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads((tmp_path / "r.json").read_text())
    assert len(data["runs"]) == 8 and {c["ok"] for c in data["cells"]} == {2}
    # The export names the library each allocator ran: the package's own libvam.
    _, site = installed
    vam = [a for a in data["meta"]["allocators"] if a["name"] == "vam"]
    assert len(vam) == 1 and vam[0]["path"].startswith(os.path.join(site, "alloclab", "native")), vam


def test_study_quick_runs_on_the_packaged_workloads(installed, tmp_path):
    r = _run(installed, ["alloclab", "study", "--quick", "--runs", "1", "--allocators", "glibc", "-o", "s"],
             cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Verdicts" in r.stdout, r.stdout[-2000:]
    assert (tmp_path / "s" / "verdicts.json").is_file()


def test_vam_runs_a_program_on_the_packaged_libvam(installed, tmp_path):
    _, site = installed
    r = _run(installed, ["vam", "python3", "-c", "print(1)"], cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr
    r = _run(installed, ["vam", "cat", "/proc/self/maps"], cwd=tmp_path)
    assert os.path.join(site, "alloclab", "native", "lib", "libvam.so") in r.stdout
    r = _run(installed, ["vam", "--stats", "/bin/true"], cwd=tmp_path)
    assert r.returncode == 0 and "vam: statistics" in r.stderr, r.stderr
    r = _run(installed, ["vam"], cwd=tmp_path)
    assert r.returncode == 2 and "usage: vam" in r.stderr
    r = _run(installed, ["vam", "/nonexistent/program"], cwd=tmp_path)
    assert r.returncode == 127 and "/nonexistent/program" in r.stderr


def test_the_package_finds_its_own_parts_after_alloclab_prefix(installed, tmp_path):
    """`alloclab allocators` names the package's libvam; a user's ALLOCLAB_PREFIX is still searched
    first (one search order, core/paths.py)."""
    bindir, site = installed
    native = os.path.join(site, "alloclab", "native")
    r = _run(installed, ["alloclab", "allocators"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    vam = [line for line in r.stdout.splitlines() if line.startswith("vam ")]
    assert len(vam) == 1 and os.path.join(native, "lib", "libvam.so") in vam[0], r.stdout
    r = subprocess.run([str(bindir / "python"), "-c", "import json; from alloclab.core import paths; print(json.dumps(paths.roots()))"],
                       capture_output=True, text=True, env=_clean_env(ALLOCLAB_PREFIX=str(tmp_path)),
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[:2] == [str(tmp_path), native], r.stdout
