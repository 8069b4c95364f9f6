"""The litter shim (littering §3.2, Algorithm 3) and measure/litter.py: a littered heap is
scattered, the log counts what Algorithm 3 does, the seed decides the layout."""

import json
import os
import re
import subprocess

import pytest

from conftest import peers_installed, run_cli


CLEAN_MIN = 0.9      # a clean heap hands out (almost) every object at the same stride


LITTERED_MAX = 0.5   # Adv_10 leaves at most half of the pairs at that stride


def fraction(text):
    m = re.search(r"fraction=([\d.]+)", text)
    assert m, text
    return float(m.group(1))


@pytest.mark.parametrize("allocator", ["glibc", *peers_installed()])
def test_littering_scatters_consecutive_allocations(probe, allocator):
    exe, prof = probe
    clean = run_cli("litter", "--profile", prof, "--adv", "0", "--allocator", allocator, "--", exe)
    assert clean.returncode == 0, clean.stderr
    littered = run_cli("litter", "--profile", prof, "--adv", "10", "--allocator", allocator, "--", exe)
    assert littered.returncode == 0, littered.stderr
    assert fraction(clean.stdout) >= CLEAN_MIN, clean.stdout
    assert fraction(littered.stdout) <= LITTERED_MAX, littered.stdout
    if allocator != "glibc":
        assert f"lib{allocator}" in littered.stderr   # the log names the allocator that was littered


def test_log_reports_algorithm3_counts(probe, tmp_path):
    exe, prof = probe
    max_live = json.loads(open(prof).read())["max_live"]
    log = tmp_path / "litter.log"
    r = run_cli("litter", "--profile", prof, "--multiplier", "3", "--occupancy", "0.25", "--log", str(log),
                "--", exe)
    assert r.returncode == 0, r.stderr
    line = log.read_text()
    n = round(3 * max_live)
    assert f"objects={n} " in line
    assert f"freed={round(n * 0.75)} " in line
    assert f"live={n - round(n * 0.75)} " in line
    assert "seed=42" in line and "ms=" in line


def test_same_seed_same_littering_and_seed_changes_it(probe, tmp_path):
    """The log of a littering is a function of the seed: the same seed gives the
    same log (sizes drawn, bytes, live bytes), another seed other draws -- not
    just another number echoed (test_same_seed_gives_the_same_heap_layout checks
    where the objects land)."""
    exe, _ = probe
    prof = tmp_path / "many_sizes.json"   # many sizes, so that the draws show in the byte counts
    prof.write_text(json.dumps({"max_live": 500, "sizes": {str(16 * k): 10 + k for k in range(1, 33)}}))
    logs = []
    for seed in ("7", "7", "8"):
        log = tmp_path / f"l{len(logs)}.log"
        r = run_cli("litter", "--profile", prof, "--adv", "3", "--seed", seed, "--log", str(log), "--", exe)
        assert r.returncode == 0, r.stderr
        logs.append(re.sub(r"(pid|ms|run_ms|seed)=\S+", "", log.read_text()))
    assert logs[0] == logs[1]
    drawn = [re.search(r"bytes=(\d+) live_bytes=(\d+)", t).groups() for t in logs]
    assert drawn[2] != drawn[0], "another seed drew the same sizes: the seed is not used"


def shim_env(litter_so, **kw):
    env = dict(os.environ, LD_PRELOAD=litter_so)
    for k in list(env):
        if k.startswith("LITTER_"):
            del env[k]
    env.update(kw)
    return env


@pytest.mark.parametrize("content,message", [
    ("not json", "not a JSON object"),
    ('{"sizes": {"24": 3}}', 'no "max_live"'),
    ('{"max_live": 10}', 'no "sizes"'),
    ('{"max_live": -1, "sizes": {}}', "max_live"),
    ('{"max_live": 10, "sizes": {"x": 1}}', "sizes"),
    ('{"max_live": 10, "sizes": {}}', "no sizes below its cutoff"),
    ('{"max_live": 10, "ignored": 0, "sizes": {}}', "no sizes below its cutoff"),
])
def test_shim_rejects_bad_profiles_with_status_2(litter_so, tmp_path, content, message):
    prof = tmp_path / "bad.json"
    prof.write_text(content)
    r = subprocess.run(["true"], env=shim_env(litter_so, LITTER_PROFILE=str(prof)), capture_output=True,
                       text=True)
    assert r.returncode == 2
    assert message in r.stderr and r.stderr.startswith("litter: ")


@pytest.mark.parametrize("env,message", [
    ({}, "LITTER_PROFILE is not set"),
    ({"LITTER_PROFILE": "/nonexistent/p.json"}, "cannot open profile"),
    ({"LITTER_OCCUPANCY": "1.5"}, "LITTER_OCCUPANCY"),
    ({"LITTER_MULTIPLIER": "-1"}, "LITTER_MULTIPLIER"),
    ({"LITTER_MULTIPLIER": "abc"}, "LITTER_MULTIPLIER"),
    ({"LITTER_SEED": "x"}, "LITTER_SEED"),
])
def test_shim_rejects_bad_settings_with_status_2(litter_so, probe, env, message):
    _, prof = probe
    e = {"LITTER_PROFILE": prof, **env} if "LITTER_PROFILE" not in env and env else dict(env)
    r = subprocess.run(["true"], env=shim_env(litter_so, **e), capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr


def test_shim_without_python(litter_so, probe):
    exe, prof = probe
    r = subprocess.run([exe], env=shim_env(litter_so, LITTER_PROFILE=prof, LITTER_MULTIPLIER="10",
                                           LITTER_OCCUPANCY="0.8"), capture_output=True, text=True)
    assert r.returncode == 0
    assert fraction(r.stdout) <= LITTERED_MAX
    assert "litter: " in r.stderr and "libc.so" in r.stderr


LAYOUT = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
int main(void) {   /* a digest of where 500 objects land, relative to the first */
  static void *volatile p[500];
  unsigned long h = 1469598103934665603UL;
  for (int i = 0; i < 500; i++) p[i] = malloc(24);
  for (int i = 1; i < 500; i++) { h ^= (unsigned long)((intptr_t)p[i] - (intptr_t)p[0]); h *= 1099511628211UL; }
  printf("%lx\n", h);
  return 0;
}
"""

@pytest.mark.parametrize("allocator", ["glibc", *peers_installed()])
def test_same_seed_gives_the_same_heap_layout(cbuild, probe, allocator):
    exe = cbuild(LAYOUT, "layout")
    _, prof = probe
    digests = []
    for seed in ("7", "7", "8"):
        r = run_cli("litter", "--profile", prof, "--adv", "3", "--seed", seed, "--allocator", allocator,
                    "--", exe)
        assert r.returncode == 0, r.stderr
        digests.append(r.stdout.strip())
    assert digests[0] == digests[1], allocator      # reproducible by default
    assert digests[0] != digests[2], allocator      # and the seed matters


def test_a_profile_whose_allocations_are_all_above_the_cutoff_litters_nothing(litter_so, tmp_path):
    # e.g. a region allocator that asks malloc only for big chunks
    prof = tmp_path / "big_only.json"
    prof.write_text('{"max_live": 4, "ignored": 9, "sizes": {}}')
    r = subprocess.run(["true"], env=shim_env(litter_so, LITTER_PROFILE=str(prof), LITTER_MULTIPLIER="3",
                                              LITTER_OCCUPANCY="0.66"), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert " objects=0 " in r.stderr and "note=every_allocation_at_or_above_the_cutoff" in r.stderr
