"""Files under build/ that keep answers between builds: one that cannot be used (truncated, not
JSON, of another shape) is worked out again without an error, and each is written whole or not
at all."""
from __future__ import annotations

import json
import os

import pytest

from generator import reuse
from generator.facts import estimates
from generator.reuse import Kept

TABLE = {"constants": {"k": 1.5}, "errors": {"decode": {"llama.cpp": 10}}, "reference": {"id": "rtx-4090"}}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The fitted table's cache in a folder of its own, fitting replaced by a count of its calls."""
    fits = []
    monkeypatch.setattr(estimates, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(estimates, "_published",
                        lambda bundle, held_out, digest: fits.append(bundle) or json.loads(json.dumps(TABLE)))
    return tmp_path / "cache" / "estimate-abc.json", fits


@pytest.mark.parametrize("text", [json.dumps(TABLE)[:40], "", "not json", "[1, 2]", '{"constants": 3}',
                                  '{"constants": {}, "errors": {}}', "\udcff"])
def test_a_fitted_table_that_cannot_be_read_is_fitted_again_and_written_anew(cache, text):
    path, fits = cache
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    assert estimates.published_estimates("bundle", "abc") == TABLE
    assert fits == ["bundle"]
    assert json.loads(path.read_text(encoding="utf-8")) == TABLE
    assert estimates.published_estimates("bundle", "abc") == TABLE and fits == ["bundle"]  # read back, not fitted


def test_a_fitted_table_is_written_whole_or_not_at_all(cache, monkeypatch):
    path, fits = cache
    estimates.published_estimates("bundle", "abc")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(reuse.os, "replace", fail)
    path.unlink()
    assert estimates.published_estimates("bundle", "abc") == TABLE  # the build goes on, only slower
    assert not path.exists() and os.listdir(path.parent) == []  # no half-written file, no temporary one left


@pytest.mark.parametrize("text", ['{"key": "v1", "answers": {"a": "b"', "[]", '{"key": "v1", "answers": [1]}', "null"])
def test_kept_answers_in_a_file_that_cannot_be_used_are_none(tmp_path, text):
    path = tmp_path / "renders-en.json"
    path.write_text(text, encoding="utf-8")
    kept = Kept(path, "v1")
    assert kept.known == {}
    assert kept.get("a", str.upper) == "A"
    kept.save(keep_unused=False)
    assert json.loads(path.read_text(encoding="utf-8")) == {"key": "v1", "answers": {"a": "A"}}
    assert sorted(os.listdir(tmp_path)) == ["renders-en.json"]


def test_write_json_leaves_the_last_file_when_the_value_cannot_be_written(tmp_path):
    path = tmp_path / "kept.json"
    assert reuse.write_json(path, {"a": 1})
    with pytest.raises(TypeError):
        reuse.write_json(path, {"a": object()})
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1}
    assert sorted(os.listdir(tmp_path)) == ["kept.json"]
