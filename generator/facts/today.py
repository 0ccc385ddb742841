"""Today's cards: what can be bought or rented as of the newest price observations, with
performance per dollar from the estimation model. The site's own computation, never a
revision's advice; every figure keeps its measured error and every price its date.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from generator.estimate import EstimateError, estimate, training_relative_only
from generator.facts.prices import current_price

# Model sizes the page ranks LLM inference for: (key, model id, weights format, runtime).
INFERENCE_MODELS = (("8b", "llama-3-1-8b", "q4_k_m", "llama.cpp"),
                    ("32b", "qwen2-5-32b", "q4_k_m", "llama.cpp"),
                    ("70b", "llama-3-3-70b", "q4_k_m", "llama.cpp"))
CONTEXT = 4096
RECENT_YEARS = 2  # a purchase price older than this (before the newest observation) is not "today"


@dataclass
class TodayRow:
    gpu: str
    memory_gb: float  # what the GPU may use (unified memory: the usable share)
    new: object | None  # Observation of a street price
    used: object | None
    cloud: object | None  # the cheapest on-demand price per GPU-hour among providers
    buy_usd: float | None  # the price a buyer pays now: new, else used
    buy_kind: str | None
    training: float | None  # training throughput relative to the reference GPU
    decode: dict  # model key -> decode tokens/s on one card (None when it does not fit)
    per_dollar: dict  # figure -> value per 1000 USD (memory: GB per 100 USD)
    break_even_hours: float | None  # hours of cloud rent that cost as much as buying


def newest_date(ds) -> _dt.date | None:
    dates = [o["date"] for rec in ds.prices.values() for o in rec["observations"]]
    return max(dates) if dates else None


def today_rows(ds, facts) -> list[TodayRow]:
    """One row per GPU that has a recent purchase or rental price."""

    newest = newest_date(ds)
    if newest is None:
        return []
    oldest = newest.replace(year=newest.year - RECENT_YEARS)
    bundle = facts.bundle
    table = facts.estimates
    rows = []
    for gid in sorted(ds.prices):
        gpu = ds.gpus[gid]
        new, used, cloud = (current_price(ds, gid, k) for k in ("street", "used", "cloud-hourly"))
        new = new if new and new.date >= oldest else None
        used = used if used and used.date >= oldest else None
        cloud = cloud if cloud and cloud.date >= oldest else None
        if not (new or used or cloud):
            continue
        buy = new or used
        share = gpu.get("gpu_memory_share") if gpu.get("unified_memory") else 1
        memory = round(gpu["memory_gb"] * share, 1)
        gdict = bundle.gpus[gid]
        try:
            training = training_relative_only(gdict, table)["training_relative"]
        except EstimateError:
            training = None
        decode = {}
        for key, mid, weights, runtime in INFERENCE_MODELS:
            if mid not in bundle.models:
                continue
            try:
                est = estimate(bundle.models[mid], gdict, {"weights": weights, "runtime": runtime, "context": CONTEXT}, table)
            except EstimateError:
                est = None
            decode[key] = est["decode_tokens_per_s"] if est and est["fits"] else None
        per = {}
        if buy:
            usd = buy.usd
            per["memory"] = round(memory / usd * 100, 3)
            if training:
                per["training"] = round(training / usd * 1000, 4)
            for key, value in decode.items():
                if value:
                    per[f"decode_{key}"] = round(value / usd * 1000, 3)
        rows.append(TodayRow(gid, memory, new, used, cloud, buy.usd if buy else None, buy.kind if buy else None,
                             training, decode, per,
                             round(buy.usd / cloud.usd, 1) if buy and cloud else None))
    return rows


def client_today(ds, facts) -> dict:
    """Today's cards as the picker's "today" mode reads them: per card the usable memory, the newest
    new and used price with its date, the relative training throughput and the decode speed of the
    first inference model; with the measured error of each figure and the newest price date."""
    errors = (facts.estimates or {}).get("errors") or {}
    key, model, _weights, runtime = INFERENCE_MODELS[0]
    newest = newest_date(ds)

    def dated(o):
        return [o.usd, o.date.isoformat()] if o else None

    def err(metric, group):
        e = (errors.get(metric) or {}).get(group) or {}
        return {"median_pct": e.get("median_pct"), "p90_pct": e.get("p90_pct"), "count": e.get("count")} if e else None

    return {
        "newest": newest.isoformat() if newest else None,
        "model": model,
        "reference": ((facts.estimates or {}).get("reference") or {}).get("id"),
        "errors": {"training": err("training_relative", "all"), "decode": err("decode_tokens_per_s", runtime)},
        "rows": [{"gpu": r.gpu, "memory_gb": r.memory_gb, "new": dated(r.new), "used": dated(r.used),
                  "training": round(r.training, 4) if r.training else None,
                  "decode": round(r.decode.get(key), 2) if r.decode.get(key) else None}
                 for r in facts.today if r.new or r.used],
    }
