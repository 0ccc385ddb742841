"""`python -m generator format [--check]`: one canonical layout for every data file.

Keys follow the order in which the schema declares them, indentation is two spaces,
lists are indented under their key, and the first line names the JSON Schema so editors
complete and check fields. Comments and the quoting and flow style of values are kept
(ruamel.yaml round-trips them), so reformatting changes as little as possible; a comment line
above a key moves with the key. A byte-order mark is dropped, and a tab that separates a key from
its value (which the validator reads, ruamel does not) becomes a space; a file it still cannot
read is named with its line, and the command exits 2.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from generator.data import records
from generator.data.json_schema import write_schemas
from generator.data.kinds import BY_FOLDER
from generator.data.loader import load_dataset
from generator.data.schema import Lazy, List, Map, OneOf, Record

SCHEMA_LINE = "# yaml-language-server: $schema={rel}schema/{name}.schema.json"


def kind_of(rel: str) -> tuple[str, object] | None:
    """(schema name, type) of a file by its path relative to data/."""
    parts = rel.split("/")
    if parts[0] == "translations" and len(parts) >= 3:
        return "translation", records.TRANSLATION
    kind = BY_FOLDER.get(parts[0])
    if kind is None or len(parts) != (kind.depth + 1 if kind.depth else 1):
        return None
    return kind.schema_file, kind.schema


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # never re-wrap a line; folded text keeps its own line breaks
    y.indent(mapping=2, sequence=4, offset=2)
    y.representer.add_representer(type(None), lambda r, _d: r.represent_scalar("tag:yaml.org,2002:null", "null"))
    return y


# Where ruamel keeps comments: a comment line above a key is held after the line before it, by the
# previous key (or the last item of its value); before a key of a mapping that is reordered, it is
# moved to the key it stands above, so that it travels with it.


def _slots(value) -> list[tuple[object, object, int]]:
    """The places, deepest first, where ruamel may keep what follows the last line of a block collection."""
    if isinstance(value, CommentedMap) and value and not value.fa.flow_style():
        last = list(value)[-1]
        return _slots(value[last]) + [(value, last, 2)]
    if isinstance(value, CommentedSeq) and value and not value.fa.flow_style():
        return _slots(value[-1]) + [(value, len(value) - 1, 0)]
    return []


def _after(container, key) -> list[tuple[object, object, int]]:
    """The places that may hold the comments after the value of ``key`` in ``container``."""
    inner = _slots(container[key])
    return inner if inner else [(container, key, 2 if isinstance(container, CommentedMap) else 0)]


def _take_lines(container, key) -> str:
    """Remove and return the whole lines of comment (and blank lines) after the value of ``key``;
    an end-of-line comment stays where it is."""
    for owner, k, pos in _after(container, key):
        entry = owner.ca.items.get(k)
        token = entry[pos] if entry and len(entry) > pos else None
        if isinstance(token, CommentToken):
            head, _, tail = token.value.partition("\n")
            if head.strip():
                token.value = head + "\n"
            else:
                entry[pos] = None
            return tail
    return ""


def _put_lines(container, key, text: str) -> None:
    """Append whole lines of comment after the value of ``key``."""
    owner, k, pos = _after(container, key)[0]
    entry = owner.ca.items.setdefault(k, [None, None, None, None])
    token = entry[pos]
    if isinstance(token, CommentToken):
        token.value += text
    else:
        entry[pos] = CommentToken("\n" + text, CommentMark(0))


def _keep_comments_with_keys(value: CommentedMap, order: list) -> None:
    """Attach the comment lines above each key to that key, before ``value`` takes ``order``; those
    after the last key stay at the end of the mapping."""
    keys = list(value)
    head = value.ca.comment[1] if value.ca.comment and value.ca.comment[1] else []
    if head and order[0] != keys[0]:  # the lines right above the first key (no blank line between) are its own
        n = len(head)
        while n and not head[n - 1].value.endswith("\n\n"):
            n -= 1
        if n < len(head):
            entry = value.ca.items.setdefault(keys[0], [None, None, None, None])
            entry[1] = head[n:] + (entry[1] or [])
            del head[n:]
    tails = {k: _take_lines(value, k) for k in keys}
    for before, key in zip(keys, keys[1:], strict=False):
        if tails[before]:
            entry = value.ca.items.setdefault(key, [None, None, None, None])
            entry[1] = [CommentToken(tails[before], CommentMark(0))] + (entry[1] or [])
    if tails[keys[-1]]:
        _put_lines(value, order[-1], tails[keys[-1]])


def _lift_first_comment(seq: CommentedSeq, i: int) -> None:
    """Comment lines above the first key of a mapping in a list go above its ``- `` line."""
    item = seq[i]
    if not isinstance(item, CommentedMap) or not item:
        return
    entry = item.ca.items.get(next(iter(item)))
    if entry and entry[1]:
        slot = seq.ca.items.setdefault(i, [None, None, None, None])
        slot[1] = (slot[1] or []) + entry[1]
        entry[1] = None


def _concrete(t, value):
    """The type that applies to ``value``: a lazy type resolved, a one-of type's matching branch."""
    if isinstance(t, Lazy):
        t = t.resolve()
    if isinstance(t, OneOf):
        t = t.second if t.pick_second(value) else t.first
        if isinstance(t, Lazy):
            t = t.resolve()
    return t


def _reorder_record(value: CommentedMap, t: Record) -> None:
    order = [k for k in t.fields if k in value] + [k for k in value if k not in t.fields]
    if order != list(value):
        _keep_comments_with_keys(value, order)
        for key in order:
            value.move_to_end(key)
    for key, spec in t.fields.items():
        if key in value:
            reorder(value[key], spec.type)


def reorder(value, t) -> None:
    """Put record keys in schema order, recursively; unknown keys keep their place at the end."""
    t = _concrete(t, value)
    if isinstance(t, Record) and isinstance(value, CommentedMap):
        _reorder_record(value, t)
    elif isinstance(t, List) and isinstance(value, CommentedSeq):
        for i, item in enumerate(value):
            reorder(item, t.item)
            _lift_first_comment(value, i)
    elif isinstance(t, Map) and isinstance(value, CommentedMap):
        for key in value:
            reorder(value[key], t.value)


class FormatError(ValueError):
    """A file the formatter cannot read although the validator could: ``line`` is 1-based."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line


MAX_TABS = 1000  # tabs replaced in one file before giving up


def _load(y: YAML, body: str, skipped: int):
    """``body`` read by ruamel; a tab it cannot take where the validator's YAML reads a separator
    (``tdp_w:<TAB>450``) becomes a space, anything else is a FormatError at its line."""
    for _ in range(MAX_TABS):
        try:
            return y.load(body), body
        except YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = (mark.line + 1 + skipped) if mark else 1 + skipped
            lines = body.split("\n")
            at = lines[mark.line][mark.column] if mark and mark.line < len(lines) and mark.column < len(
                lines[mark.line]) else ""
            if at != "\t":
                problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                raise FormatError(line, f"cannot be formatted: {problem}") from None
            lines[mark.line] = lines[mark.line][:mark.column] + " " + lines[mark.line][mark.column + 1:]
            body = "\n".join(lines)
    raise FormatError(1 + skipped, "cannot be formatted: too many tabs; replace them with spaces")


def _read_as_validated(text: str):
    """``text`` as the validator reads it (libyaml where present, as generator/data/yamlload.py)."""
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return FormatError  # unreadable: never equal to a reading


def format_text(text: str, rel: str) -> str:
    """The canonical form of one file's text (``rel`` is its path below data/); FormatError when it cannot be read."""
    kind = kind_of(rel)
    if kind is None:
        return text
    name, t = kind
    y = _yaml()
    lines = text.removeprefix("\ufeff").splitlines()  # a byte-order mark is dropped: files are UTF-8
    skipped = 0
    while lines and lines[0].startswith("# yaml-language-server:"):
        lines.pop(0)
        skipped += 1
    data, body = _load(y, "\n".join(lines) + "\n", skipped)
    if data is None:
        return text
    if body != "\n".join(lines) + "\n" and _read_as_validated(body) != _read_as_validated(text.removeprefix("\ufeff")):
        raise FormatError(1 + skipped, "cannot be formatted: a tab is not read the same way by every YAML reader; "
                                       "replace it with spaces")
    reorder(data, t)
    out = io.StringIO()
    y.dump(data, out)
    depth = "../" * rel.count("/")
    header = SCHEMA_LINE.format(rel=depth, name=name)
    return header + "\n" + out.getvalue()


def data_files(data_dir: Path) -> list[Path]:
    return sorted(p for p in data_dir.rglob("*.yaml") if kind_of(p.relative_to(data_dir).as_posix()))


def run(args) -> int:

    data_dir = Path(args.data)
    ds, problems = load_dataset(data_dir, Path.cwd())
    errors = [p for p in problems if p.level == "error"]
    if errors:  # never reformat what cannot be read: the round trip could lose what the error is about
        for p in errors:
            print(p, file=sys.stderr)
        print(f"{len(errors)} error(s): fix them before formatting", file=sys.stderr)
        return 1
    changed, failed = [], []
    for path in data_files(data_dir):
        rel = path.relative_to(data_dir).as_posix()
        text = path.read_text(encoding="utf-8")
        try:
            new = format_text(text, rel)
        except FormatError as exc:
            failed.append(f"{path.as_posix()}:{exc.line}: {exc}")
            continue
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    changed += write_schemas(data_dir, args.check)
    for line in failed:
        print(line, file=sys.stderr)
    shown = [p.as_posix() for p in changed]
    if args.check:
        for name in shown:
            print(f"{name}: not in canonical form (run python -m generator format)", file=sys.stderr)
        print(f"{len(changed)} file(s) would change" if changed else "all data files are in canonical form")
        return 2 if failed else 1 if changed else 0
    print(f"formatted {len(changed)} file(s)" if changed else "nothing to change")
    if failed:
        print(f"{len(failed)} file(s) could not be formatted", file=sys.stderr)
        return 2
    return 0
