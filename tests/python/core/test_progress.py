"""Progress lines (core/progress.py): the run under way, and the time left."""

import io



from alloclab.core.progress import Progress


def test_progress_estimates_the_time_left_and_shows_a_long_run():
    out = io.StringIO()
    p = Progress(out, tty=False)
    p.begin("[1/4] a", 0, 4)
    line = p.done("[1/4] a 0.1s", 1, 4)
    assert line.startswith("[1/4] a 0.1s  (~") and line.endswith(" left)")
    assert p.done("[4/4] a", 4, 4) == "[4/4] a"      # nothing left, no estimate
    tty = io.StringIO()
    p = Progress(tty, tty=True)
    p.begin("[1/2] glibc Adv_0 repeat 1")
    assert "[1/2] glibc Adv_0 repeat 1: running" in tty.getvalue()   # at once, before the run ends
    p.done("x")
