"""`python -m generator format [--check]`: one canonical layout for every data file.

Keys follow the order in which the schema declares them, indentation is two spaces,
lists are indented under their key, and the first line names the JSON Schema so editors
complete and check fields. Comments and the quoting and flow style of values are kept
(ruamel.yaml round-trips them), so reformatting changes as little as possible.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

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


def reorder(value, t) -> None:
    """Put record keys in schema order, recursively; unknown keys keep their place at the end."""
    if isinstance(t, Lazy):
        t = t.resolve()
    if isinstance(t, OneOf):
        t = t.second if t.pick_second(value) else t.first
        if isinstance(t, Lazy):
            t = t.resolve()
    if isinstance(t, Record) and isinstance(value, CommentedMap):
        order = [k for k in t.fields if k in value] + [k for k in value if k not in t.fields]
        for key in order:
            value.move_to_end(key)
        for key, spec in t.fields.items():
            if key in value:
                reorder(value[key], spec.type)
    elif isinstance(t, List) and isinstance(value, CommentedSeq):
        for item in value:
            reorder(item, t.item)
    elif isinstance(t, Map) and isinstance(value, CommentedMap):
        for key in value:
            reorder(value[key], t.value)


def format_text(text: str, rel: str) -> str:
    """The canonical form of one file's text (``rel`` is its path below data/)."""
    kind = kind_of(rel)
    if kind is None:
        return text
    name, t = kind
    y = _yaml()
    lines = text.splitlines()
    while lines and lines[0].startswith("# yaml-language-server:"):
        lines.pop(0)
    body = "\n".join(lines) + "\n"
    data = y.load(body)
    if data is None:
        return text
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
    changed = []
    for path in data_files(data_dir):
        rel = path.relative_to(data_dir).as_posix()
        text = path.read_text(encoding="utf-8")
        new = format_text(text, rel)
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    changed += write_schemas(data_dir, args.check)
    shown = [p.as_posix() for p in changed]
    if args.check:
        for name in shown:
            print(f"{name}: not in canonical form (run python -m generator format)", file=sys.stderr)
        print(f"{len(changed)} file(s) would change" if changed else "all data files are in canonical form")
        return 1 if changed else 0
    print(f"formatted {len(changed)} file(s)" if changed else "nothing to change")
    return 0
