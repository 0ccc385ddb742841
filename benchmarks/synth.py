"""Synthetic data at N times the real catalogue and history, for `make bench`.

Deterministic: copies of every GPU (ids suffixed -sK, names suffixed) with their
translations, and copies of every revision moved to new dates, so that validation,
generation and all four MkDocs builds do N times the work of the shipped data.
"""
from __future__ import annotations

import datetime as _dt
import re
import shutil
from pathlib import Path

from generator.locales import TRANSLATED_LANGS


def make(src: Path, dest: Path, factor: int) -> Path:
    """Write ``factor`` x the data of ``src`` into ``dest`` (a data folder)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest)
    if factor <= 1:
        return dest
    gpus = sorted((src / "gpus").glob("*/*.yaml"))
    for k in range(1, factor):
        for path in gpus:
            vendor, ident = path.parent.name, path.stem
            new_id = f"{ident}-s{k}"
            text = path.read_text(encoding="utf-8")
            text = re.sub(r"^name: (.*)$", rf"name: \1 S{k}", text, count=1, flags=re.M)
            (dest / "gpus" / vendor / f"{new_id}.yaml").write_text(text, encoding="utf-8")
            for lang in TRANSLATED_LANGS:
                tr = src / "translations" / lang / "gpus" / vendor / f"{ident}.yaml"
                if tr.exists():
                    out = dest / "translations" / lang / "gpus" / vendor / f"{new_id}.yaml"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(tr, out)
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
            (dest / "revisions" / f"{date}.yaml").write_text(text, encoding="utf-8")
            for lang in TRANSLATED_LANGS:
                tr = src / "translations" / lang / "revisions" / path.name
                if tr.exists():
                    shutil.copyfile(tr, dest / "translations" / lang / "revisions" / f"{date}.yaml")
            day += _dt.timedelta(days=1)
    return dest
