"""The estimates of a dataset: the engine's input, the fitted table and its digest, the grid of
model x card estimates the pages print, and every measurement beside the engine's figure for it.

A mixin of :class:`generator.facts.derive.Derived`; what is reused between builds and in the
preview is kept in :mod:`generator.reuse` (grid cells, measured rows' estimates, the training
rows' estimates, the parts of the fit digest) and in ``build/cache/`` (the fitted table, by the
digest of everything it reads).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path

from generator import reuse
from generator.estimate import EstimateError, estimate, fitting, formats, published, reference_id
from generator.estimate.fit_error import held_out_sources
from generator.estimate.relative_fit import relative_groups, training_estimates, training_group
from generator.facts.engine_input import ENGINE_GPU_FIELDS, engine_dict, from_dataset
from generator.facts.folds import can_fork, fold_errors
from generator.facts.holdout import holdout_errors, holdout_rows
from generator.facts.support import runtime_cards

GRID_OPTIONS = {"weights": "q4_k_m", "runtime": "llama.cpp", "context": 4096}
# (weights, runtime) of a model page's memory table, and its contexts (those up to the model's longest)
MEMORY_FORMATS = (("q4_k_m", "llama.cpp"), ("q8_0", "llama.cpp"), ("bf16", "transformers"))
MEMORY_CONTEXTS = (4096, 32768, 131072)


def four_bit(weights: str) -> bool:
    """A format whose bulk (the experts where it keeps them apart) is stored in about 4 bits."""
    f = formats.WEIGHT_FORMATS[weights]
    return (f.get("experts") or f.get("base") or 16) <= 4.5


def memory_formats(model: dict) -> list[tuple[str, str]]:
    """(weights, runtime) of a model's memory table: the 4-bit GGUF, 8-bit GGUF and BF16, with the
    format the publisher ships first where it is not 16-bit. A 4-bit native format (gpt-oss's MXFP4,
    which llama.cpp keeps in its GGUF files) stands for the 4-bit row."""
    native = model.get("native_weights")
    if not native:
        return list(MEMORY_FORMATS)
    runtime = "llama.cpp" if native in formats.GGUF_RUNTIME_LOADS.get("llama.cpp", ()) else "vllm"
    return [(native, runtime)] + [f for f in MEMORY_FORMATS if not (four_bit(native) and f[0] == "q4_k_m")]


def memory_contexts(model: dict) -> tuple[int, ...]:
    return tuple(n for n in MEMORY_CONTEXTS if n <= model["max_context"]) or (model["max_context"],)


def _grid_estimate(model: dict, gpu: dict, table: dict) -> dict | None:
    try:
        return estimate(model, gpu, GRID_OPTIONS, table, advice=False)  # the pages print no shortfall of a cell
    except EstimateError:
        return None


def _memory_row(model: dict, ref: dict, weights: str, runtime: str, contexts, table: dict) -> list[float | None]:
    row = []
    for ctx in contexts:
        try:
            row.append(estimate(model, ref, {"weights": weights, "runtime": runtime, "context": ctx}, table)
                       ["memory"]["total_bytes"] / formats.GIB)
        except EstimateError:
            row.append(None)
    return row


class EstimateFacts:
    """The estimates of ``self.ds`` (see the module's docstring); ``self._before`` tells what the
    last load derived when only some records changed."""

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
    def holdout(self) -> dict:
        """The held-out check (:mod:`generator.facts.holdout`): {results, files, errors {metric:
        {runtime or 'all': entry}}} of the engine, under the constants fitted on the shipped
        measurements, against the files of benchmarks/holdout/."""
        rows = holdout_rows()
        b = self.bundle
        return {"results": len(rows), "files": len({r["source"] for r in rows}),
                "errors": holdout_errors(rows, b.models, b.gpus, self.estimates.get("constants") or {})}

    def _engine_views_kept(self, before: EstimateFacts, changed: dict[str, frozenset[str]]) -> bool:
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
                table[ident] = engine_dict(records[ident], ident)
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

    @functools.cached_property
    def runtime_cards(self) -> dict[str, list[str]]:
        """Runtime -> the cards some build of its software runs (:func:`generator.facts.support.runtime_cards`)."""
        return runtime_cards(self.ds)

    @functools.cached_property
    def grid_cards(self) -> frozenset[str] | None:
        """The cards some build of the grid's runtime (llama.cpp) runs (data/software.yaml), None
        where the data says nothing of it: a card outside it gets no grid estimate."""
        cards = self.runtime_cards.get(GRID_OPTIONS["runtime"])
        return None if cards is None else frozenset(cards)

    def grid_cell(self, mid: str, gid: str) -> dict | None:
        """The estimate for one model on one card, as ``grid`` holds it (None when it cannot be
        estimated, or the grid's runtime does not run on the card): a card's page reads its own
        column without the whole grid."""

        if self.grid_cards is not None and gid not in self.grid_cards:
            return None
        cell = (self.content_key("models", mid), self.content_key("gpus", gid), self.fit_digest)
        return reuse.GRID.get(cell, lambda: _grid_estimate(self.bundle.models[mid], self.bundle.gpus[gid], self.estimates))

    def memory_table(self, mid: str) -> list[tuple[str, str, list[float | None]]]:
        """[(weights, runtime, GiB at each of ``memory_contexts``)] of one model on the reference card
        (weights, KV cache and the runtime's workspace; None where the engine gives no estimate): a
        model page's memory table, the same in every language."""

        model = self.bundle.models[mid]
        ref = self.estimates.get("reference") or next(iter(self.bundle.gpus.values()))
        contexts = memory_contexts(model)
        key = (self.content_key("models", mid), _engine_view(ref, ENGINE_GPU_FIELDS), self.fit_digest)
        return reuse.MEMORY_ROWS.get(key, lambda: [(w, r, _memory_row(model, ref, w, r, contexts, self.estimates))
                                                   for w, r in memory_formats(model)])

    @functools.cached_property
    def memory_tables(self) -> dict[str, list]:
        """Every model's ``memory_table`` (computed before the languages render in parallel)."""
        return {mid: self.memory_table(mid) for mid in self.bundle.models}

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

    @functools.cached_property
    def fastest_fits(self) -> dict[str, list[tuple[str, dict]]]:
        """model id -> [(gpu id, grid estimate)] of the cards that hold it alone, fastest decode first
        (ties by id): what a model page's list of cards is chosen from."""
        out: dict[str, list[tuple[str, dict]]] = {}
        for (mid, gid), e in self.grid.items():
            if e["fits"]:
                out.setdefault(mid, []).append((gid, e))
        for rows in out.values():
            rows.sort(key=lambda ge: (-(ge[1]["decode_tokens_per_s"] or 0), ge[0]))
        return out

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
        index = self._row_indexes.get(key)
        if index is None:
            index = self._row_indexes[key] = _of_rows(("by", key), self.bundle.measurements,
                                                      lambda rows: _index_rows(rows, key))
        return index

    @functools.cached_property
    def _row_indexes(self) -> dict[str, dict[str, list[dict]]]:
        return {}

    @functools.cached_property
    def _training(self) -> dict:
        """The training rows' estimates: read from the rows, the cards the fit reads and its
        constants, so the same under the same fit digest."""

        b = self.bundle
        return reuse.TRAINING.get(self.fit_digest, lambda: training_estimates(
            relative_groups(b.measurements, (), b.gpus), b.gpus, self.estimates.get("constants") or {}))

    def _measured_row(self, m: dict) -> dict:

        group = training_group(m)
        if group:
            return _with_error(m, self._training.get((group, m["gpu"])))
        # an unchanged row (the same object) of an unchanged model and card under the same
        # constants has the same estimate: the preview's reload computes only what changed
        b = self.bundle
        return reuse.PREDICTED.of(
            m, lambda: _with_error(m, fitting.predict(m, b.models, b.gpus, self.estimates.get("constants") or {})),
            self.content_key("models", m.get("model")), self.content_key("gpus", m.get("gpu")), self.fit_digest)

    @functools.cached_property
    def measured_by_model(self) -> dict[str, list[dict]]:
        return _group(self.measured, "model")

    @functools.cached_property
    def measured_by_gpu(self) -> dict[str, list[dict]]:
        return _group(self.measured, "gpu")


def _index_rows(rows: list[dict], key: str) -> dict[str, list[dict]]:
    index: dict[str, list[dict]] = {}
    for m in rows:
        index.setdefault(m.get(key), []).append(m)
    return index


def _of_rows(name: tuple, rows: list[dict], make):
    """``make(rows)``, kept while the same row objects come again (a reload of unchanged
    measurement files gives the same rows, see generator.facts.engine_input): the preview's reload
    after a card's edit does not go through 97,000 rows (a hundred times the data) again."""
    return reuse.OF_ROWS.of_items(name, rows, lambda: make(rows))


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
    h.update(formats.TABLES_PATH.read_bytes())  # the engine's tables are part of its code
    return h.hexdigest()[:20]


def _dumps(value) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode("utf-8") + b"\n"


def _engine_view(gpu: dict, fields) -> bytes:
    return _dumps({k: v for k, v in gpu.items() if k in fields})


def _relative_view(rev: dict) -> bytes:
    return _dumps({k: rev.get(k) for k in ("id", "date", "relative_performance")})


def _part(key: tuple, records: dict, make, *args) -> bytes:
    """``make(*args)``, kept by the record ``key`` names in ``records`` (the same object next time
    gives the same bytes), computed every time for an entry with no record."""
    record = records.get(key)
    if record is None:
        return make(*args)
    return reuse.DIGEST_PARTS.of(record, lambda: make(*args), key)


def _rows_digest(rows: list[dict]) -> str:
    """Digest of the measured rows; the same row objects as last time (a reload of unchanged
    files, see ``estimate.data``) give the last digest without serializing them again."""
    return reuse.OF_ROWS.of_items("rows digest", rows, lambda: hashlib.sha256(
        json.dumps(rows, sort_keys=True, default=str, separators=(",", ":")).encode("utf-8")).hexdigest())


def _is_table(value) -> bool:
    """Whether a kept file holds what ``published`` gives (a truncated or foreign file does not)."""
    return (isinstance(value, dict) and isinstance(value.get("constants"), dict)
            and isinstance(value.get("errors"), dict) and "reference" in value)


def published_estimates(bundle, digest: str | None = None) -> dict:
    """The fitted constants, the error table and the reference GPU (see :mod:`generator.estimate`).

    Fitting reads every measurement; its result depends only on the data and the engine's code,
    so it is kept in ``build/cache/`` under the digest of both and reused by the next build. The
    leave-one-source-out errors (a fit per source left out, the costly part) are kept in
    :class:`reuse.Kept` by the same digest and the source (``held_out_of``)."""

    digest = digest or _digest(bundle)
    path = CACHE_DIR / f"estimate-{digest}.json"
    kept = reuse.read_json(path, _is_table)
    if kept is not None:
        return kept
    # the same JSON types and key order as a cached copy: a build is the same with or without it
    held_out = _held_out_kept()
    table = json.loads(json.dumps(_published(bundle, held_out, digest), sort_keys=True))
    held_out.save(keep_unused=False)
    reuse.write_json(path, table, sort_keys=True)  # a read-only tree still builds, only slower
    return table


def _published(bundle, held_out: reuse.Kept, digest: str) -> dict:
    """``published`` of the bundle, the folds it has not kept yet computed side by side first
    (:mod:`generator.facts.folds`) where the machine allows, else in turn inside it."""
    constants = fitting.fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    new = [s for s in held_out_sources(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
           if held_out.find(f"{digest}/{s}") is None]
    if can_fork(len(new)):
        for source, errors in fold_errors(bundle, constants, new).items():
            held_out.keep(f"{digest}/{source}", errors)
    return published(bundle, held_out=held_out_of(held_out, digest), constants=constants)


HELD_OUT_FILE = "held-out-errors.json"
HELD_OUT_KEY = "held-out errors 1: [metric, runtime, abs % error] per left-out source"


def _held_out_kept() -> reuse.Kept:
    return reuse.Kept(CACHE_DIR / HELD_OUT_FILE, HELD_OUT_KEY)


def held_out_of(kept: reuse.Kept, digest: str):
    """The cache ``fit_error.accuracy`` takes for the leave-one-source-out errors: one answer per
    source, kept in ``kept`` under the fit digest and the source, so computed once per change of
    what the fit reads."""
    def of(source: str, make) -> list:
        return kept.get(f"{digest}/{source}", lambda _question: make())
    return of
