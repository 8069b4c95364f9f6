"""core/results/files.py: result files read as they are or kept compressed (docs/runs/)."""

import gzip
import json

import pytest

from alloclab import LabError
from alloclab.core.results.files import compress, exists, load_json, open_text, stored
from alloclab.core.results.runs import RunRow, read_rows


def test_a_file_kept_compressed_is_read_under_its_plain_name(tmp_path):
    plain = tmp_path / "x.json"
    plain.write_text(json.dumps({"a": [1, 2]}))
    compress(str(plain), str(tmp_path / "kept" / "x.json.gz"))
    kept = tmp_path / "kept" / "x.json"
    assert not kept.exists() and exists(str(kept))
    assert stored(str(kept)).endswith(".gz")
    assert load_json(str(kept), "test file") == {"a": [1, 2]}


def test_the_plain_file_wins_over_a_compressed_one(tmp_path):
    (tmp_path / "x.txt").write_text("plain")
    with gzip.open(tmp_path / "x.txt.gz", "wt") as f:
        f.write("packed")
    with open_text(str(tmp_path / "x.txt")) as f:
        assert f.read() == "plain"


def test_compressing_the_same_file_twice_gives_the_same_bytes(tmp_path):
    src = tmp_path / "results.csv"
    src.write_text("a,b\n1,2\n" * 1000)
    one = compress(str(src), str(tmp_path / "one.gz"))
    src.touch()  # a newer time must not change the bytes
    two = compress(str(src), str(tmp_path / "two.gz"))
    assert open(one, "rb").read() == open(two, "rb").read()
    assert gzip.decompress(open(one, "rb").read()) == src.read_bytes()


def test_a_truncated_compressed_file_is_a_clear_error(tmp_path):
    src = tmp_path / "f.json"
    src.write_text(json.dumps(list(range(5000))))
    compress(str(src), str(tmp_path / "k" / "f.json.gz"))
    gz = tmp_path / "k" / "f.json.gz"
    gz.write_bytes(gz.read_bytes()[:200])
    with pytest.raises(LabError, match="cannot read test file"):
        load_json(str(tmp_path / "k" / "f.json"), "test file")


def test_a_missing_file_is_still_missing(tmp_path):
    assert not exists(str(tmp_path / "none.csv"))
    with pytest.raises(LabError, match="does not exist"):
        read_rows(str(tmp_path / "none.csv"), RunRow)
