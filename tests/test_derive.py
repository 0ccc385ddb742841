"""The derive stage: each fact computed once, from the data, and read by everything that shows it."""
from __future__ import annotations

import datetime as dt

import pytest
from helpers import ROOT, loso_fixture, run_calc_js

from generator.data.loader import load_dataset
from generator.facts.derive import age, build_date, derive
from generator.facts.diff import advice_states
from generator.facts.prices import Price, current_price, revision_price
from generator.facts.today import ELECTRICITY_USD_PER_KWH


@pytest.fixture(scope="module")
def shipped():
    ds, problems = load_dataset(ROOT / "data", ROOT)
    assert ds is not None, problems
    return ds


def test_facts_are_built_once_per_dataset(shipped):
    facts = derive(shipped)
    assert derive(shipped) is facts
    assert facts.states is facts.states
    assert facts.states == advice_states(shipped)


def test_api_and_pages_read_the_same_advice(shipped):
    from generator.facts.results import revisions_result

    states = derive(shipped).states
    for item in revisions_result(shipped, states):
        assert item["advice_in_force"] == {p: {"gpus": s.gpus, "known": s.known} for p, s in states[item["date"]].items()}


def test_one_price_rule(shipped):
    """New: the revision's last street or launch quote, else the catalogue; used: its used quote
    first; a cloud price per hour is never a purchase price."""
    prices = derive(shipped).revision_prices
    seen_used = False
    for rev in shipped.revisions:
        quotes = {}
        for p in rev.get("prices") or ():
            quotes.setdefault(p["gpu"], []).append(p)
        for gid, gpu in shipped.gpus.items():
            entry = prices[rev.id].get(gid, {})
            new = [q for q in quotes.get(gid, []) if q["kind"] in ("street", "launch")]
            used = [q for q in quotes.get(gid, []) if q["kind"] == "used"]
            if new:
                assert entry["new"] == Price(new[-1]["usd"], new[-1]["kind"])
            elif gpu.get("launch_price_usd"):
                assert entry["new"] == Price(gpu["launch_price_usd"], "catalogue")
            else:
                assert "new" not in entry
            if used:
                seen_used = True
                assert entry["used"] == Price(used[-1]["usd"], "used")
            for basis in entry:
                assert entry[basis].source != "cloud-hourly"
    assert seen_used  # the shipped revisions quote used prices, so the rule is exercised


def test_revision_price_prefers_the_revisions_own_quote(shipped):
    rev = next(r for r in shipped.revisions if any(p["kind"] == "used" for p in r.get("prices") or ()))
    quote = next(p for p in rev["prices"] if p["kind"] == "used")
    gpu = shipped.gpus[quote["gpu"]]
    assert revision_price(rev, gpu, "used").usd == [p for p in rev["prices"]
                                                    if p["gpu"] == gpu.id and p["kind"] == "used"][-1]["usd"]
    assert revision_price(rev, gpu, "quoted").source in ("used", "street", "launch")


@pytest.mark.parametrize("since, until, expected", [
    ("2023-01-30", "2026-11-23", (3, 9)),
    ("2023-01-30", "2026-11-30", (3, 10)),
    ("2023-01-30", "2023-01-29", (0, 0)),
    ("2020-02-29", "2021-02-28", (0, 11)),
])
def test_age_in_whole_years_and_months(since, until, expected):
    assert age(dt.date.fromisoformat(since), dt.date.fromisoformat(until)) == expected


def test_advice_age_follows_source_date_epoch(shipped, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(dt.datetime(2026, 11, 23, tzinfo=dt.UTC).timestamp())))
    assert build_date() == dt.date(2026, 11, 23)
    facts = type(derive(shipped))(shipped)  # a fresh set of facts under this epoch
    a = facts.advice_age
    assert (a.newest, a.built, a.years, a.months) == ("2023-01-30", "2026-11-23", 3, 9)


def test_current_prices_are_the_newest_and_cloud_is_per_gpu(shipped):
    for gid, rec in shipped.prices.items():
        for kind in ("street", "used"):
            obs = [o for o in rec["observations"] if o["kind"] == kind]
            got = current_price(shipped, gid, kind)
            if obs:
                assert got.date == max(o["date"] for o in obs)
            else:
                assert got is None
        cloud = current_price(shipped, gid, "cloud-hourly")
        if cloud is not None:
            raw = [o for o in rec["observations"] if o["kind"] == "cloud-hourly" and o["provider"] == cloud.provider
                   and o["date"] == cloud.date]
            assert any(round(o["usd"] / o["gpus"], 4) == cloud.usd for o in raw)


def test_todays_cards_have_recent_prices_and_consistent_ratios(shipped):
    rows = derive(shipped).today
    assert len(rows) >= 30
    newest = max(o["date"] for rec in shipped.prices.values() for o in rec["observations"])
    for r in rows:
        dated = [o for o in (r.new, r.used, r.cloud) if o is not None]
        assert dated and all((newest - o.date).days <= 2 * 366 for o in dated)
        if r.buy_usd:
            # per dollar of the price plus the electricity of the ownership period
            cost = r.buy_usd + (r.kwh or 0) * ELECTRICITY_USD_PER_KWH
            assert r.kwh is None or r.kwh > 0
            assert r.per_dollar["memory"] == pytest.approx(r.memory_gb / cost * 100, rel=1e-3)
            if r.figures["training"]:
                assert r.per_dollar["training"] == pytest.approx(r.figures["training"] / cost * 1000, rel=1e-3)
            # the buyer's price is the cheaper of the recent new and used prices
            assert r.buy_usd == pytest.approx(r.count * min(o.usd for o in (r.new, r.used) if o), rel=1e-6)
        if r.cloud and r.buy_usd and r.count == 1:
            assert r.break_even_hours == pytest.approx(r.buy_usd / r.cloud.usd, rel=1e-3)
    unified = [r for r in rows if shipped.gpus[r.gpu].get("unified_memory")]
    for r in unified:  # the GPU's usable share of unified memory, not the whole of it
        gpu = shipped.gpus[r.gpu]
        assert r.memory_gb == pytest.approx(gpu["memory_gb"] * gpu["gpu_memory_share"], abs=0.05)


def test_measurements_are_set_beside_their_estimates(shipped):
    measured = derive(shipped).measured
    assert len(measured) == sum(len(m["results"]) for m in shipped.measurements)
    with_estimate = [m for m in measured if m["estimate"]]
    assert len(with_estimate) >= 0.9 * len(measured)
    for m in with_estimate:
        assert m["error_pct"] == pytest.approx((m["estimate"] - m["value"]) / m["value"] * 100, abs=0.051)


def test_published_error_figures_are_what_the_model_gives(shipped):
    """The error table the pages print equals a fresh computation on the shipped data."""
    from generator.estimate import accuracy
    from generator.facts.engine_input import from_dataset

    facts = derive(shipped)
    bundle = from_dataset(shipped)
    fresh = accuracy(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions, facts.estimates["constants"])
    import json

    assert json.loads(json.dumps(fresh)) == facts.estimates["errors"]


def _pick(ds, **raw):
    from generator.publish.api import client_data

    data = client_data(ds)
    out = run_calc_js("picker", {"memory": "8", "prices": "new", **raw}, data=data)
    assert out["errors"] == {}, out["errors"]
    return out["result"]


def test_picker_follows_the_revision_it_applies(shipped):
    """The newest advice tells an individual who trains transformers to buy an RTX 4090, or a used
    RTX 3090 or 3090 Ti when the 4090 is out of reach: the picker ranks those first, priced used at
    the dated observation nearest the revision, and names no AMD card above them."""
    latest = shipped.latest.id
    low = _pick(shipped, workload="transformer", memory="24", budget="1500", revision=latest)
    assert low["advisedFrom"] == "tree"
    first = low["rows"][0]
    assert first["id"] in ("rtx-3090", "rtx-3090-ti"), [r["id"] for r in low["rows"][:5]]
    assert first["advised"] == "alternative" and first["advisedUsed"] and first["priceSource"] == "observed"
    assert first["priceDate"] and first["price"] < 1499
    assert {r["id"] for r in low["rows"][:2]} == {"rtx-3090", "rtx-3090-ti"}
    high = _pick(shipped, workload="transformer", memory="24", budget="2000", revision=latest)
    assert high["rows"][0]["id"] == "rtx-4090" and high["rows"][0]["advised"] == "recommended"
    assert high["reference"] == "rtx-4090"


def test_picker_flags_what_the_revision_advised_against(shipped):
    """2020-09-07 advised against AMD cards and the Titans: none of them is ranked above a card it
    did not advise against, and each carries its flag."""
    result = _pick(shipped, workload="cnn", memory="8", budget="3000", revision="2020-09-07")
    flags = [r["flag"] for r in result["rows"]]
    assert "vendor" in flags and "avoid" in flags
    first_flag = flags.index(next(f for f in flags if f))
    assert all(f is None for f in flags[:first_flag]) and all(f for f in flags[first_flag:])
    # the cards it advised come before the ones it did not name
    roles = [r["advised"] for r in result["rows"] if not r["flag"]]
    assert roles[0] == "recommended" and None in roles
    assert roles.index(None) > max(i for i, r in enumerate(roles) if r == "recommended")


def test_picker_today_mode_is_the_models_figure_at_dated_prices(shipped):
    from generator.publish.api import client_data

    result = _pick(shipped, workload="llm-inference", memory="16", budget="2000", revision="today")
    assert result["mode"] == "today" and result["metric"] == "decode"
    assert result["error"]["median_pct"] > 0 and result["error"]["p90_pct"] >= result["error"]["median_pct"]
    # with the band the picker prints: each source left out of the fit in turn
    unseen = derive(shipped).estimates["errors"]["decode_tokens_per_s"]["llama.cpp"]["unseen"]
    assert result["error"]["unseen"] == {"median_pct": unseen["median_pct"], "p90_pct": unseen["p90_pct"]}
    rows = result["rows"]
    assert rows and all(r["priceSource"] in ("observed-new", "observed-used") and r["priceDate"] for r in rows)
    supported = {g["id"]: g["support"]["status"] for g in client_data(shipped)["gpus"]}
    assert all(supported[r["id"]] == "current" for r in rows)  # cards today's software does not run are left out
    assert all(r["memory_gb"] >= 16 and r["price"] <= 2000 for r in rows)
    values = [r["value"] for r in rows]
    assert values == sorted(values, reverse=True)
    newest = dt.date.fromisoformat(result["newest"])
    assert all(dt.date.fromisoformat(r["priceDate"]) <= newest for r in rows)


def test_fit_digest_follows_only_what_the_engine_reads(shipped):
    """The fitted constants are reused when a note, a price or a power figure changes, and fitted
    again when a figure the engine reads changes; every GPU field the engine's code reads is in the
    list the digest keeps."""
    import copy
    import re

    from generator.facts.engine_input import ENGINE_GPU_FIELDS
    from generator.facts.estimates import _digest

    bundle = derive(shipped).bundle
    base = _digest(bundle)
    # kept by record (the preview's reload serializes only the records that changed): the same digest
    assert derive(shipped).fit_digest == base
    for field, value, same in (("notes", "edited", True), ("tdp_w", 1, True), ("launch_price_usd", 1, True),
                               ("memory_bandwidth_gbs", 1.0, False), ("fp16_tensor_tflops", 1.0, False)):
        other = copy.copy(bundle)
        other.gpus = {gid: dict(gpu) for gid, gpu in bundle.gpus.items()}
        other.gpus["rtx-4090"][field] = value
        assert (_digest(other) == base) is same, field
    read = set()
    for src in (ROOT / "generator" / "estimate").glob("*.py"):
        read |= set(re.findall(r"\b(?:gpu|ref|reference|card)(?:\.get\(|\[)\"([a-z0-9_]+)\"", src.read_text()))
    assert read and read <= ENGINE_GPU_FIELDS, read - ENGINE_GPU_FIELDS


def test_grid_cells_are_reused_only_while_their_inputs_are_unchanged(shipped, tmp_path):
    """A second dataset with one card changed gets that card's cells computed again and every other
    cell as it was: the preview's rebuild does not grow with the catalogue."""
    import shutil

    from generator.data.loader import load_dataset

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    first = derive(load_dataset(data, tmp_path)[0]).grid
    measured = {m["gpu"] for m in derive(shipped).bundle.measurements}
    gid, path = next((p.stem, p) for p in sorted((data / "gpus").rglob("*.yaml")) if p.stem not in measured

                     and "memory_bandwidth_gbs: " in p.read_text() and any(k[1] == p.stem for k in first))
    text = path.read_text()
    old = next(line for line in text.splitlines() if line.startswith("memory_bandwidth_gbs: "))
    path.write_text(text.replace(old, "memory_bandwidth_gbs: 10.0"))
    second = derive(load_dataset(data, tmp_path)[0]).grid
    assert first.keys() == second.keys()
    changed = {key for key in first if first[key] is not second[key]}
    assert changed and {g for _, g in changed} == {gid}
    # a setup that does not fit has no speed: compare one that fits before and after
    one = next(k for k in changed if first[k]["decode_tokens_per_s"] and second[k]["decode_tokens_per_s"])
    assert second[one]["decode_tokens_per_s"] < first[one]["decode_tokens_per_s"]


def test_a_reload_estimates_again_only_what_changed(tmp_path, monkeypatch):
    """The preview reloads the data on every edit. A card's power figure (not read by the engine)
    edited: the measured rows keep their estimates without the engine, and the grid's cells are
    the same objects; an edit of what the engine reads refits and computes every row again."""
    import shutil

    from generator import reuse
    from generator.estimate import fitting

    shutil.copytree(ROOT / "data", tmp_path / "data")
    # the same bytes under the same names are the same rows: start from empty caches
    reuse.PREDICTED.clear()
    reuse.GRID.clear()
    calls = []
    real = fitting.predict
    monkeypatch.setattr(fitting, "predict", lambda *a, **k: calls.append(1) or real(*a, **k))
    first, _ = load_dataset(tmp_path / "data", root=tmp_path)
    before = derive(first).measured
    computed = len(calls)
    assert computed > 500
    card = tmp_path / "data" / "gpus" / "nvidia" / "rtx-4090.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("tdp_w: 450", "tdp_w: 451"), encoding="utf-8")
    second, _ = load_dataset(tmp_path / "data", root=tmp_path)
    assert second.gpus["rtx-4090"].get("tdp_w") == 451
    after = derive(second).measured
    assert len(calls) == computed and after == before
    assert derive(second).grid_cell("llama-3-1-8b", "rtx-4090") is derive(first).grid_cell("llama-3-1-8b", "rtx-4090")
    card.write_text(card.read_text(encoding="utf-8").replace("memory_bandwidth_gbs: 1008.0", "memory_bandwidth_gbs: 1010.0"),
                    encoding="utf-8")
    third, _ = load_dataset(tmp_path / "data", root=tmp_path)
    changed = derive(third).measured
    assert len(calls) >= 2 * computed  # the fit, then every row again
    mine = [(a, b) for a, b in zip(before, changed, strict=True) if a["gpu"] == "rtx-4090" and a["estimate"]]
    assert mine and all(b["estimate"] != a["estimate"] for a, b in mine if a["metric"] == "decode_tokens_per_s")


def test_the_fit_digest_serializes_again_only_the_records_that_changed(shipped, tmp_path, monkeypatch):
    """A reload gives unchanged files' records as the same objects: the digest of the fit's
    inputs serializes again only a changed card (and, changed or not, the answer is a full
    computation's)."""
    import shutil

    import generator.facts.estimates as derive_module
    from generator.data.loader import load_dataset
    from generator.facts.derive import Derived
    from generator.facts.estimates import _digest

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    first = Derived(load_dataset(data, tmp_path)[0]).fit_digest
    measured = sorted({m["gpu"] for m in derive(shipped).bundle.measurements})
    path = next(p for p in sorted((data / "gpus").rglob("*.yaml")) if p.stem == measured[0])
    text = path.read_text(encoding="utf-8")
    old = next(line for line in text.splitlines() if line.startswith("memory_bandwidth_gbs: "))
    path.write_text(text.replace(old, "memory_bandwidth_gbs: 10.0"), encoding="utf-8")
    made = []
    real = derive_module._engine_view
    monkeypatch.setattr(derive_module, "_engine_view", lambda gpu, fields: made.append(gpu["id"]) or real(gpu, fields))
    ds = load_dataset(data, tmp_path, changed=[path])[0]
    second = Derived(ds).fit_digest
    assert made == [measured[0]]
    assert second != first and second == _digest(Derived(ds).bundle)


def test_each_page_finds_its_measurements_without_reading_all_of_them_again():
    """A build of every page in one process (the preview's) asks for the measurements of each
    card and model: they are grouped in one pass, and each answer is what the whole list gives."""
    from generator.facts.derive import Derived

    ds, problems = load_dataset(ROOT / "data", ROOT)
    assert ds is not None, problems
    facts = derive(ds)
    passes = []

    class Counted(list):
        def __iter__(self):
            passes.append(1)
            return super().__iter__()

    facts.bundle.measurements = Counted(facts.bundle.measurements)
    gpus = sorted({m["gpu"] for m in facts.bundle.measurements})
    models = sorted({m["model"] for m in facts.bundle.measurements if m.get("model")})
    facts.measured_where("gpu", gpus[0]), facts.measured_where("model", models[0])  # the passes that group them
    passes.clear()
    by_gpu = {g: facts.measured_where("gpu", g) for g in gpus}
    by_model = {m: facts.measured_where("model", m) for m in models}
    assert passes == [] and len(gpus) > 20 and len(models) > 10
    whole = Derived.measured.func(facts)
    for g in gpus:
        assert by_gpu[g] == [r for r in whole if r["gpu"] == g]
    for m in models:
        assert by_model[m] == [r for r in whole if r.get("model") == m]
    assert facts.measured_where("gpu", "no-such-card") == []


def test_a_revisions_prices_are_worked_out_for_the_cards_read(shipped):
    """Every card of every revision is 20 million entries at a hundred times the data; a page
    reads a few, and only those are worked out. Reading them all gives every priced card."""
    ds, problems = load_dataset(ROOT / "data", ROOT)
    assert ds is not None, problems
    rev = next(r for r in reversed(ds.revisions) if r.get("prices"))
    prices = derive(ds).revision_prices[rev.id]
    assert prices.done == {}
    quoted = rev["prices"][0]["gpu"]
    assert prices[quoted] and set(prices.done) == {quoted}
    priced = {gid for gid, gpu in ds.gpus.items() if gpu.get("launch_price_usd")} | {p["gpu"] for p in rev.get("prices") or ()}
    assert set(prices) == priced and len(prices) == len(priced)
    assert prices.get("no-such-card") is None and "no-such-card" not in prices


def test_a_reload_with_no_revision_changed_keeps_the_advice_states_and_the_histories(tmp_path):
    """What is computed from the revisions alone (the advice in force, each card's history) is
    kept by the revision records: a reload after a card's edit gives the same answer objects; a
    revision's edit gives new ones, which are what a fresh computation gives."""
    import shutil

    from generator.facts.derive import Derived
    from generator.facts.diff import advice_states
    from generator.facts.history import history_index

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    first = Derived(load_dataset(data, tmp_path)[0])
    states, history = first.states, first.history
    card = data / "gpus" / "nvidia" / "rtx-4090.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("tdp_w: 450", "tdp_w: 451"), encoding="utf-8")
    second = Derived(load_dataset(data, tmp_path, changed=[card])[0])
    assert second.ds.gpus["rtx-4090"]["tdp_w"] == 451
    assert second.states is states and second.history is history
    rev = data / "revisions" / "2019-04-03.yaml"
    text = rev.read_text(encoding="utf-8")
    assert "avoid: [titan-rtx, titan-v, titan-xp]" in text
    rev.write_text(text.replace("avoid: [titan-rtx, titan-v, titan-xp]", "avoid: [titan-v, titan-xp]"), encoding="utf-8")
    third = Derived(load_dataset(data, tmp_path, changed=[rev])[0])
    assert third.history is not history and third.states is not states
    assert third.history == history_index(third.ds, advice_states(third.ds))
    was = [m for m in history["titan-rtx"] if m.date == "2019-04-03"]
    now = [m for m in third.history.get("titan-rtx", []) if m.date == "2019-04-03"]
    assert was[0].avoided and not (now and now[0].avoided)


def test_the_open_pages_render_works_out_no_diff_of_a_page_it_does_not_render(shipped, monkeypatch):
    """The diff pages' comparisons are worked out for the pages rendered: the preview's render of
    one card's page (of 1,800 diff pages at a hundred times the data) computes none."""
    from generator.facts.derive import Derived
    from generator.publish.render import render_language

    done = []
    real = Derived.diff
    monkeypatch.setattr(Derived, "diff", lambda self, a, b: done.append((a, b)) or real(self, a, b))
    templates = ROOT / "templates" / "pages"
    pages = render_language(shipped, "en", templates, only={"gpus/rtx-4090.md"})
    assert [p.path for p in pages if p.path.endswith(".md")] == ["gpus/rtx-4090.md"] and done == []
    a, b = shipped.revisions[-2].id, shipped.revisions[-1].id
    pages = render_language(shipped, "en", templates, only={f"diffs/{a}_{b}.md"})
    assert done == [(a, b)] and [p.path for p in pages] == [f"diffs/{a}_{b}.md"]


def test_the_measurements_are_grouped_again_only_when_a_measurement_file_changed(tmp_path):
    """A reload after a card's edit finds each card's measured rows without going through every
    row again (the same grouping); a measurement file's edit groups them again, as a fresh load
    would."""
    import shutil

    from generator.facts.derive import Derived
    from generator.facts.estimates import _index_rows

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    first = Derived(load_dataset(data, tmp_path)[0])
    by_gpu = first._rows_by("gpu")
    card = data / "gpus" / "nvidia" / "rtx-4090.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("tdp_w: 450", "tdp_w: 451"), encoding="utf-8")
    second = Derived(load_dataset(data, tmp_path, changed=[card])[0])
    assert second._rows_by("gpu") is by_gpu
    path = next(p for p in sorted((data / "measurements").glob("*.yaml")) if "rtx-4090" in p.read_text(encoding="utf-8"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("gpu: rtx-4090", "gpu: rtx-3090", 1), encoding="utf-8")
    third = Derived(load_dataset(data, tmp_path, changed=[path])[0])
    regrouped = third._rows_by("gpu")
    assert regrouped is not by_gpu and regrouped == _index_rows(third.bundle.measurements, "gpu")
    assert len(regrouped["rtx-4090"]) == len(by_gpu["rtx-4090"]) - 1


def test_after_a_cards_edit_in_place_the_bundle_and_the_digest_come_from_the_last_ones(tmp_path, monkeypatch):
    """The preview's reload names the card edited (generator.data.loader.changes): the engine's
    bundle is the last one with that card's dict replaced, and the fit digest is the last one
    when nothing the engine reads of the card changed, with no pass over every card; both are
    what a computation from nothing gives. An edit of what the engine reads digests again."""
    import shutil

    import generator.facts.estimates as derive_module
    from generator.facts.engine_input import from_dataset
    from generator.facts.estimates import _digest

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    first = derive(load_dataset(data, tmp_path)[0])
    digest, bundle = first.fit_digest, first.bundle
    card = data / "gpus" / "nvidia" / "rtx-4090.yaml"
    digests = []
    monkeypatch.setattr(derive_module, "_digest", lambda *a: digests.append(1) or _digest(*a))

    def reload(old: str, new: str):
        card.write_text(card.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        ds = load_dataset(data, tmp_path, changed=[card])[0]
        return derive(ds)

    second = reload("tdp_w: 450", "tdp_w: 451")
    assert second.fit_digest == digest and digests == []
    assert second.bundle is not bundle and second.bundle == from_dataset(second.ds)
    assert second.bundle.gpus["rtx-4090"] is not bundle.gpus["rtx-4090"]
    assert second.bundle.gpus["rtx-3090"] is bundle.gpus["rtx-3090"]
    assert second.bundle.measurements is bundle.measurements
    third = reload("memory_bandwidth_gbs: 1008.0", "memory_bandwidth_gbs: 1010.0")
    assert third.fit_digest != digest and digests == [1]
    assert third.fit_digest == _digest(from_dataset(third.ds))
    assert third.bundle == from_dataset(third.ds)
    # a load that is not told what was written knows nothing of the last one
    full = derive(load_dataset(data, tmp_path)[0])
    assert full.fit_digest == third.fit_digest and len(digests) == 2


def test_leave_one_source_out_errors_are_kept_between_builds(tmp_path, monkeypatch):
    """The costly part of the published table, a fit per source left out, is kept in a reuse.Kept
    file by fit digest and source: a build that has lost the fitted table reads them back without
    fitting again, and a new digest computes them again and keeps only its own."""
    import json

    import generator.facts.estimates as estimates_module
    from generator.estimate import fit_error
    from generator.estimate.bundle import Bundle

    models, gpus, rows = loso_fixture()
    bundle = Bundle(models=models, gpus=gpus, measurements=rows, revisions=[])
    monkeypatch.setattr(estimates_module, "CACHE_DIR", tmp_path)
    first = estimates_module.published_estimates(bundle, "digest-1")
    kept = json.loads((tmp_path / estimates_module.HELD_OUT_FILE).read_text(encoding="utf-8"))
    assert sorted(kept["answers"]) == ["digest-1/src-a", "digest-1/src-b", "digest-1/src-c"]
    assert first["errors"]["decode_tokens_per_s"]["all"]["unseen"]["sources"] == 3
    (tmp_path / "estimate-digest-1.json").unlink()
    real = fit_error.held_out_errors
    monkeypatch.setattr(fit_error, "held_out_errors", lambda *a, **k: pytest.fail("fitted again"))
    assert estimates_module.published_estimates(bundle, "digest-1") == first
    monkeypatch.setattr(fit_error, "held_out_errors", real)
    assert estimates_module.published_estimates(bundle, "digest-2") == first
    kept = json.loads((tmp_path / estimates_module.HELD_OUT_FILE).read_text(encoding="utf-8"))
    assert sorted(kept["answers"]) == ["digest-2/src-a", "digest-2/src-b", "digest-2/src-c"]
