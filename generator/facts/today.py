"""Today's cards: what can be bought or rented as of the newest price observations, with
performance per dollar from the estimation model, electricity included, and the site's picks per
reader profile with their reasons. The site's own computation, never a revision's advice; every
figure keeps its measured error and every price its date.

The buyer's price is the cheapest credible way to buy a card now: its newest new ("street")
price or its newest used price, whichever is lower, each only if observed within ``RECENT_YEARS``
of the newest observation (the validator refuses new prices of discontinued cards). A price older
than ``STALE_DAYS`` before the newest observation is shown as stale.

Per-dollar figures divide by what owning the card costs: the price plus the electricity of
``OWNERSHIP_YEARS`` at ``HOURS_PER_DAY`` hours a day at board power, at ``ELECTRICITY_USD_PER_KWH``
(the reader sets another price on the page).
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from generator.data.schema import WORKLOADS
from generator.estimate import EstimateError, estimate, training_relative_only
from generator.facts.prices import Observation, current_price
from generator.facts.support import Support, support_of

# Model sizes the page ranks LLM inference for: (key, model id, weights format, runtime).
INFERENCE_MODELS = (("8b", "llama-3-1-8b", "q4_k_m", "llama.cpp"),
                    ("32b", "qwen2-5-32b", "q4_k_m", "llama.cpp"),
                    ("70b", "llama-3-3-70b", "q4_k_m", "llama.cpp"))
CONTEXT = 4096
RECENT_YEARS = 2  # a purchase price older than this (before the newest observation) is not "today"
STALE_DAYS = 183  # a price older than about six months before the newest observation is stale

# Electricity: the documented defaults (README, "Today's cards"); the reader sets the price.
ELECTRICITY_USD_PER_KWH = 0.17  # about the US residential average of 2025-2026 (EIA)
OWNERSHIP_YEARS = 3
HOURS_PER_DAY = 4  # hours a day at board power: a card busy a sixth of the time

# workload -> the figure it ranks by (the one vocabulary: generator.data.schema.WORKLOADS)
FIGURE_OF = {"transformer": "training", "cnn": "training", "rnn": "training",
             "llm-inference": "decode_8b", "llm-32b": "decode_32b", "llm-70b": "decode_70b", "memory": "memory"}
assert set(FIGURE_OF) == set(WORKLOADS)
# the keys /today/ used before the one vocabulary, still read from old addresses
OLD_WORKLOAD_KEYS = {"training": "transformer", "decode_8b": "llm-inference", "decode_32b": "llm-32b",
                     "decode_70b": "llm-70b"}
# the largest number of consumer cards of one kind a build splits a model across
MAX_CARDS = 2
DESKTOP_SEGMENTS = ("consumer", "workstation")


@dataclass
class TodayRow:
    gpu: str
    count: int  # cards in the build (2: two cards split the model)
    memory_gb: float  # what the build may use (unified memory: the usable share)
    new: Observation | None  # the newest new ("street") price, if recent
    used: Observation | None
    cloud: Observation | None  # the cheapest on-demand price per GPU-hour among providers
    buy: Observation | None  # the cheaper of new and used
    buy_usd: float | None  # per build (count cards)
    buy_kind: str | None  # new | used
    stale: bool  # the buy price is older than STALE_DAYS before the newest observation
    kwh: float | None  # electricity of the ownership period, kWh, whole build
    support: Support | None
    cooling: str | None
    segment: str
    figures: dict  # figure -> value: training (x reference), decode_8b/32b/70b (tokens/s), memory (GB)
    per_dollar: dict  # figure -> value per 1000 USD of price + electricity at the default price
    break_even_hours: float | None  # hours of cloud rent that cost as much as buying
    notes: list = field(default_factory=list)  # what the row's figures rest on (e.g. the split)

    @property
    def key(self) -> str:
        return self.gpu if self.count == 1 else f"{self.gpu}-x{self.count}"

    def cost(self, usd_per_kwh: float = ELECTRICITY_USD_PER_KWH) -> float | None:
        """Price plus the electricity of the ownership period."""
        if self.buy_usd is None:
            return None
        return self.buy_usd + (self.kwh or 0) * usd_per_kwh


def newest_date(ds) -> _dt.date | None:
    dates = [o["date"] for rec in ds.prices.values() for o in rec["observations"]]
    return max(dates) if dates else None


def ownership_kwh(gpu) -> float | None:
    watts = gpu.get("tdp_w")
    return round(watts / 1000 * HOURS_PER_DAY * 365 * OWNERSHIP_YEARS, 1) if watts else None


def _decode(bundle, table, gdict, count: int) -> dict:
    out = {}
    for key, mid, weights, runtime in INFERENCE_MODELS:
        if mid not in bundle.models:
            continue
        try:
            est = estimate(bundle.models[mid], gdict, {"weights": weights, "runtime": runtime, "context": CONTEXT,
                                                      "gpus": count}, table)
        except EstimateError:
            est = None
        out[f"decode_{key}"] = round(est["decode_tokens_per_s"], 2) if est and est["fits"] else None
    return out


def _recent(o, oldest):
    return o if o and o.date >= oldest else None


def today_rows(ds, facts) -> list[TodayRow]:
    """One row per GPU that has a recent purchase or rental price; and, for desktop cards that the
    current software runs, a row of two cards where two hold an LLM that one does not."""
    newest = newest_date(ds)
    if newest is None:
        return []
    oldest = newest.replace(year=newest.year - RECENT_YEARS)
    stale_before = newest - _dt.timedelta(days=STALE_DAYS)
    bundle, table = facts.bundle, facts.estimates
    rows = []
    for gid in sorted(ds.prices):
        gpu = ds.gpus[gid]
        new, used, cloud = (_recent(current_price(ds, gid, k), oldest) for k in ("street", "used", "cloud-hourly"))
        if not (new or used or cloud):
            continue
        buy = min((o for o in (new, used) if o), key=lambda o: (o.usd, o.kind), default=None)
        share = gpu.get("gpu_memory_share") if gpu.get("unified_memory") else 1
        memory = round(gpu["memory_gb"] * share, 1)
        gdict = bundle.gpus[gid]
        try:
            training = training_relative_only(gdict, table)["training_relative"]
        except EstimateError:
            training = None
        training = round(training, 4) if training else None
        support = support_of(ds, gpu)
        base = dict(gpu=gid, new=new, used=used, cloud=cloud, buy=buy, buy_kind=_kind(buy),
                    stale=bool(buy and buy.date < stale_before), support=support, cooling=gpu.get("cooling"),
                    segment=gpu["segment"])
        kwh = ownership_kwh(gpu)
        one = TodayRow(count=1, memory_gb=memory, buy_usd=buy.usd if buy else None, kwh=kwh,
                       figures={"training": training, **_decode(bundle, table, gdict, 1), "memory": memory},
                       per_dollar={}, break_even_hours=round(buy.usd / cloud.usd, 1) if buy and cloud else None,
                       **base)
        rows.append(one)
        splittable = (buy and gpu["segment"] in DESKTOP_SEGMENTS and not gpu.get("unified_memory")
                      and (support is None or support.status == "current"))
        if splittable:
            for count in range(2, MAX_CARDS + 1):
                decode = _decode(bundle, table, gdict, count)
                gained = [k for k, v in decode.items() if v and not one.figures.get(k)]
                if not gained:
                    continue
                rows.append(TodayRow(count=count, memory_gb=round(memory * count, 1), buy_usd=buy.usd * count,
                                     kwh=kwh * count if kwh else None,
                                     figures={"training": None, **decode, "memory": round(memory * count, 1)},
                                     per_dollar={}, break_even_hours=None,
                                     notes=["split"], **base))
    for r in rows:
        r.per_dollar = per_dollar(r)
    return rows


def _kind(o) -> str | None:
    return None if o is None else ("used" if o.kind == "used" else "new")


def per_dollar(row: TodayRow, usd_per_kwh: float = ELECTRICITY_USD_PER_KWH) -> dict:
    """Each figure per 1,000 USD of price and electricity (memory: GB per 100 USD)."""
    cost = row.cost(usd_per_kwh)
    if not cost:
        return {}
    out = {}
    for name, value in row.figures.items():
        if value:
            out[name] = round(value / cost * (100 if name == "memory" else 1000), 4)
    return out


# ------------------------------------------------------------------ ranking and picks


def runs_today(row: TodayRow) -> bool:
    return row.support is None or row.support.status == "current"


def rank(rows: list[TodayRow], workload: str, by: str = "value") -> list[TodayRow]:
    """Rows in rank order for a workload: those with the figure first (by value per dollar, or
    by the figure itself for ``by="speed"``), then those that cannot run it; a card today's
    software does not run comes after every card it runs."""
    figure = FIGURE_OF[workload]

    def score(r):
        value = r.figures.get(figure) if by == "speed" else r.per_dollar.get(figure)
        return (not runs_today(r), value is None, -(value or 0), r.count, r.gpu)
    return sorted(rows, key=score)


# why a card is left out of a pick (keys of the API's "excluded" and of today.reason.* texts)
LEFT_OUT = ("unsupported", "legacy-software", "not-cuda", "no-bf16-flash", "passive-cooling", "too-little-memory", "over-budget",
            "no-figure", "stale-price", "no-price")


def _software_reason(row: TodayRow, profile: dict) -> str | None:
    """What today's software says against a card for this reader: not run at all, only by older
    builds, not through CUDA (for readers who ask for it), or, for transformer training, without
    bf16 or FlashAttention kernels."""
    s = row.support
    if s is None:
        return None
    if s.status != "current":
        return "unsupported" if s.status == "unsupported" else "legacy-software"
    if profile.get("needs_cuda") and not any(d["vendor"] == "nvidia" and not d["legacy"] for d in s.details):
        return "not-cuda"
    if profile["workload"] == "transformer" and not (s.features.get("bf16") and s.features.get("flash_attention")):
        return "no-bf16-flash"
    return None


def _purchase_reason(row: TodayRow, profile: dict) -> str | None:
    """What the reader's constraints say against buying the card."""
    if row.cooling == "passive" and row.segment not in DESKTOP_SEGMENTS:
        return "passive-cooling"
    if profile.get("memory_gb") and row.memory_gb < profile["memory_gb"]:
        return "too-little-memory"
    if profile.get("budget_usd") and row.buy_usd > profile["budget_usd"]:
        return "over-budget"
    if not row.per_dollar.get(FIGURE_OF[profile["workload"]]):
        return "no-figure"
    return "stale-price" if row.stale else None


def left_out(row: TodayRow, profile: dict, renting: bool = False) -> str | None:
    """Why a row is not a pick for a reader, or None (``renting``: price and cooling do not matter)."""
    if row.buy_usd is None and not renting and (row.support is None or row.support.status == "current"):
        return "no-price"
    why = _software_reason(row, profile)
    if why or not renting:
        return why or ("no-price" if row.buy_usd is None else _purchase_reason(row, profile))
    return "too-little-memory" if profile.get("memory_gb") and row.memory_gb < profile["memory_gb"] else None


@dataclass
class Pick:
    persona: str | None  # None for a reader's own constraints (the form)
    profile: dict
    row: TodayRow | None
    alternatives: list  # TodayRow, best first
    left_out: list  # (TodayRow, reason) of better-ranked rows that were left out
    rent: bool


def pick(rows: list[TodayRow], profile: dict, persona: str | None = None) -> Pick:
    """The site's pick for a reader: the best row by the profile's ranking among those that pass
    :func:`left_out` (renting readers: the cheapest training hour among datacenter cards), two
    alternatives, and the better-ranked rows left out with their reason."""
    workload = profile["workload"]
    if profile.get("rent"):
        figure = FIGURE_OF[workload]
        rented = [r for r in rows if r.count == 1 and r.cloud and r.figures.get(figure)
                  and (not profile.get("datacenter") or r.segment == "datacenter")
                  and left_out(r, {**profile, "budget_usd": None}, renting=True) is None]
        rented.sort(key=lambda r: (-(r.figures[figure] / r.cloud.usd), r.gpu))
        return Pick(persona, dict(profile), rented[0] if rented else None, rented[1:3], [], True)
    by = profile.get("rank") or "value"
    figure = FIGURE_OF[workload]
    chosen, alternatives = None, []
    for r in rank(rows, workload, by):
        if left_out(r, profile):
            continue
        if chosen is None:
            chosen = r
        elif len(alternatives) < 2 and r.gpu != chosen.gpu:
            alternatives.append(r)

    def score(r):
        return (r.figures.get(figure) if by == "speed" else r.per_dollar.get(figure)) or 0

    # the rows a reader would expect above the pick on the figure alone, and why each is not it
    bar = score(chosen) if chosen else 0
    # (the reasons a reader may not see coming first: software, cooling, features; then memory and budget)
    skipped = []
    for r in rows:
        why = left_out(r, profile)
        if score(r) > bar and why not in (None, "no-figure", "no-price") and r.count == 1:
            skipped.append((r, why))
    skipped.sort(key=lambda x: (x[1] in ("too-little-memory", "over-budget", "stale-price"), -score(x[0]), x[0].gpu))
    skipped = skipped[:6]
    return Pick(persona, dict(profile), chosen, alternatives, skipped, False)


def persona_picks(ds, rows: list[TodayRow]) -> list[Pick]:
    """One pick per reader profile that says how /today/ reads it (data/personas.yaml, today)."""
    out = []
    for pid, persona in (ds.personas.data.items() if ds.personas else ()):
        profile = persona.get("today")
        if profile:
            out.append(pick(rows, dict(profile), pid))
    return out


def excluded(rows: list[TodayRow]) -> list[dict]:
    """The cards no pick may take whatever the reader's constraints, each once with its reason."""
    out = []
    for r in rows:
        if r.count != 1:
            continue
        why = None
        if r.support is not None and r.support.status != "current":
            why = "unsupported" if r.support.status == "unsupported" else "legacy-software"
        elif r.cooling == "passive" and r.segment not in DESKTOP_SEGMENTS and r.buy_usd is not None:
            why = "passive-cooling"
        if why:
            out.append({"gpu": r.gpu, "reason": why})
    return out


def _unseen(entry: dict) -> dict | None:
    """The leave-one-source-out band of an error entry (median_pct, p90_pct), None without one."""
    u = entry.get("unseen") or {}
    return {"median_pct": u["median_pct"], "p90_pct": u.get("p90_pct")} if u.get("median_pct") is not None else None


def client_today(ds, facts) -> dict:
    """Today's cards as the picker's "today" mode reads them: per card the usable memory, the
    buyer's price (the cheaper of new and used) with its kind and date, the electricity of the
    ownership period, whether today's software runs it, and the figures of every workload; with
    the measured error of each figure (fitted, and ``unseen``: each source left out of the fit in
    turn, the band the picker prints), the newest price date and the electricity defaults."""
    errors = (facts.estimates or {}).get("errors") or {}
    newest = newest_date(ds)

    def err(metric, group):
        e = (errors.get(metric) or {}).get(group) or {}
        return {"median_pct": e.get("median_pct"), "p90_pct": e.get("p90_pct"), "count": e.get("count"),
                "unseen": _unseen(e)} if e else None

    return {
        "newest": newest.isoformat() if newest else None,
        "model": INFERENCE_MODELS[0][1],
        "models": {f"decode_{key}": mid for key, mid, _w, _r in INFERENCE_MODELS},
        "reference": ((facts.estimates or {}).get("reference") or {}).get("id"),
        "errors": {"training": err("training_relative", "all"), "decode": err("decode_tokens_per_s", "llama.cpp")},
        "electricity": {"usd_per_kwh": ELECTRICITY_USD_PER_KWH, "years": OWNERSHIP_YEARS, "hours_per_day": HOURS_PER_DAY},
        "figure_of": FIGURE_OF,
        # the site's pick per reader profile, for the compare-any-two picker's "today"
        "picks": {p.persona: [p.row.gpu] for p in facts.today_picks if p.row},
        "rows": [{"gpu": r.gpu, "count": r.count, "memory_gb": r.memory_gb,
                  "buy": [r.buy_usd, r.buy.date.isoformat(), r.buy_kind] if r.buy else None,
                  "stale": r.stale, "kwh": r.kwh, "support": r.support.status if r.support else None,
                  "cooling": r.cooling, "segment": r.segment,
                  "figures": {k: v for k, v in r.figures.items() if v}}
                 for r in facts.today if r.buy],
    }


def snapshot_of(ds, picks: list[Pick]) -> dict:
    """Today's picks as a snapshot file keeps them (data/snapshots/<as_of>.yaml)."""
    newest = newest_date(ds)
    out = {}
    for p in picks:
        r = p.row
        if r is None:
            continue
        price = (r.cloud.usd, "cloud-hourly", r.cloud.date) if p.rent else (r.buy_usd, r.buy_kind, r.buy.date)
        out[p.persona] = {"gpu": r.gpu, "count": r.count, "price_usd": price[0], "price_kind": price[1],
                          "price_date": price[2], "alternatives": [a.gpu for a in p.alternatives]}
    return {"as_of": newest, "picks": out}
