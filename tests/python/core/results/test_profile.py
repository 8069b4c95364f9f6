"""The profile file (core/results/profile.py): what littering needs is checked, a shim's own record
(no version) is read, other versions are refused."""

import json

import pytest

from alloclab import LabError
from alloclab.core.results.profile import Profile, read_profile, validate, write_profile


def test_a_shim_record_and_a_merged_profile_are_read(tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"max_live": 10, "sizes": {"24": 10}}))
    prof = read_profile(str(p))
    assert prof.max_live == 10 and prof.sizes == {"24": 10} and prof.allocations is None and prof.run is None
    write_profile(Profile(dict(prof.data, format_version=1, allocations=3)), str(p))
    assert read_profile(str(p)).allocations == 3


@pytest.mark.parametrize("data,says", [([], "not a JSON object"), ({"sizes": {}}, "missing key 'max_live'"),
                                       ({"max_live": -1, "sizes": {}}, "non-negative"),
                                       ({"max_live": 1, "sizes": {"x": 1}}, "not a decimal integer"),
                                       ({"max_live": 1, "sizes": {"8": True}}, "non-negative integer"),
                                       ({"format_version": 2, "max_live": 1, "sizes": {}}, "newer alloclab")])
def test_a_profile_littering_cannot_use_is_refused(data, says):
    with pytest.raises(LabError, match=says):
        validate(data)
