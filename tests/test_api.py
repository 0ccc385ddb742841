"""The JSON API: envelope, reproducible timestamp, and nothing of the data lost."""
from __future__ import annotations

import json

import yaml
from conftest import ROOT


def _load(site, name):
    return json.loads((site / "api" / "v1" / name).read_text(encoding="utf-8"))


def test_envelope(built_site):
    site, ds = built_site
    for name in ("gpus.json", "revisions.json", "personas.json"):
        doc = _load(site, name)
        assert list(doc) == ["schema_version", "generated_at", "total", "result"]
        assert doc["schema_version"] == 1
        assert doc["generated_at"] == "2026-01-01T00:00:00Z"  # SOURCE_DATE_EPOCH of the fixture build
        assert doc["total"] == len(doc["result"])


def test_generated_at_follows_source_date_epoch(monkeypatch):
    from generator.api import generated_at

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert generated_at() == "1970-01-01T00:00:00Z"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert generated_at().endswith("Z")


def _plain(value):
    import datetime as dt

    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def test_every_gpu_field_is_exported(built_site):
    site, _ = built_site
    exported = {g["id"]: g for g in _load(site, "gpus.json")["result"]}
    files = sorted((ROOT / "data" / "gpus").glob("*/*.yaml"))
    assert len(exported) == len(files)
    for path in files:
        record = _plain(yaml.safe_load(path.read_text(encoding="utf-8")))
        assert exported[path.stem] == {"id": path.stem, **record}, path


def test_every_revision_field_is_exported(built_site):
    site, _ = built_site
    exported = {r["date"]: r for r in _load(site, "revisions.json")["result"]}
    for path in sorted((ROOT / "data" / "revisions").glob("*.yaml")):
        record = _plain(yaml.safe_load(path.read_text(encoding="utf-8")))
        item = dict(exported[path.stem])
        in_force = item.pop("advice_in_force")
        assert item == record, path
        if record["kind"] == "full":
            assert {p: v["gpus"] for p, v in in_force.items()} == {
                p: r["gpus"] for p, r in record.get("recommendations", {}).items()}


def test_personas_carry_names_in_every_language(built_site):
    site, ds = built_site
    personas = _load(site, "personas.json")["result"]
    assert [p["id"] for p in personas] == ds.persona_ids()
    for p in personas:
        assert set(p["names"]) == {"en", "ko", "zh", "fr"}
        assert p["names"]["en"] == p["name"]
