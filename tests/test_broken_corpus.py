"""A corpus of broken data files (tests/fixtures/broken/): each one, placed into a valid data
tree, must give its expected `path:line: message`, exit 1, no traceback, and leave an
existing site/ exactly as it was. Files whose defect cannot carry a comment header (empty,
huge, wrong encoding, binary) are made by the test itself."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from helpers import FIXTURES, run_cli

CORPUS = sorted((FIXTURES / "broken").glob("*.yaml"))
GPU = "gpus/nvidia/rtx-2070.yaml"
MADE = {
    "empty": (GPU, b"", "data/gpus/nvidia/rtx-2070.yaml:1: file is empty"),
    "only-comments": (GPU, b"# TODO\n\n# later\n", "data/gpus/nvidia/rtx-2070.yaml:1: file is empty"),
    "huge": (GPU, b"notes: " + b"x" * (1024 * 1024 + 10) + b"\n", "data/gpus/nvidia/rtx-2070.yaml:1: file is 1,048,594 bytes; the limit is 1,048,576"),  # noqa: E501
    "latin-1": (GPU, "name: Radeon\u00e9\n".encode("latin-1"), "data/gpus/nvidia/rtx-2070.yaml:1: not UTF-8 (byte 0xe9 at offset 12)"),  # noqa: E501
    "utf-16": (GPU, "name: x\n".encode("utf-16"), "data/gpus/nvidia/rtx-2070.yaml:1: not UTF-8 (byte 0xff at offset 0)"),
    "binary": (GPU, b"\x89PNG\r\n\x1a\n\x00\x00", "data/gpus/nvidia/rtx-2070.yaml:"),
}


def header(path: Path) -> tuple[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# target: ") and lines[1].startswith("# expect: "), path
    return lines[0][len("# target: "):], lines[1][len("# expect: "):]


def digest_tree(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_corpus_is_large_enough():
    assert len(CORPUS) + len(MADE) >= 30


def check(tree, tmp_path, target: str, content: bytes, expected: str):
    tree.write(target, content)
    site = tmp_path / "site"
    (site / "ko").mkdir(parents=True)
    (site / "index.html").write_text("previous build")
    (site / "ko" / "index.html").write_text("이전 빌드")
    before = digest_tree(site)
    for command in (["validate", "--data", str(tree.data)], ["build", "--data", str(tree.data), "--site-dir", str(site)]):
        result = run_cli(*command)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        shown = result.stderr.replace(str(tree.root) + "/", "")
        assert any(line.startswith(expected) for line in shown.splitlines()), shown
    assert digest_tree(site) == before
    assert not list(tmp_path.glob("site.*"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_broken_file(tree, tmp_path, path):
    target, expected = header(path)
    check(tree, tmp_path, target, path.read_bytes(), expected)


@pytest.mark.parametrize("name", sorted(MADE))
def test_broken_bytes(tree, tmp_path, name):
    target, content, expected = MADE[name]
    check(tree, tmp_path, target, content, expected)
