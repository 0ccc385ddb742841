"""Relative training throughput: the groups of results that differ only by GPU, and the fit of
its exponents.

Exponents a (dense matrix TFLOPS), b (bandwidth), d (memory size) and, when every GPU gives
``l2_cache_mb``, c (cache) of log(throughput) = group + a log T + b log B + d log M (+ c log C),
by least squares after removing each group's mean (a group is one relative-performance table of a
revision, or one set of training results of one source that differ only by GPU: the same model,
format, mode, context and batch for training_tokens_per_s, the same workload for
training_throughput, whose batch the publisher may size by each card's memory). A negative
exponent is set to 0 and the others refitted.
"""
from __future__ import annotations

import math

from generator.estimate.speed import DEFAULT_RELATIVE, relative_training, training_features


def mode_of(m: dict) -> str:
    """A measurement's mode: its ``mode`` field; a training metric without one trains in full."""
    if m.get("mode"):
        return m["mode"]
    return "full" if m.get("metric") in ("training_tokens_per_s", "training_throughput") else "inference"


# The revisions' relative-performance tables are one author's advice over the years: one source,
# left out together when the constants are refitted without each source.
REVISIONS_SOURCE = "the advice's revisions"


def relative_groups(measurements, revisions, gpus: dict) -> list[dict]:
    """Groups of relative training throughput: {source, reference, values {gpu: value}}."""
    groups = []
    for rev in revisions:
        for i, table in enumerate(rev.get("relative_performance") or []):
            vals = {g: float(v) for g, v in (table.get("values") or {}).items() if g in gpus and v}
            ref = table.get("reference")
            if ref in vals and len(vals) >= 2:
                groups.append({"source": REVISIONS_SOURCE, "id": f"{rev.get('id')}#{i}",
                               "reference": ref, "values": vals, "workload": table.get("workload")})
    sets: dict[str, dict] = {}
    publishers: dict[str, str] = {}
    for m in measurements:
        publishers.setdefault(m.get("source"), m.get("publisher"))
        key = training_group(m)
        if key is not None and m.get("gpu") in gpus and m.get("value"):
            sets.setdefault(key, {})[m["gpu"]] = float(m["value"])
    for key, vals in sorted(sets.items()):
        if len(vals) >= 2:
            ref = sorted(vals, key=lambda g: (-vals[g], g))[0]
            source = key.split("/", 1)[0]
            pub = publishers.get(source) or source
            groups.append({"source": pub, "id": key, "reference": ref, "values": vals, "workload": "training"})
    return groups


def training_group(m: dict) -> str | None:
    """The group a training-throughput result belongs to (results that differ only by GPU)."""
    if m.get("metric") == "training_throughput":
        key = (m.get("source"), m.get("workload"), mode_of(m), m.get("gpus"))
    elif m.get("metric") == "training_tokens_per_s":
        key = (m.get("source"), m.get("model"), m.get("weights"), mode_of(m), m.get("context"), m.get("batch"),
               m.get("gpus"))
    else:
        return None
    return "/".join(str(k) for k in key)


def training_estimates(groups: list[dict], gpus: dict, constants: dict) -> dict[tuple[str, str], float]:
    """{(group id, gpu): the group reference's measured value times the engine's relative figure},
    for every member but the reference (its figure would be its own measurement)."""
    rel = constants.get("relative") or {}
    out = {}
    for g in groups:
        ref = g["reference"]
        for gid in g["values"]:
            if gid != ref:
                r = relative_training(gpus[gid], gpus[ref], rel)
                if r is not None:
                    out[g["id"], gid] = g["values"][ref] * r
    return out


def _solve(matrix, rhs):
    n = len(rhs)
    a = [list(row) + [r] for row, r in zip(matrix, rhs, strict=False)]
    for i in range(n):
        piv = max(range(i, n), key=lambda r: abs(a[r][i]))
        if abs(a[piv][i]) < 1e-12:
            return None
        a[i], a[piv] = a[piv], a[i]
        for r in range(n):
            if r != i:
                f = a[r][i] / a[i][i]
                a[r] = [x - f * y for x, y in zip(a[r], a[i], strict=False)]
    return [a[i][n] / a[i][i] for i in range(n)]


def fit_relative(groups, gpus: dict) -> dict:
    rows = []
    use_cache = use_memory = True
    for g in groups:
        feats = {gid: training_features(gpus[gid]) for gid in g["values"]}
        feats = {gid: f for gid, f in feats.items() if None not in (f[0], f[1])}
        if len(feats) < 2:
            continue
        use_cache = use_cache and all(f[2] is not None for f in feats.values())
        use_memory = use_memory and all(f[3] is not None for f in feats.values())
        rows.append([(math.log(g["values"][gid]), f) for gid, f in sorted(feats.items())])
    if not rows:
        return dict(DEFAULT_RELATIVE)
    names = ["a", "b"] + (["c"] if use_cache else []) + (["d"] if use_memory else [])
    col = [{"a": 0, "b": 1, "c": 2, "d": 3}[nm] for nm in names]  # each name's feature
    fixed: dict[str, float] = {}
    for _ in range(len(names)):
        free = [i for i, nm in enumerate(names) if nm not in fixed]
        xs, ys = [], []
        for grp in rows:
            my = sum(y for y, _ in grp) / len(grp)
            mf = [sum(f[c] for _, f in grp) / len(grp) for c in col]
            for y, f in grp:
                d = [f[c] - m for c, m in zip(col, mf, strict=True)]
                xs.append([d[i] for i in free])
                ys.append(y - my - sum(fixed[names[i]] * d[i] for i in range(len(names)) if names[i] in fixed))
        mat = [[sum(x[i] * x[j] for x in xs) for j in range(len(free))] for i in range(len(free))]
        vec = [sum(x[i] * y for x, y in zip(xs, ys, strict=False)) for i in range(len(free))]
        sol = _solve(mat, vec) if free else []
        if sol is None:
            sol = [0.5] * len(free)
        coef = dict(fixed)
        coef.update({names[i]: v for i, v in zip(free, sol, strict=False)})
        negative = [nm for nm in names if nm not in fixed and coef[nm] < 0]
        if not negative:
            break
        fixed[min(negative, key=lambda nm: coef[nm])] = 0.0
    out = {k: round(coef.get(k, 0.0), 4) for k in DEFAULT_RELATIVE}
    # the makers whose cards the fit saw: the coefficients say nothing of another maker's software
    out["vendors"] = sorted({gpus[gid].get("vendor") for g in groups for gid in g["values"]} - {None})
    return out
