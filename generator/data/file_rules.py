"""The rules that hold one file against its place in data/: its id against its file name,
a revision's date, a card's vendor against its folder, a translation's placeholders.
"""
from __future__ import annotations

import datetime as _dt
import difflib
import re
from pathlib import Path

from generator.data.problems import Problem
from generator.data.schema import ID_RE, Ctx
from generator.data.yamlload import Document


def _usd_keypaths(data) -> list[tuple]:
    """The keys whose lines the checks across files report: a price's figure and kind, a GPU's
    architecture."""
    if not isinstance(data, dict):
        return []
    obs = data.get("observations")
    if isinstance(obs, list):
        return [("observations", i, key) for i in range(len(obs)) for key in ("usd", "kind")]
    return [("architecture",)] if "architecture" in data else []


def _near(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def rule_id_matches_filename(path: Path, ctx: Ctx) -> str | None:
    stem = path.stem
    if not ID_RE.match(stem):
        ctx.err((), f"file name {path.name!r} is not a valid id: use lowercase letters, digits and single dashes")
        return None
    return stem


def rule_revision_date_matches_filename(path: Path, doc: Document, ctx: Ctx) -> str | None:
    stem = path.stem
    try:
        file_date = _dt.date.fromisoformat(stem)
    except ValueError:
        ctx.err((), f"revision files are named YYYY-MM-DD.yaml; got {path.name!r}")
        return None
    if isinstance(doc.data.get("date"), _dt.date) and doc.data["date"] != file_date:
        ctx.err(("date",), f"date {doc.data['date'].isoformat()} differs from the file name {path.name}")
    return stem


def rule_vendor_matches_folder(path: Path, doc: Document, ctx: Ctx) -> None:
    vendor = doc.data.get("vendor")
    if isinstance(vendor, str) and vendor != path.parent.name:
        ctx.err(("vendor",), f"vendor {vendor!r} differs from the folder {path.parent.name!r}; move the file or fix the vendor")


PLACEHOLDER = re.compile(r"\{[a-z][a-z0-9_]*\}")


def rule_placeholders_kept(english: str, translated: str, doc: Document, key: str, problems: list) -> bool:
    """A translation keeps every ``{placeholder}`` of the English text, and adds none."""
    want, got = sorted(PLACEHOLDER.findall(english)), sorted(PLACEHOLDER.findall(translated))
    if want != got:
        problems.append(Problem(doc.path, doc.line((key, "text")), f"{key}.text",
                                f"placeholders differ from the English text: expected {' '.join(want) or 'none'}, got {' '.join(got) or 'none'}"))  # noqa: E501
        return False
    return True
