"""The JSON API: envelope, reproducible timestamp, and nothing of the data lost."""
from __future__ import annotations

import json

import yaml
from helpers import ROOT

from generator.data.dataset import tree_leaves
from generator.data.locales import LANGS


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
    from generator.publish.api import generated_at

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
        item = dict(exported[path.stem])
        support = item.pop("support")  # computed from data/software.yaml (tests/test_support.py)
        assert support["status"] in ("current", "legacy", "unsupported"), path
        assert item == {"id": path.stem, "cooling": None, **record}, path


def test_every_revision_field_is_exported(built_site):
    site, _ = built_site
    exported = {r["date"]: r for r in _load(site, "revisions.json")["result"]}
    for path in sorted((ROOT / "data" / "revisions").glob("*.yaml")):
        record = _plain(yaml.safe_load(path.read_text(encoding="utf-8")))
        item = dict(exported[path.stem])
        in_force = item.pop("advice_in_force")
        assert item == record, path
        if record["kind"] == "full":  # the persona list, and the flowchart's leaves tagged with personas
            expected = {p: list(r["gpus"]) for p, r in record.get("recommendations", {}).items()}
            for _kp, leaf in tree_leaves(record.get("decision_tree")):
                for pid in leaf.get("personas") or ():
                    expected.setdefault(pid, []).extend(g for g in leaf["gpus"] if g not in expected[pid])
            assert {p: v["gpus"] for p, v in in_force.items()} == expected


def test_personas_carry_names_in_every_language(built_site):
    site, ds = built_site
    personas = _load(site, "personas.json")["result"]
    assert [p["id"] for p in personas] == ds.persona_ids()
    for p in personas:
        assert set(p["names"]) == set(LANGS)
        assert p["names"]["en"] == p["name"]


def test_models_measurements_and_prices_are_exported_whole(built_site):
    site, _ = built_site
    models = {m["id"]: m for m in _load(site, "models.json")["result"]}
    for path in sorted((ROOT / "data" / "models").glob("*.yaml")):
        assert models[path.stem] == {"id": path.stem, **_plain(yaml.safe_load(path.read_text(encoding="utf-8")))}
        assert _load(site, f"models/{path.stem}.json")["result"] == models[path.stem]
    flat = _load(site, "measurements.json")["result"]
    files = sorted((ROOT / "data" / "measurements").glob("*.yaml"))
    assert len(flat) == sum(len(yaml.safe_load(p.read_text(encoding="utf-8"))["results"]) for p in files)
    for path in files:
        doc = _plain(yaml.safe_load(path.read_text(encoding="utf-8")))
        mine = [m for m in flat if m["source"] == path.stem]
        assert len(mine) == len(doc["results"])
        for item, res in zip(mine, doc["results"], strict=True):
            assert item["url"] == res.get("url", doc.get("url")) and item["runtime"] == doc["runtime"]
            # the site's own results name their script and no address
            assert item.get("script") == doc.get("script") and (item["url"] is None) == ("script" in doc)
            assert item["value"] == res["value"] and item["gpu"] == res["gpu"]
            assert item.get("model") == res.get("model") and item.get("workload") == res.get("workload")
            assert item["mode"] == res.get("mode", "inference" if res["metric"] != "training_tokens_per_s" else "full")
        assert _load(site, f"measurements/{path.stem}.json")["result"] == {"id": path.stem, **doc}
    prices = _load(site, "prices.json")["result"]
    for path in sorted((ROOT / "data" / "prices").glob("*.yaml")):
        obs = _plain(yaml.safe_load(path.read_text(encoding="utf-8")))["observations"]
        mine = [p for p in prices if p["gpu"] == path.stem]
        assert [{k: v for k, v in p.items() if k not in ("gpu", "usd_per_gpu")} for p in mine] == obs
        for p in mine:
            assert p["usd_per_gpu"] == round(p["usd"] / p.get("gpus", 1), 4)


def test_api_files_follow_their_schema(built_site):
    import jsonschema

    site, _ = built_site
    schema = _load(site, "schema.json")
    for name, kind in (("gpus.json", "gpu"), ("revisions.json", "revision"), ("models.json", "model"),
                       ("measurements.json", "measurement"), ("prices.json", "price")):
        validator = jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{kind}"})
        for item in _load(site, name)["result"]:
            errors = [e.message for e in validator.iter_errors(item)]
            assert not errors, (name, errors[:3])


def test_every_published_kind_of_the_registry_is_written():
    """The registry names what is published (Kind.api); the API writes exactly those kinds, each
    as api/v1/<api>.json."""
    from generator.data.kinds import KINDS
    from generator.publish.api import PUBLISH

    assert set(PUBLISH) == {k.name for k in KINDS if k.api}


def test_api_files_follow_the_registry_names(built_site):
    from generator.data.kinds import KINDS

    site, _ = built_site
    for kind in KINDS:
        if kind.api:
            doc = json.loads((site / "api" / "v1" / f"{kind.api}.json").read_text(encoding="utf-8"))
            assert isinstance(doc["result"], list) and doc["result"], kind.name
