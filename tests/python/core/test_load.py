"""What else the machine was doing (core/load.py): other processes' and the hypervisor's share of
the CPUs, the lab's own CPU time left out."""
from alloclab.core import load


def reading(busy, steal, total):
    return load.CpuTimes(busy=busy, steal=steal, total=total)


def test_the_lab_own_time_is_not_counted_as_other_processes():
    # 2 CPUs x 10 s at 100 Hz: 2000 jiffies, 1500 busy; the lab used 5 CPU seconds (500 jiffies)
    others, steal = load.shares(reading(0, 0, 0), reading(1500, 100, 2000), own_seconds=5.0, hz=100)
    assert abs(others - 0.45) < 1e-9 and abs(steal - 0.05) < 1e-9


def test_a_quiet_machine_and_a_busy_one():
    quiet = load.Load(10.0, 0.03, 0.0, (0.1, 0.1, 0.1), (0.2, 0.1, 0.1), 2)
    busy = load.Load(10.0, 0.40, 0.02, (2.0, 1.5, 1.0), (2.1, 1.7, 1.1), 2)
    assert not quiet.busy and busy.busy
    assert busy.words().startswith("busy: other processes used 40%")
    assert busy.as_dict()["busy"] is True and busy.as_dict()["busy_share"] == load.BUSY_SHARE


def test_the_first_line_of_proc_stat_is_read():
    t = load.CpuTimes.read("cpu  100 5 50 800 20 1 2 7 0 0")
    assert t == load.CpuTimes(busy=100 + 5 + 50 + 1 + 2 + 7, steal=7, total=985)
    assert load.CpuTimes.read("intr 1 2 3") is None


def test_a_watch_over_this_process_reads_the_machine():
    w = load.LoadWatch.start()
    sum(range(200000))
    got = w.stop()
    assert got.seconds >= 0 and got.cpus >= 1
    assert got.others_share is None or 0 <= got.others_share <= 1
