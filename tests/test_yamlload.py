"""The strict loader: hostile YAML gives problems with lines, never an exception."""
from __future__ import annotations

import datetime as _dt
import time

import pytest

from generator.data.yamlload import MAX_BYTES, MAX_DEPTH, load_text


def load(src: str | bytes):
    raw = src.encode() if isinstance(src, str) else src
    doc, problems = load_text(raw, "x.yaml")
    return doc, [str(p) for p in problems]


def test_keeps_line_of_every_key_and_item():
    doc, problems = load("a: 1\nb:\n  c: [x, y]\n  d:\n    - e: 2\n")
    assert problems == []
    assert doc.data == {"a": 1, "b": {"c": ["x", "y"], "d": [{"e": 2}]}}
    assert doc.line(("b", "d", 0, "e")) == 5
    assert doc.line(("b", "c", 1)) == 3
    assert doc.line(("b", "missing")) == 2  # nearest known ancestor


def test_keys_stay_text_even_when_yaml_would_convert_them():
    doc, problems = load("yes: 1\n2019-04-03: 2\n1.10: 3\n")
    assert problems == []
    assert list(doc.data) == ["yes", "2019-04-03", "1.10"]


def test_dates_become_dates():
    doc, _ = load("d: 2019-04-03\n")
    assert doc.data["d"] == _dt.date(2019, 4, 3)


def test_billion_laughs_is_refused_quickly():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=False):
        bomb += f"{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
    start = time.perf_counter()
    doc, problems = load(bomb)
    assert time.perf_counter() - start < 2
    assert any("aliases (*name) are not allowed" in p for p in problems)
    assert any("anchors (&a) are not allowed" in p for p in problems)


def test_deep_nesting_is_reported():
    doc, problems = load("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n")
    assert any(f"nesting deeper than {MAX_DEPTH} levels" in p for p in problems)


def test_pathological_nesting_does_not_crash():
    doc, problems = load("a: " + "[" * 5000 + "]" * 5000 + "\n")
    assert doc is None or problems
    assert problems


def test_huge_file_is_refused():
    doc, problems = load(b"a: " + b"x" * (MAX_BYTES + 1))
    assert doc is None
    assert problems[0].startswith("x.yaml:1: file is") and "the limit is" in problems[0]


@pytest.mark.parametrize("raw, expected", [
    (b"", "x.yaml:1: file is empty; a record needs at least its required fields"),
    (b"   \n\n# just a comment\n", "x.yaml:1: file is empty; a record needs at least its required fields"),
    (b"a: 1\n\xff\n", "x.yaml:2: not UTF-8 (byte 0xff at offset 5); save the file as UTF-8"),
    (b"a: 1\nb: \x00\n", "x.yaml:2: NUL character in file; is it a binary file?"),
    (b"a: 1\n---\nb: 2\n", "x.yaml:3: more than one YAML document (---) in one file"),
    (b"just text\n", "x.yaml:1: expected a mapping of field: value at the top of the file, got str"),
    (b"a: {<<: {b: 1}}\n", "x.yaml:1: a: merge keys (<<) are not allowed; write the fields out"),
    (b"a:\n  - !custom 1\n", "x.yaml:2: a[0]: custom tag '!custom' is not allowed"),
    (b"a: b: c\n", "x.yaml:1: YAML syntax: mapping values are not allowed"),
])
def test_bad_documents(raw, expected):
    doc, problems = load(raw)
    assert any(p.startswith(expected) for p in problems), problems


def test_bom_is_accepted():
    doc, problems = load("\ufeffa: 1\n".encode())
    assert problems == [] and doc.data == {"a": 1}


def test_ampersand_in_text_is_not_an_anchor():
    doc, problems = load('a: "R&D *and* more"\nb: x & y\n')
    assert problems == []
    assert doc.data == {"a": "R&D *and* more", "b": "x & y"}


def test_a_file_read_again_unchanged_is_not_read_and_an_edit_always_is(tmp_path, monkeypatch):
    """``load_file`` keeps what a file's status said: the same size, times and inode give the same
    document without reading the file; an edit of the same size, its modification time put
    back, is read again (its change time moved)."""
    import os
    from pathlib import Path

    from generator.data.yamlload import load_file

    path = tmp_path / "gpu.yaml"
    path.write_text("name: A\nmemory_gb: 24\n", encoding="utf-8")
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self.name) or real(self))
    first, _ = load_file(path, "gpu.yaml")
    again, _ = load_file(path, "gpu.yaml")
    assert again is first and reads == ["gpu.yaml"]
    mtime = path.stat().st_mtime_ns
    time.sleep(0.01)
    path.write_text("name: B\nmemory_gb: 48\n", encoding="utf-8")  # the same size
    os.utime(path, ns=(mtime, mtime))
    edited, _ = load_file(path, "gpu.yaml")
    assert reads == ["gpu.yaml", "gpu.yaml"] and edited.data == {"name": "B", "memory_gb": 48}
    # the same bytes under another name are another document (problems name their file)
    other = tmp_path / "other.yaml"
    other.write_bytes(path.read_bytes())
    assert load_file(other, "other.yaml")[0] is not edited


def test_a_file_vouched_unchanged_is_taken_from_memory_without_its_status(tmp_path, monkeypatch):
    """``unchanged``: the caller (the preview, told by its watcher) vouches that the file was not
    written since it was read here; the file is neither asked for its status nor read. A file
    never read before is read all the same."""
    from pathlib import Path

    from generator.data.yamlload import load_file

    path = tmp_path / "gpu.yaml"
    path.write_text("name: A\n", encoding="utf-8")
    first, _ = load_file(path, "gpu.yaml")
    calls = []
    real_stat, real_read = Path.stat, Path.read_bytes
    monkeypatch.setattr(Path, "stat", lambda self, **k: calls.append(("stat", self.name)) or real_stat(self, **k))
    monkeypatch.setattr(Path, "read_bytes", lambda self: calls.append(("read", self.name)) or real_read(self))
    assert load_file(path, "gpu.yaml", unchanged=True)[0] is first and calls == []
    fresh = tmp_path / "new.yaml"
    fresh.write_text("name: B\n", encoding="utf-8")
    assert load_file(fresh, "new.yaml", unchanged=True)[0].data == {"name": "B"}
    assert calls == [("stat", "new.yaml"), ("read", "new.yaml")]
