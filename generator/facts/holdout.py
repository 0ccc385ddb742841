"""The held-out check: the engine against public measurements kept outside data/, in
``benchmarks/holdout/`` (the format of ``data/measurements/``). The fit never reads them; the
constants are the ones fitted on the shipped measurements, and the figures say how the engine does
on results it was not tuned on. ``python -m benchmarks.holdout`` validates the files and prints the
same table; the accuracy page prints it from a build.
"""
from __future__ import annotations

from pathlib import Path

from generator.estimate.fit_error import percentiles
from generator.estimate.fitting import predict
from generator.facts.engine_input import _read_folder, flatten_measurements

HOLDOUT_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "holdout"


def holdout_rows(folder: Path = HOLDOUT_DIR) -> list[dict]:
    """Every result of the held-out files as a flat measurement dict (``source``: the file's name
    without .yaml), files in name order; none when a file does not parse (``python -m
    benchmarks.holdout --check`` says where)."""
    problems: list = []
    files = _read_folder(Path(folder), Path(folder).parents[1], problems)
    if problems:
        return []
    rows: list[dict] = []
    for stem in sorted(files):
        rows.extend(flatten_measurements(files[stem], stem))
    return rows


def holdout_errors(rows: list[dict], models: dict, gpus: dict, constants: dict) -> dict[str, dict]:
    """{metric: {runtime or 'all': {median_pct, p90_pct, count, sources}}} of the engine under
    ``constants`` on ``rows`` (abs % error; sources: the publishers), metrics in name order, 'all'
    last; a row the engine cannot predict (a model or card the catalogue lacks) is left out."""
    errs: dict[str, list[tuple[str, str, float]]] = {}
    for m in rows:
        pred = predict(m, models, gpus, constants)
        if pred and pred > 0:
            errs.setdefault(m["metric"], []).append((m.get("runtime") or "", m.get("publisher") or m.get("source"),
                                                    abs(pred / m["value"] - 1) * 100))
    out: dict[str, dict] = {}
    for metric in sorted(errs):
        rows_of = errs[metric]
        out[metric] = {}
        for rt in sorted({r for r, _, _ in rows_of}) + ["all"]:
            mine = [e for e in rows_of if rt == "all" or e[0] == rt]
            out[metric][rt] = {**percentiles([e[2] for e in mine]), "count": len(mine), "sources": len({e[1] for e in mine})}
    return out
