"""rss_series.csv (core/results/series.py): written and read back unchanged; another file refused."""

import pytest

from alloclab import LabError
from alloclab.core.levels import Level
from alloclab.core.results.series import read_rss_series, write_rss_series


def test_an_rss_series_reads_back_as_written(tmp_path):
    series = {("glibc", Level.of(0)): [[0.0005, 636], [0.0105, 2812]], ("vam@VAM_ORDER=fifo", Level.of(3)): []}
    path = write_rss_series(str(tmp_path / "s.csv"), series)
    back = read_rss_series(path)
    assert back == {("glibc", Level.of(0)): [[0.0005, 636], [0.0105, 2812]]}


def test_another_file_is_refused(tmp_path):
    other = tmp_path / "results.csv"
    other.write_text("format_version,run\n1,1\n")
    with pytest.raises(LabError, match="is not an RSS series"):
        read_rss_series(str(other))
    with pytest.raises(LabError, match="cannot read RSS series"):
        read_rss_series(str(tmp_path / "none.csv"))
