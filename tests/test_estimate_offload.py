"""Offload, backends, MLX's formats, front ends and the shortfall of a setup that does not fit
(generator/estimate/offload.py and engine.py), each checked against figures worked out by hand
from the formulas of generator/estimate/README.md."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from generator.estimate import memory, offload, speed
from generator.estimate.engine import EstimateError, estimate, resolve_options

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "estimate.json").read_text(encoding="utf-8"))
TABLE, MODELS, GPUS = FIXTURE["table"], FIXTURE["models"], FIXTURE["gpus"]
QWEN, L70, L8 = MODELS["qwen3-30b-a3b"], MODELS["llama-3-1-70b"], MODELS["llama-3-1-8b"]
GIB = 1024 ** 3


def test_parse_offload():
    assert offload.parse_offload("none", QWEN) == {"kind": "none", "n": None}
    assert offload.parse_offload("experts", QWEN) == {"kind": "experts", "n": 48}  # every layer of Qwen3-30B-A3B is MoE
    assert offload.parse_offload("experts:12", QWEN) == {"kind": "experts", "n": 12}
    assert offload.parse_offload(" Layers:80 ", L70) == {"kind": "layers", "n": 80}
    for bad in ("layers:81", "layers", "experts:49", "x", "layers:-1", "auto:3"):
        model = L70 if bad.startswith("layers") else QWEN
        assert offload.parse_offload(bad, model) is None, bad
    assert offload.moe_layers(L70) == 0 and offload.parse_offload("experts:0", L70) == {"kind": "experts", "n": 0}


def test_experts_moved_by_hand():
    w = memory.weights_parts(QWEN, "q8_0", "llama.cpp")
    per_layer = w["experts"] / 48
    assert offload.experts_moved(QWEN, w, 0, 12) == pytest.approx(12 * per_layer, rel=1e-12)
    # 40 layers on the card, the experts of 45 asked for: only the card's 40 layers' worth can move
    assert offload.experts_moved(QWEN, w, 8, 45) == pytest.approx(40 * per_layer, rel=1e-12)
    assert offload.experts_moved(L70, memory.weights_parts(L70, "q8_0"), 0, 10) == 0.0


def test_expert_offload_moves_bytes_from_the_card_to_the_host():
    o = resolve_options({"weights": "q8_0"})
    base = offload.split_memory(QWEN, o, None, 4096, {"host_layers": 0, "expert_layers": 0})
    moved = offload.split_memory(QWEN, o, None, 4096, {"host_layers": 0, "expert_layers": 12})
    x = memory.weights_parts(QWEN, "q8_0", "llama.cpp")["experts"] * 12 / 48
    assert base["total_bytes"] - moved["total_bytes"] == pytest.approx(x, rel=1e-12)
    assert moved["host_bytes"] - base["host_bytes"] == pytest.approx(x, rel=1e-12)
    assert moved["kv_cache_bytes"] == base["kv_cache_bytes"]  # the cache stays on the card


def test_decode_with_experts_in_host_memory_by_hand():
    """Step = card bytes / (bandwidth x eff_bw) + host bytes / (host bandwidth x eff_cpu) + per-step costs:
    moving x bytes of the experts read per token costs x / (host x eff_cpu) - x / (card x eff_bw)."""
    gpu, constants = GPUS["rtx-4090"], TABLE["constants"]
    o = resolve_options({"weights": "q8_0", "offload": "experts:12", "host_bandwidth_gbs": 80})
    k = speed.speed_constants(constants, "llama.cpp", gpu)
    split = {"host_layers": 0, "expert_layers": 12}
    t = speed.decode_terms(QWEN, gpu, "q8_0", "f16", 4096, 1, "llama.cpp", 1, 48, constants)
    before = 1 / speed.decode_from_terms(t, k)
    after = 1 / speed.decode_from_terms(offload.adjust_decode_terms(t, QWEN, gpu, o, k, split), k)
    x = memory.weights_parts(QWEN, "q8_0", "llama.cpp")["experts"] * 12 / 48 * memory.expert_fraction(QWEN, 1)
    expected = x / (80e9 * k["eff_cpu"]) - x / (gpu["memory_bandwidth_gbs"] * 1e9 * k["eff_bw"])
    assert after - before == pytest.approx(expected, rel=1e-9)
    r = estimate(QWEN, gpu, o, TABLE)
    assert r["decode_tokens_per_s"] == pytest.approx(1 / after, rel=1e-12)


def test_prefill_copies_the_host_experts_over_pcie_once_per_micro_batch():
    gpu, constants = GPUS["rtx-4090"], TABLE["constants"]
    o = resolve_options({"weights": "q8_0", "context": 2048, "pcie_gbs": 16})
    k = speed.speed_constants(constants, "llama.cpp", gpu)
    p = speed.prefill_terms(QWEN, gpu, "q8_0", 2048, 1, "llama.cpp", 1, 48, constants)
    assert p["pcie_s"] == 0
    adjusted = offload.adjust_prefill_terms(p, QWEN, o, k, {"host_layers": 0, "expert_layers": 48})
    w = memory.weights_parts(QWEN, "q8_0", "llama.cpp")
    assert adjusted["pcie_s"] == pytest.approx(4 * w["experts"] * memory.expert_fraction(QWEN, 512) / 16e9, rel=1e-12)


def test_host_bandwidth_by_platform():
    assert offload.host_bandwidth_gbs(GPUS["rtx-4090"]) == 60.0
    assert offload.host_bandwidth_gbs(GPUS["h100-sxm"]) == 240.0
    assert offload.host_bandwidth_gbs(GPUS["apple-m3-max"]) == GPUS["apple-m3-max"]["memory_bandwidth_gbs"]
    assert offload.host_bandwidth_gbs(GPUS["rtx-4090"], 90) == 90.0


def test_auto_takes_the_fewest_expert_layers_that_fit_then_layers():
    gpu = GPUS["rtx-4090"]
    r = estimate(QWEN, gpu, {"weights": "q8_0", "offload": "auto"}, TABLE)
    e = r["offload"]["expert_layers"]
    assert r["fits"] and r["offload"]["host_layers"] == 0 and 0 < e < 48
    one_less = estimate(QWEN, gpu, {"weights": "q8_0", "offload": f"experts:{e - 1}"}, TABLE)
    assert not one_less["fits"] and one_less["decode_tokens_per_s"] is None
    dense = estimate(L70, gpu, {"weights": "q4_k_m", "offload": "auto"}, TABLE)
    h = dense["offload"]["host_layers"]
    assert dense["fits"] and 0 < h < 80 and dense["offload"]["expert_layers"] == 0
    assert not estimate(L70, gpu, {"weights": "q4_k_m", "offload": f"layers:{h - 1}"}, TABLE)["fits"]


def test_too_little_host_memory_does_not_fit():
    r = estimate(L70, GPUS["rtx-4090"], {"weights": "q4_k_m", "offload": "auto", "host_memory_gb": 8}, TABLE)
    assert not r["fits"] and r["decode_tokens_per_s"] is None and r["prefill_tokens_per_s"] is None
    assert r["shortfall"]["host_bytes"] == pytest.approx(r["memory"]["host_bytes"] - 8 * GIB)


def test_a_setup_that_does_not_fit_has_no_speed_but_what_would_fit():
    gpu = GPUS["rtx-4090"]
    r = estimate(QWEN, gpu, {"weights": "q8_0"}, TABLE)
    assert not r["fits"] and r["decode_tokens_per_s"] is None and r["prefill_tokens_per_s"] is None
    assert r["shortfall"]["bytes"] == pytest.approx(r["memory"]["total_bytes"] - r["usable_bytes"])
    kinds = {s["kind"]: s for s in r["shortfall"]["suggestions"]}
    assert set(kinds) == {"weights", "offload", "gpus"}  # even one token of context does not fit
    for s in kinds.values():  # every suggestion, applied, fits
        change = {"weights": {"weights": s.get("weights")}, "offload": {"offload": s.get("offload")},
                  "gpus": {"gpus": s.get("gpus")}}[s["kind"]]
        done = estimate(QWEN, gpu, {"weights": "q8_0", **change}, TABLE)
        assert done["fits"] and done["decode_tokens_per_s"] > 0, s
    assert kinds["weights"]["weights"] == "q5_k_m"  # the largest format that fits: q6_k does not
    assert not estimate(QWEN, gpu, {"weights": "q6_k"}, TABLE)["fits"]
    longer = estimate(L8, gpu, {"weights": "bf16", "context": 131072}, TABLE)
    context = [s for s in longer["shortfall"]["suggestions"] if s["kind"] == "context"][0]["context"]
    assert context == longer["max_context"] and estimate(L8, gpu, {"weights": "bf16", "context": context}, TABLE)["fits"]


def test_mlx_formats_and_front_ends():
    r = estimate(L8, GPUS["apple-m3-max"], {"runtime": "mlx", "weights": "mlx_4bit"}, TABLE)
    params = L8["parameters_b"] * 1e9
    assert r["basis"]["weights_file_bytes"] == pytest.approx(params * 4.5 / 8, rel=1e-12)  # embeddings and head too
    assert r["basis"]["runtime"] == "mlx" and r["fits"]
    lm = estimate(L8, GPUS["apple-m3-max"], {"runtime": "lm-studio", "weights": "mlx_8bit"}, TABLE)
    assert lm["basis"]["runtime"] == "mlx" and lm["basis"]["front_end"] == "lm-studio"
    assert lm["basis"]["weights_file_bytes"] == pytest.approx(params * 8.5 / 8, rel=1e-12)
    ollama = estimate(L8, GPUS["rtx-4090"], {"runtime": "ollama", "weights": "q4_k_m"}, TABLE)
    plain = estimate(L8, GPUS["rtx-4090"], {"runtime": "llama.cpp", "weights": "q4_k_m"}, TABLE)
    assert ollama["basis"]["front_end"] == "ollama" and ollama["decode_tokens_per_s"] == plain["decode_tokens_per_s"]
    for options, key in (({"runtime": "transformers", "weights": "mlx_4bit"}, "est.err.format_only_runtime"),
                         ({"runtime": "mlx", "weights": "fp8"}, "est.err.runtime_loads"),
                         ({"runtime": "mlx", "offload": "auto"}, "est.err.offload_runtime"),
                         ({"weights": "q4_k_m", "offload": "experts"}, "est.err.offload_experts"),
                         ({"weights": "q4_k_m", "backend": "metal"}, "est.err.backend_card"),
                         ({"runtime": "vllm", "backend": "cuda"}, "est.err.backend"),
                         ({"mode": "full", "offload": "auto"}, "est.err.offload_training")):
        with pytest.raises(EstimateError) as exc:
            estimate(L8, GPUS["rtx-4090"], options, TABLE)
        assert exc.value.key == key, options


def test_backend_keys_the_speed_constants():
    gpu = GPUS["rx-7900-xtx"]
    constants = {"speed": {"llama.cpp/vulkan": {"eff_bw": 0.5}, "llama.cpp/rocm": {"eff_bw": 0.8}}}
    rocm = estimate(L8, gpu, {"weights": "q4_k_m"}, {"constants": constants})
    vulkan = estimate(L8, gpu, {"weights": "q4_k_m", "backend": "vulkan"}, {"constants": constants})
    assert rocm["basis"]["backend"] == "rocm" and vulkan["basis"]["backend"] == "vulkan"
    assert rocm["basis"]["speed_constants"]["eff_bw"] == 0.8 and vulkan["basis"]["speed_constants"]["eff_bw"] == 0.5
    assert vulkan["decode_tokens_per_s"] < rocm["decode_tokens_per_s"]
    intel = {"vendor": "intel", "memory_gb": 16, "memory_bandwidth_gbs": 560, "fp16_tensor_tflops": 100}
    assert estimate(L8, intel, {"weights": "q4_k_m"}, {})["basis"]["backend"] == "sycl"
    cpu = estimate(L8, GPUS["rtx-4090"], {"weights": "q4_k_m", "backend": "cpu"}, TABLE)
    assert cpu["offload"]["host_layers"] == 32 and cpu["prefill_tokens_per_s"] is None
    assert math.isfinite(cpu["decode_tokens_per_s"])


def test_a_card_the_runtime_does_not_run_is_refused():
    table = dict(TABLE, runtime_cards={"llama.cpp": ["rtx-4090"]})
    assert estimate(L8, GPUS["rtx-4090"], {"weights": "q4_k_m"}, table)["fits"]
    with pytest.raises(EstimateError) as exc:
        estimate(L8, GPUS["h100-sxm"], {"weights": "q4_k_m"}, table)
    assert exc.value.key == "est.err.runtime_card"
    assert estimate(L8, GPUS["h100-sxm"], {"runtime": "vllm"}, table)["fits"]  # a runtime not listed runs every card


def test_the_runtimes_cards_come_from_the_support_data():
    from generator.data.loader import load_dataset
    from generator.facts.support import runtime_cards

    ds, _ = load_dataset(ROOT / "data")
    cards = runtime_cards(ds)
    llama = set(cards["llama.cpp"])
    assert {"rtx-4090", "h100-sxm", "apple-m3-max", "arc-b580"} <= llama
    assert not llama & {"tpu-v5e", "gaudi-2", "gaudi-3", "gtx-680", "tesla-k80", "trainium2"}
    assert {ds.gpus[g].get("vendor") for g in cards["mlx"]} == {"apple"}
    assert "tpu-v5e" not in cards["vllm"] and "rtx-4090" in cards["sglang"]
    assert "exllamav2" not in cards  # a runtime naming no stack runs every card
