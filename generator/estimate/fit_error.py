"""The error of the fitted engine: how far its figures are from the measurements, on the results
the constants were fitted on and on results the fit has not seen.

``accuracy``: per metric and runtime (and ``all``), the median and 90th percentile (nearest rank)
of |predicted / measured - 1| x 100, the count and the number of sources, on the results the
constants were fitted on (``in_sample``); and the same figures on results the fit has not seen
(``unseen``, leave-one-source-out): the constants are refitted without each source file
(``held_out_folds``: a publisher's files together once there are more than MAX_FOLDS files) and
its own results predicted with them. That is the band every estimate carries. The constants
themselves come from :mod:`.fitting`.
"""
from __future__ import annotations

import math

from generator.estimate.fitting import fit_constants, fit_memory, fit_speed, peak_inputs, predict, speed_point
from generator.estimate.relative_fit import REVISIONS_SOURCE, fit_relative, mode_of, relative_groups
from generator.estimate.speed import relative_training

METRICS = ("decode_tokens_per_s", "prefill_tokens_per_s", "weights_gib", "peak_memory_gib", "training_peak_memory_gib",
           "training_relative")


def percentiles(values) -> dict:
    """The median and 90th percentile (nearest rank) of absolute % errors, to a tenth."""
    v = sorted(values)
    n = len(v)
    if not n:
        return {"median_pct": None, "p90_pct": None}
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    p90 = v[max(0, math.ceil(0.9 * n) - 1)]
    return {"median_pct": round(med, 1), "p90_pct": round(p90, 1)}


def _errors(models, gpus, measurements, revisions, constants) -> list[tuple]:
    """(metric, runtime, publisher, abs % error, source file) of every measurement the engine can
    predict; the source file of the revisions' relative tables is ``REVISIONS_SOURCE``."""
    out = []
    for m in measurements:
        pred = predict(m, models, gpus, constants)
        if pred is None or pred <= 0:
            continue
        metric = m["metric"]
        if metric == "peak_memory_gib" and mode_of(m) != "inference":
            metric = "training_peak_memory_gib"
        out.append((metric, m.get("runtime") or "", m.get("publisher") or m.get("source"), abs(pred / m["value"] - 1) * 100,
                    source_of(m)))
    rel = constants.get("relative") or {}
    for g in relative_groups(measurements, revisions, gpus):
        ref = gpus[g["reference"]]
        for gid, v in sorted(g["values"].items()):
            if gid == g["reference"]:
                continue
            pred = relative_training(gpus[gid], ref, rel)
            if pred is not None:
                out.append(("training_relative", "all", g["source"], abs(pred / (v / g["values"][g["reference"]]) - 1) * 100,
                            _group_file(g)))
    return out


# ------------------------------------------------------------------ leave-one-source-out

# At most this many refits: past it, the files of one publisher are left out together (and past it
# in publishers, publishers share a fold), so that a hundred times the files does not cost a
# hundred times the refits, each over a hundred times the results.
MAX_FOLDS = 40


def source_of(m: dict) -> str:
    """The file of data/measurements a measured row comes from."""
    return m.get("source") or m.get("publisher") or ""


def _group_file(g: dict) -> str:
    """The file a relative-training group comes from (the revisions' tables count as one source)."""
    if g["source"] == REVISIONS_SOURCE:
        return REVISIONS_SOURCE
    return str(g.get("id") or "").split("/", 1)[0] or g["source"]


def held_out_folds(measurements, revisions=(), gpus: dict | None = None) -> dict[str, str]:
    """{source file: the fold it is left out with}: each file alone (the revisions' relative tables
    as one more), or, past MAX_FOLDS files, each publisher's files together (past MAX_FOLDS
    publishers, the publishers in name order dealt into MAX_FOLDS folds)."""
    publisher = {}
    for m in measurements:
        if m.get("value"):
            publisher.setdefault(source_of(m), m.get("publisher") or source_of(m))
    publisher.pop("", None)
    if revisions and relative_groups([], revisions, gpus or {}):
        publisher[REVISIONS_SOURCE] = REVISIONS_SOURCE
    if len(publisher) <= MAX_FOLDS:
        return {f: f for f in publisher}
    names = sorted(set(publisher.values()))
    if len(names) <= MAX_FOLDS:
        return dict(publisher)
    fold = {name: f"fold {i % MAX_FOLDS + 1}" for i, name in enumerate(names)}
    return {f: fold[p] for f, p in publisher.items()}


def prepare(models: dict, gpus: dict, measurements: list) -> tuple[list, list]:
    """The speed point and the peak-memory inputs of each measurement (None where it has none), in
    order: what every fold's refit reads of the results it keeps."""
    return ([speed_point(m, models, gpus) for m in measurements], [peak_inputs(m, models, gpus) for m in measurements])


def held_out_sources(models: dict, gpus: dict, measurements, revisions=()) -> list[str]:
    """The folds :func:`held_out_errors` is run for, sorted (see ``held_out_folds``)."""
    return sorted(set(held_out_folds(measurements, revisions, gpus).values()))


def held_out_errors(models: dict, gpus: dict, measurements, revisions, source: str, constants: dict | None = None,
                    prepared: tuple[list, list] | None = None) -> list:
    """[metric, runtime, abs % error] of every result of the fold ``source`` (a file, see
    ``held_out_folds``) the engine can predict, with the constants fitted on every other fold.
    Exact shortcuts: a part of the constants (speed, memory, relative training) the left-out fold
    gives no input to is the full fit's (``constants``), so a file of training results alone
    costs no speed fit; and of the speed constants only the keys the fold's results read (``*``,
    their runtimes, backends and kernels) are refitted, the others not being read by them.
    ``prepared``: the speed points and peak-memory inputs of ``measurements``, in their order (see
    :func:`prepare`), which every fold reads alike; computed here when not given."""
    measurements = list(measurements)
    folds = held_out_folds(measurements, revisions, gpus)
    files = {f for f, fold in folds.items() if fold == source}
    keep = [m for m in measurements if source_of(m) not in files]
    keep_revs = [] if REVISIONS_SOURCE in files else list(revisions)
    mine = [m for m in measurements if source_of(m) in files]
    if constants is None:
        c = fit_constants(models, gpus, keep, keep_revs)
    else:
        c = dict(constants)
        speed_pts, peak_pts = prepared or prepare(models, gpus, measurements)
        left_out = [source_of(m) in files for m in measurements]
        chains = {k for p, out in zip(speed_pts, left_out, strict=True) if out and p is not None for k in p["keys"]}
        if chains:
            # the left-out results read the constants of their own keys alone: those are refitted
            c["speed"] = fit_speed([p for p, out in zip(speed_pts, left_out, strict=True) if not out and p is not None],
                                   chains)
        if any(x is not None for x, out in zip(peak_pts, left_out, strict=True) if out):
            c["memory"] = fit_memory([x for x, out in zip(peak_pts, left_out, strict=True) if not out and x is not None])
        if REVISIONS_SOURCE in files or relative_groups(mine, (), gpus):
            c["relative"] = fit_relative(relative_groups(keep, keep_revs, gpus), gpus)
    # the rows of the fold itself (and, for the revisions, their tables) predicted with them
    errs = _errors(models, gpus, mine, revisions if REVISIONS_SOURCE in files else (), c)
    return [[e[0], e[1], round(e[3], 4)] for e in errs if e[4] in files]


def _band(values, sources) -> dict:
    return {**percentiles(values), "count": len(values), "sources": len(sources)}


def accuracy(models: dict, gpus: dict, measurements, revisions=(), constants: dict | None = None, held_out=None) -> dict:
    """{metric: {runtime or 'all': entry}}: each entry ``in_sample`` (the fit's error on the results
    it was fitted on: median_pct, p90_pct, count, sources) and ``unseen`` (leave-one-source-out:
    each source file's results predicted with the constants fitted on every other source; sources
    counts the files), and the older flat keys (median_pct, p90_pct, count, sources of
    ``in_sample``; loso_median_pct, loso_p90_pct of ``unseen``). ``held_out(source, make)``: a
    caller's cache of :func:`held_out_errors` for one source, ``make()`` computing it."""
    measurements = list(measurements)
    constants = constants or fit_constants(models, gpus, measurements, revisions)
    inside = _errors(models, gpus, measurements, revisions, constants)
    loso = []
    prepared = None
    for source in held_out_sources(models, gpus, measurements, revisions):
        def make(source=source):
            nonlocal prepared
            prepared = prepared or prepare(models, gpus, measurements)
            return held_out_errors(models, gpus, measurements, revisions, source, constants, prepared)
        loso.extend((e[0], e[1], source, e[2]) for e in (held_out(source, make) if held_out else make()))
    table: dict[str, dict] = {}
    for metric in METRICS:
        runtimes = sorted({e[1] for e in inside if e[0] == metric})
        if not runtimes:
            continue
        table[metric] = {}
        for rt in runtimes + (["all"] if "all" not in runtimes else []):
            mine = [e for e in inside if e[0] == metric and (rt == "all" or e[1] == rt)]
            theirs = [e for e in loso if e[0] == metric and (rt == "all" or e[1] == rt)]
            in_sample = _band([e[3] for e in mine], {e[2] for e in mine})
            unseen = _band([e[3] for e in theirs], {e[2] for e in theirs})
            table[metric][rt] = {**in_sample, "loso_median_pct": unseen["median_pct"], "loso_p90_pct": unseen["p90_pct"],
                                 "in_sample": in_sample, "unseen": unseen}
    return table
