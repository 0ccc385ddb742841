"""The JSON Schema files of the data (``data/schema/*.schema.json``), from the same declarations
the validator walks: editors complete and check fields with them, and the API publishes them.
"""
from __future__ import annotations

import json
from pathlib import Path

from generator.data import records
from generator.data.kinds import KINDS

SCHEMAS = {k.schema_file: (k.schema, k.title) for k in KINDS} | {
    "translation": (records.TRANSLATION, "A translation file: data/translations/<lang>/<path of the English file>"),
}


def json_schema(name: str) -> dict:
    """JSON Schema (draft 2020-12) of one record type, from the same declarations the validator uses."""
    t, title = SCHEMAS[name]
    doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{name}.schema.json", "title": title}
    doc.update(t.json_schema())
    if name == "revision":
        doc["$defs"] = {"tree_node": records.TREE_NODE.json_schema()}
    return doc


def schema_texts() -> dict[str, str]:
    return {f"{name}.schema.json": json.dumps(json_schema(name), indent=1, ensure_ascii=False) + "\n" for name in SCHEMAS}


def write_schemas(data_dir: Path, check: bool) -> list[Path]:
    """Write data/schema/*.schema.json; return the files that were (or would be) changed."""
    out = []
    folder = data_dir / "schema"
    for name, text in schema_texts().items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out.append(path)
            if not check:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    return out
