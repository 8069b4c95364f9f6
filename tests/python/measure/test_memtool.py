"""The memory tool's driver (measure/memtool.py): the program is started through core.runner, its
status passed on, and only the files of the process the lab started are kept."""

import os

import pytest

from alloclab import LabError
from alloclab.measure import memtool

# A child that execs another program is traced too, and writes its own files.
EXECS_AND_EXITS_3 = r"""
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(void) {
  static void *volatile p;
  p = malloc(100);
  pid_t c = fork();
  if (c == 0) { execl("/bin/true", "true", (char *)0); _exit(1); }
  waitpid(c, NULL, 0);
  free(p);
  return 3;
}
"""


def test_the_status_and_the_started_process_files(tools, cbuild, tmp_path):
    exe = cbuild(EXECS_AND_EXITS_3, "execs_exits_3")
    r = memtool.run([exe], str(tmp_path), "t", objects=True, tools=tools)
    assert r.status == 3
    assert r.summary["other_processes"] == 1                  # the exec'd child wrote its own, removed
    left = sorted(os.listdir(tmp_path))
    assert left == sorted([os.path.basename(r.prefix) + s for s in (".objects", ".summary")] + ["t.stdout"])
    assert r.stdout == str(tmp_path / "t.stdout")
    assert memtool.read_objects(r.prefix + ".objects")["size"].tolist() == [100]


def test_a_program_past_its_time_is_a_lab_error(tools, tmp_path):
    with pytest.raises(LabError, match="did not finish within 0.5 s under the tool"):
        memtool.run(["sleep", "30"], str(tmp_path), "t", timeout=0.5, tools=tools)
