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
        moment = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc)
    else:
        moment = _dt.datetime.now(_dt.timezone.utc)
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
    return [plain(rev.data) for rev in ds.revisions]


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


def write_api(ds: Dataset, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir) / "api" / "v1"
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "gpus.json": gpus_result(ds),
        "revisions.json": revisions_result(ds),
        "personas.json": personas_result(ds),
    }
    written = []
    for name, result in files.items():
        path = out_dir / name
        path.write_text(dumps(envelope(result)), encoding="utf-8")
        written.append(path)
    return written


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
