"""What /today/ and ``api/v1/today.json`` say of today's picks (a mixin of
:class:`generator.publish.render.Context`): the figures come from :mod:`generator.facts.today`,
every sentence from data/ui.yaml (``today.*``), in the page's language."""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from markupsafe import Markup

from generator.data.schema import ID_RE
from generator.facts.prices import observations
from generator.facts.support import support_of
from generator.facts.today import (
    ELECTRICITY_USD_PER_KWH,
    FIGURE_OF,
    HOURS_PER_DAY,
    INFERENCE_MODELS,
    OWNERSHIP_YEARS,
    STALE_DAYS,
    Pick,
    TodayRow,
    rank,
)
from generator.publish.charts_today import today_value_chart


def safe_id(value) -> str:
    text = str(value)
    if not ID_RE.match(text):
        raise ValueError(f"not an id: {text!r}")
    return text


FEATURE_LABELS = (("bf16", "BF16"), ("fp8", "FP8"), ("fp4", "FP4"))


class TodayText:
    def today_picks(self) -> list[Pick]:
        return self.facts.today_picks

    def today_excluded(self) -> list[dict]:
        return self.facts.today_excluded

    def today_ranked(self, workload: str = "transformer") -> list[TodayRow]:
        return rank(self.facts.today, workload)

    def today_value_chart(self):
        return today_value_chart(self.ds, self, self.facts.today)

    def today_electricity(self) -> dict:
        return {"usd_per_kwh": ELECTRICITY_USD_PER_KWH, "years": OWNERSHIP_YEARS, "hours_per_day": HOURS_PER_DAY}

    def today_row_name(self, row: TodayRow) -> str:
        name = self.gpu_name(row.gpu)
        return name if row.count == 1 else self.fill_plain("today.build_of", count=row.count, gpu=name)

    def today_model_of(self, figure: str) -> str | None:
        for key, mid, _w, _r in INFERENCE_MODELS:
            if figure == f"decode_{key}":
                return self.model_name(mid)
        return None

    def today_figure_text(self, row: TodayRow, figure: str) -> str | None:
        """The figure a row ranks by, in words, with its measured error."""
        value = row.figures.get(figure)
        if not value:
            return None
        if figure == "training":
            band = self.band_text(self.error_band("training_relative", "all"))
            ref = (self.facts.estimates.get("reference") or {}).get("id")
            return self.fill_plain("today.reason.training", value=self.num(value, 2), gpu=self.gpu_name(ref), band=band)
        if figure == "memory":
            return self.fill_plain("today.reason.memory", value=self.num(value))
        band = self.band_text(self.error_band("decode_tokens_per_s", "llama.cpp"))
        return self.fill_plain("today.reason.decode", value=self.num(value, 0), model=self.today_model_of(figure),
                               band=band)

    def today_support_text(self, row: TodayRow) -> str | None:
        s = row.support
        if s is None:
            return None
        if s.status == "current":
            builds = [f"{d['name']} {d['release']} ({d['build']})" for d in s.details if not d["legacy"]][:2]
            feats = [label for key, label in FEATURE_LABELS if s.features.get(key)]
            feats += [f"FlashAttention {v}" for v in s.features.get("flash_attention") or ()]
            sep = self.ui_plain("punct.list_sep")
            text = self.fill_plain("today.reason.support", builds=sep.join(builds))
            if feats:
                text += " " + self.fill_plain("today.reason.features", features=sep.join(feats))
            return text
        if s.status == "legacy":
            return self.fill_plain("today.reason.legacy", last=s.last or "—")
        return self.ui_plain("today.reason.unsupported")

    def today_reasons(self, p: Pick) -> list[str]:
        """Why the pick, in plain sentences: what it runs and how fast (with the error), what it
        gives per dollar with electricity, the price it rests on, and whether today's software runs it."""
        row = p.row
        if row is None:
            return []
        figure = FIGURE_OF[p.profile["workload"]]
        out = []
        if (text := self.today_figure_text(row, figure)) is not None:
            out.append(text)
        if p.rent:
            out.append(self.fill_plain("today.reason.rent", usd=self.num(row.cloud.usd, 2), provider=row.cloud.provider,
                                       date=self.date(row.cloud.date)))
        else:
            if row.count > 1:
                out.append(self.fill_plain("today.reason.split", count=row.count))
            out.append(self.fill_plain("today.reason.price", usd=self.num(row.buy_usd, 0),
                                       kind=self.ui_plain("today.kind." + row.buy_kind), date=self.date(row.buy.date)))
            value = row.per_dollar.get(figure)
            if value:
                energy = (row.kwh or 0) * ELECTRICITY_USD_PER_KWH
                out.append(self.fill_plain("today.reason.value", value=self.num(value, 2), years=OWNERSHIP_YEARS,
                                           energy=self.num(energy, 0), price=self.num(ELECTRICITY_USD_PER_KWH, 2)))
        if (text := self.today_support_text(row)) is not None:
            out.append(text)
        return out

    def today_left_text(self, reason: str) -> str:
        return self.ui_plain("today.left." + reason)

    def today_links(self, rows, base: str = "../gpus/") -> Markup:
        """Links to the cards (or builds) of rows, joined as the language lists things."""
        sep = self.ui_plain("punct.list_sep")
        return Markup(sep).join(Markup('<a href="{}{}/">{}</a>').format(base, safe_id(r.gpu), self.today_row_name(r))
                                for r in rows)

    # -- GPU pages
    def gpu_support(self, gpu):
        return support_of(self.ds, gpu)

    def support_status_text(self, s) -> str:
        if s.status == "legacy":
            return self.fill_plain("gpu.support_legacy", last=s.last or "—")
        return self.ui_plain("gpu.support_" + s.status)

    def support_features_text(self, s) -> str:
        feats = [label for key, label in FEATURE_LABELS if s.features.get(key)]
        feats += [f"FlashAttention {v}" for v in s.features.get("flash_attention") or ()]
        return self.ui_plain("punct.list_sep").join(feats) if feats else self.ui_plain("gpu.support_none")

    def gpu_prices(self, gid: str) -> list:
        """A card's dated prices, newest first, each with whether it is stale."""
        newest = self.today_newest()
        cut = newest - _dt.timedelta(days=STALE_DAYS) if newest else None
        return [(o, bool(cut and o.date < cut)) for o in reversed(observations(self.ds, gid))]

    def source_host(self, url: str) -> str:
        return urlsplit(url).hostname or url

    # -- the page's form and rows
    def today_workloads(self) -> list[str]:
        models = {f"decode_{key}" for key, mid, _w, _r in INFERENCE_MODELS if mid in self.ds.models}
        return [w for w, f in FIGURE_OF.items() if not f.startswith("decode_") or f in models]

    def today_workload_name(self, workload: str) -> str:
        return self.fill_plain("today.w_" + workload, model=self.today_model_of(FIGURE_OF[workload]) or "")

    def today_figure_of_json(self) -> str:
        return json.dumps(FIGURE_OF, separators=(",", ":"), sort_keys=True)

    def today_values_json(self, row: TodayRow) -> str:
        return json.dumps({k: v for k, v in row.figures.items() if v}, separators=(",", ":"), sort_keys=True)

    def today_support_key(self, row: TodayRow) -> str:
        return row.support.status if row.support else ""

    def persona_name(self, pid: str) -> str:
        return self.loc.persona(pid)

    def today_profile_text(self, p: Pick) -> str:
        prof = p.profile
        workload = self.today_workload_name(prof["workload"])
        if p.rent:
            return self.fill_plain("today.profile_rent", workload=workload)
        budget = self.fill_plain("today.profile_budget", usd=self.num(prof["budget_usd"], 0)) if prof.get("budget_usd") else ""
        memory = self.fill_plain("today.profile_memory", gb=self.num(prof["memory_gb"])) if prof.get("memory_gb") else ""
        speed = self.ui_plain("today.profile_speed") if prof.get("rank") == "speed" else ""
        return self.fill_plain("today.profile", workload=workload, budget=budget, memory=memory + speed)

    def today_versus(self) -> list:
        """Per reader profile: the cards the newest revision's advice in force names, and today's pick."""
        states = self.facts.states[self.ds.latest.id]
        out = []
        for p in self.today_picks():
            st = states.get(p.persona)
            out.append(Versus(p.persona, list(st.gpus) if st else [], p.row.gpu if p.row else None, p.row))
        return out


    def today_snapshot(self):
        """The newest kept snapshot of today's picks (data/snapshots/), or None."""
        return self.ds.snapshots[-1] if self.ds.snapshots else None

    def today_since_snapshot(self) -> list:
        """Per reader profile: the pick the newest snapshot kept, and today's."""
        snap = self.today_snapshot()
        kept = (snap.get("picks") or {}) if snap else {}
        return [Versus(p.persona, [kept[p.persona]["gpu"]] if p.persona in kept else [],
                       p.row.gpu if p.row else None, p.row) for p in self.today_picks()]


@dataclass(frozen=True)
class Versus:
    persona: str
    advised: list
    today: str | None
    row: TodayRow | None
