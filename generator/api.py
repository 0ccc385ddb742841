"""The static JSON API: ``site/api/v1/*.json`` with a stable envelope."""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from types import MappingProxyType

from .model import Dataset, Localizer
from .schema import LANGS

SCHEMA_VERSION = 1


def generated_at() -> str:
    """Build time in UTC; ``SOURCE_DATE_EPOCH`` makes it reproducible."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.strip().isdigit():
        moment = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC)
    else:
        moment = _dt.datetime.now(_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def plain(value):
    """Frozen record data -> JSON-ready values (dates as ISO strings)."""
    if isinstance(value, (dict, MappingProxyType)):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return value


def gpus_result(ds: Dataset) -> list[dict]:
    return [{"id": gid, **plain(gpu.data)} for gid, gpu in sorted(ds.gpus.items())]


def revisions_result(ds: Dataset) -> list[dict]:
    """Every revision as written, plus ``advice_in_force``: the recommendations in force on that
    date, derived from the update log for revisions that only record changes."""
    from .history import all_states

    states = all_states(ds)
    out = []
    for rev in ds.revisions:
        item = plain(rev.data)
        item["advice_in_force"] = {pid: {"gpus": st.gpus, "known": st.known} for pid, st in states[rev.id].items()}
        out.append(item)
    return out


def personas_result(ds: Dataset) -> list[dict]:
    out = []
    locs = {lang: Localizer(ds, lang) for lang in LANGS}
    for pid, persona in ds.personas.data.items():
        item = {"id": pid, **plain(persona)}
        item["names"] = {lang: locs[lang].persona(pid) for lang in LANGS}
        out.append(item)
    return out


def envelope(result: list) -> dict:
    return {"schema_version": SCHEMA_VERSION, "generated_at": generated_at(), "total": len(result), "result": result}


def dumps(obj) -> str:
    # ensure_ascii keeps "<", ">" and "&" as they are, which is safe in a .json file served
    # as application/json; the HTML pages never inline these files.
    return json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def topics_result(ds: Dataset) -> list[dict]:
    return [{"id": t.id, **plain(t.data)} for t in ds.topics]


def api_schema() -> dict:
    """JSON Schema of the API's objects, from the same declarations as the data files."""
    from .fmt import json_schema

    gpu = json_schema("gpu")
    gpu["properties"] = {"id": {"type": "string"}, **gpu["properties"]}
    gpu["required"] = ["id"] + gpu["required"]
    revision = json_schema("revision")
    revision["properties"]["advice_in_force"] = {
        "type": "object", "description": "computed: persona -> GPUs in force on this date (known: source or derived)",
        "additionalProperties": {"type": "object", "required": ["gpus", "known"],
                                 "properties": {"gpus": {"type": "array", "items": {"type": "string"}},
                                                "known": {"enum": ["source", "derived"]}}}}
    revision["required"] = revision["required"] + ["advice_in_force"]
    defs = revision.pop("$defs", {})
    for doc in (gpu, revision):
        for key in ("$schema", "$id"):
            doc.pop(key, None)
    envelope_props = {"schema_version": {"const": SCHEMA_VERSION}, "generated_at": {"type": "string"},
                      "total": {"type": "integer", "minimum": 0}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "schema.json",
        "title": "whichgpu JSON API v1",
        "$defs": {**defs, "gpu": gpu, "revision": revision,
                  "envelope": {"type": "object", "required": ["schema_version", "generated_at", "result"],
                               "properties": envelope_props}},
        "description": "gpus.json and revisions.json are envelopes whose result is a list of $defs/gpu or "
                       "$defs/revision; gpus/<id>.json and revisions/<date>.json hold one object as result.",
    }


def _write(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(obj)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def write_api(ds: Dataset, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir) / "api" / "v1"
    gpus, revisions, personas, topics = gpus_result(ds), revisions_result(ds), personas_result(ds), topics_result(ds)
    written = [
        _write(out_dir / "gpus.json", envelope(gpus)),
        _write(out_dir / "revisions.json", envelope(revisions)),
        _write(out_dir / "personas.json", envelope(personas)),
        _write(out_dir / "topics.json", envelope(topics)),
        _write(out_dir / "schema.json", api_schema()),
    ]
    all_doc = {"schema_version": SCHEMA_VERSION, "generated_at": generated_at(),
               "result": {"gpus": gpus, "revisions": revisions, "personas": personas, "topics": topics}}
    written.append(_write(out_dir / "all.json", all_doc))
    for gpu in gpus:
        written.append(_write(out_dir / "gpus" / f"{gpu['id']}.json", single(gpu)))
    for rev in revisions:
        written.append(_write(out_dir / "revisions" / f"{rev['date']}.json", single(rev)))
    return written


def single(result: dict) -> dict:
    return {"schema_version": SCHEMA_VERSION, "generated_at": generated_at(), "result": result}


def client_data(ds: Dataset) -> dict:
    """What the calculators and pickers read in the browser (window.WG_DATA)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "gpus": gpus_result(ds),
        "revisions": revisions_result(ds),
        "personas": [p["id"] for p in personas_result(ds)],
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
