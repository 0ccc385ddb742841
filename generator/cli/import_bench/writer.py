"""A measurements file's YAML, written as the hand-written files are (plain scalars where a reader
gives the same text back)."""
from __future__ import annotations

from ruamel.yaml import YAML

from generator.publish.text import yaml_str

_SAFE = YAML(typ="safe", pure=True)

RESULT_ORDER = ("gpu", "gpus", "model", "weights", "kv_cache", "context", "batch", "generated_tokens",
                "flash_attention", "metric", "value", "runtime_version", "note")


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)  # the shortest text that reads back as the same number
    text = str(value)
    try:  # plain where a YAML reader gives the same text back, as the hand-written files are
        if _SAFE.load(f"k: {text}") == {"k": text} and "\n" not in text:
            return text
    except Exception:  # noqa: BLE001 - any reading error means: quote it
        pass
    return yaml_str(text)


def render(doc: dict) -> str:
    out = ["# yaml-language-server: $schema=../schema/measurement.schema.json"]
    for key in ("title", "url", "publisher", "date", "runtime", "runtime_version", "notes"):
        if doc.get(key) is not None:
            value = doc[key] if key == "date" else (yaml_str(doc[key]) if key == "runtime_version"
                                                     else _scalar(doc[key]))
            out.append(f"{key}: {value}")
    out.append("results:")
    for r in doc["results"]:
        first = True
        for key in RESULT_ORDER:
            if key in r:
                value = yaml_str(r[key]) if key == "runtime_version" else _scalar(r[key])
                out.append(f"{'  - ' if first else '    '}{key}: {value}")
                first = False
    return "\n".join(out) + "\n"
