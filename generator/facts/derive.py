"""The derive stage: every fact computed from the data, once per dataset, in no language.

validate -> **derive** -> render. Templates, charts, the JSON API and the client data file read
what is here; nothing below is computed a second time elsewhere, and the browser computes only
what depends on the reader's input. ``derive(ds)`` gives one :class:`Derived` per dataset for as
long as the dataset lives (generator.reuse.FACTS; records are frozen, so it cannot go stale).
The estimates are :class:`generator.facts.estimates.EstimateFacts`.
"""
from __future__ import annotations

import datetime as _dt
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass

from generator import reuse
from generator.data.dataset import Dataset, Record
from generator.data.loader import changes
from generator.facts.diff import PersonaState, advice_states, diff_revisions
from generator.facts.estimates import EstimateFacts
from generator.facts.history import AdviceMatrix, GpuMention, advice_matrix, derived, history_index
from generator.facts.picker import feature_value, picker_views, view_price
from generator.facts.prices import Price, _RevisionPrices, observations
from generator.facts.results import gpus_result, revisions_result
from generator.facts.today import client_today, excluded, persona_picks, today_rows


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


class Derived(EstimateFacts):
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
    def today(self):
        """Today's cards (see :mod:`generator.facts.today`)."""

        return today_rows(self.ds, self)

    @functools.cached_property
    def today_picks(self):
        """The site's pick for today per reader profile (see :func:`generator.facts.today.persona_picks`)."""

        return persona_picks(self.ds, self.today)

    @functools.cached_property
    def today_excluded(self) -> list[dict]:
        return excluded(self.today)

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
        rows = [r for r in self.today if r.buy_usd and r.count == 1]
        ranked = max(rows, key=lambda r: (r.per_dollar.get("training") or 0, r.gpu), default=None)
        newest = self.today_client["newest"]
        if ranked and ranked.per_dollar.get("training") and figure["throughput"](gpus[ranked.gpu]):
            out["throughput"].append({"date": newest, "gpu": ranked.gpu, "usd": ranked.buy_usd, "source": ranked.buy.kind,
                                      "value": round(figure["throughput"](gpus[ranked.gpu]) / ranked.buy_usd * 1000, 3),
                                      "today": True})
        best_mem = max(rows, key=lambda r: (r.memory_gb / r.buy_usd, r.gpu), default=None)
        if best_mem:
            out["memory"].append({"date": newest, "gpu": best_mem.gpu, "usd": best_mem.buy_usd, "source": best_mem.buy.kind,
                                  "value": round(best_mem.memory_gb / best_mem.buy_usd * 1000, 3), "today": True})
        return out

    @functools.cached_property
    def today_client(self) -> dict:
        """Today's cards as the picker's "today" mode reads them."""

        return client_today(self.ds, self)

    def warm(self) -> Derived:
        """Compute what every language needs before the languages render in parallel processes
        (forked, they inherit it instead of each computing it again)."""
        for name in ("states", "trees", "history", "figures", "revision_prices", "advice_age", "estimates",
                     "today", "grid", "fastest_fits", "memory_tables", "measured", "picker_views", "story",
                     "today_client", "today_picks", "today_excluded"):
            getattr(self, name)
        self.figures.complete()
        return self


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
















def _of_revisions(name: str, revisions: list[Record], make):
    """``make()``, kept while the same revision records come again (a reload in which no revision
    file changed gives the same records): the preview's open page reads a card's history, and
    there are 1,800 revisions at a hundred times the data. Answers are never modified."""
    return reuse.OF_REVISIONS.of_items(name, revisions, make)


def derive(ds: Dataset) -> Derived:
    """The facts of ``ds``, computed as they are read, the same object for the same dataset."""
    return reuse.FACTS.get(ds, lambda: Derived(ds))
