"""Synthetic data at N times the real catalogue and history, for `make bench`.

Deterministic: copies of every GPU (ids suffixed -sK, names suffixed) with their
translations, copies of every file of measured results whose results name copy K's GPUs, and
copies of every revision moved to new dates, so that validation, generation and all four MkDocs
builds do N times the work of the shipped data. A copied card's page lists as many measured
results as the original's; a model's page and the pages that gather every result (the accuracy
page, its charts) get N times as many.

The LLM catalogue is not multiplied: it grows by a few models a year, and every card's page
prints what each model does on it (N times the models would be N^2 estimates).
"""
from __future__ import annotations

import datetime as _dt
import re
import shutil
from pathlib import Path

from generator.data.locales import TRANSLATED_LANGS


def make(src: Path, dest: Path, factor: int) -> Path:
    """Write ``factor`` x the data of ``src`` into ``dest`` (a data folder)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest)
    if factor <= 1:
        return dest
    for k in range(1, factor):
        for path in sorted((src / "gpus").glob("*/*.yaml")):
            rel = f"gpus/{path.parent.name}/{path.name}"
            new_rel = f"gpus/{path.parent.name}/{path.stem}-s{k}.yaml"
            text = re.sub(r"^name: (.*)$", rf"name: \1 S{k}", path.read_text(encoding="utf-8"), count=1, flags=re.M)
            _write(dest / new_rel, text)
            _translations(src, dest, rel, new_rel)
        for path in sorted((src / "measurements").glob("*.yaml")):
            text = _RECORD_ID.sub(rf"\1\2-s{k}", path.read_text(encoding="utf-8"))
            _write(dest / "measurements" / f"{path.stem}-s{k}.yaml", text)
            _translations(src, dest, f"measurements/{path.name}", f"measurements/{path.stem}-s{k}.yaml")
    revisions = sorted((src / "revisions").glob("*.yaml"))
    day = _dt.date(1995, 1, 1)
    used = {p.stem for p in revisions}
    for _k in range(1, factor):
        for path in revisions:
            while day.isoformat() in used:
                day += _dt.timedelta(days=1)
            date = day.isoformat()
            used.add(date)
            text = path.read_text(encoding="utf-8").replace(f"date: {path.stem}", f"date: {date}")
            _write(dest / "revisions" / f"{date}.yaml", text)
            _translations(src, dest, f"revisions/{path.name}", f"revisions/{date}.yaml")
            day += _dt.timedelta(days=1)
    return dest


# a result's card (``  - gpu: x``): the copy names copy K's
_RECORD_ID = re.compile(r"^(\s*(?:- )?gpu: )([a-z0-9][a-z0-9.-]*)$", re.M)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _translations(src: Path, dest: Path, rel: str, new_rel: str) -> None:
    for lang in TRANSLATED_LANGS:
        tr = src / "translations" / lang / rel
        if tr.exists():
            out = dest / "translations" / lang / new_rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tr, out)
