"""What a model's page and the list of models say: the cards a reader can buy stand beside the
datacenter ones, each with a link to the calculator; a model shipped in its own 4-bit format is
sized in that format everywhere; the engine refuses a context beyond the model and more GPUs than
layers, on the command line as in the browser (one rule in tables.json)."""
from __future__ import annotations

import pytest
from helpers import ROOT, run_cli

from generator.data.loader import load_dataset
from generator.estimate import estimate
from generator.publish.render import Context


@pytest.fixture(scope="module")
def english():
    ds, problems = load_dataset(ROOT / "data", ROOT)
    assert ds is not None, problems
    return Context(ds, "en")


def test_cards_that_run_a_32b_model_include_the_cards_a_reader_buys(english):
    groups = dict(english.cards_for("qwen3-32b"))
    consumer = [gid for gid, _e in groups["consumer"]]
    assert {"rtx-4090", "rtx-5090"} <= set(consumer), consumer
    assert "datacenter" in groups
    for _segment, cards in groups.items():
        speeds = [e["decode_tokens_per_s"] for _gid, e in cards]
        assert speeds == sorted(speeds, reverse=True)


def test_the_lists_computed_in_llama_cpp_name_only_cards_llama_cpp_runs_on(english):
    """The model pages' cards and the GPU pages' models are llama.cpp estimates: a card no build of
    llama.cpp runs (TPUs, Trainium, Gaudi, Fermi and Kepler cards, data/software.yaml) is in neither;
    its GPU page says so in place of an empty table, in every language."""
    from generator.facts.support import runtime_cards

    runs = set(runtime_cards(english.ds)["llama.cpp"])
    assert {"tpu-v7", "trainium2", "gaudi-3", "gtx-580-3gb"}.isdisjoint(runs)
    assert {"radeon-ai-pro-r9700", "ryzen-ai-max-plus-395", "rtx-4090", "apple-m4-max"} <= runs
    for mid in ("glm-4-5v", "qwen3-32b", "llama-3-1-8b"):
        listed = {gid for _segment, cards in english.cards_for(mid) for gid, _e in cards}
        assert listed and listed <= runs, listed - runs
    assert english.runs_on("tpu-v7") == [] and english.runs_on("radeon-ai-pro-r9700")
    assert {gid for (_mid, gid) in english.facts.grid} <= runs
    for lang in ("en", "ko", "zh", "fr"):
        page = Context(english.ds, lang)
        text = page.fill("gpu.runs_none", link="L")
        assert text and "{" not in text and "L" in text, lang


def test_a_card_llama_cpp_does_not_run_gets_a_sentence_not_an_empty_table(tmp_path):
    from generator.site.pipeline import Paths, generate_language, load_or_fail

    paths = Paths(root=ROOT, data=ROOT / "data", build=tmp_path / "build", site=tmp_path / "site")
    ds = load_or_fail(paths)
    generate_language(ds, paths, "fr", only={"gpus/tpu-v7.md", "gpus/rtx-4090.md"})
    docs = paths.build / "docs" / "fr" / "gpus"
    tpu, rtx = ((docs / f"{gid}.md").read_text(encoding="utf-8") for gid in ("tpu-v7", "rtx-4090"))
    fits = tpu.split("{ #fits", 1)[1].split("\n## ", 1)[0]
    assert "Aucun build de llama" in fits and "<table" not in fits
    assert "Aucun build de llama" not in rtx and "Qwen3 32B" in rtx.split("{ #fits", 1)[1].split("\n## ", 1)[0]


def test_the_calculator_link_of_each_listed_card_opens_the_setup_the_list_shows(english):
    """The list is computed at Q4_K_M in llama.cpp at 4,096 tokens: the link carries those
    conditions, so the calculator opens on a setup that fits, not on its own BF16 default."""
    from urllib.parse import parse_qs

    from markupsafe import Markup

    facts = english.facts
    for _segment, cards in english.cards_for("qwen3-32b"):
        for gid, _e in cards:
            query = english.calc_query("qwen3-32b", gid)
            assert isinstance(query, Markup) and "&amp;" in query  # escaped once, for the attribute
            opts = {k: v[0] for k, v in parse_qs(str(query).replace("&amp;", "&")).items()}
            assert opts["model"] == "qwen3-32b" and opts["card"] == gid
            calc = estimate(facts.bundle.models["qwen3-32b"], facts.bundle.gpus[gid],
                            {"runtime": opts["runtime"], "weights": opts["weights"], "context": int(opts["context"])},
                            facts.estimates)
            assert calc["fits"], (gid, opts)


def test_a_model_shipped_in_mxfp4_is_sized_in_mxfp4_on_the_list_and_in_the_calculator(english):
    facts = english.facts
    model = facts.bundle.models["gpt-oss-120b"]
    ref = facts.estimates["reference"]
    calc = estimate(model, ref, {"weights": "mxfp4", "runtime": "llama.cpp", "context": 4096}, facts.estimates)
    assert english.model_four_bit("gpt-oss-120b") == pytest.approx(calc["memory"]["total_bytes"] / 1024 ** 3, rel=1e-9)
    labels = [label for label, _row in english.model_memory("gpt-oss-120b")]
    assert labels[0].startswith("MXFP4") and not any(label.startswith("Q4_K_M") for label in labels)
    # a model without a format of its own keeps the Q4_K_M row first
    assert english.model_memory("llama-3-1-8b")[0][0].startswith("Q4_K_M")


@pytest.mark.parametrize("args, says", [
    (["--context", "10000000"], "beyond the model's longest context, 131072 tokens"),
    (["--gpus", "1000"], "cannot be split over more GPUs than layers"),
])
def test_the_command_refuses_what_the_model_cannot_take(args, says):
    proc = run_cli("estimate", "--gpu", "rtx-4090", "--model", "qwen3-32b", *args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    ok = run_cli("estimate", "--gpu", "rtx-4090", "--model", "qwen3-32b", "--context", "131072", "--format", "json")
    assert ok.returncode == 0, ok.stderr
