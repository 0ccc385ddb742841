"""The estimation engine against public measurements kept outside data/ (benchmarks/holdout/).

The fit never sees these files: the constants come from the shipped measurements alone, and the
figures here say how the engine does on results it was not tuned on. The files use the format of
``data/measurements/`` (data/README.md) and are validated with the same rules against the shipped
GPUs and models.

    python -m benchmarks.holdout [--data data] [--holdout benchmarks/holdout] [--check]

``--check`` validates only (exit 2 with ``path:line: message`` lines on a problem).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from generator.estimate import fit_constants
from generator.facts.engine_input import flatten_measurements, read_bundle, record_dict
from generator.facts.holdout import holdout_errors

HOLDOUT = Path(__file__).resolve().parent / "holdout"
PREFIX = "held-out-"


def validate(data_dir: Path, holdout_dir: Path) -> tuple[list[dict], list[str]]:
    """The held-out results as flat measurement dicts, and the problems (``path:line: message``,
    with the held-out file's own path). The files are checked by the loader of data/, in a copy
    of the tree where they sit beside the shipped measurements."""
    data_dir, holdout_dir = Path(data_dir).resolve(), Path(holdout_dir).resolve()
    files = sorted(holdout_dir.glob("*.yaml"))
    if not files:
        return [], [f"{holdout_dir}: no held-out measurement files"]
    from generator.data.loader import load_dataset

    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "data"
        tree.mkdir()
        for entry in data_dir.iterdir():
            if entry.name != "measurements":
                os.symlink(entry, tree / entry.name)
        meas = tree / "measurements"
        meas.mkdir()
        for f in (data_dir / "measurements").glob("*.yaml"):
            os.symlink(f, meas / f.name)
        names = {}
        for f in files:
            os.symlink(f, meas / f"{PREFIX}{f.name}")
            shown_path = str(f.relative_to(Path.cwd()) if f.is_relative_to(Path.cwd()) else f)
            names[f"{tree}/measurements/{PREFIX}{f.name}"] = shown_path
            names[f"{Path(tmp)}/data/measurements/{PREFIX}{f.name}"] = shown_path
            names[f"data/measurements/{PREFIX}{f.name}"] = shown_path
        ds, problems = load_dataset(tree, Path(tmp))
        # warnings (a figure to check, say) are reported by `generator validate` and stop nothing here
        problems = [p for p in problems if getattr(p, "level", "error") == "error"]
        names[f"{tree}/"] = f"{data_dir}/"  # a problem in a shipped file: named by its path in data/
        shown = []
        for p in problems:
            text = str(p)
            for inside, outside in names.items():
                text = text.replace(inside, outside)
            shown.append(text)
        if ds is None or shown:
            return [], shown or ["the data tree with the held-out files did not load"]
        out = []
        for rec in sorted(ds.measurements, key=lambda r: r.id):
            if rec.id.startswith(PREFIX):
                out.extend(flatten_measurements(record_dict(rec), rec.id[len(PREFIX):]))
        return out, []


def errors(data_dir: Path, holdout: list[dict]) -> dict[str, dict]:
    """{metric: {runtime or 'all': {median_pct, p90_pct, count, sources}}} of the engine, fitted on
    data_dir alone (the figures the accuracy page prints, generator.facts.holdout)."""
    bundle = read_bundle(data_dir)
    constants = fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    return holdout_errors(holdout, bundle.models, bundle.gpus, constants)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.holdout")
    ap.add_argument("--data", default="data")
    ap.add_argument("--holdout", default=str(HOLDOUT))
    ap.add_argument("--check", action="store_true", help="validate the held-out files only")
    args = ap.parse_args(argv)
    rows, problems = validate(Path(args.data), Path(args.holdout))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    if args.check:
        print(f"ok: {len(rows)} held-out results")
        return 0
    table = errors(Path(args.data), rows)
    print(f"held-out measurements (benchmarks/holdout/, never fitted): {len(rows)} results")
    print(f"{'metric':26} {'runtime':13} {'median %':>9} {'p90 %':>8} {'count':>6} {'sources':>8}")
    for metric, per in table.items():
        for runtime, e in per.items():
            print(f"{metric:26} {runtime:13} {e['median_pct']:>9} {e['p90_pct']:>8} {e['count']:>6} {e['sources']:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
