"""The worked examples the calculator pages print, computed at build time.

The calculators run in the browser (``docs/assets/js/calc/formulas.mjs``: parsing, validation,
ranking, the decision tree). A page also prints one worked example per memory and cloud
calculator; this module computes those figures with the same formulas, so no page types a number
in. The examples' inputs are in each calculator's folder (``calculator.yaml``), and so are the
golden cases (``cases.json``) that both implementations pass for the formulas they share.
Results are dicts with the same keys as the JavaScript objects.
"""
from __future__ import annotations

import functools
import math

from generator.data.calculators import calculators

GIB = 1024 ** 3
MIB = 1024 ** 2


# ------------------------------------------------------------------ 1. fully connected networks (2015)

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


# ------------------------------------------------------------------ 3. cloud or desktop (2020)

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


# ------------------------------------------------------------------ the worked examples

# The formulas a calculator's ``examples`` (its calculator.yaml) may name.
FORMULAS = {"dense_memory": dense_memory, "cnn_memory": cnn_memory, "cloud_break_even": cloud_break_even}


@functools.lru_cache(maxsize=1)
def worked_examples() -> dict:
    """Every calculator's worked examples, by name: each one's formula on its inputs (the
    ``examples`` of the calculator's calculator.yaml, for instance the articles' own figures)."""
    out = {}
    for calculator in calculators():
        for name, example in calculator.examples.items():
            out[name] = FORMULAS[example["formula"]](**example["args"])
    return out
