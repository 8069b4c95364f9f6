"""Vam's design switches (experiments/ablation/switches.py): one switch changed at a time, every
setting's environment of one size."""

from alloclab.experiments.ablation import switches


def test_the_settings_change_one_switch_at_a_time():
    sets = switches.settings()
    assert sets[0].switch is None
    defaults = {s.name: s.default for s in switches.SWITCHES}

    def switched(env):
        return {k: v for k, v in env.items() if k in defaults}

    assert switched(sets[0].env()) == defaults
    control = [s for s in sets if s.key == switches.CONTROL]
    assert len(control) == 1 and control[0].env() == sets[0].env()  # the A/A control: the default again
    for s in sets[1:]:
        if s is control[0]:
            continue
        changed = {k for k, v in switched(s.env()).items() if v != defaults[k]}
        assert changed == {s.switch}
    # the same environment size for every setting: the stack does not move with the value
    assert len({sum(len(k) + len(v) for k, v in s.env().items()) for s in sets}) == 1
