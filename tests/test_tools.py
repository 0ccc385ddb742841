"""Contributor tools: `format`, `new` and the JSON Schemas (one source with the validator)."""
from __future__ import annotations

import datetime as _dt
import os
import re
import subprocess
import sys

import jsonschema
import pytest
import yaml
from helpers import ROOT

GPU = "gpus/nvidia/rtx-2070.yaml"


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


# ------------------------------------------------------------------ format

def test_format_is_canonical_idempotent_and_keeps_comments(tree):
    text = tree.read(GPU)
    shuffled = "# a comment that must survive\n" + "\n".join(reversed(text.splitlines()[:15])) + "\n" + \
        "\n".join(text.splitlines()[15:]) + "\n"
    shuffled = shuffled.replace("memory_gb: 8", "memory_gb: 8   # eight gigabytes")
    tree.write(GPU, shuffled)
    assert tree.problems() == []
    out = cli("format", "--check", "--data", str(tree.data))
    assert out.returncode == 1 and f"{GPU}: not in canonical form" in out.stderr
    assert cli("format", "--data", str(tree.data)).returncode == 0
    once = tree.read(GPU)
    assert once.splitlines()[0] == "# yaml-language-server: $schema=../../schema/gpu.schema.json"
    assert "# a comment that must survive" in once and "memory_gb: 8   # eight gigabytes" in once
    keys = [line.split(":")[0] for line in once.splitlines() if re.match(r"^[a-z_0-9]+:", line)]
    assert keys[:4] == ["name", "vendor", "architecture", "release_date"] and keys[-1] == "sources"
    assert cli("format", "--check", "--data", str(tree.data)).returncode == 0
    assert cli("format", "--data", str(tree.data)).returncode == 0
    assert tree.read(GPU) == once
    assert tree.problems() == []


def test_format_refuses_invalid_data(tree):
    tree.set(GPU, "memory_gb", "eight")
    before = tree.read(GPU)
    out = cli("format", "--data", str(tree.data))
    assert out.returncode == 1 and "fix them before formatting" in out.stderr
    assert tree.read(GPU) == before


def test_format_takes_a_tab_after_a_colon_that_validate_takes(tree):
    tree.write(GPU, tree.read(GPU).replace("tdp_w: 175", "tdp_w:\t175").replace("segment: consumer", "segment:\t\tconsumer"))
    assert tree.problems() == []
    out = cli("format", "--data", str(tree.data))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    text = tree.read(GPU)
    assert "tdp_w: 175\n" in text and "segment: consumer\n" in text and "\t" not in text
    assert cli("format", "--check", "--data", str(tree.data)).returncode == 0
    assert tree.problems() == []


def test_format_names_the_line_it_cannot_read_and_exits_2(tree, monkeypatch, capsys):
    import argparse

    from generator.cli import format as fmt

    with pytest.raises(fmt.FormatError) as caught:
        fmt.format_text("# yaml-language-server: $schema=../../schema/gpu.schema.json\nname: x\nvendor: [nvidia\n",
                        "gpus/nvidia/x.yaml")
    assert caught.value.line >= 3 and "cannot be formatted" in str(caught.value)
    real = fmt.format_text

    def one_unreadable(text, rel):
        if rel == GPU:
            raise fmt.FormatError(7, "cannot be formatted: something ruamel refuses")
        return real(text, rel)

    monkeypatch.setattr(fmt, "format_text", one_unreadable)
    for check in (False, True):
        assert fmt.run(argparse.Namespace(data=str(tree.data), check=check)) == 2
        err = capsys.readouterr().err
        assert f"{GPU}:7: cannot be formatted: something ruamel refuses" in err and "Traceback" not in err


def test_format_drops_a_byte_order_mark_and_writes_the_header_once(tree):
    tree.write(GPU, "\ufeff" + "# yaml-language-server: $schema=../../schema/gpu.schema.json\n" + tree.read(GPU))
    assert tree.problems() == []
    assert cli("format", "--data", str(tree.data)).returncode == 0
    raw = tree.path(GPU).read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf") and raw.count(b"yaml-language-server") == 1
    assert cli("format", "--check", "--data", str(tree.data)).returncode == 0


def test_format_moves_the_comment_above_a_key_with_the_key(tree):
    text = tree.read(GPU)
    # tdp_w and segment written first, each under its comment; the comment after the last key stays last
    lines = [line for line in text.splitlines() if not line.startswith(("tdp_w:", "segment:"))]
    tree.write(GPU, "# the board power\ntdp_w: 175\n# who buys it\n\nsegment: consumer\n" + "\n".join(lines)
               + "\n# the end of the file\n")
    assert tree.problems() == []
    assert cli("format", "--data", str(tree.data)).returncode == 0
    once = tree.read(GPU)
    assert "compute_capability: \"7.5\"\n# who buys it\n\nsegment: consumer\n" in once, once
    assert "launch_price_usd: 499\n" in once and "\n# the board power\ntdp_w: 175\n" in once, once
    assert once.rstrip().endswith("# the end of the file")
    assert cli("format", "--check", "--data", str(tree.data)).returncode == 0


def test_shipped_data_is_canonical():
    out = cli("format", "--check")
    assert out.returncode == 0, out.stderr


# ------------------------------------------------------------------ new

FILL = {
    "name": "GeForce RTX 4070", "architecture": "Ada Lovelace", "release_date": "2023-04-13", "memory_gb": "12",
    "memory_type": "GDDR6X", "memory_bandwidth_gbs": "504.2", "fp32_tflops": "29.15", "fp16_tensor_tflops": "58.3",
    "tensor_cores": "true", "tdp_w": "200", "launch_price_usd": "599", "compute_capability": '"8.9"',
    "segment": "consumer",
}


def test_new_gpu_points_at_every_blank_then_validates(tree):
    out = cli("new", "gpu", "nvidia/rtx-4070", "--data", str(tree.data))
    assert out.returncode == 0, out.stderr
    rel = "gpus/nvidia/rtx-4070.yaml"
    problems = tree.problems()
    assert any(p.startswith(f"data/{rel}:4: name: name cannot be empty") for p in problems), problems
    text = tree.read(rel)
    for field, value in FILL.items():
        text = re.sub(rf"^{field}:[^\n#]*", f"{field}: {value}  ", text, count=1, flags=re.M)
    text = text.replace("  - url:                       #", "  - url: https://example.org/a  #", 1)
    text = text.replace("  - url:\n", "  - url: https://example.org/b\n", 1)
    tree.write(rel, text)
    assert tree.problems() == []
    again = cli("new", "gpu", "nvidia/rtx-4070", "--data", str(tree.data))
    assert again.returncode == 1 and "already exists" in again.stderr


@pytest.mark.parametrize("args, message", [
    (["gpu", "rtx-4070"], "give VENDOR/ID"), (["gpu", "nvidia/RTX 4070"], "is not an id"),
    (["gpu", "acme/x"], "vendor must be one of"), (["revision", "2019-13-01"], "is not a date"),
    (["translation", "de"], "language must be one of"), (["price", "rtx-9999"], "no GPU 'rtx-9999'"),
    (["price", "../gpus/nvidia/rtx-2070"], "no GPU"),
])
def test_new_rejects_bad_names(tree, args, message):
    out = cli("new", *args, "--data", str(tree.data))
    assert out.returncode == 2 and message in out.stderr


def test_new_price_appends_a_blank_observation_that_validates_once_filled(tree):
    rel = "prices/rtx-2070.yaml"
    out = cli("new", "price", "rtx-2070", "--data", str(tree.data))
    assert out.returncode == 0, out.stderr
    text = tree.read(rel)
    assert text.startswith("# yaml-language-server: $schema=../schema/price.schema.json\n# GeForce RTX 2070")
    today = f"date: {_dt.datetime.now(_dt.UTC).date().isoformat()}"
    assert today in text
    problems = tree.problems()
    for line, field in ((4, "kind"), (5, "usd"), (7, "source"), (9, "note")):
        assert f"data/{rel}:{line}: observations[0].{field}: {field} cannot be empty (null)" in problems, problems
    filled = re.sub(r"^  - kind:[^\n#]*", "  - kind: used  ", text, flags=re.M)
    filled = re.sub(r"^    usd:[^\n#]*", "    usd: 250  ", filled, flags=re.M)
    filled = re.sub(r"^    source:[^\n#]*", "    source: https://example.org/p  ", filled, flags=re.M)
    filled = re.sub(r"^    note:[^\n#]*", "    note: a fixture price  ", filled, flags=re.M)
    filled = filled.replace(today, "date: 2026-11-01")  # the fixture's validator runs on a fixed day
    tree.write(rel, filled)
    assert tree.problems() == []
    assert cli("new", "price", "rtx-2070", "--data", str(tree.data)).returncode == 0
    again = tree.read(rel)
    assert again.startswith(filled) and again.count("observations:") == 1
    assert any(p.startswith(f"data/{rel}:10: observations[1].kind: kind cannot be empty") for p in tree.problems())


def test_new_revision_validates_once_filled(tree):
    assert cli("new", "revision", "2020-01-02", "--data", str(tree.data)).returncode == 0
    rel = "revisions/2020-01-02.yaml"
    assert any(p.startswith(f"data/{rel}:") for p in tree.problems())
    text = tree.read(rel).replace("url:                           #", "url: https://example.org/r  #")
    text = text.replace("  -                            #", "  - https://example.org/r  #")
    text = text.replace("  best-overall:\n    gpus: []", "  best-overall:\n    gpus: [rtx-2070]")
    tree.write(rel, text)
    assert tree.problems() == []


def test_new_translation_adds_empty_entries_with_digests(tree):
    from generator.data.dataset import digest

    assert cli("new", "translation", "zh", "--data", str(tree.data)).returncode == 0
    text = tree.read("translations/zh/revisions/2019-04-03.yaml")
    assert f'"summary":\n  text: ""\n  source: "{digest("A fixture revision.")}"' in text
    assert any("summary.text: expected text, got an empty string" in p for p in tree.problems())
    tree.write("translations/zh/revisions/2019-04-03.yaml", text.replace('text: ""', 'text: "填写"'))
    for rel in ("translations/zh/ui.yaml", "translations/zh/personas.yaml", "translations/zh/gpus/nvidia/rtx-2070.yaml"):
        tree.write(rel, tree.read(rel).replace('text: ""', 'text: "填写"'))
    assert tree.problems() == []


# ------------------------------------------------------------------ JSON Schema agrees with the validator

def as_json(value):
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return value


def schema_ok(name, doc) -> bool:
    from generator.data.json_schema import json_schema

    return jsonschema.Draft202012Validator(json_schema(name)).is_valid(as_json(doc))


def test_schema_files_are_current():
    from generator.data.json_schema import schema_texts

    for name, text in schema_texts().items():
        assert (ROOT / "data" / "schema" / name).read_text(encoding="utf-8") == text, name


# Edits the JSON Schema can express (types, ranges, enums, required and unknown fields).
SCHEMA_CASES = [
    ("memory_gb", "eight"), ("memory_gb", -1), ("memory_gb", 99999), ("tensor_cores", "yes"),
    ("segment", "gaming"), ("compute_capability", 7.5), ("release_date", "soon"), ("sources", []),
    ("memorygb", 8), ("name", None), ("notes", ""),
]


@pytest.mark.parametrize("field, value", SCHEMA_CASES)
def test_schema_and_validator_agree_on_bad_gpus(tree, field, value):
    doc = yaml.safe_load(tree.read(GPU))
    assert schema_ok("gpu", doc) and tree.problems() == []
    doc[field] = value
    tree.write(GPU, yaml.safe_dump(doc, allow_unicode=True))
    assert not schema_ok("gpu", doc)
    assert tree.problems() != []


def test_schema_accepts_every_shipped_record():
    base = ROOT / "data"
    for folder, name in (("gpus", "gpu"), ("revisions", "revision"), ("topics", "topic")):
        for path in sorted((base / folder).rglob("*.yaml")):
            assert schema_ok(name, yaml.safe_load(path.read_text(encoding="utf-8"))), path
    assert schema_ok("personas", yaml.safe_load((base / "personas.yaml").read_text(encoding="utf-8")))
    assert schema_ok("ui", yaml.safe_load((base / "ui.yaml").read_text(encoding="utf-8")))
