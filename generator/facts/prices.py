"""Prices: the one rule by which a revision prices a card, and the dated observations of today."""
from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass

from generator.data.dataset import Dataset, Record

PURCHASE = ("launch", "street")


@dataclass(frozen=True)
class Price:
    usd: float
    source: str  # the kind the revision quoted (launch, street, used) or "catalogue" (the GPU's launch price)


def revision_quote(prices, gid: str, basis: str = "new") -> dict | None:
    """The one price rule, on a revision's list of quotes: the quote it gives a card.

    ``basis`` "new": the last street or launch quote for the card; "used": the last used quote,
    else as "new"; "quoted": the last purchase quote of any kind (what the revision itself priced
    the card at, for its charts). Cloud prices per hour are never a purchase price. None when the
    revision does not price the card."""
    last_new = last_used = last_any = None
    for p in prices or ():
        if p["gpu"] != gid:
            continue
        if p["kind"] == "used":
            last_used = last_any = p
        elif p["kind"] in PURCHASE:
            last_new = last_any = p
    return last_any if basis == "quoted" else (last_used if basis == "used" and last_used else last_new)


def revision_price(rev: Record, gpu: Record, basis: str = "new") -> Price | None:
    """The price a revision gives a card (:func:`revision_quote`); a card the revision does not
    price gets its catalogue launch price."""
    chosen = revision_quote(rev.get("prices"), gpu.id, basis)
    if chosen is not None:
        return Price(chosen["usd"], chosen["kind"])
    launch = gpu.get("launch_price_usd")
    return Price(launch, "catalogue") if launch else None


class _RevisionPrices(Mapping):
    """One revision's prices by card, under the one price rule, each worked out when first read."""

    BASES = ("new", "used", "quoted")

    def __init__(self, rev: Record, gpus: dict[str, Record]):
        self.rev, self.gpus = rev, gpus
        self.done: dict[str, dict[str, Price]] = {}

    def __getitem__(self, gid: str) -> dict[str, Price]:
        entry = self.done.get(gid)
        if entry is None:
            gpu = self.gpus[gid]
            entry = self.done[gid] = {b: p for b in self.BASES if (p := revision_price(self.rev, gpu, b)) is not None}
        if not entry:
            raise KeyError(gid)
        return entry

    def __iter__(self):
        return (gid for gid in self.gpus if gid in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class Observation:
    kind: str
    usd: float  # per GPU (cloud: per GPU-hour)
    date: _dt.date
    source: str
    provider: str | None = None
    instance: str | None = None
    pricing: str | None = None


def observations(ds: Dataset, gid: str) -> list[Observation]:
    """A GPU's dated price observations, oldest first; cloud prices per GPU-hour."""
    rec = ds.prices.get(gid)
    out = []
    for o in rec.get("observations") if rec else ():
        per = o["usd"] / (o.get("gpus") or 1)
        out.append(Observation(o["kind"], round(per, 4), o["date"], o["source"], o.get("provider"),
                               o.get("instance"), o.get("pricing", "on-demand") if o["kind"] == "cloud-hourly" else None))
    return sorted(out, key=lambda o: (o.date, o.kind, o.usd))


def current_price(ds: Dataset, gid: str, kind: str) -> Observation | None:
    """The newest observation of a kind (for cloud: the cheapest on-demand price of the newest date
    of each provider)."""
    obs = [o for o in observations(ds, gid) if o.kind == kind]
    if kind == "cloud-hourly":
        newest: dict[str, Observation] = {}
        for o in obs:
            if o.pricing == "on-demand":
                newest[o.provider] = o
        return min(newest.values(), key=lambda o: (o.usd, o.provider), default=None)
    return obs[-1] if obs else None
