"""The static JSON API: ``site/api/v1/*.json`` with a stable envelope."""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

from generator.data.dataset import Dataset
from generator.data.json_schema import json_schema
from generator.data.kinds import BY_NAME, KINDS
from generator.data.schema import SUPPORT_STATUS
from generator.facts.derive import derive
from generator.facts.results import (
    gpus_result,
    measurement_sources_result,
    measurements_result,
    models_result,
    personas_result,
    prices_result,
    revisions_result,
    snapshots_result,
    software_result,
    topics_result,
)
from generator.publish.render import Context

SCHEMA_VERSION = 1


def generated_at() -> str:
    """Build time in UTC; ``SOURCE_DATE_EPOCH`` makes it reproducible."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.strip().isdigit():
        moment = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC)
    else:
        moment = _dt.datetime.now(_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def envelope(result: list) -> dict:
    return {"schema_version": SCHEMA_VERSION, "generated_at": generated_at(), "total": len(result), "result": result}


def dumps(obj) -> str:
    # ensure_ascii keeps "<", ">" and "&" as they are, which is safe in a .json file served
    # as application/json; the HTML pages never inline these files.
    return json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def api_schema() -> dict:
    """JSON Schema of the API's objects, from the same declarations as the data files."""

    gpu = json_schema("gpu")
    gpu["properties"] = {"id": {"type": "string"}, **gpu["properties"]}
    gpu["required"] = ["id"] + gpu["required"] + ["support", "cooling"]
    gpu["properties"]["cooling"] = {"anyOf": [gpu["properties"]["cooling"], {"type": "null"}],
                                    "description": "how the card is cooled; null where no source says"}
    gpu["properties"]["support"] = {
        "description": "computed from data/software.yaml: whether today's software runs the card",
        "anyOf": [{"type": "null"}, {
            "type": "object", "required": ["status", "as_of", "last", "details", "features"],
            "properties": {
                "status": {"enum": list(SUPPORT_STATUS)}, "as_of": {"type": ["string", "null"]},
                "last": {"type": ["string", "null"], "description": "legacy: the newest build that still runs it"},
                "details": {"type": "array", "items": {"type": "object"}},
                "features": {"type": "object", "properties": {
                    "tensor_cores": {"type": "boolean"}, "bf16": {"type": "boolean"}, "fp8": {"type": "boolean"},
                    "fp4": {"type": "boolean"}, "flash_attention": {"type": "array", "items": {"type": "integer"}}}}}}]}
    revision = json_schema("revision")
    revision["properties"]["advice_in_force"] = {
        "type": "object", "description": "computed: persona -> GPUs in force on this date (known: source or derived)",
        "additionalProperties": {"type": "object", "required": ["gpus", "known"],
                                 "properties": {"gpus": {"type": "array", "items": {"type": "string"}},
                                                "known": {"enum": ["source", "derived"]}}}}
    revision["required"] = revision["required"] + ["advice_in_force"]
    defs = revision.pop("$defs", {})
    model = json_schema("model")
    model["properties"] = {"id": {"type": "string"}, **model["properties"]}
    model["required"] = ["id"] + model["required"]
    source = json_schema("measurement")
    source["properties"] = {"id": {"type": "string"}, **source["properties"]}
    result = dict(source["properties"]["results"]["items"])
    measurement = {"type": "object", "description": "one measured result with its source's fields merged in",
                   "required": ["id", "source", "url", "publisher", "date", "runtime", "runtime_version"] + result["required"],
                   "properties": {"id": {"type": "string"}, "source": {"type": "string"},
                                  **{k: source["properties"][k] for k in ("title", "script", "publisher", "date", "runtime",
                                                                          "runtime_version")},
                                  **result["properties"],
                                  "url": {"anyOf": [source["properties"]["url"], {"type": "null"}],
                                          "description": "where the results are published (the result's own link "
                                                         "or its file's); null for the site's own measurements, "
                                                         "which name their script"}}}
    observation = dict(json_schema("price")["properties"]["observations"]["items"])
    price = {"type": "object", "required": ["gpu", "usd_per_gpu"] + observation["required"],
             "properties": {"gpu": {"type": "string"}, "usd_per_gpu": {"type": "number"}, **observation["properties"]}}
    for doc in (gpu, revision, model, source):
        for key in ("$schema", "$id"):
            doc.pop(key, None)
    envelope_props = {"schema_version": {"const": SCHEMA_VERSION}, "generated_at": {"type": "string"},
                      "total": {"type": "integer", "minimum": 0}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "schema.json",
        "title": "whichgpu JSON API v1",
        "$defs": {**defs, "gpu": gpu, "revision": revision, "model": model, "measurement": measurement,
                  "measurement_source": source, "price": price,
                  "envelope": {"type": "object", "required": ["schema_version", "generated_at", "result"],
                               "properties": envelope_props}},
        "description": "gpus.json, revisions.json, models.json, measurements.json and prices.json are envelopes "
                       "whose result is a list of $defs/gpu, $defs/revision, $defs/model, $defs/measurement or "
                       "$defs/price; gpus/<id>.json, revisions/<date>.json, models/<id>.json, "
                       "measurements/<source>.json ($defs/measurement_source) and prices/<gpu>.json (a list of "
                       "$defs/price) hold their item as result.",
    }


def _write(path: Path, obj, changed: set[Path] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(obj)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
        if changed is not None:
            changed.add(path)
    return path


def _prices_by_gpu(prices: list[dict], ds: Dataset):
    by_gpu: dict[str, list] = {}
    for p in prices:
        by_gpu.setdefault(p["gpu"], []).append(p)
    return by_gpu.items()


# What each published kind of the registry (kinds.KINDS, Kind.api) writes: the list of
# api/v1/<api>.json, and the files of api/v1/<api>/ as (file stem, content) pairs, or None.
PUBLISH = {
    "gpu": (gpus_result, lambda items, ds: ((g["id"], g) for g in items)),
    "revision": (lambda ds: revisions_result(ds, derive(ds).states), lambda items, ds: ((r["date"], r) for r in items)),
    "topic": (topics_result, None),
    "model": (models_result, lambda items, ds: ((m["id"], m) for m in items)),
    "measurement": (measurements_result, lambda items, ds: ((s["id"], s) for s in measurement_sources_result(ds))),
    "price": (prices_result, _prices_by_gpu),
    "persona": (personas_result, None),
    "software": (software_result, None),
    "snapshot": (snapshots_result, None),
}
# all.json: the advice itself, in one file
ALL_KINDS = ("gpu", "revision", "persona", "topic")


def write_api(ds: Dataset, out_dir: Path, changed: set[Path] | None = None) -> list[Path]:
    """Every file of the API under ``out_dir/api/v1``; the paths written. A file that already
    holds its content is left as it is; ``changed`` collects those that did not."""
    out_dir = Path(out_dir) / "api" / "v1"
    results: dict[str, list] = {}
    written = [_write(out_dir / "schema.json", api_schema(), changed)]
    for kind in KINDS:
        if not kind.api:
            continue
        make, items = PUBLISH[kind.name]
        result = results[kind.name] = make(ds)
        if result is None:  # an optional single file that is absent (data/software.yaml)
            continue
        written.append(_write(out_dir / f"{kind.api}.json", envelope(result), changed))
        if items is not None:
            written += [_write(out_dir / kind.api / f"{stem}.json", single(item), changed)
                        for stem, item in items(result, ds)]
    if ds.prices:
        written.append(_write(out_dir / "today.json", today_document(ds), changed))
    all_doc = {"schema_version": SCHEMA_VERSION, "generated_at": generated_at(),
               "result": {BY_NAME[k].api: results[k] for k in ALL_KINDS}}
    written.append(_write(out_dir / "all.json", all_doc, changed))
    return written


def today_document(ds: Dataset) -> dict:
    """``api/v1/today.json``: the site's picks for today per reader profile with their reasons (in
    English), the cards no pick may take and why, and every card's row. A computation of the site,
    dated by the newest price it rests on; never a revision's advice."""
    c = Context(ds, "en")
    facts = derive(ds)
    newest = c.today_newest()

    def row(r):
        return {"gpu": r.gpu, "count": r.count, "buy_usd": r.buy_usd, "buy_kind": r.buy_kind,
                "buy_date": r.buy.date.isoformat() if r.buy else None, "stale": r.stale,
                "cloud_usd_per_hour": r.cloud.usd if r.cloud else None,
                "cloud_provider": r.cloud.provider if r.cloud else None,
                "support": r.support.status if r.support else None, "cooling": r.cooling,
                "memory_gb": r.memory_gb, "kwh": r.kwh, "figures": r.figures, "per_1000_usd": r.per_dollar}

    picks = []
    for p in facts.today_picks:
        r = p.row
        if p.rent:
            price = {"price_usd": r.cloud.usd, "price_kind": "cloud-hourly", "price_date": r.cloud.date.isoformat()} if r else {}
        else:
            price = {"price_usd": r.buy_usd, "price_kind": r.buy_kind, "price_date": r.buy.date.isoformat()} if r else {}
        picks.append({"persona": p.persona, "gpu": r.gpu if r else None, "count": r.count if r else None,
                      "price_usd": None, "price_kind": None, "price_date": None, **price,
                      "reasons": c.today_reasons(p), "alternatives": [a.gpu for a in p.alternatives],
                      "left_out": [{"gpu": x.gpu, "reason": why} for x, why in p.left_out],
                      "profile": p.profile})
    return {"schema_version": SCHEMA_VERSION, "generated_at": generated_at(),
            "as_of": newest.isoformat() if newest else None,
            "computed_by": "site", "electricity": c.today_electricity(),
            "snapshot": ds.snapshots[-1].id if ds.snapshots else None,
            "picks": picks, "excluded": facts.today_excluded, "rows": [row(r) for r in facts.today]}


def single(result: dict) -> dict:
    return {"schema_version": SCHEMA_VERSION, "generated_at": generated_at(), "result": result}


CLIENT_DROPS = ("notes", "sources", "discrepancies")
# the picker reads its views, the decision tree its tree, the advice diff the advice in force
CLIENT_REVISION_KEYS = ("date", "kind", "decision_tree", "advice_in_force", "avoid")


def client_data(ds: Dataset) -> dict:
    """What the calculators and pickers read in the browser (window.WG_DATA)."""
    facts = derive(ds)
    revisions = revisions_result(ds, facts.states)
    return {
        "schema_version": SCHEMA_VERSION,
        # what the pages' scripts use of each card (notes and sources stay in the API)
        "gpus": [{**{k: v for k, v in g.items() if k not in CLIENT_DROPS}, "figures": facts.figures[g["id"]]}
                 for g in gpus_result(ds)],
        "revisions": [{k: v for k, v in r.items() if k in CLIENT_REVISION_KEYS} for r in revisions],
        "personas": [p["id"] for p in personas_result(ds)],
        # architectures for the large-model calculator (sources stay in the API: the page needs none)
        "models": [{k: v for k, v in m.items() if k not in ("sources", "notes")} for m in models_result(ds)],
        # fitted constants, measured errors and the reference card: what estimate.mjs takes as `table`
        "estimates": facts.estimates,
        # runtime -> the cards some build of its software runs (data/software.yaml): the calculator lists only those
        "runtime_cards": facts.runtime_cards,
        # what the picker applies for each revision, and today's cards (generator/facts/picker.py, today.py)
        "picker": facts.picker_views,
        "today": facts.today_client,
    }


def write_client_data(ds: Dataset, lang_dir: Path) -> Path:
    """``assets/data/whichgpu-data.js``: the data as a script, so it also works from file://."""
    path = Path(lang_dir) / "assets" / "data" / "whichgpu-data.js"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps(client_data(ds), ensure_ascii=True, separators=(",", ":"), sort_keys=False)
    # ensure_ascii plus escaping "<", ">" and "&" keeps the payload inert wherever it is embedded
    body = body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = "window.WG_DATA = " + body + ";\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
