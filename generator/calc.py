"""The calculators' formulas in Python, for numbers printed on generated pages.

This module is the twin of ``docs/assets/js/calc/formulas.mjs``: the same parsing, validation
and formulas, function for function, so a page built here and a calculator run in the browser
give the same numbers. Both are tested against ``tests/fixtures/calculators.json``.
Results are dicts with the same keys as the JavaScript objects.
"""
from __future__ import annotations

import math
import re

GIB = 1024 ** 3
MIB = 1024 ** 2

# ------------------------------------------------------------------ parsing and validation

_SPACES = re.compile(r"[ \t\n\r\u00a0\u2009\u202f_]")
_NUMBER = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_GROUPING = re.compile(r",(?=[0-9]{3}(?![0-9]))")
_LIST_SPLIT = re.compile(r"[\s,;x×*]+")


def normalize_number(raw, lang: str) -> str:
    """Text as typed -> plain "123.45" form. French takes a decimal comma; elsewhere a comma groups thousands."""
    t = _SPACES.sub("", "" if raw is None else str(raw).strip())
    if lang == "fr":
        if "." not in t and t.count(",") == 1:
            t = t.replace(",", ".")
    else:
        t = _GROUPING.sub("", t)
    return t


def _fail(key: str, params: dict | None = None) -> dict:
    return {"ok": False, "error": {"key": key, "params": params or {}}}


def _num(value: float):
    """Floats that are whole numbers become ints, as in JavaScript where 1e6 and 1000000 are one value."""
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53 else value


def parse_field(raw, spec: dict, lang: str) -> dict:
    text = normalize_number(raw, lang)
    if text == "":
        return {"ok": True, "value": None} if spec.get("optional") else _fail("calc.err.required")
    if not _NUMBER.match(text):
        return _fail("calc.err.number")
    value = float(text)
    if not math.isfinite(value):
        return _fail("calc.err.max", {"max": spec["max"]})
    if spec.get("integer") and not value.is_integer():
        return _fail("calc.err.integer")
    lo = spec.get("min", 0)
    below = value <= lo if spec.get("minExclusive") else value < lo
    if below:
        if lo == 0:
            return _fail("calc.err.positive" if spec.get("minExclusive") else "calc.err.negative")
        if lo == 1 and spec.get("integer") and value <= 0:
            return _fail("calc.err.positive")
        return _fail("calc.err.min", {"min": lo})
    if value > spec["max"]:
        return _fail("calc.err.max", {"max": spec["max"]})
    return {"ok": True, "value": _num(value)}


def parse_choice(raw, spec: dict) -> dict:
    value = "" if raw is None else str(raw).strip()
    if value == "":
        return _fail("calc.err.required")
    return {"ok": True, "value": value} if value in spec["choices"] else _fail("calc.err.choice")


def parse_int_list(raw, spec: dict) -> dict:
    text = "" if raw is None else str(raw).strip()
    if text == "":
        return _fail("calc.err.required")
    items = [s for s in _LIST_SPLIT.split(text) if s != ""]
    if not items:
        return _fail("calc.err.required")
    values = []
    for item in items:
        if not re.fullmatch(r"[0-9]+", item):
            return _fail("calc.err.list_item", {"item": item[:20]})
        v = int(item)
        if v < spec["min"]:
            return _fail("calc.err.list_min", {"min": spec["min"]})
        if v > spec["max"]:
            return _fail("calc.err.list_max", {"max": spec["max"]})
        values.append(v)
    if len(values) < spec["minItems"]:
        return _fail("calc.err.list_short", {"min": spec["minItems"]})
    if len(values) > spec["maxItems"]:
        return _fail("calc.err.list_long", {"max": spec["maxItems"]})
    return {"ok": True, "value": values}


def _parse_all(raw: dict, specs: dict, lang: str) -> tuple[dict, dict]:
    values, errors = {}, {}
    for name, spec in specs.items():
        if "choices" in spec:
            r = parse_choice(raw.get(name), spec)
        elif spec.get("list"):
            r = parse_int_list(raw.get(name), spec)
        else:
            r = parse_field(raw.get(name), spec, lang)
        if r["ok"]:
            values[name] = r["value"]
        else:
            errors[name] = r["error"]
    return values, errors


# ------------------------------------------------------------------ 1. dense networks (2015)

DENSE_FIELDS = {
    "layers": {"list": True, "min": 1, "max": 1e6, "minItems": 2, "maxItems": 200},
    "batch": {"integer": True, "min": 1, "max": 1e6},
}


def dense_memory(layers: list[int], batch: int) -> dict:
    """12 bytes per number (the 2015 article): memory = 12 × (Σ weight matrices + batch × Σ widths) bytes."""
    terms = [[a, b, a * b] for a, b in zip(layers, layers[1:], strict=False)]
    weights = sum(t[2] for t in terms)
    units = sum(layers)
    activations = batch * units
    numbers = weights + activations
    nbytes = 12 * numbers
    return {"layers": list(layers), "batch": batch, "weightTerms": terms, "weights": weights, "units": units,
            "activations": activations, "numbers": numbers, "bytes": nbytes, "gib": nbytes / GIB, "gb": nbytes / 1e9}


# ------------------------------------------------------------------ 2. convolutional networks (2016)

CNN_FIELDS = {
    "batch": {"integer": True, "min": 1, "max": 1e5},
    "height": {"integer": True, "min": 1, "max": 1e5},
    "width": {"integer": True, "min": 1, "max": 1e5},
    "channels": {"integer": True, "min": 1, "max": 1e5},
    "bits": {"choices": ["32", "16"]},
}
CNN_LAYER_FIELDS = {
    "conv": {
        "kernels": {"integer": True, "min": 1, "max": 1e5},
        "size": {"integer": True, "min": 1, "max": 1e4},
        "stride": {"integer": True, "min": 1, "max": 1e4},
        "padding": {"choices": ["same", "valid"]},
    },
    "pool": {
        "size": {"integer": True, "min": 1, "max": 1e4},
        "stride": {"integer": True, "min": 1, "max": 1e4},
    },
    "reduce": {
        "kernels": {"integer": True, "min": 1, "max": 1e5},
    },
}
CNN_MAX_LAYERS = 100


def cnn_out_size(layer: dict, size: int) -> int:
    if layer["type"] == "reduce":
        return size
    if layer["type"] == "conv" and layer.get("padding") == "same":
        return math.ceil(size / layer["stride"])
    if size < layer["size"]:
        return 0
    return (size - layer["size"]) // layer["stride"] + 1


def cnn_memory(inp: dict, layers: list[dict]) -> dict:
    """Activations and errors layer by layer; the input has activations only."""
    bytes_per = 2 if str(inp["bits"]) == "16" else 4
    b, h, w, c = inp["batch"], inp["height"], inp["width"], inp["channels"]
    values = b * h * w * c
    rows = [{"type": "input", "h": h, "w": w, "c": c, "values": values, "activations": values * bytes_per, "errors": 0}]
    empty = -1
    for i, layer in enumerate(layers):
        h = cnn_out_size(layer, h)
        w = cnn_out_size(layer, w)
        if layer["type"] != "pool":
            c = layer["kernels"]
        if (h == 0 or w == 0) and empty < 0:
            empty = i
        values = b * h * w * c
        rows.append({"type": layer["type"], "h": h, "w": w, "c": c, "values": values,
                     "activations": values * bytes_per, "errors": values * bytes_per})
    activations = sum(r["activations"] for r in rows)
    errors = sum(r["errors"] for r in rows)
    total = activations + errors
    return {"bytesPer": bytes_per, "rows": rows, "activations": activations, "errors": errors, "total": total,
            "empty": empty, "inputBytes": rows[0]["activations"],
            "totalMib": total / MIB, "totalMb": total / 1e6, "totalGib": total / GIB}


def _parse_cnn_layers(raw_layers, lang: str) -> tuple[list, dict]:
    layers, errors = [], {}
    items = raw_layers if isinstance(raw_layers, list) else []
    if len(items) > CNN_MAX_LAYERS:
        errors["layers"] = {"key": "calc.err.list_long", "params": {"max": CNN_MAX_LAYERS}}
    for i, raw in enumerate(items[:CNN_MAX_LAYERS]):
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind not in CNN_LAYER_FIELDS:
            errors[f"layers.{i}.type"] = {"key": "calc.err.choice", "params": {}}
            continue
        values, errs = _parse_all(raw, CNN_LAYER_FIELDS[kind], lang)
        for k, e in errs.items():
            errors[f"layers.{i}.{k}"] = e
        layers.append({"type": kind, **values})
    return layers, errors


# ------------------------------------------------------------------ 4. GPU picker

WORKLOADS = ["cnn", "rnn", "transformer", "llm-inference"]
WORKLOAD_NETWORK = {"cnn": "cnn", "rnn": "rnn", "transformer": "transformer", "llm-inference": "transformer"}
WORKLOAD_TABLES = {
    "cnn": ["cnn", "overall"],
    "rnn": ["rnn", "overall"],
    "transformer": ["transformer", "training-16bit", "overall"],
    "llm-inference": ["inference-8bit", "transformer", "overall"],
}
DEFAULT_ORDER = ["memory-bandwidth", "tensor-cores", "flops"]

PICKER_FIELDS = {
    "workload": {"choices": WORKLOADS},
    "memory": {"min": 0, "minExclusive": True, "max": 4096},
    "budget": {"min": 0, "minExclusive": True, "max": 1e7},
    "prices": {"choices": ["new", "used"]},
}


def _pos(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 else None


def feature_value(gpu: dict, feature: str):
    if feature in ("tensor-cores", "fp16-capability"):
        v = _pos(gpu.get("fp16_tensor_tflops"))
        return v if v is not None else _pos(gpu.get("fp32_tflops"))
    return {"flops": lambda: _pos(gpu.get("fp32_tflops")),
            "memory-bandwidth": lambda: _pos(gpu.get("memory_bandwidth_gbs")),
            "memory-size": lambda: _pos(gpu.get("memory_gb"))}.get(feature, lambda: None)()


def order_weights(order: list[str]) -> list[float]:
    n = len(order)
    total = n * (n + 1) / 2
    return [(n - i) / total for i in range(n)]


def spec_score(gpu: dict, order: list[str], weights: list[float]):
    log = 0.0
    for feature, weight in zip(order, weights, strict=False):
        v = feature_value(gpu, feature)
        if v is None:
            return None
        log += weight * math.log(v)
    return math.exp(log)


def view_price(gpu: dict, view: dict, basis: str):
    """The price a view gives a card: its quote for the basis ("used" falls back to "new"), else
    the card's launch price. The quotes come from the build (generator/picker.py)."""
    q = ((view or {}).get("quotes") or {}).get(gpu.get("id")) or {}
    chosen = (q.get("used") if basis == "used" else None) or q.get("new")
    if chosen:
        return {"usd": chosen[0], "source": chosen[1], "date": chosen[2]}
    launch = _pos(gpu.get("launch_price_usd"))
    return {"usd": launch, "source": "catalogue", "date": None} if launch is not None else None


def revision_by_date(data: dict, date):
    revs = (data or {}).get("revisions") or []
    if not date:
        return revs[-1] if revs else None
    return next((r for r in revs if str(r.get("date")) == date), None)


def _iso(x) -> str:
    return x[:10] if isinstance(x, str) else (x.isoformat()[:10] if hasattr(x, "isoformat") else "")


def _reference(gpus, table, view, advised, order, weights, date):
    """The card performance is relative to: the table's reference, the advice's best overall card,
    its first recommended card for the workload, else the best-scoring card released by then."""
    by_id = {g["id"]: g for g in gpus}
    first = next((a["gpu"] for a in advised if a["role"] == "recommended"), None)
    for gid in ((table or {}).get("reference"), view.get("best"), first):
        g = by_id.get(gid)
        s = spec_score(g, order, weights) if g else None
        if s is not None:
            return gid, s
    ref = (None, None)
    for g in gpus:
        if _iso(g.get("release_date")) > date:
            continue
        s = spec_score(g, order, weights)
        if s is not None and (ref[1] is None or s > ref[1]):
            ref = (g["id"], s)
    return ref


ROLE_RANK = {"recommended": 0, "alternative": 1}


def _skipped() -> dict:
    return {"tooNew": 0, "noPrice": 0, "tooSmall": 0, "overBudget": 0, "noPerf": 0}


def _pick_table(view: dict, workload: str):
    for w in WORKLOAD_TABLES[workload]:
        table = next((t for t in view.get("tables") or [] if t.get("workload") == w), None)
        if table:
            return table
    return None


def rank_gpus(data: dict, v: dict):
    """Cards that fit the memory and the budget, in the view of one revision: the cards it advised
    first (recommended, then alternatives), then the others; within each, by performance per
    dollar; cards it advised against, or of a vendor it advised against, last and flagged.
    Performance is the revision's own figure where its tables have one, else a spec-based estimate
    that follows its priority order, relative to the same reference card."""
    if v.get("revision") == "today":
        return rank_today(data, v)
    rev = revision_by_date(data, v.get("revision"))
    if rev is None:
        return None
    date = _iso(rev.get("date"))
    view = ((data or {}).get("picker") or {}).get(date) or {}
    gpus = [g for g in data.get("gpus") or [] if isinstance(g, dict) and isinstance(g.get("id"), str)]
    table = _pick_table(view, v["workload"])
    network = WORKLOAD_NETWORK[v["workload"]]
    prio = next((p for p in view.get("priorities") or [] if p.get("network") == network), None)
    order = list(prio["order"]) if prio else list(DEFAULT_ORDER)
    weights = order_weights(order)
    advised_list = (view.get("advised") or {}).get(v["workload"]) or []
    ref_id, ref_score = _reference(gpus, table, view, advised_list, order, weights, date)
    advised = {a["gpu"]: a for a in advised_list}
    avoid, avoid_vendors = set(view.get("avoid") or []), set(view.get("avoid_vendors") or [])
    values = (table or {}).get("values") or {}
    rows, skipped = [], _skipped()
    for g in gpus:
        if _iso(g.get("release_date")) > date:
            skipped["tooNew"] += 1
            continue
        mem = g.get("memory_gb")
        if not (isinstance(mem, (int, float)) and mem >= v["memory"]):
            skipped["tooSmall"] += 1
            continue
        a = advised.get(g["id"])
        price = view_price(g, view, "used" if v["prices"] == "used" or (a and a["used"]) else "new")
        if price is None:
            skipped["noPrice"] += 1
            continue
        if price["usd"] > v["budget"]:
            skipped["overBudget"] += 1
            continue
        if g["id"] in values:
            perf, source = values[g["id"]], "revision"
        else:
            s = spec_score(g, order, weights) if ref_score else None
            if s is None:
                skipped["noPerf"] += 1
                continue
            perf, source = s / ref_score, "estimate"
        flag = "avoid" if g["id"] in avoid else ("vendor" if g.get("vendor") in avoid_vendors else None)
        rows.append({"id": g["id"], "name": g.get("name"), "memory_gb": mem, "price": price["usd"],
                     "priceSource": price["source"], "priceDate": price["date"], "perf": perf, "perfSource": source,
                     "value": perf / price["usd"] * 1000, "flag": flag, "avoided": flag is not None,
                     "advised": a["role"] if a else None, "advisedUsed": bool(a and a["used"]),
                     "personas": list(a["personas"]) if a else []})
    rows.sort(key=lambda r: (r["flag"] is not None, ROLE_RANK.get(r["advised"], 2), -r["value"], -r["perf"], r["id"]))
    return {"mode": "revision", "revision": date, "table": table.get("workload") if table else None,
            "reference": ref_id, "order": order, "weights": weights, "advisedFrom": view.get("advised_from"),
            "rows": rows, "skipped": skipped}


def rank_today(data: dict, v: dict):
    """Today's cards that fit the memory and the budget, by the estimation model's figure per
    dollar at dated prices: relative training throughput for the training workloads, decode
    tokens per second of the reference model for LLM inference. New prices, or used ones (a card
    without a used price keeps its new price). The site's computation, never a revision's advice."""
    today = (data or {}).get("today") or {}
    names = {g["id"]: g.get("name") for g in (data or {}).get("gpus") or [] if isinstance(g, dict)}
    metric = "decode" if v["workload"] == "llm-inference" else "training"
    rows, skipped = [], _skipped()
    for r in today.get("rows") or []:
        mem = r.get("memory_gb")
        if not (isinstance(mem, (int, float)) and mem >= v["memory"]):
            skipped["tooSmall"] += 1
            continue
        used = v["prices"] == "used" and r.get("used")
        chosen, kind = (r["used"], "observed-used") if used else (r.get("new"), "observed-new")
        if not chosen:
            skipped["noPrice"] += 1
            continue
        if chosen[0] > v["budget"]:
            skipped["overBudget"] += 1
            continue
        perf = _pos(r.get(metric))
        if perf is None:
            skipped["noPerf"] += 1
            continue
        rows.append({"id": r["gpu"], "name": names.get(r["gpu"]) or r["gpu"], "memory_gb": mem, "price": chosen[0],
                     "priceSource": kind, "priceDate": chosen[1], "perf": perf, "perfSource": "model",
                     "value": perf / chosen[0] * 1000, "flag": None, "avoided": False,
                     "advised": None, "advisedUsed": False, "personas": []})
    rows.sort(key=lambda r: (-r["value"], -r["perf"], r["id"]))
    return {"mode": "today", "revision": "today", "metric": metric, "newest": today.get("newest"),
            "model": today.get("model"), "error": (today.get("errors") or {}).get(metric),
            "reference": today.get("reference"), "rows": rows, "skipped": skipped}


# ------------------------------------------------------------------ decision tree (2023)

def latest_tree(data: dict):
    for rev in reversed((data or {}).get("revisions") or []):
        if rev and rev.get("decision_tree"):
            return rev
    return None


def is_leaf(node) -> bool:
    return isinstance(node, dict) and "question" not in node


def tree_at(tree, path: str):
    node = tree
    for ch in str(path or ""):
        if not node or is_leaf(node):
            return None
        if ch == "y":
            node = node.get("if_yes")
        elif ch == "n":
            node = node.get("if_no")
        else:
            return None
    return node or None


# ------------------------------------------------------------------ 5. desktop or cloud (2020)

CLOUD_FIELDS = {
    "desktop": {"min": 0, "minExclusive": True, "max": 1e7},
    "gpu_w": {"min": 0, "minExclusive": True, "max": 1e5},
    "system_w": {"min": 0, "max": 1e5},
    "kwh": {"min": 0, "max": 100},
    "util": {"min": 0, "minExclusive": True, "max": 100},
    "cloud": {"min": 0, "minExclusive": True, "max": 1e5},
    "spot": {"min": 0, "minExclusive": True, "max": 1e5},
}
DAYS_PER_MONTH = 365.25 / 12


def cloud_break_even(v: dict) -> dict:
    u = v["util"] / 100
    kwh_year = (v["gpu_w"] + v["system_w"]) / 1000 * u * 24 * 365
    power_year = kwh_year * v["kwh"]
    power_day = power_year / 365
    cloud_day = v["cloud"] * u * 24
    spot_day = v["spot"] * u * 24

    def days(per_day):
        return v["desktop"] / (per_day - power_day) if per_day > power_day else None

    d, ds = days(cloud_day), days(spot_day)
    return {"kwhYear": kwh_year, "powerYear": power_year, "powerDay": power_day,
            "desktopFirstYear": v["desktop"] + power_year, "cloudDay": cloud_day, "cloudYear": cloud_day * 365,
            "spotDay": spot_day, "spotYear": spot_day * 365,
            "days": d, "months": None if d is None else d / DAYS_PER_MONTH,
            "spotDays": ds, "spotMonths": None if ds is None else ds / DAYS_PER_MONTH}


# ------------------------------------------------------------------ one entry point per calculator

def run(name: str, raw: dict | None, lang: str = "en", data: dict | None = None) -> dict:
    """Validate raw inputs and compute: ``{"errors": {...}, "result": ... or None}``."""
    raw = raw or {}
    if name == "dense":
        values, errors = _parse_all(raw, DENSE_FIELDS, lang)
        return _done(errors, lambda: dense_memory(values["layers"], values["batch"]))
    if name == "cnn":
        values, errors = _parse_all(raw, CNN_FIELDS, lang)
        layers, layer_errors = _parse_cnn_layers(raw.get("layers"), lang)
        errors.update(layer_errors)
        if errors:
            return {"errors": errors, "result": None}
        result = cnn_memory({**values, "bits": int(values["bits"])}, layers)
        if result["empty"] >= 0:
            return {"errors": {f"layers.{result['empty']}.size": {"key": "calc.err.layer_empty", "params": {}}},
                    "result": None}
        return {"errors": errors, "result": result}
    if name == "picker":
        data = data or {"gpus": [], "revisions": []}
        values, errors = _parse_all(raw, PICKER_FIELDS, lang)
        dates = [_iso(r.get("date")) for r in data.get("revisions") or []] + (["today"] if data.get("today") else [])
        rev = "" if raw.get("revision") is None else str(raw.get("revision")).strip()
        if rev and rev not in dates:
            errors["revision"] = {"key": "calc.err.choice", "params": {}}
        values["revision"] = rev or None
        return _done(errors, lambda: rank_gpus(data, values))
    if name == "cloud":
        values, errors = _parse_all(raw, CLOUD_FIELDS, lang)
        return _done(errors, lambda: cloud_break_even(values))
    raise ValueError(f"unknown calculator {name}")


def _done(errors: dict, compute) -> dict:
    if errors:
        return {"errors": errors, "result": None}
    return {"errors": errors, "result": compute()}
