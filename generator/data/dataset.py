"""Validated records, read-only, and the translation lookup built on them."""
from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from generator.data.locales import typeset
from generator.data.yamlload import dotted


def digest(text: str) -> str:
    """The fingerprint a translation keeps of the English text it was made from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Record:
    """One file of ``data/``: its id, its repo-relative path and its (frozen) fields."""

    id: str
    relpath: str  # relative to data/, e.g. gpus/nvidia/rtx-2070.yaml; also the translation mirror path
    data: Mapping
    texts: Mapping  # dotted keypath -> English text, for every translatable field

    def __getitem__(self, key):
        return self.data[key]

    def get(self, key, default=None):
        return self.data.get(key, default)


@dataclass(frozen=True)
class Translation:
    text: str
    source: str


@dataclass
class Dataset:
    gpus: dict[str, Record] = field(default_factory=dict)
    revisions: list[Record] = field(default_factory=list)  # oldest first
    topics: list[Record] = field(default_factory=list)  # by their order field
    models: dict[str, Record] = field(default_factory=dict)
    measurements: list[Record] = field(default_factory=list)  # one per source file, by id
    prices: dict[str, Record] = field(default_factory=dict)  # GPU id -> its dated observations
    personas: Record | None = None
    snapshots: list[Record] = field(default_factory=list)  # today's picks as kept, oldest first
    software: Record | None = None  # the stacks' builds and each architecture's features
    ui: Record | None = None
    search_terms: Record | None = None  # lang -> word -> the words the search also looks for
    # lang -> relpath -> dotted key -> Translation
    translations: dict[str, dict[str, dict[str, Translation]]] = field(default_factory=dict)

    # One dataset is one load: hashed by identity, so that what is known of a load
    # (generator.reuse) is found by the dataset itself; equality still compares the content.
    __hash__ = object.__hash__

    @property
    def latest(self) -> Record:
        return self.revisions[-1]

    def revision(self, date: str) -> Record:
        index = self.__dict__.get("_by_date")
        if index is None or len(index) != len(self.revisions):
            index = self.__dict__["_by_date"] = {rev.id: rev for rev in self.revisions}
        return index[date]

    def persona_ids(self) -> list[str]:
        return list(self.personas.data) if self.personas else []

    def counts(self) -> dict[str, int]:
        n = sum(len(keys) for per_lang in self.translations.values() for keys in per_lang.values())
        return {"gpus": len(self.gpus), "revisions": len(self.revisions),
                "personas": len(self.persona_ids()), "models": len(self.models),
                "measurements": sum(len(m.get("results") or ()) for m in self.measurements),
                "prices": sum(len(p.get("observations") or ()) for p in self.prices.values()),
                "translations": n}


class Localizer:
    """Text of a record field in one language, with its translation status.

    Status is ``source`` for English, ``ok`` for a current translation, ``stale`` when
    the English text changed after translation, ``missing`` when there is none (the
    English text is returned then, and pages mark it with ``lang="en"``).
    """

    def __init__(self, data: Dataset, lang: str):
        self.data = data
        self.lang = lang
        self.table = data.translations.get(lang, {})
        self._memo: dict[tuple[str, str], tuple[str, str]] = {}  # records are frozen

    def field(self, record: Record, keypath: tuple | str) -> tuple[str, str]:
        key = keypath if isinstance(keypath, str) else dotted(keypath)
        memo = (record.relpath, key)
        found = self._memo.get(memo)
        if found is None:
            found = self._memo[memo] = self._field(record, key)
        return found

    def _field(self, record: Record, key: str) -> tuple[str, str]:
        english = record.texts.get(key)
        if english is None:
            return "", "missing"
        if self.lang == "en":
            return english, "source"
        tr = self.table.get(record.relpath, {}).get(key)
        if tr is None:
            return english, "missing"
        return typeset(tr.text, self.lang), ("ok" if tr.source == digest(english) else "stale")

    def text(self, record: Record, keypath: tuple | str) -> str:
        return self.field(record, keypath)[0]

    def ui(self, key: str) -> str:
        return self.text(self.data.ui, (key,))

    def persona(self, pid: str) -> str:
        if pid in self.data.personas.data:
            return self.text(self.data.personas, (pid, "name"))
        return pid


def today_utc() -> _dt.date:
    return _dt.datetime.now(_dt.UTC).date()


def tree_leaves(node, kp=()):
    """Every leaf of a decision tree with its key path, in the tree's order (yes before no)."""
    if not isinstance(node, Mapping):
        return
    if "question" in node:
        yield from tree_leaves(node.get("if_yes"), kp + ("if_yes",))
        yield from tree_leaves(node.get("if_no"), kp + ("if_no",))
    else:
        yield kp, node
