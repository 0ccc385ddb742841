"""The derive stage: every fact computed from the data, once per dataset, in no language.

validate -> **derive** -> render. Templates, charts, the JSON API and the client data file read
what is here; nothing below is computed a second time elsewhere, and the browser computes only
what depends on the reader's input. ``derive(ds)`` is memoised on the dataset (records are
frozen, so the result cannot go stale).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import hashlib
import json
import operator
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from generator.data.dataset import Dataset, Record
from generator.data.loader import changes
from generator.estimate import EstimateError, estimate, published, reference_id
from generator.estimate.fitting import predict
from generator.estimate.relative_fit import relative_groups, training_estimates, training_group
from generator.facts.diff import PersonaState, advice_states, diff_revisions
from generator.facts.engine_input import ENGINE_GPU_FIELDS, _engine_dict, from_dataset
from generator.facts.history import AdviceMatrix, GpuMention, advice_matrix, derived, history_index
from generator.facts.picker import feature_value, picker_views, view_price
from generator.facts.prices import Price, _RevisionPrices, observations
from generator.facts.results import gpus_result, revisions_result
from generator.facts.today import client_today, today_rows

GRID_OPTIONS = {"weights": "q4_k_m", "runtime": "llama.cpp", "context": 4096}


def build_date() -> _dt.date:
    """The date the site is built on: ``SOURCE_DATE_EPOCH`` keeps builds identical."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return _dt.datetime.fromtimestamp(int(epoch), _dt.UTC).date()
    return _dt.datetime.now(_dt.UTC).date()


def age(since: _dt.date, until: _dt.date) -> tuple[int, int]:
    """Whole years and months from ``since`` to ``until`` (never negative)."""
    months = (until.year - since.year) * 12 + (until.month - since.month) - (until.day < since.day)
    months = max(months, 0)
    return months // 12, months % 12


@dataclass(frozen=True)
class AdviceAge:
    newest: str  # the date of the newest revision
    built: str  # the build date
    years: int
    months: int


class Derived:
    """Every computed fact of one dataset."""

    def __init__(self, ds: Dataset):
        self.ds = ds

    @functools.cached_property
    def states(self) -> dict[str, dict[str, PersonaState]]:
        """revision date -> persona -> the advice in force (source or derived from the update log)."""
        return _of_revisions("states", self.ds.revisions, lambda: advice_states(self.ds))

    def diff(self, a: str, b: str):
        """What changed from revision ``a`` to revision ``b`` (:func:`generator.facts.diff.diff_revisions`)."""

        return diff_revisions(self.ds, a, b, self.states)

    @functools.cached_property
    def trees(self) -> dict[str, Record | None]:
        """revision date -> the revision whose decision tree is in force then (its own, or that of
        the last full revision before it), or None when the advice is a persona list."""
        out, last_full = {}, None
        for rev in self.ds.revisions:
            if rev["kind"] == "full":
                last_full = rev
            out[rev.id] = last_full if last_full is not None and last_full.get("decision_tree") else None
        return out

    @functools.cached_property
    def tree_revision(self) -> Record | None:
        """The newest revision that gives its advice as a decision tree."""
        trees = [r for r in self.ds.revisions if r.get("decision_tree")]
        return trees[-1] if trees else None

    @functools.cached_property
    def matrix(self) -> AdviceMatrix:
        """persona x revision: the list in force, or the flowchart leaf that answers the persona."""
        return advice_matrix(self.ds, self.states, self.trees)

    @functools.cached_property
    def history(self) -> dict[str, list[GpuMention]]:
        return _of_revisions("history", self.ds.revisions, lambda: history_index(self.ds, self.states))

    @functools.cached_property
    def figures(self) -> dict[str, dict]:
        """gpu id -> figures computed from its specs (per dollar, per watt), each computed when
        first read (a card's page in the preview reads its own)."""
        return _PerCard(derived, self.ds.gpus)

    @functools.cached_property
    def revision_prices(self) -> dict[str, Mapping[str, dict[str, Price]]]:
        """revision date -> gpu id -> basis (new, used, quoted) -> the price under the one rule
        (a card with no price at all is absent). Each card's entry is worked out when first read:
        a page reads a few cards of a revision, and every card of every revision is 20 million
        entries at a hundred times the data."""
        return {rev.id: _RevisionPrices(rev, self.ds.gpus) for rev in self.ds.revisions}

    @functools.cached_property
    def advice_age(self) -> AdviceAge:
        newest = self.ds.latest.id
        built = build_date()
        years, months = age(_dt.date.fromisoformat(newest), built)
        return AdviceAge(newest, built.isoformat(), years, months)

    def _before(self, *attrs: str) -> tuple[Derived, dict[str, frozenset[str]]] | None:
        """(what was derived from the dataset the last load made, the records changed since)
        when only records of ``attrs`` changed (see :func:`generator.data.loader.changes`)."""

        known = changes(self.ds)
        if known is None or not set(known[1]) <= set(attrs):
            return None
        return derive(known[0]), known[1]

    @functools.cached_property
    def fit_digest(self) -> str:
        """Of everything the fitted table depends on (see ``_digest``). After a reload in which
        only cards or models changed, and none in what the engine reads of it, the last digest
        (the preview's step: no pass over every card)."""
        before = self._before("gpus", "models")
        digest = before[0].__dict__.get("fit_digest") if before else None
        if digest is not None and self._engine_views_kept(before[0], before[1]):
            return digest
        ds = self.ds
        records = {("gpu", gid): rec for gid, rec in ds.gpus.items()}
        records.update((("model", mid), rec) for mid, rec in ds.models.items())
        records.update((("revision", rec.id), rec) for rec in ds.revisions)
        return _digest(self.bundle, records)

    @functools.cached_property
    def estimates(self) -> dict:
        """Fitted constants, measured error per metric and runtime, and the reference GPU."""
        return published_estimates(self.bundle, self.fit_digest)

    @functools.cached_property
    def today(self):
        """Today's cards (see :mod:`generator.facts.today`)."""

        return today_rows(self.ds, self)

    @functools.cached_property
    def picker_views(self) -> dict[str, dict]:
        """revision date -> what the picker applies for it (see :mod:`generator.facts.picker`)."""

        history = {gid: [[o.date.isoformat(), o.kind, o.usd] for o in observations(self.ds, gid) if o.kind in ("street", "used")]
                   for gid in self.ds.prices}
        return picker_views({"gpus": gpus_result(self.ds), "revisions": revisions_result(self.ds, self.states),
                             "price_history": history})

    @functools.cached_property
    def story(self) -> dict[str, list[dict]]:
        """The story of value over time, per figure ("throughput": 16-bit matrix TFLOPS, FP32 on
        cards without tensor units, per 1,000 USD; "memory": GB per 1,000 USD): for each revision,
        the best card among those it advised, at a price known then (its own quote, used where it
        advised used, else the launch price; never a later observation); then "today": the best
        of today's cards at dated prices, which for throughput is the card the estimation model
        ranks first for training per dollar. Each point: date, gpu, usd, source, value, today."""

        gpus = {g["id"]: g for g in gpus_result(self.ds)}
        out: dict[str, list[dict]] = {"throughput": [], "memory": []}
        figure = {"throughput": lambda g: feature_value(g, "tensor-cores"), "memory": lambda g: g.get("memory_gb")}
        for date, view in self.picker_views.items():
            # prices known at the time only: the revision's own quotes, else launch prices
            view = {**view, "quotes": {gid: {b: q for b, q in e.items() if q[1] != "observed"}
                                       for gid, e in view["quotes"].items()}}
            advised = {}
            for items in view["advised"].values():
                for a in items:
                    advised.setdefault(a["gpu"], a)
            for key, get in figure.items():
                best = None
                for gid, a in sorted(advised.items()):
                    g = gpus.get(gid)
                    price = view_price(g, view, "used" if a["used"] else "new") if g else None
                    amount = get(g) if g else None
                    if not price or not amount:
                        continue
                    value = amount / price["usd"] * 1000
                    if best is None or value > best["value"]:
                        best = {"date": date, "gpu": gid, "usd": price["usd"], "source": price["source"],
                                "value": round(value, 3), "today": False}
                if best:
                    out[key].append(best)
        rows = [r for r in self.today if r.buy_usd]
        ranked = max(rows, key=lambda r: (r.per_dollar.get("training") or 0, r.gpu), default=None)
        newest = self.today_client["newest"]
        if ranked and ranked.per_dollar.get("training") and figure["throughput"](gpus[ranked.gpu]):
            out["throughput"].append({"date": newest, "gpu": ranked.gpu, "usd": ranked.buy_usd, "source": ranked.buy_kind,
                                      "value": round(figure["throughput"](gpus[ranked.gpu]) / ranked.buy_usd * 1000, 3),
                                      "today": True})
        best_mem = max(rows, key=lambda r: (r.memory_gb / r.buy_usd, r.gpu), default=None)
        if best_mem:
            out["memory"].append({"date": newest, "gpu": best_mem.gpu, "usd": best_mem.buy_usd, "source": best_mem.buy_kind,
                                  "value": round(best_mem.memory_gb / best_mem.buy_usd * 1000, 3), "today": True})
        return out

    @functools.cached_property
    def today_client(self) -> dict:
        """Today's cards as the picker's "today" mode reads them."""

        return client_today(self.ds, self)

    def _engine_views_kept(self, before: Derived, changed: dict[str, frozenset[str]]) -> bool:
        """Whether every changed card and model reads the same to the engine as before."""

        old, new = before.bundle, self.bundle
        return (all(_dumps(old.models.get(mid)) == _dumps(new.models.get(mid)) for mid in changed.get("models", ()))
                and all(_engine_view(old.gpus.get(gid) or {}, ENGINE_GPU_FIELDS)
                        == _engine_view(new.gpus.get(gid) or {}, ENGINE_GPU_FIELDS) for gid in changed.get("gpus", ())))

    @functools.cached_property
    def bundle(self):
        """The data as plain dicts, as the estimation engine takes them. After a reload in which
        only cards or models changed: the last bundle with their dicts replaced."""

        before = self._before("gpus", "models")
        old = before[0].__dict__.get("bundle") if before else None
        if old is None:
            return from_dataset(self.ds)
        b = dataclasses.replace(old, gpus=dict(old.gpus), models=dict(old.models))
        for attr, table in (("gpus", b.gpus), ("models", b.models)):
            records = getattr(self.ds, attr)
            for ident in before[1].get(attr, ()):
                table[ident] = _engine_dict(records[ident], ident)
        return b

    @functools.cached_property
    def _content_keys(self) -> dict[str, dict]:
        return {"gpus": {}, "models": {}}

    def content_key(self, kind: str, ident: str | None) -> bytes | None:
        """The content of a model or card (``kind`` "models" or "gpus") as the engine reads it (of
        a card, the fields of ``ENGINE_GPU_FIELDS``), serialized, None for an unknown id: what
        the caches of computed estimates are keyed by, with the fit digest, so that editing a
        card's power or price computes nothing again. Computed for the ids asked about only (a
        card's page in the preview asks about its own)."""

        memo = self._content_keys[kind]
        if ident not in memo:
            item = (self.bundle.gpus if kind == "gpus" else self.bundle.models).get(ident)
            memo[ident] = (None if item is None else _engine_view(item, ENGINE_GPU_FIELDS) if kind == "gpus"
                           else _dumps(item))
        return memo[ident]

    def grid_cell(self, mid: str, gid: str) -> dict | None:
        """The estimate for one model on one card, as ``grid`` holds it (None when it cannot be
        estimated): a card's page reads its own column without the whole grid."""

        cell = (self.content_key("models", mid), self.content_key("gpus", gid), self.fit_digest)
        if cell not in _GRID_CELLS:
            if len(_GRID_CELLS) > _GRID_CELLS_MAX:
                _GRID_CELLS.clear()
            try:
                _GRID_CELLS[cell] = estimate(self.bundle.models[mid], self.bundle.gpus[gid], GRID_OPTIONS, self.estimates)
            except EstimateError:
                _GRID_CELLS[cell] = None
        return _GRID_CELLS[cell]

    @functools.cached_property
    def grid(self) -> dict[tuple[str, str], dict]:
        """(model id, gpu id) -> the estimate for one card, 4-bit GGUF (Q4_K_M) in llama.cpp at
        a 4,096-token context: what model and GPU pages print."""
        out = {}
        for mid in self.bundle.models:
            for gid in self.bundle.gpus:
                if (e := self.grid_cell(mid, gid)) is not None:
                    out[mid, gid] = e
        return out

    def warm(self) -> Derived:
        """Compute what every language needs before the languages render in parallel processes
        (forked, they inherit it instead of each computing it again)."""
        for name in ("states", "trees", "history", "figures", "revision_prices", "advice_age", "estimates",
                     "today", "grid", "measured", "picker_views", "story", "today_client"):
            getattr(self, name)
        self.figures.complete()
        return self

    @functools.cached_property
    def measured(self) -> list[dict]:
        """Every measurement (flattened) with the engine's figure for its conditions and the error."""
        return [self._measured_row(m) for m in self.bundle.measurements]

    def measured_where(self, key: str, value: str) -> list[dict]:
        """The measurements whose ``key`` (gpu or model) is ``value``, as ``measured`` gives them;
        computed for those rows alone when the whole list was not needed yet (the preview's page)."""
        if "measured" in self.__dict__:
            return (self.measured_by_gpu if key == "gpu" else self.measured_by_model).get(value, [])
        return [self._measured_row(m) for m in self._rows_by(key).get(value, ())]

    def _rows_by(self, key: str) -> dict[str, list[dict]]:
        """The measurements by their ``key``, in their order: one pass over them, then each page's
        rows are found without reading the others (a build of every page in one process would
        otherwise read every measurement for each page)."""
        kept = self.__dict__.setdefault("_rows_index", {})
        if key not in kept:
            kept[key] = _of_rows(("by", key), self.bundle.measurements, lambda rows: _index_rows(rows, key))
        return kept[key]

    @functools.cached_property
    def _training(self) -> dict:
        """The training rows' estimates: read from the rows, the cards the fit reads and its
        constants, so the same under the same fit digest."""

        training = _TRAINING.get(self.fit_digest)
        if training is None:
            b = self.bundle
            training = training_estimates(relative_groups(b.measurements, (), b.gpus), b.gpus,
                                          self.estimates.get("constants") or {})
            _TRAINING.clear()
            _TRAINING[self.fit_digest] = training
        return training

    def _measured_row(self, m: dict) -> dict:

        group = training_group(m)
        if group:
            return _with_error(m, self._training.get((group, m["gpu"])))
        # an unchanged row (the same object) of an unchanged model and card under the same
        # constants has the same estimate: the preview's reload computes only what changed
        b = self.bundle
        cell = (id(m), self.content_key("models", m.get("model")), self.content_key("gpus", m.get("gpu")), self.fit_digest)
        hit = _PREDICTED.get(cell)
        if hit is None or hit[0] is not m:
            if len(_PREDICTED) > _PREDICTED_MAX:
                _PREDICTED.clear()
            hit = _PREDICTED[cell] = (m, _with_error(m, predict(m, b.models, b.gpus, self.estimates.get("constants") or {})))
        return hit[1]

    @functools.cached_property
    def measured_by_model(self) -> dict[str, list[dict]]:
        return _group(self.measured, "model")

    @functools.cached_property
    def measured_by_gpu(self) -> dict[str, list[dict]]:
        return _group(self.measured, "gpu")


class _PerCard(dict):
    """gpu id -> ``make(card)``, computed when first read; an unknown id is a KeyError."""

    def __init__(self, make, cards):
        super().__init__()
        self._make, self._cards = make, cards

    def __missing__(self, gid):
        if gid not in self._cards:
            raise KeyError(gid)
        value = self[gid] = self._make(self._cards[gid])
        return value

    def complete(self) -> _PerCard:
        for gid in self._cards:
            self[gid]
        return self


def _index_rows(rows: list[dict], key: str) -> dict[str, list[dict]]:
    index: dict[str, list[dict]] = {}
    for m in rows:
        index.setdefault(m.get(key), []).append(m)
    return index


# What is computed from the measured rows alone, by the row objects it was computed from: a reload
# of unchanged measurement files gives the same rows (generator.facts.engine_input), so the preview's
# reload after a card's edit does not go through 97,000 rows (a hundred times the data) again.
_OF_ROWS: dict[tuple, tuple[tuple, object, list]] = {}


def _of_rows(name: tuple, rows: list[dict], make):
    return _kept_by_items(_OF_ROWS, name, rows, lambda: make(rows))


def _kept_by_items(store: dict, name, items, make):
    """``make()``, or the answer kept in ``store`` under ``name`` when it was made from the same
    item objects, in the same order (they are kept alive with it, so no identity is reused)."""
    last = store.get(name)
    if last is not None and len(last[0]) == len(items) and (last[2] is items or all(map(operator.is_, last[0], items))):
        return last[1]  # the same list (lists of records and rows are not modified once made), or the same items
    value = make()
    store[name] = (tuple(items), value, items)
    return value


def _with_error(m: dict, est: float | None) -> dict:
    """A measured row with the engine's figure for it and the error in percent."""
    err = round((est - m["value"]) / m["value"] * 100, 1) if est else None
    return {**m, "estimate": est, "error_pct": err}


def _group(items: list[dict], key: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for item in items:
        if item.get(key) is not None:
            out.setdefault(item[key], []).append(item)
    return out


# Grid cells by the content of their model, card and fitted table: a long-running process (the
# preview of ``serve``) computes again only the cells of what changed. Cells are never modified.
# Bounded above the grid of a hundred times the data (35 models x 11,600 cards: 406,000 cells),
# which would otherwise be computed again whole on every background step.
_GRID_CELLS: dict[tuple[bytes | None, bytes | None, str], dict | None] = {}
_GRID_CELLS_MAX = 1 << 20
# Measured rows with their estimates, by (row identity, model, card, table); the row is kept to
# compare (and so its identity is not reused while the entry lives).
_PREDICTED: dict[tuple[int, bytes | None, bytes | None, str], tuple[dict, dict]] = {}
_PREDICTED_MAX = 1 << 19
# The training rows' estimates, of the last fit digest only.
_TRAINING: dict[str, dict] = {}


# What is computed from the revisions alone, by the revision records it was computed from: a
# reload that gives the same record objects (no revision file changed: generator.data.loader keeps
# them) gets the last answer without reading every revision again (the preview's open page reads
# a card's history; 1,800 revisions at a hundred times the data). Answers are never modified.
_OF_REVISIONS: dict[str, tuple[tuple, object, list]] = {}


def _of_revisions(name: str, revisions: list[Record], make):
    return _kept_by_items(_OF_REVISIONS, name, revisions, make)


def derive(ds: Dataset) -> Derived:
    found = ds.__dict__.get("_derived")
    if found is None:
        found = ds.__dict__["_derived"] = Derived(ds)
    return found


# -- estimates: fitted once per dataset; the fit is cached on disk by the digest of its inputs

CACHE_DIR = Path(__file__).resolve().parents[2] / "build" / "cache"


def _digest(bundle, records: dict | None = None) -> str:
    """Of the fit's inputs: the data it reads (of the cards, the figures the engine reads; of the
    revisions, their relative-performance tables) and the engine's own source code. Editing a
    note, a source, a price, a revision's prose or an unmeasured card's figures does not fit the
    constants again. ``records``: ("gpu" | "model" | "revision", id) -> the record each entry of
    ``bundle`` was made from; an entry of a record seen before (the same object: a reload of an
    unchanged file) is not serialized again."""

    records = records or {}
    h = hashlib.sha256()
    revisions = bundle.revisions
    # The fit reads the figures of the cards that were measured or appear in a relative table,
    # and of the reference card; of the others, only that they exist.
    used = set(_of_rows(("gpus",), bundle.measurements, lambda rows: frozenset(m.get("gpu") for m in rows)))
    used.add(reference_id(bundle))
    used |= {g for rev in revisions for table in rev.get("relative_performance") or () for g in table.get("values") or ()}
    for mid in sorted(bundle.models):
        h.update(_part(("model", mid), records, _dumps, bundle.models[mid]))
    for gid in sorted(bundle.gpus):
        gpu = bundle.gpus[gid]
        h.update(_part(("gpu", gid), records, _engine_view, gpu, ENGINE_GPU_FIELDS) if gid in used else
                 f"{gid}:null\n".encode())
    h.update(_rows_digest(bundle.measurements).encode())
    for rev in revisions:
        h.update(_part(("revision", rev.get("id")), records, _relative_view, rev))
    for src in sorted((Path(__file__).resolve().parents[1] / "estimate").glob("*.py")):
        h.update(src.read_bytes())
    return h.hexdigest()[:20]


def _dumps(value) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode("utf-8") + b"\n"


def _engine_view(gpu: dict, fields) -> bytes:
    return _dumps({k: v for k, v in gpu.items() if k in fields})


def _relative_view(rev: dict) -> bytes:
    return _dumps({k: rev.get(k) for k in ("id", "date", "relative_performance")})


_PARTS: dict[tuple, tuple[object, bytes]] = {}


def _part(key: tuple, records: dict, make, *args) -> bytes:
    """``make(*args)``, kept by the record ``key`` names in ``records`` (the same object next time
    gives the same bytes), computed every time for an entry with no record."""
    record = records.get(key)
    if record is None:
        return make(*args)
    hit = _PARTS.get(key)
    if hit is None or hit[0] is not record:
        if len(_PARTS) > 500_000:
            _PARTS.clear()
        hit = _PARTS[key] = (record, make(*args))
    return hit[1]


_ROWS_DIGEST: dict[str, tuple] = {}


def _rows_digest(rows: list[dict]) -> str:
    """Digest of the measured rows; the same row objects as last time (a reload of unchanged
    files, see ``estimate.data``) give the last digest without serializing them again."""
    return _kept_by_items(_ROWS_DIGEST, "rows", rows, lambda: hashlib.sha256(
        json.dumps(rows, sort_keys=True, default=str, separators=(",", ":")).encode("utf-8")).hexdigest())


def published_estimates(bundle, digest: str | None = None) -> dict:
    """The fitted constants, the error table and the reference GPU (see :mod:`generator.estimate`).

    Fitting reads every measurement; its result depends only on the data and the engine's code,
    so it is kept in ``build/cache/`` under the digest of both and reused by the next build."""

    path = CACHE_DIR / f"estimate-{digest or _digest(bundle)}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    # the same JSON types and key order as a cached copy: a build is the same with or without it
    table = json.loads(json.dumps(published(bundle), sort_keys=True))
    try:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp-{os.getpid()}")
        tmp.write_text(json.dumps(table, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only tree still builds, only slower
    return table
