"""Today's answer: the buyer's price, software support, electricity, the picks per reader with their
reasons, the ranking's order, today.json, and the data rules behind them."""
from __future__ import annotations

import json

import pytest
from helpers import ROOT, TODAY

from generator.data.loader import load_dataset
from generator.facts.derive import derive
from generator.facts.support import support_of
from generator.facts.today import FIGURE_OF, OLD_WORKLOAD_KEYS, pick, rank
from generator.publish.api import today_document


@pytest.fixture(scope="module")
def shipped():
    ds, problems = load_dataset(ROOT / "data", ROOT)
    assert ds is not None, problems
    return ds


def test_a_reader_with_1500_usd_training_transformers_is_not_sent_to_a_maxwell_card(shipped):
    """The reader of the home form (1,500 USD, transformers, 24 GB) gets a card today's PyTorch
    runs, with bf16 and FlashAttention, bought at its used price where that is cheaper: the used
    RTX 3090 every buyer's guide names, not a 2015 Tesla M40 or a Tesla P40."""
    rows = derive(shipped).today
    p = pick(rows, {"workload": "transformer", "budget_usd": 1500, "memory_gb": 24})
    assert p.row is not None
    chosen = [p.row.gpu, *(a.gpu for a in p.alternatives)]
    assert "rtx-3090" in chosen, chosen
    assert not {"tesla-m40", "tesla-p40", "tesla-p100-pcie-16gb"} & set(chosen)
    assert p.row.support.status == "current" and p.row.support.features["bf16"]
    assert p.row.buy_usd <= 1500 and p.row.memory_gb >= 24
    m40 = next(r for r in rows if r.gpu == "tesla-m40")
    assert m40.support.status != "current"
    assert ("tesla-m40", "legacy-software") in {(r.gpu, why) for r, why in p.left_out} or m40.per_dollar.get(
        "training", 0) < p.row.per_dollar["training"]


def test_no_training_estimate_for_a_maker_whose_cards_no_training_result_measured(shipped):
    """The training coefficients are fitted on NVIDIA results alone: an AMD card's tensor figure
    says nothing of how ROCm trains, so the RX 7900 XTX gets no training figure (and no band) and
    ranks after the estimated cards, instead of heading the 1,500 USD reader's list on its spec sheet."""
    facts = derive(shipped)
    relative = facts.estimates["constants"]["relative"]
    assert relative["vendors"] == ["nvidia"]
    rows = {r.key: r for r in facts.today}
    assert rows["rx-7900-xtx"].figures["training"] is None
    assert rows["rtx-3090"].figures["training"] is not None
    p = pick(facts.today, {"workload": "transformer", "budget_usd": 1500, "memory_gb": 24})
    assert shipped.gpus[p.row.gpu]["vendor"] == "nvidia"
    ranked = [r.key for r in rank(facts.today, "transformer")]
    assert ranked.index("rx-7900-xtx") > ranked.index("rtx-3090")


def test_the_buyers_price_is_the_cheaper_of_new_and_used(shipped):
    rows = {r.gpu: r for r in derive(shipped).today if r.count == 1}
    r3090 = rows["rtx-3090"]
    assert r3090.buy_kind == "used" and r3090.buy_usd < 1000
    for r in rows.values():
        if r.new and r.used:
            assert r.buy_usd == min(r.new.usd, r.used.usd)


def test_support_follows_the_builds_of_todays_software(shipped):
    status = {gid: support_of(shipped, g).status for gid, g in shipped.gpus.items()}
    assert status["rtx-4090"] == status["rtx-5090"] == status["h100-sxm"] == "current"
    assert status["tesla-m40"] == status["tesla-p40"] == "legacy"
    assert support_of(shipped, shipped.gpus["tesla-p40"]).last  # names the last build that runs it
    assert all(s in ("current", "legacy", "unsupported") for s in status.values())


@pytest.mark.parametrize("workload", sorted(FIGURE_OF))
def test_every_ranking_sorts_and_cards_that_cannot_run_come_last(shipped, workload):
    rows = rank(derive(shipped).today, workload)
    figure = FIGURE_OF[workload]
    runs = [r.support is None or r.support.status == "current" for r in rows]
    assert runs == sorted(runs, reverse=True)  # every card today's software runs comes first
    first = [r for r, ok in zip(rows, runs, strict=True) if ok]
    has = [r.per_dollar.get(figure) is not None for r in first]
    assert has == sorted(has, reverse=True)  # then, among them, those with the figure first
    values = [r.per_dollar[figure] for r in first if r.per_dollar.get(figure) is not None]
    assert values and values == sorted(values, reverse=True)


def test_old_workload_keys_map_into_the_one_vocabulary():
    assert set(OLD_WORKLOAD_KEYS.values()) <= set(FIGURE_OF)


def test_today_json_has_the_documented_shape(shipped):
    doc = json.loads(json.dumps(today_document(shipped)))
    assert doc["schema_version"] == 1 and len(doc["as_of"]) == 10
    assert doc["picks"] and doc["rows"] and doc["excluded"]
    personas = {p["persona"] for p in doc["picks"]}
    assert personas == {pid for pid, p in shipped.personas.data.items() if p.get("today")}
    for p in doc["picks"]:
        if p["gpu"] is None:
            continue
        assert p["price_kind"] in ("new", "used", "cloud-hourly") and len(p["price_date"]) == 10
        assert p["price_usd"] > 0 and p["count"] >= 1
        assert p["reasons"] and all(isinstance(t, str) and t for t in p["reasons"])
        assert p["gpu"] not in p["alternatives"]
        assert all(a in shipped.gpus for a in p["alternatives"])
    buyers = [p for p in doc["picks"] if p["price_kind"] in ("new", "used")]
    # every bought pick's reasons say its speed with the error, its price and its software
    for p in buyers:
        text = " ".join(p["reasons"])
        assert "USD" in text and "median error" in text and "Today's builds run it" in text
    assert {e["reason"] for e in doc["excluded"]} <= {"unsupported", "legacy-software", "passive-cooling"}
    for r in doc["rows"]:
        assert r["buy_kind"] in ("new", "used", None) and r["support"] in ("current", "legacy", "unsupported")


def test_gpus_json_carries_support_and_cooling(shipped):
    from generator.facts.results import gpus_result

    for g in gpus_result(shipped):
        assert "cooling" in g
        s = g["support"]
        assert s["status"] in ("current", "legacy", "unsupported") and len(s["as_of"]) == 10
        assert isinstance(s["details"], list)


# ------------------------------------------------------------------ the data rules

SOFTWARE = """\
as_of: 2026-11-20
stacks:
  pytorch:
    name: PyTorch
    decides_status: true
    builds:
      - name: CUDA 13.0 wheels
        vendor: nvidia
        release: "2.14"
        date: 2026-10-15
        compute_capabilities: ["7.5", "8.0"]
        source: https://example.org/a
      - name: CUDA 12.6 wheels
        vendor: nvidia
        release: "2.14"
        date: 2026-10-15
        compute_capabilities: ["6.0"]
        legacy: true
        source: https://example.org/b
architectures:
  Pascal: {bf16: false, fp8: false, fp4: false, flash_attention: [], source: https://example.org/c}
  Turing: {bf16: false, fp8: false, fp4: false, flash_attention: [], source: https://example.org/d}
"""


def test_support_rule_on_a_small_dataset(tree):
    tree.write("software.yaml", SOFTWARE)
    ds, problems = load_dataset(tree.data, tree.root, today=TODAY)
    assert ds is not None, problems
    pascal = support_of(ds, ds.gpus["gtx-1060-6gb"])  # 6.1 runs a 6.0 build (same major, higher minor)
    turing = support_of(ds, ds.gpus["rtx-2070"])
    assert (pascal.status, pascal.last) == ("legacy", "PyTorch 2.14, CUDA 12.6 wheels")
    assert turing.status == "current" and turing.last is None


def test_an_architecture_without_features_is_reported_at_its_line(tree):
    tree.write("software.yaml", SOFTWARE.replace("  Turing:", "  Ampere:"))
    problems = tree.problems()
    assert any(p.startswith("data/gpus/nvidia/rtx-2070.yaml:") and "architecture 'Turing' has no features" in p
               and not p.startswith("data/gpus/nvidia/rtx-2070.yaml:1:") for p in problems), problems


def test_a_new_price_of_a_card_long_off_sale_is_refused_at_its_line(tree):
    tree.write("prices/gtx-1060-6gb.yaml", "observations:\n  - kind: used\n    usd: 90\n    date: 2026-06-01\n"
               "    source: https://example.org/used\n  - kind: street\n    usd: 399\n    date: 2026-03-06\n"
               "    source: https://example.org/new\n")
    problems = tree.problems()
    hits = [p for p in problems if "a street (new) price dated 2026-03-06" in p]
    assert hits and hits[0].startswith("data/prices/gtx-1060-6gb.yaml:6:"), problems
    tree.set("gpus/nvidia/gtx-1060-6gb.yaml", "discontinued", "2018-01-01")
    tree.write("prices/gtx-1060-6gb.yaml", "observations:\n  - kind: street\n    usd: 299\n    date: 2019-06-01\n"
               "    source: https://example.org/new\n")
    problems = tree.problems()
    assert any("discontinued on 2018-01-01" in p for p in problems), problems


def test_the_diff_counts_the_flowchart_and_compares_the_newest_advice_with_today(shipped):
    from generator.facts.diff import diff_revisions

    d = diff_revisions(shipped, "2020-09-20", "2023-01-30")
    assert {"rtx-4090", "rtx-4080", "rtx-4070-ti"} <= set(d.advised_added)
    from helpers import run_cli

    proc = run_cli("diff", "2023-01-30", "today", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["a"] == "2023-01-30" and doc["b"] == "today"
    picked = {p["persona"]: p["after"] for p in doc["personas"]}
    assert picked["best-overall"] and picked["best-overall"][0] in shipped.gpus
    proc = run_cli("diff", "today", "2023-01-30")
    assert proc.returncode == 2 and "today" in proc.stderr


def test_a_snapshot_keeps_todays_picks_and_the_next_picks_are_diffed_against_it(tmp_path):
    import shutil

    from helpers import run_cli

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data, ignore=shutil.ignore_patterns("snapshots"))
    proc = run_cli("new", "snapshot", "--data", str(data))
    assert proc.returncode == 0, proc.stderr
    (kept,) = (data / "snapshots").glob("*.yaml")
    ds, problems = load_dataset(data, tmp_path)
    assert ds is not None, problems
    snap = ds.snapshots[-1]
    assert snap.id == kept.stem == snap["as_of"].isoformat()
    picks = {p.persona: p for p in derive(ds).today_picks}
    assert {pid: k["gpu"] for pid, k in snap["picks"].items()} == {pid: p.row.gpu for pid, p in picks.items() if p.row}
    again = run_cli("new", "snapshot", "--data", str(data))  # the same prices: the same date, refused
    assert again.returncode == 2 and "already exists" in again.stderr
    # a changed pick shows in the diff against the snapshot
    text = kept.read_text(encoding="utf-8")
    text = text.replace("  best-overall:\n    gpu: ", "  best-overall:\n    gpu: rtx-2060\n    old: ", 1)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("    old: ")) + "\n"
    kept.write_text(text, encoding="utf-8")
    proc = run_cli("diff", f"snapshot:{kept.stem}", "today", "--data", str(data), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    changed = {p["persona"]: p for p in doc["personas"]}
    assert changed["best-overall"]["before"] == ["rtx-2060"]
    assert changed["best-overall"]["after"] == [picks["best-overall"].row.gpu]
    proc = run_cli("diff", "snapshot:1999-01-01", "today", "--data", str(data))
    assert proc.returncode == 2 and "no snapshot" in proc.stderr
