"""drag, frag, pages and ablation JSON (core/results/documents.py): one writer and one reader, each
document checked against its own version."""

import json

import pytest

from alloclab import LabError
from alloclab.core.results.documents import ABLATION, DRAG, FRAG, PAGES, read_document, write_document


@pytest.mark.parametrize("fmt", [DRAG, FRAG, PAGES, ABLATION])
def test_a_document_reads_back_with_its_version_first(tmp_path, fmt):
    path = write_document(fmt, str(tmp_path / "d.json"), {"a": 1, "format_version": 99})
    assert list(json.loads(open(path).read())) == ["format_version", "a"]
    assert read_document(fmt, path) == {"format_version": fmt.version, "a": 1}


def test_another_version_or_no_object_is_refused(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps({"format_version": 3}))
    with pytest.raises(LabError, match="frag format version 3; this alloclab reads version 1 .*newer"):
        read_document(FRAG, str(p))
    p.write_text(json.dumps({}))
    with pytest.raises(LabError, match="drag format version 0"):
        read_document(DRAG, str(p))
    p.write_text("[]")
    with pytest.raises(LabError, match="is not a pages file"):
        read_document(PAGES, str(p))
