"""Plain dicts for the engine, from the dataset's Records or straight from the YAML files.

The engine takes three kinds of plain dict:

- a model: the fields of ``data/models/<id>.yaml`` plus ``id``;
- a GPU: the fields of ``data/gpus/<vendor>/<id>.yaml`` plus ``id``;
- a measurement: one result of ``data/measurements/<file>.yaml`` with the file-level fields
  (``publisher``, ``runtime``, ``runtime_version``, ``date``, ``url`` or, for the site's own
  measurements, ``script``) merged in, a result's own
  field winning, plus ``source`` (the file id).

``from_dataset(ds)`` turns a loaded Dataset into a ``Bundle``; it reads ``ds.models`` and
``ds.measurements`` when the loader exposes them and otherwise reads ``data/models`` and
``data/measurements`` itself with ``generator.data.yamlload.load_file``. ``load_bundle(path)`` does the
whole load and returns the data problems beside it.
"""
from __future__ import annotations

from pathlib import Path

from generator import reuse
from generator.data.loader import load_dataset
from generator.data.plain import plain
from generator.data.yamlload import load_file
from generator.estimate.bundle import Bundle

FILE_LEVEL = ("publisher", "runtime", "runtime_version", "date", "url", "script", "title")


def record_dict(record, ident: str | None = None) -> dict:
    data = dict(_plain_data(record)) if hasattr(record, "data") else plain(record)
    data["id"] = ident or getattr(record, "id", None) or data.get("id")
    return data


def _plain_data(record) -> dict:
    """``plain(record.data)``, kept while the record lives (generator.reuse.RECORD_VIEWS): records
    are immutable, and a reload of unchanged files gives the same record objects, so the preview
    converts only what changed. Callers get a fresh top-level dict; the nested values are shared
    and not modified."""
    return reuse.RECORD_VIEWS.of(record, lambda: plain(record.data), "plain")


def flatten_measurements(file_data: dict, source: str) -> list[dict]:
    """One dict per result, with the file-level fields merged in."""
    out = []
    base = {k: file_data.get(k) for k in FILE_LEVEL if file_data.get(k) is not None}
    for i, result in enumerate(file_data.get("results") or []):
        row = dict(base)
        row.update(plain(result))
        row["source"] = source
        row["index"] = i
        out.append(row)
    return out


def _flat_results(record) -> list[dict]:
    """``flatten_measurements`` of a measurements record, kept like ``_plain_data``: a reload of an
    unchanged file gives the same rows (the same objects), so what is computed per row can be
    reused by identity. The rows are shared and never modified."""
    return reuse.RECORD_VIEWS.of(record, lambda: flatten_measurements(_plain_data(record), record.id), "rows", record.id)


def _read_folder(folder: Path, root: Path, problems: list) -> dict[str, dict]:
    out = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.rglob("*.yaml")):
        try:
            shown = str(path.relative_to(root))
        except ValueError:
            shown = str(path)
        doc, probs = load_file(path, shown)
        problems.extend(p for p in probs if getattr(p, "level", "error") == "error")
        if doc is not None and isinstance(doc.data, dict):
            out[path.stem] = plain(doc.data)
    return out


# The fields of a GPU record the engine reads (tests check the engine's source against this list):
# the fitted constants are cached by the digest of these, so editing any other field refits nothing.
ENGINE_GPU_FIELDS = frozenset({
    "id", "name", "vendor", "segment", "memory_gb", "memory_bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops",
    "fp8_tensor_tflops", "l2_cache_mb", "gpu_memory_share", "unified_memory", "compute_capability",
    # not a record's field: the backend the engine sets on its copy of a card (--backend, a result's condition)
    "backend",
})


def engine_dict(record, ident: str) -> dict:
    """``record_dict(record, ident)``, kept like ``_plain_data``: a reload of unchanged files gives
    the same records, and its bundle the same dicts, which nothing modifies."""
    return reuse.RECORD_VIEWS.of(record, lambda: record_dict(record, ident), "engine", ident)


def from_dataset(ds, data_dir: Path | None = None) -> Bundle:
    b = Bundle()
    b.gpus = {gid: engine_dict(rec, gid) for gid, rec in sorted(ds.gpus.items())}
    b.revisions = [record_dict(rec) for rec in ds.revisions]
    models = getattr(ds, "models", None)
    measurements = getattr(ds, "measurements", None)
    data_dir = Path(data_dir or "data")
    if models is not None:
        b.models = {mid: engine_dict(rec, mid) for mid, rec in sorted(models.items())}
    else:
        b.models = {k: dict(v, id=k) for k, v in _read_folder(data_dir / "models", data_dir.parent, b.problems).items()}
    if measurements is not None:
        for rec in sorted(measurements, key=lambda r: r.id):
            b.measurements.extend(_flat_results(rec))
    else:
        for ident, data in sorted(_read_folder(data_dir / "measurements", data_dir.parent, b.problems).items()):
            b.measurements.extend(flatten_measurements(data, ident))
    return b


def load_bundle(data_dir: Path) -> Bundle:
    """Validate ``data_dir`` and return its Bundle; ``problems`` holds the errors when there are any."""
    data_dir = Path(data_dir)
    ds, problems = load_dataset(data_dir)
    errors = [p for p in problems if p.level == "error"]
    if ds is None or errors:
        return Bundle(problems=errors or list(problems))
    bundle = from_dataset(ds, data_dir)
    return bundle


def read_bundle(data_dir: Path) -> Bundle:
    """Read the YAML files without validating them (for the benchmark while data is being edited)."""
    data_dir = Path(data_dir)
    b = Bundle()
    root = data_dir.parent
    b.gpus = {k: dict(v, id=k) for k, v in sorted(_read_folder(data_dir / "gpus", root, b.problems).items())}
    b.models = {k: dict(v, id=k) for k, v in sorted(_read_folder(data_dir / "models", root, b.problems).items())}
    for ident, data in sorted(_read_folder(data_dir / "measurements", root, b.problems).items()):
        b.measurements.extend(flatten_measurements(data, ident))
    revs = _read_folder(data_dir / "revisions", root, b.problems)
    b.revisions = [dict(v, id=k, date=str(v.get("date") or k)) for k, v in sorted(revs.items())]
    return b
