"""A strict YAML loader that remembers where every value came from.

PyYAML's ``safe_load`` silently keeps the last of two duplicate keys, expands aliases
(the "billion laughs" problem shows up later, when the tree is walked) and forgets line
numbers. This loader composes the document with the C parser when it is available,
then builds plain Python values itself, so that:

* every mapping key and list item has a 1-based line number (``Document.line``);
* duplicate keys, anchors, aliases, merge keys and custom tags are reported, not obeyed;
* bytes that are not UTF-8, empty files, over-large and over-deep documents are reported;
* nothing raises: every problem comes back as a :class:`Problem`.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from generator import reuse
from generator.data.problems import Problem

try:  # the C-accelerated path, when PyYAML was built with libyaml
    _Loader = yaml.CSafeLoader
    C_ACCELERATED = True
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader
    C_ACCELERATED = False

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 24

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
}
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"



class _Invalid:
    """Stands for a value that could not be read (its problem is already reported)."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID = _Invalid()


@dataclass
class Document:
    """A loaded YAML file: its value and the line of every key path."""

    path: str  # as shown to the user (relative to the repo when possible)
    data: Any
    lines: dict[tuple, int] = field(default_factory=dict)

    def line(self, keypath: tuple = ()) -> int:
        """The line of ``keypath``, or of its nearest ancestor that has one."""
        keypath = tuple(keypath)
        while keypath:
            if keypath in self.lines:
                return self.lines[keypath]
            keypath = keypath[:-1]
        return self.lines.get((), 1)


class _Builder:
    def __init__(self, shown: str):
        self.shown = shown
        self.problems: list[Problem] = []
        self.lines: dict[tuple, int] = {}
        self.seen: set[int] = set()
        self.constructor = SafeConstructor()

    def err(self, line: int, message: str, fieldpath: str = "") -> None:
        self.problems.append(Problem(self.shown, line, fieldpath, message))

    def build(self, node: yaml.Node, keypath: tuple, depth: int, used_at: int | None = None) -> Any:
        line = used_at or node.start_mark.line + 1
        fieldpath = dotted(keypath)
        if id(node) in self.seen:
            self.err(line, "aliases (*name) are not allowed; write the value out", fieldpath)
            return INVALID
        self.seen.add(id(node))
        if depth > MAX_DEPTH:
            self.err(line, f"nesting deeper than {MAX_DEPTH} levels", fieldpath)
            return INVALID
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP_TAG:
                self.err(line, f"custom tag {node.tag!r} is not allowed", fieldpath)
                return INVALID
            return self.build_mapping(node, keypath, depth, fieldpath)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ_TAG:
                self.err(line, f"custom tag {node.tag!r} is not allowed", fieldpath)
                return INVALID
            return self.build_sequence(node, keypath, depth)
        # scalar
        if node.tag not in _SCALAR_TAGS:
            self.err(line, f"custom tag {node.tag!r} is not allowed", fieldpath)
            return INVALID
        try:
            value = self.constructor.construct_object(node, deep=True)
        except (ValueError, OverflowError, yaml.YAMLError):
            self.unreadable(node, line, fieldpath)
            return INVALID
        if isinstance(value, _dt.datetime):
            value = value.date() if (value.hour, value.minute, value.second) == (0, 0, 0) else value
        return value

    def build_mapping(self, node: yaml.MappingNode, keypath: tuple, depth: int, fieldpath: str) -> dict[str, Any]:
        """The dict of a mapping node, every key checked (plain, not merged, given once) and its line kept."""
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            kline = key_node.start_mark.line + 1
            if key_node.tag == _MERGE_TAG:
                self.err(kline, "merge keys (<<) are not allowed; write the fields out", fieldpath)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.err(kline, "a key must be a plain word, not a list or mapping", fieldpath)
                continue
            key = key_node.value
            sub = keypath + (key,)
            if key in out:
                first = self.lines.get(sub, kline)
                self.err(kline, f"duplicate key {key!r} (first given on line {first})", dotted(sub))
                continue
            self.lines[sub] = kline
            out[key] = self.build(value_node, sub, depth + 1, kline)
        return out

    def build_sequence(self, node: yaml.SequenceNode, keypath: tuple, depth: int) -> list[Any]:
        """The list of a sequence node, with the line of every item kept."""
        items = []
        for i, item in enumerate(node.value):
            sub = keypath + (i,)
            self.lines[sub] = item.start_mark.line + 1
            items.append(self.build(item, sub, depth + 1))
        return items

    def unreadable(self, node: yaml.ScalarNode, line: int, fieldpath: str) -> None:
        """Report a scalar that YAML cannot turn into a value (a date that is not a real date, say)."""
        if node.tag == "tag:yaml.org,2002:timestamp":
            self.err(line, f"{node.value!r} is not a real calendar date", fieldpath)
        else:
            self.err(line, f"cannot read {node.value!r}", fieldpath)


def dotted(keypath: tuple) -> str:
    """("sources", 0, "url") -> "sources[0].url"."""
    out = ""
    for part in keypath:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


_ANCHOR_HINT = re.compile(rb"[&*]")


def _anchor_problems(text: str, shown: str) -> list[Problem]:
    """Report anchors by their own line (aliases are caught while building)."""
    problems = []
    for event in yaml.parse(text, Loader=_Loader):
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.AliasEvent):
            problems.append(Problem(shown, event.start_mark.line + 1, "",
                                    f"anchors (&{anchor}) are not allowed; write values out in full"))
    return problems


def _key(raw: bytes, shown: str) -> tuple[str, bytes]:
    return shown, hashlib.blake2b(raw, digest_size=16).digest()


def _cached(key: tuple[str, bytes]):
    """A file parsed before from the same bytes (generator.reuse.PARSED). Documents are never
    modified after loading, so sharing them is safe."""
    hit = reuse.PARSED.find(key)
    if hit is not None:
        return hit[0], list(hit[1])
    return None


def load_text(raw: bytes, shown: str, key: tuple[str, bytes] | None = None) -> tuple[Document | None, list[Problem]]:
    """Load one YAML document from bytes. Returns (document or None, problems)."""
    key = key or _key(raw, shown)
    hit = _cached(key)
    if hit is not None:
        return hit
    doc, problems = _load_text(raw, shown)
    reuse.PARSED.put(key, (doc, tuple(problems)))
    return doc, problems


def _decoded(raw: bytes, shown: str) -> str | Problem:
    """The text of a file's bytes, or why it cannot be read as text (too large, not UTF-8, a NUL)."""
    if len(raw) > MAX_BYTES:
        return Problem(shown, 1, "", f"file is {len(raw):,} bytes; the limit is {MAX_BYTES:,}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return Problem(shown, line, "", f"not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save the file as UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        return Problem(shown, line, "", "NUL character in file; is it a binary file?")
    return text


def _root_node(text: str, shown: str) -> yaml.Node | Problem:
    """The node of the one YAML document in ``text``, or why there is not exactly one."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = exc.problem or "YAML syntax error"
        if exc.context:
            what = f"{exc.context}: {what}"
        return Problem(shown, line, "", f"YAML syntax: {what}")
    except yaml.YAMLError as exc:
        return Problem(shown, 1, "", f"YAML syntax: {exc}")
    except RecursionError:
        return Problem(shown, 1, "", "YAML nesting is too deep to read")
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        return Problem(shown, 1, "", "file is empty; a record needs at least its required fields")
    if len(nodes) > 1:
        return Problem(shown, nodes[1].start_mark.line + 1, "", "more than one YAML document (---) in one file")
    return nodes[0]


def _load_text(raw: bytes, shown: str) -> tuple[Document | None, list[Problem]]:
    text = _decoded(raw, shown)
    if isinstance(text, Problem):
        return None, [text]
    root = _root_node(text, shown)
    if isinstance(root, Problem):
        return None, [root]
    problems: list[Problem] = []
    if _ANCHOR_HINT.search(raw):
        try:
            problems += _anchor_problems(text, shown)
        except yaml.YAMLError:  # pragma: no cover - compose already succeeded
            pass
    builder = _Builder(shown)
    builder.lines[()] = root.start_mark.line + 1
    try:
        data = builder.build(root, (), 0)
    except RecursionError:
        return None, problems + [Problem(shown, 1, "", "YAML nesting is too deep to read")]
    problems += builder.problems
    if data is INVALID:
        return None, problems
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "nothing"
        problems.append(Problem(shown, root.start_mark.line + 1, "", f"expected a mapping of field: value at the top of the file, got {kind}"))  # noqa: E501
        return None, problems
    return Document(shown, data, builder.lines), problems


def load_file(path: Path, shown: str, unchanged: bool = False) -> tuple[Document | None, list[Problem]]:
    """Load one file. ``unchanged``: the caller knows the file was not written since it was last
    read here (the preview's watcher names every file written): what was read is used without
    asking the system for its status. A file not read before is read all the same."""
    if unchanged:
        seen = reuse.SEEN.find(path)
        if seen is not None and seen[1][0] == shown:
            hit = _cached(seen[1])
            if hit is not None:
                return hit
    try:
        st = path.stat()
        if st.st_size > MAX_BYTES:
            return None, [Problem(shown, 1, "", f"file is {st.st_size:,} bytes; the limit is {MAX_BYTES:,}")]
        status = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
        seen = reuse.SEEN.find(path)
        if seen is not None and seen[0] == status and seen[1][0] == shown:
            hit = _cached(seen[1])
            if hit is not None:
                return hit
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem(shown, 1, "", f"cannot read file: {exc.strerror or exc}")]
    key = _key(raw, shown)
    reuse.SEEN.put(path, (status, key))
    return load_text(raw, shown, key)
