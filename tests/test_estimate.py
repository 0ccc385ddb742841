"""The estimation engine (generator/estimate) and its browser twin (docs/assets/js/calc/estimate.mjs).

``tests/fixtures/estimate.json`` holds golden cases (inputs -> memory breakdown, speed, relative
training, error bands); both sides must reproduce them. Hand-computed checks pin the formulas,
and the published error figures must equal what ``accuracy()`` computes on the shipped data.
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import loso_fixture

from generator.data import records_llm
from generator.estimate import engine, fit_error, fitting, formats, memory, published, relative_fit, speed
from generator.estimate.engine import EstimateError, estimate, training_relative_only
from generator.facts.engine_input import read_bundle

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "estimate.json").read_text(encoding="utf-8"))
TABLE = FIXTURE["table"]
NODE = shutil.which("node")
GIB = 1024 ** 3


def close(actual, expected, tol, where):
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
    elif isinstance(expected, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), f"{where}: {actual!r}"
        assert math.isfinite(actual), where
        assert abs(actual - expected) <= tol * max(1, abs(expected)), f"{where}: {actual!r} != {expected!r}"
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=False)):
            close(a, e, tol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r}"
        for k, e in expected.items():
            close(actual.get(k), e, tol, f"{where}.{k}")


def model_of(case):
    return FIXTURE["models"][case["model"]] if isinstance(case["model"], str) else case["model"]


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[c["id"] for c in FIXTURE["cases"]])
def test_python_golden_case(case):
    gpu = FIXTURE["gpus"][case["gpu"]]
    if "error" in case:
        with pytest.raises(EstimateError) as exc:
            estimate(model_of(case), gpu, case["options"], TABLE)
        assert {"key": exc.value.key, "params": exc.value.params} == case["error"]
        return
    close(estimate(model_of(case), gpu, case["options"], TABLE), case["expect"], FIXTURE["tolerance"], case["id"])


@pytest.mark.parametrize("case", FIXTURE["relative"], ids=[c["id"] for c in FIXTURE["relative"]])
def test_python_training_relative(case):
    out = training_relative_only(FIXTURE["gpus"][case["gpu"]], TABLE)
    close(out["training_relative"], case["expect"], FIXTURE["tolerance"], case["id"])


def test_node_twin_passes_the_same_cases():
    assert NODE, "node is needed for tests/js/estimate.test.mjs"
    r = subprocess.run([NODE, "--test", "tests/js/estimate.test.mjs"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    functions = json.loads((ROOT / "tests" / "fixtures" / "estimate_functions.json").read_text(encoding="utf-8"))["calls"]
    # the golden cases, two checks, one test per function of estimate_functions.json, its coverage
    # and the re-exports of the engine's modules
    count = len(FIXTURE["cases"]) + len(FIXTURE["relative"]) + 2 + len({c["fn"] for c in functions}) + 2
    assert f"# pass {count}" in r.stdout, r.stdout[-1500:]


def test_fixture_covers_every_format_precision_and_feature():
    ids = {c["id"] for c in FIXTURE["cases"]}
    weights = {c["expect"]["basis"]["weights"] for c in FIXTURE["cases"] if "expect" in c}
    assert set(formats.WEIGHT_FORMATS) <= weights
    kvs = {c["options"].get("kv_cache", "f16") for c in FIXTURE["cases"] if "expect" in c}
    assert set(formats.KV_BYTES) <= kvs
    optimizers = {c["options"].get("optimizer", "adamw") for c in FIXTURE["cases"] if "expect" in c and c["options"].get("mode")
                  not in (None, "inference")}
    assert set(formats.OPTIMIZERS) <= optimizers
    switches = {(c["options"].get("master_weights", True), c["options"].get("optimizer_in_backward", False))
                for c in FIXTURE["cases"] if "expect" in c and c["options"].get("mode") == "full"}
    assert {(True, False), (False, False), (False, True)} <= switches
    trained = [c for c in FIXTURE["cases"] if "expect" in c and c["options"].get("mode") not in (None, "inference")]
    assert {c["options"].get("chunked_loss", False) for c in trained} == {True, False}
    assert {c["options"]["mode"] for c in trained if "lora_targets" in c["options"]} == {"lora", "qlora"}
    for part in ("moe-", "mla-", "sliding-", "multi-gpu-", "unified-", "offload-", "training-", "bad-", "sparse-attention-",
                 "bad-state-"):
        assert any(i.startswith(part) for i in ids), part
    # a golden case for every kind of state layer, on both sides
    kinds = {FIXTURE["models"][c["model"]].get("state_kind") for c in FIXTURE["cases"]
             if "expect" in c and isinstance(c["model"], str)}
    assert set(formats.STATE_KINDS) <= kinds
    assert any(FIXTURE["models"][c["model"]].get("mlp_only_layers") for c in FIXTURE["cases"] if isinstance(c["model"], str))


# ------------------------------------------------------------------ the formulas, by hand

M = FIXTURE["models"]


def test_gguf_bits_per_weight_by_hand():
    llama2 = M["llama-2-7b"]
    w = memory.weights_parts(llama2, "q4_0", "llama.cpp")
    head = 32000 * 4096
    assert w["head"] == head * 6.5625 / 8
    assert w["total"] == pytest.approx((llama2["parameters_b"] * 1e9 - head) * 4.5 / 8 + head * 6.5625 / 8)
    assert w["total"] / GIB == pytest.approx(3.56, rel=0.03)  # llama-bench: llama 7B Q4_0 3.56 GiB
    assert memory.weights_parts(llama2, "q8_0")["bits_per_weight"] == pytest.approx(8.5)
    assert 4.8 <= memory.weights_parts(llama2, "q4_k_m")["bits_per_weight"] <= 4.9
    assert 5.5 <= memory.weights_parts(llama2, "q5_k_m")["bits_per_weight"] <= 5.7
    assert memory.weights_parts(M["llama-3-1-8b"], "q4_k_m")["total"] / GIB == pytest.approx(4.58, rel=0.03)


def test_quantized_formats_keep_embeddings_and_head_16_bit():
    m = M["llama-3-1-8b"]
    w = memory.weights_parts(m, "nf4")
    assert w["embed"] == w["head"] == 128256 * 4096 * 2
    assert w["other"] == pytest.approx((8.03e9 - 2 * 128256 * 4096) * 4.127 / 8)


def test_mxfp4_experts_only():
    m = M["gpt-oss-20b"]
    p = memory.param_breakdown(m)
    assert p["experts"] == 24 * 32 * 3 * 2880 * 2880
    hf, gguf = memory.weights_parts(m, "mxfp4", "vllm"), memory.weights_parts(m, "mxfp4", "llama.cpp")
    assert hf["experts"] == gguf["experts"] == p["experts"] * 4.25 / 8
    assert hf["other"] == p["other"] * 2 and gguf["other"] == p["other"] * 8.5 / 8


def test_kv_cache_by_hand():
    assert memory.kv_cache_bytes(M["llama-3-1-8b"], 4096, 1, "f16") == 2 * 32 * 8 * 128 * 2 * 4096  # 512 MiB
    assert memory.kv_cache_bytes(M["llama-3-1-8b"], 4096, 3, "q8_0") == 2 * 32 * 8 * 128 * 4096 * 3 * 8.5 / 8
    assert memory.kv_cache_bytes(M["llama-3-1-8b"], 100, 1, "q4_0") == 2 * 32 * 8 * 128 * 100 * 4.5 / 8
    ds = M["deepseek-v3"]
    assert memory.kv_cache_bytes(ds, 1000, 1, "fp8") == 61 * (512 + 64) * 1000
    g = M["gemma-2-9b"]  # 21 of 42 layers slide over 4096 tokens
    assert memory.kv_cache_bytes(g, 8192) == 2 * 8 * 256 * 2 * (21 * 8192 + 21 * 4096)
    assert memory.kv_cache_bytes(g, 1000) == 2 * 8 * 256 * 2 * 42 * 1000


def test_moe_active_parameters_decide_speed_total_decide_memory():
    moe, gpu = M["qwen3-30b-a3b"], FIXTURE["gpus"]["h100-sxm"]
    t = speed.decode_terms(moe, gpu, "bf16", "f16", 0, 1, "vllm")
    w = memory.weights_parts(moe, "bf16")
    assert t["bytes_per_step"] == pytest.approx(w["other"] + w["head"] + w["experts"] * 8 / 128)
    assert t["bytes_per_step"] < 0.2 * w["total"]
    big = speed.decode_terms(moe, gpu, "bf16", "f16", 0, 64, "vllm")
    assert big["bytes_per_step"] > 0.9 * (w["total"] - w["embed"])


def test_moe_prefill_charges_the_routed_experts_by_the_fitted_factor():
    """Prefill splits its matrix work into the dense part and the active routed experts' part; the
    latter runs moe_prefill times slower. A dense model has no expert part."""
    moe, gpu = M["qwen3-30b-a3b"], FIXTURE["gpus"]["h100-sxm"]
    t = speed.prefill_terms(moe, gpu, "bf16", 512, 1, "llama.cpp")
    p = memory.param_breakdown(moe)
    tflops = speed.matrix_tflops(gpu, "bf16", "llama.cpp") * 1e12
    assert t["expert_s"] == pytest.approx(2 * p["experts"] * 8 / 128 * 512 / tflops)
    assert t["compute_s"] == pytest.approx(t["flops"] / tflops - t["expert_s"])
    k = {**speed.DEFAULT_SPEED, "eff_compute": 0.5, "eff_bw": 1e9}  # compute-bound
    slow = speed.prefill_from_terms(t, {**k, "moe_prefill": 3.0})
    assert 512 / slow == pytest.approx((t["compute_s"] + 3 * t["expert_s"]) / 0.5 + t["pcie_s"] + t["comm_s"])
    assert slow < speed.prefill_from_terms(t, k)
    dense = speed.prefill_terms(M["llama-3-1-8b"], gpu, "bf16", 512, 1, "llama.cpp")
    assert dense["expert_s"] == 0 and dense["compute_s"] == pytest.approx(dense["flops"] / tflops)


def test_each_prefill_pass_pays_the_per_layer_cost_of_a_step():
    """A prefill pass launches every layer's kernels as a decode step does: each layer of each pass
    (one pass per 512-token micro-batch in llama.cpp, one for the whole prompt in transformers)
    adds overhead_s_per_layer. Llama 3.1 8B has 32 layers; 4,096 tokens are 8 passes in llama.cpp."""
    model, gpu = M["llama-3-1-8b"], FIXTURE["gpus"]["h100-sxm"]
    k = {**speed.DEFAULT_SPEED, "eff_compute": 0.5, "eff_bw": 1e9}
    for runtime, passes in (("llama.cpp", 8), ("transformers", 1)):
        t = speed.prefill_terms(model, gpu, "bf16", 4096, 1, runtime)
        bare = speed.prefill_from_terms(t, k)
        paid = speed.prefill_from_terms(t, {**k, "overhead_s_per_layer": 0.001})
        assert 4096 / paid == pytest.approx(4096 / bare + passes * 32 * 0.001), runtime
    # short prompts feel it most: at 512 tokens the same cost is a larger share of the pass
    share = []
    for n in (512, 4096):
        t = speed.prefill_terms(model, gpu, "bf16", n, 1, "transformers")
        share.append(1 - speed.prefill_from_terms(t, {**k, "overhead_s_per_layer": 0.001}) / speed.prefill_from_terms(t, k))
    assert share[0] > 3 * share[1]


def test_pure_16_bit_training_and_the_step_in_the_backward_pass_by_hand():
    """Llama 3.1 8B, full fine-tuning in bf16: no master copy takes 4 B per weight off the
    optimizer's part; stepping in the backward pass leaves one gradient at a time, the largest
    matrix's (the 128,256 x 4,096 embedding), instead of every weight's 2 B."""
    model = FIXTURE["models"]["llama-3-1-8b"]
    n = memory.param_breakdown(model)["total"]
    args = (model, "full", "bf16", 2048, 2)
    mixed = memory.training_memory(*args)
    pure = memory.training_memory(*args, master_weights=False)
    stepped = memory.training_memory(*args, master_weights=False, optimizer_in_backward=True)
    assert mixed["optimizer_bytes"] == pytest.approx(n * 12) and pure["optimizer_bytes"] == pytest.approx(n * 8)
    assert mixed["gradients_bytes"] == pure["gradients_bytes"] == pytest.approx(n * 2)
    assert memory.largest_matrix(model) == 128256 * 4096
    assert stepped["gradients_bytes"] == 128256 * 4096 * 2
    assert mixed["total_bytes"] - pure["total_bytes"] == pytest.approx(n * 4)
    assert pure["total_bytes"] - stepped["total_bytes"] == pytest.approx(n * 2 - 128256 * 4096 * 2)
    # f32 training keeps no master copy whatever the switch says; LoRA ignores both
    assert memory.training_memory(model, "full", "f32", 2048, 2)["optimizer_bytes"] == pytest.approx(n * 8)
    lora = memory.training_memory(model, "lora", "bf16", 2048, 2)
    assert memory.training_memory(model, "lora", "bf16", 2048, 2, master_weights=False,
                                  optimizer_in_backward=True) == lora


def test_lora_targets_rank_and_the_loss_in_chunks_by_hand():
    """Llama 3.1 8B (hidden 4,096, 32 query and 8 KV heads of 128, MLP 14,336, 32 layers): rank 8
    on q and v is 8 x ((4,096 + 4,096) + (4,096 + 1,024)) per layer; each projection adds its own
    r x (in + out), the MLP's three (4,096 + 14,336) each. The loss in 8 chunks keeps the 16-bit
    logits (2 B per vocabulary entry and token) and one chunk's fp32 logits and gradient (8 B / 8)
    instead of 8 B for every token: 5 B less per entry in bf16, 3 B less in f32."""
    model = FIXTURE["models"]["llama-3-1-8b"]
    qv = 32 * 8 * ((4096 + 4096) + (4096 + 1024))
    assert memory.lora_params(model, 8, ("q", "v")) == qv == 3_407_872
    assert memory.lora_params(model, 8, ("v", "q")) == qv
    every = memory.lora_params(model, 8)
    assert every == qv + 32 * 8 * ((4096 + 1024) + (4096 + 4096)) + 32 * 3 * 8 * (4096 + 14336)
    assert memory.lora_params(model, 16, ("q", "v")) == 2 * qv
    moe = FIXTURE["models"]["qwen3-30b-a3b"]
    mlp_only = memory.lora_params(moe, 4, ("gate", "up", "down"))
    assert mlp_only == moe["layers"] * moe["experts"] * 3 * 4 * (moe["hidden_size"] + moe["moe_intermediate_size"])
    lora = memory.training_memory(model, "lora", "bf16", 2048, 2, lora_rank=8, lora_targets=("q", "v"))
    assert lora["trainable_params"] == qv and lora["gradients_bytes"] == qv * 4
    tokens = 2048 * 2
    for weights, saved in (("bf16", 5), ("f32", 3)):
        plain = memory.training_memory(model, "full", weights, 2048, 2)
        chunked = memory.training_memory(model, "full", weights, 2048, 2, chunked_loss=True)
        assert plain["activations_bytes"] - chunked["activations_bytes"] == pytest.approx(saved * 128256 * tokens)
        assert plain["total_bytes"] - chunked["total_bytes"] == pytest.approx(saved * 128256 * tokens)
    # the record types name the same projections as the engine
    assert records_llm.LORA_TARGETS == formats.LORA_TARGETS
    assert set(records_llm.OPTIMIZERS) == set(formats.OPTIMIZERS)


def test_lora_keeps_no_input_that_only_frozen_projections_read_by_hand():
    """A frozen projection computes no weight gradient, so its input is kept only if an adapter
    (or another operation) reads it. Llama 3.1 8B with adapters on q and v: the MLP norm's output
    (4,096, read by gate and up) and down's input (14,336) are not kept, 2 B each in bf16; with
    checkpointing that is one layer's worth per token, without it every layer's. Adapters on
    every projection leave nothing out; without FlashAttention the attention's output (32 x 128,
    read by o) joins the list when o has no adapter. QLoRA's bitsandbytes 4-bit projections keep
    their input whatever they adapt."""
    model = FIXTURE["models"]["llama-3-1-8b"]
    assert memory.frozen_inputs(model, ("q", "v")) == 4096 + 14336
    assert memory.frozen_inputs(model, formats.LORA_TARGETS) == 0
    assert memory.frozen_inputs(model, ("gate", "up", "down")) == 4096
    assert memory.frozen_inputs(model, ("q", "v"), flash_attention=False) == 4096 + 14336 + 32 * 128
    assert memory.frozen_inputs(model, ("q", "k", "v", "o"), flash_attention=False) == 4096 + 14336
    tokens = 2048 * 2
    for checkpointing, layers in ((True, 1), (False, 32)):
        args = dict(lora_rank=8, checkpointing=checkpointing)
        qv = memory.training_memory(model, "lora", "bf16", 2048, 2, lora_targets=("q", "v"), **args)
        every = memory.training_memory(model, "lora", "bf16", 2048, 2, lora_targets=formats.LORA_TARGETS, **args)
        full = memory.training_memory(model, "full", "bf16", 2048, 2, checkpointing=checkpointing)
        assert every["activations_bytes"] - qv["activations_bytes"] == pytest.approx(2 * (4096 + 14336) * tokens * layers)
        assert every["activations_bytes"] == pytest.approx(full["activations_bytes"])
        # bitsandbytes' 4-bit matmul keeps its input for backward: QLoRA keeps what full fine-tuning keeps
        qlora = memory.training_memory(model, "qlora", "nf4", 2048, 2, lora_targets=("q", "v"), **args)
        assert qlora["activations_bytes"] == pytest.approx(every["activations_bytes"])


def test_relative_training_counts_memory_by_its_exponent():
    """Training throughput relative to a reference: (T ratio)^a x (B ratio)^b x (M ratio)^d; without
    a fitted d, or a memory figure on either card, the memory term drops out."""
    fast = {"fp16_tensor_tflops": 200, "memory_bandwidth_gbs": 2000, "memory_gb": 48}
    ref = {"fp16_tensor_tflops": 100, "memory_bandwidth_gbs": 1000, "memory_gb": 12}
    got = speed.relative_training(fast, ref, {"a": 0.3, "b": 0.4, "d": 0.2})
    assert got == pytest.approx(2 ** 0.3 * 2 ** 0.4 * 4 ** 0.2)
    assert speed.relative_training(fast, ref, {"a": 0.3, "b": 0.4}) == pytest.approx(2 ** 0.7)
    no_memory = {k: v for k, v in fast.items() if k != "memory_gb"}
    assert speed.relative_training(no_memory, ref, {"a": 0.3, "b": 0.4, "d": 0.2}) == pytest.approx(2 ** 0.7)
    unified = {**fast, "memory_gb": 64, "unified_memory": True, "gpu_memory_share": 0.75}  # the GPU may use 48 GB
    assert speed.relative_training(unified, ref, {"a": 0.3, "b": 0.4, "d": 0.2}) == pytest.approx(got)


def test_kv_factor_charges_the_cache_bytes_a_runtime_moves():
    """Decode reads the weights once per step and the cache kv_factor times (1 by default): at a
    long context the factor slows the step by (factor - 1) x the cache's share, and at an empty
    context it changes nothing."""
    m, gpu = M["llama-3-1-8b"], FIXTURE["gpus"]["a100-sxm4-80gb"]
    t = speed.decode_terms(m, gpu, "bf16", "f16", 32768, 1, "transformers")
    assert t["kv_s"] == pytest.approx(memory.kv_cache_bytes(m, 32768) / (gpu["memory_bandwidth_gbs"] * 1e9))
    k = {**speed.DEFAULT_SPEED, "eff_bw": 0.5, "overhead_s": 0.0}
    once, five = speed.decode_from_terms(t, k), speed.decode_from_terms(t, {**k, "kv_factor": 5.0})
    assert 1 / five - 1 / once == pytest.approx(4 * t["kv_s"] / 0.5)
    empty = speed.decode_terms(m, gpu, "bf16", "f16", 0, 1, "transformers")
    assert speed.decode_from_terms(empty, k) == speed.decode_from_terms(empty, {**k, "kv_factor": 5.0})


def test_transformers_moves_the_cache_again_for_each_extra_query_head():
    """transformers copies the cache out to each query head (one write and one read per query head
    beyond the first sharing a KV head): six extra heads for Qwen2.5 7B (28 query heads over 4 KV
    heads), none for multi-head attention or MLA's latent, and none in llama.cpp or vLLM."""
    gpu = FIXTURE["gpus"]["a100-sxm4-80gb"]
    gqa = {"layers": 28, "attention_heads": 28, "kv_heads": 4, "head_dim": 128, "hidden_size": 3584,
           "intermediate_size": 18944, "vocab_size": 152064, "parameters_b": 7.62, "active_parameters_b": 7.62}
    mha = {**gqa, "kv_heads": 28}
    assert speed.query_group(gqa) == 7 and speed.query_group(mha) == 1
    assert speed.query_group({**gqa, "attention": "mla", "kv_lora_rank": 512}) == 1
    k = {**speed.DEFAULT_SPEED, "eff_bw": 0.5, "overhead_s": 0.0}
    t = speed.decode_terms(gqa, gpu, "bf16", "f16", 30000, 1, "transformers")
    assert t["kv_copy_s"] == pytest.approx(2 * 6 * t["kv_s"])
    no_copy = {**t, "kv_copy_s": 0.0}
    assert 1 / speed.decode_from_terms(t, k) - 1 / speed.decode_from_terms(no_copy, k) == pytest.approx(12 * t["kv_s"] / 0.5)
    assert speed.decode_terms(mha, gpu, "bf16", "f16", 30000, 1, "transformers")["kv_copy_s"] == 0
    for runtime in ("llama.cpp", "vllm"):
        assert speed.decode_terms(gqa, gpu, "bf16", "f16", 30000, 1, runtime)["kv_copy_s"] == 0


def test_a_decode_rate_timed_over_the_whole_call_counts_the_prompt():
    """A result with generated_tokens was timed from the prompt to the last token: the engine's
    figure for it is the generated tokens over the prompt's time plus the generation's, with the
    cache at its mean length; a one-token prompt leaves nearly the plain rate."""
    from generator.estimate import fitting

    models, gpus = {"llama-3-1-8b": M["llama-3-1-8b"]}, {"a100-sxm4-80gb": FIXTURE["gpus"]["a100-sxm4-80gb"]}
    base = {"model": "llama-3-1-8b", "gpu": "a100-sxm4-80gb", "weights": "bf16", "batch": 1, "gpus": 1,
            "runtime": "vllm", "metric": "decode_tokens_per_s", "value": 50.0}
    constants = {"speed": {"*": {"eff_bw": 0.6, "eff_compute": 0.4}}}
    k = fitting.resolve(constants["speed"], ("*", "vllm", "vllm/cuda"))
    m, g = M["llama-3-1-8b"], FIXTURE["gpus"]["a100-sxm4-80gb"]
    rate = speed.decode_from_terms(speed.decode_terms(m, g, "bf16", "f16", 32768 + 1024, 1, "vllm"), k)
    prompt = speed.prefill_from_terms(speed.prefill_terms(m, g, "bf16", 32768, 1, "vllm"), k)
    whole = fitting.predict({**base, "context": 32768, "generated_tokens": 2048}, models, gpus, constants)
    assert whole == pytest.approx(2048 / (32768 / prompt + 2048 / rate))
    plain = fitting.predict({**base, "context": 32768}, models, gpus, constants)
    assert whole < plain
    short = fitting.predict({**base, "context": 1, "generated_tokens": 2048}, models, gpus, constants)
    assert short == pytest.approx(fitting.predict({**base, "context": 1024}, models, gpus, constants), rel=0.01)



def test_the_peak_of_a_run_that_generated_tokens_holds_them_in_the_cache():
    """Peak memory of a prompt of 512 tokens followed by 512 generated ones is the engine's figure
    at 1,024 tokens: the cache holds both at the end. Llama 3.1 8B, f16 cache: 32 layers x 8 KV
    heads x 128 x 2 (keys, values) x 2 B = 131,072 B per token, times 512 more tokens and batch 4."""
    from generator.estimate import fitting

    models, gpus = {"llama-3-1-8b": M["llama-3-1-8b"]}, {"a100-sxm4-80gb": FIXTURE["gpus"]["a100-sxm4-80gb"]}
    base = {"model": "llama-3-1-8b", "gpu": "a100-sxm4-80gb", "weights": "bf16", "batch": 4, "gpus": 1,
            "runtime": "transformers", "metric": "peak_memory_gib", "value": 20.0, "context": 512}
    constants = {"memory": {"transformers": {"overhead_bytes": 0.0, "act_scale": 0.0}}}
    prompt_only = fitting.predict(base, models, gpus, constants)
    generated = fitting.predict({**base, "generated_tokens": 512}, models, gpus, constants)
    assert generated == pytest.approx(fitting.predict({**base, "context": 1024}, models, gpus, constants))
    assert (generated - prompt_only) * GIB == pytest.approx(131072 * 512 * 4)

def test_tensor_parallel_splits_kv_by_heads():
    m = M["llama-3-1-70b"]  # 8 kv heads
    one = memory.inference_memory(m, "bf16", "f16", 4096, 1, "vllm", 1)
    assert memory.inference_memory(m, "bf16", "f16", 4096, 1, "vllm", 4)["kv_cache_bytes"] == one["kv_cache_bytes"] / 4
    assert memory.inference_memory(m, "bf16", "f16", 4096, 1, "vllm", 16)["kv_cache_bytes"] == one["kv_cache_bytes"] / 8
    ds = M["deepseek-v3"]
    assert (memory.inference_memory(ds, "fp8", "f16", 4096, 1, "vllm", 8)["kv_cache_bytes"]
            == memory.kv_cache_bytes(ds, 4096))


def test_unified_memory_share():
    apple = FIXTURE["gpus"]["apple-m2-ultra"]
    assert memory.usable_bytes(apple) == apple["memory_gb"] * GIB * apple["gpu_memory_share"]
    assert memory.usable_bytes(dict(apple, gpu_memory_share=None)) == apple["memory_gb"] * GIB * 0.75


def test_qlora_below_lora_below_full_for_every_model():
    gpu = FIXTURE["gpus"]["h100-sxm"]
    for mid, m in M.items():
        totals = [estimate(m, gpu, {"mode": mode, "context": 2048}, TABLE)["memory"]["total_bytes"]
                  for mode in ("qlora", "lora", "full")]
        assert totals[0] < totals[1] < totals[2], mid


def test_flash_attention_and_checkpointing_are_on_by_default_and_switchable():
    m, gpu = M["llama-3-1-8b"], FIXTURE["gpus"]["h100-sxm"]
    base = estimate(m, gpu, {"mode": "full", "context": 4096}, TABLE)["memory"]["activations_bytes"]
    assert estimate(m, gpu, {"mode": "full", "context": 4096, "checkpointing": False}, TABLE)["memory"][
        "activations_bytes"] > 4 * base
    no_fa = estimate(m, gpu, {"mode": "full", "context": 4096, "flash_attention": False}, TABLE)["memory"]
    assert no_fa["activations_bytes"] - base == 4 * 32 * 4096 * 4096


def test_offload_keeps_a_share_on_the_gpu_and_slows_decode():
    m, gpu = M["llama-3-1-70b"], FIXTURE["gpus"]["rtx-4090"]
    full = memory.inference_memory(m, "q4_k_m", "f16", 4096, 1, "llama.cpp")
    half = memory.inference_memory(m, "q4_k_m", "f16", 4096, 1, "llama.cpp", gpu_layers=40)
    assert half["weights_bytes"] < 0.55 * full["weights_bytes"] and half["host_bytes"] > 0
    assert (speed.decode_tokens_per_s(m, gpu, "q4_k_m", "f16", 0, 1, "llama.cpp", gpu_layers=40)
            < 0.3 * speed.decode_tokens_per_s(m, gpu, "q4_k_m", "f16", 0, 1, "llama.cpp"))


def test_vllm_reserves_ninety_percent():
    r = estimate(M["llama-3-1-8b"], FIXTURE["gpus"]["h100-sxm"], {"runtime": "vllm"}, TABLE)
    assert r["reserved_bytes"] == pytest.approx(0.9 * 80 * GIB)
    assert r["memory"]["total_bytes"] < r["reserved_bytes"]


def test_error_band_falls_back_to_all():
    assert engine.error_band(TABLE["errors"], "decode_tokens_per_s", "vllm")["scope"] == "all"
    assert engine.error_band(TABLE["errors"], "decode_tokens_per_s", "llama.cpp")["median_pct"] == 8.0
    assert engine.error_band(TABLE["errors"], "prefill_tokens_per_s", "vllm") is None


@pytest.mark.parametrize("model, options, key", [
    (dict(M["llama-2-7b"], kv_heads=64), {}, "est.err.kv_heads_above_heads"),
    (dict(M["llama-2-7b"], kv_heads=5), {}, "est.err.heads_not_divisible"),
    (M["llama-2-7b"], {"context": 0}, "est.err.positive"),
    (M["llama-2-7b"], {"context": 2.5}, "est.err.positive"),
    (dict(M["llama-2-7b"], experts=8, experts_per_token=2, active_parameters_b=None), {}, "est.err.experts_without_active"),
    (dict(M["llama-2-7b"], active_parameters_b=9), {}, "est.err.active_above_total"),
    (dict(M["llama-2-7b"], parameters_b=0.1), {}, "est.err.embeddings_above_params"),
    (M["llama-2-7b"], {"weights": "q4_k_m", "runtime": "transformers"}, "est.err.gguf_runtime"),
    (M["llama-2-7b"], {"weights": "nf4", "mode": "full"}, "est.err.training_weights"),
    (M["llama-2-7b"], {"weights": "bf16", "mode": "qlora"}, "est.err.qlora_weights"),
    (M["llama-2-7b"], {"weights": "q4_0", "mode": "inference", "kv_cache": "fp8"}, "est.err.kv_runtime"),
    (M["llama-2-7b"], {"weights": "xx"}, "est.err.weights"),
])
def test_bad_input(model, options, key):
    with pytest.raises(EstimateError) as exc:
        estimate(model, FIXTURE["gpus"]["rtx-4090"], options, TABLE)
    assert exc.value.key == key


# ------------------------------------------------------------------ fitting and published figures

@pytest.fixture(scope="module")
def shipped():
    bundle = read_bundle(ROOT / "data")
    return bundle, published(bundle)


def test_published_errors_equal_accuracy_on_shipped_data(shipped):
    bundle, table = shipped
    again = fit_error.accuracy(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    assert table["errors"] == again
    assert table["constants"] == fitting.fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    m = next(iter(bundle.models.values()))
    gpu = bundle.gpus[table["reference"]["id"]] if table["reference"] else next(iter(bundle.gpus.values()))
    r = estimate(m, gpu, {"weights": "q4_k_m"}, table)
    if r["error"]["decode_tokens_per_s"]:
        entry = dict(table["errors"]["decode_tokens_per_s"].get("llama.cpp") or table["errors"]["decode_tokens_per_s"]["all"])
        assert {k: r["error"]["decode_tokens_per_s"][k] for k in entry} == entry


def test_fit_is_deterministic_and_few_constants(shipped):
    bundle, table = shipped
    assert fitting.fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions) == table["constants"]
    keys = table["constants"]["speed"]
    assert all(k == "*" or k.split("/")[0] in formats.RUNTIMES for k in keys)
    assert all(k.split("/")[-1] not in bundle.gpus for k in keys)  # never one constant per GPU
    for entry in table["errors"].values():
        for row in entry.values():
            assert row["count"] >= 1 and row["median_pct"] <= row["p90_pct"]


def test_gguf_weight_sizes_within_three_percent(shipped):
    bundle, table = shipped
    rows = [m for m in bundle.measurements if m.get("metric") == "weights_gib"]
    preds = [(m, fitting.predict(m, bundle.models, bundle.gpus, table["constants"])) for m in rows]
    checked = [(m, p) for m, p in preds if p is not None]
    within = [abs(p / m["value"] - 1) <= 0.03 for m, p in checked]
    assert not checked or sum(within) >= 0.9 * len(within)


def test_training_results_group_by_workload_and_get_their_reference_times_the_relative_figure():
    """Results of one source and workload form one group whatever their batch (the publisher sizes
    it per card); other sources, workloads and metrics stay apart; each member's estimate is the
    fastest card's measured value times the engine's relative figure, and that card has none."""
    gpus = {"fast": {"fp16_tensor_tflops": 300, "memory_bandwidth_gbs": 2000},
            "slow": {"fp16_tensor_tflops": 75, "memory_bandwidth_gbs": 500},
            "mid": {"fp16_tensor_tflops": 150, "memory_bandwidth_gbs": 1000}}

    def row(gpu, value, workload="resnet50", source="lab-a", batch=64):
        return {"source": source, "publisher": source.upper(), "gpu": gpu, "gpus": 1, "workload": workload,
                "batch": batch, "metric": "training_throughput", "value": value}

    rows = [row("fast", 1000, batch=256), row("slow", 260, batch=32), row("mid", 510, batch=128),
            row("fast", 90, workload="bert-large-squad"), row("slow", 20, workload="bert-large-squad"),
            row("slow", 7, source="lab-b"),
            {"source": "lab-a", "gpu": "mid", "gpus": 1, "model": "m", "weights": "q4_0", "context": 0, "batch": 1,
             "metric": "decode_tokens_per_s", "value": 50}]
    groups = relative_fit.relative_groups(rows, (), gpus)
    assert sorted((g["id"], g["reference"], sorted(g["values"])) for g in groups) == [
        ("lab-a/bert-large-squad/full/1", "fast", ["fast", "slow"]),
        ("lab-a/resnet50/full/1", "fast", ["fast", "mid", "slow"]),
    ]
    assert {g["source"] for g in groups} == {"LAB-A"}
    constants = {"relative": {"a": 0.5, "b": 0.5, "c": 0.0}}
    est = relative_fit.training_estimates(groups, gpus, constants)
    assert set(est) == {("lab-a/resnet50/full/1", "mid"), ("lab-a/resnet50/full/1", "slow"),
                        ("lab-a/bert-large-squad/full/1", "slow")}
    assert est["lab-a/resnet50/full/1", "mid"] == pytest.approx(1000 * math.sqrt(150 / 300) * math.sqrt(1000 / 2000))
    assert est["lab-a/bert-large-squad/full/1", "slow"] == pytest.approx(90 * 0.25)
    assert relative_fit.training_group(rows[0]) == "lab-a/resnet50/full/1" and relative_fit.training_group(rows[-1]) is None


def test_shipped_training_results_carry_estimates_and_errors(shipped):
    """Every shipped training result in a group, but the group's reference, gets an estimate and an error on the
    derived measurement list, and the table's training error counts exactly those results plus the
    revisions' pairs."""
    from generator.data.loader import load_dataset
    from generator.facts.derive import Derived

    bundle, table = shipped
    ds, problems = load_dataset(ROOT / "data")
    assert ds is not None, problems
    training = [m for m in Derived(ds).measured if m["metric"] in ("training_throughput", "training_tokens_per_s")]
    assert len([m for m in training if m.get("workload")]) >= 150
    groups = relative_fit.relative_groups(bundle.measurements, (), bundle.gpus)
    estimated = {(g["id"], gid) for g in groups for gid in g["values"] if gid != g["reference"]}
    assert len(estimated) >= 150
    for m in training:
        member = (relative_fit.training_group(m), m["gpu"]) in estimated
        assert (m["estimate"] is not None) == member, m
        if member:
            assert m["error_pct"] == round((m["estimate"] - m["value"]) / m["value"] * 100, 1)
    rev_pairs = sum(len(g["values"]) - 1 for g in relative_fit.relative_groups((), bundle.revisions, bundle.gpus))
    count = table["errors"]["training_relative"]["all"]["count"]
    assert count == len([m for m in training if m["estimate"] is not None]) + rev_pairs


def test_older_transformers_releases_pay_for_their_expert_loop_and_fp8_synchronize():
    """transformers before 4.53 ran every expert of an MoE layer one module at a time, 4.53 to 4.x
    the experts some token chose, 5.0 on grouped kernels; fine-grained FP8 linears waited for the
    device after each call through 5.3. A measured result's recorded version decides which paths
    it took, and an estimate without a version (the current release) takes none."""
    moe, gpu = M["qwen3-30b-a3b"], FIXTURE["gpus"]["a100-sxm4-80gb"]
    paths = {"expert_loop": None, "fp8_sync": False, "old_build": False}
    assert speed.runtime_paths("transformers", "4.51.3") == {**paths, "expert_loop": "all", "fp8_sync": True}
    assert speed.runtime_paths("transformers", "4.53.0") == {**paths, "expert_loop": "chosen", "fp8_sync": True}
    assert speed.runtime_paths("transformers", "5.3.0") == {**paths, "fp8_sync": True}
    assert speed.runtime_paths("transformers", "5.4.0") == paths
    for runtime, version in (("transformers", None), ("transformers", "unknown"), ("vllm", "0.4.0")):
        assert speed.runtime_paths(runtime, version) == paths
    layers, experts = moe["layers"], moe["experts"]
    old = speed.decode_terms(moe, gpu, "bf16", "f16", 1, 1, "transformers", runtime_version="4.51.3")
    assert old["expert_runs"] == layers * experts and old["sync_calls"] == 0
    chosen = speed.decode_terms(moe, gpu, "bf16", "f16", 1, 1, "transformers", runtime_version="4.55.0")
    assert chosen["expert_runs"] == pytest.approx(layers * moe["experts_per_token"])
    fp8 = speed.decode_terms(moe, gpu, "fp8", "f16", 1, 1, "transformers", runtime_version="4.51.3")
    assert fp8["sync_calls"] == 4 * layers + 3 * layers * experts
    dense = speed.decode_terms(M["llama-3-1-8b"], gpu, "fp8", "f16", 1, 1, "transformers", runtime_version="4.51.3")
    assert dense["expert_runs"] == 0 and dense["sync_calls"] == 7 * 32
    now = speed.decode_terms(moe, gpu, "fp8", "f16", 1, 1, "transformers")
    assert now["expert_runs"] == 0 and now["sync_calls"] == 0
    k = {**speed.DEFAULT_SPEED, "overhead_s_per_expert": 1e-4, "overhead_s_per_sync": 2e-4}
    assert 1 / speed.decode_from_terms(fp8, k) - 1 / speed.decode_from_terms(now, k) == pytest.approx(
        1e-4 * layers * experts + 2e-4 * fp8["sync_calls"])


def test_older_llama_cpp_builds_pay_a_fitted_time_per_layer_in_decode():
    """A decode result of a llama.cpp build from before b3200 counts its layers as old_layers, each
    costing overhead_s_per_old_layer; a current or unnumbered build (every estimate) counts none.
    The fit finds that cost from the results of such builds (the 2024 ones in data/) and it stays
    out of the constants an estimate reads for today's builds."""
    model, gpu = M["llama-2-7b"], FIXTURE["gpus"]["rtx-3090"]
    assert speed.runtime_paths("llama.cpp", "b2824")["old_build"] is True
    for version in ("b3200", "b6918", "main", None):
        assert speed.runtime_paths("llama.cpp", version)["old_build"] is False
    old = speed.decode_terms(model, gpu, "q4_0", "f16", 512, 1, "llama.cpp", runtime_version="b2824")
    now = speed.decode_terms(model, gpu, "q4_0", "f16", 512, 1, "llama.cpp")
    assert old["old_layers"] == model["layers"] and now["old_layers"] == 0
    k = {**speed.DEFAULT_SPEED, "overhead_s_per_old_layer": 7e-5}
    assert 1 / speed.decode_from_terms(old, k) - 1 / speed.decode_from_terms(now, k) == pytest.approx(7e-5 * model["layers"])
    fitted = fitting.fit_constants(*(lambda b: (b.models, b.gpus, b.measurements, b.revisions))(read_bundle(ROOT / "data")))
    cuda = fitted["speed"]["llama.cpp/cuda"]
    assert cuda["overhead_s_per_old_layer"] > 0  # the 2024 builds' results call for it
    assert "overhead_s_per_old_layer" not in fitted["speed"]["transformers"]  # no result of another runtime takes it


def test_a_named_gptq_kernel_gets_its_own_compute_efficiency():
    """Results that name the kernel of their GPTQ weights are fitted, at least MIN_GROUP of them,
    with an eff_compute of that kernel (under runtime/backend/kernel); results without a kernel,
    and estimates, keep the runtime's constants."""
    models, gpus = {"llama-3-1-8b": M["llama-3-1-8b"]}, {"a100-sxm4-80gb": FIXTURE["gpus"]["a100-sxm4-80gb"]}
    base = {"model": "llama-3-1-8b", "gpu": "a100-sxm4-80gb", "weights": "gptq", "context": 1, "gpus": 1,
            "runtime": "transformers", "metric": "decode_tokens_per_s"}
    plain = {"speed": {"*": {"eff_bw": 0.8, "eff_compute": 0.3, "overhead_s": 0.0}}}
    # a slow kernel: the measured rate stops growing with the batch, as a compute bound at 1 % would
    slow = {"speed": {"*": {**plain["speed"]["*"], "eff_compute": 0.01}}}
    rows, unnamed_rows = [], []
    for batch in (4, 8, 16, 32, 64) * 2:
        m = {**base, "batch": batch, "value": 1.0}
        unnamed_rows.append({**m, "value": fitting.predict(m, models, gpus, plain)})
        rows.append({**m, "kernel": "cuda-old", "value": fitting.predict(m, models, gpus, slow)})
    fitted = fitting.fit_constants(models, gpus, unnamed_rows + rows)
    assert fitted["speed"]["transformers/cuda/cuda-old"]["eff_compute"] < 0.03
    kernel_row = rows[-1]
    assert fitting.predict(kernel_row, models, gpus, fitted) == pytest.approx(kernel_row["value"], rel=0.15)
    assert fitting.predict({**kernel_row, "kernel": None}, models, gpus, fitted) > 2 * kernel_row["value"]
    too_few = unnamed_rows + rows[:fitting.MIN_GROUP - 1]
    assert "transformers/cuda/cuda-old" not in fitting.fit_constants(models, gpus, too_few)["speed"]


# ------------------------------------------------------------------ leave-one-source-out

def test_leave_one_source_out_is_a_fresh_fit_without_each_source():
    """The unseen band of every metric and runtime is what fitting the constants on the other
    sources alone (a whole fit, no shortcut) and predicting the left-out source's results gives;
    the fitted band and the older flat keys stay what they were."""
    models, gpus, rows = loso_fixture()
    table = fit_error.accuracy(models, gpus, rows)
    expected: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for source in ("src-a", "src-b", "src-c"):
        others = [m for m in rows if m["source"] != source]
        constants = fitting.fit_constants(models, gpus, others)
        for m in rows:
            if m["source"] == source and m["metric"] != "training_throughput":
                pred = fitting.predict(m, models, gpus, constants)
                for rt in (m["runtime"], "all"):
                    expected.setdefault((m["metric"], rt), []).append((source, abs(pred / m["value"] - 1) * 100))
        groups = relative_fit.relative_groups([m for m in rows if m["source"] == source], (), gpus)
        for (_group, gid), est in relative_fit.training_estimates(groups, gpus, constants).items():
            value = next(m["value"] for m in rows if m["source"] == source and m.get("gpu") == gid
                         and m["metric"] == "training_throughput")
            expected.setdefault(("training_relative", "all"), []).append((source, abs(est / value - 1) * 100))
    assert {(metric, rt) for metric, per in table.items() for rt in per} == set(expected)
    for (metric, rt), errs in expected.items():
        entry = table[metric][rt]
        values = sorted(round(e, 4) for _, e in errs)
        n = len(values)
        median = values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
        p90 = values[math.ceil(0.9 * n) - 1]
        assert entry["unseen"] == {"median_pct": round(median, 1), "p90_pct": round(p90, 1), "count": n,
                                   "sources": len({s for s, _ in errs})}, (metric, rt)
        assert (entry["loso_median_pct"], entry["loso_p90_pct"]) == (entry["unseen"]["median_pct"], entry["unseen"]["p90_pct"])
        assert entry["in_sample"] == {k: entry[k] for k in ("median_pct", "p90_pct", "count", "sources")}
    # the sources differ by a factor: the constants fitted on the others miss the left-out one by more
    decode = table["decode_tokens_per_s"]["all"]
    assert decode["unseen"]["median_pct"] > decode["median_pct"]


def test_held_out_errors_go_through_the_callers_cache():
    """accuracy() asks ``held_out(source, make)`` for each source: an answer from a cache is used
    as it is, and a cache that computes gives the same table as none."""
    models, gpus, rows = loso_fixture()
    asked = []

    def computing(source, make):
        asked.append(source)
        return make()

    plain = fit_error.accuracy(models, gpus, rows)
    assert fit_error.accuracy(models, gpus, rows, held_out=computing) == plain
    assert asked == ["src-a", "src-b", "src-c"]
    kept = fit_error.accuracy(models, gpus, rows, held_out=lambda source, make: [["decode_tokens_per_s", "llama.cpp", 50.0]])
    assert kept["decode_tokens_per_s"]["llama.cpp"]["unseen"] == {"median_pct": 50.0, "p90_pct": 50.0, "count": 3,
                                                                 "sources": 3}
    assert kept["decode_tokens_per_s"]["llama.cpp"]["in_sample"] == plain["decode_tokens_per_s"]["llama.cpp"]["in_sample"]


def test_error_blocks_carry_both_bands_and_read_an_older_table():
    r = estimate(M["llama-3-1-8b"], FIXTURE["gpus"]["rtx-4090"], {"weights": "q4_k_m"}, TABLE)
    band = r["error"]["decode_tokens_per_s"]
    entry = TABLE["errors"]["decode_tokens_per_s"]["llama.cpp"]
    assert band["in_sample"] == entry["in_sample"] and band["unseen"] == entry["unseen"]
    assert band["median_pct"] == entry["median_pct"] and band["loso_median_pct"] == entry["loso_median_pct"]
    # the fixture's training entry has the flat keys only (a table published before the two bands)
    old = training_relative_only(FIXTURE["gpus"]["rtx-3090"], TABLE)["error"]["training_relative"]
    flat = TABLE["errors"]["training_relative"]["all"]
    assert "unseen" not in flat
    assert old["in_sample"] == {k: flat[k] for k in ("median_pct", "p90_pct", "count", "sources")}
    assert old["unseen"] == {"median_pct": flat["loso_median_pct"], "p90_pct": flat["loso_p90_pct"], "count": flat["count"],
                             "sources": None}


def test_past_the_fold_limit_a_publishers_files_are_left_out_together(monkeypatch):
    """Past MAX_FOLDS files, the refits are one per publisher (its files left out together), then
    publishers dealt into MAX_FOLDS folds: a hundred times the files costs no more refits."""
    models, gpus, rows = loso_fixture()
    rows = [dict(m, publisher="pub shared") if m["source"] in ("src-a", "src-b") else m for m in rows]
    assert fit_error.held_out_folds(rows) == {"src-a": "src-a", "src-b": "src-b", "src-c": "src-c"}
    monkeypatch.setattr(fit_error, "MAX_FOLDS", 2)
    assert fit_error.held_out_folds(rows) == {"src-a": "pub shared", "src-b": "pub shared", "src-c": "pub src-c"}
    got = fit_error.held_out_errors(models, gpus, rows, (), "pub shared")
    constants = fitting.fit_constants(models, gpus, [m for m in rows if m["source"] == "src-c"])
    mine = [m for m in rows if m["source"] != "src-c"]
    assert sorted(e[2] for e in got) == sorted(round(abs(fitting.predict(m, models, gpus, constants) / m["value"] - 1) * 100, 4)
                                               for m in mine)
    monkeypatch.setattr(fit_error, "MAX_FOLDS", 1)
    assert set(fit_error.held_out_folds(rows).values()) == {"fold 1"}


# ------------------------------------------------------------------ Gemma 4 E2B/E4B: KV-shared layers, per-layer table


def test_kv_shared_layers_keep_no_cache():
    e4b = M["gemma-4-e4b"]  # 24 of 42 layers keep a cache: 20 windowed (512 tokens), 4 full of 2 KV heads of 512
    context = 32768
    by_hand = 2 * 2 * 256 * 20 * 512 + 2 * 2 * 512 * 4 * context
    assert memory.kv_values_per_sequence(e4b, context) == by_hand
    assert memory.kv_cache_bytes(e4b, context, 1, "f16") == by_hand * 2
    e2b = M["gemma-4-e2b"]  # 15 of 35: 12 windowed, 3 full, one KV head
    assert memory.kv_values_per_sequence(e2b, context) == 2 * 256 * 12 * 512 + 2 * 512 * 3 * context
    # a decode step still reads a shared cache in every layer that attends with it: all 42 layers
    assert memory.kv_read_values_per_sequence(e4b, context) == 2 * 2 * 256 * 35 * 512 + 2 * 2 * 512 * 7 * context


def test_per_layer_table_is_stored_but_neither_read_nor_multiplied():
    e4b = M["gemma-4-e4b"]
    table = 262144 * 42 * 256
    p = memory.param_breakdown(e4b)
    assert p["per_layer"] == table
    assert p["other"] == pytest.approx(7.46e9 - 262144 * 2560 - table)
    w = memory.weights_parts(e4b, "bf16", "transformers")
    assert w["per_layer"] == table * 2 and w["total"] == pytest.approx(7.46e9 * 2)
    # memory: on the card with transformers; llama.cpp keeps it in host memory with the token embeddings
    hf = memory.inference_memory(e4b, "bf16", "f16", 4096, 1, "transformers")
    assert hf["weights_bytes"] == pytest.approx(7.46e9 * 2)
    cpp = memory.inference_memory(e4b, "q8_0", "f16", 4096, 1, "llama.cpp")
    assert cpp["weights_file_bytes"] == pytest.approx(7.46e9 * 8.5 / 8)
    assert cpp["host_bytes"] == pytest.approx(table * 8.5 / 8)
    assert cpp["weights_bytes"] == pytest.approx((7.46e9 - table) * 8.5 / 8)
    # a decode step reads neither the table nor multiplies it
    gpu = FIXTURE["gpus"]["rtx-4090"]
    t = speed.decode_terms(e4b, gpu, "bf16", "f16", 1, 1, "transformers")
    kv = memory.kv_read_values_per_sequence(e4b, 1) * 2
    assert t["bytes_per_step"] == pytest.approx((7.46e9 - table) * 2 + kv)
    assert speed.computed_params(e4b, p) == pytest.approx(7.46e9 - table)
    assert t["compute_s"] == pytest.approx(2 * (7.46e9 - table) / (speed.matrix_tflops(gpu, "bf16", "transformers") * 1e12))


def test_kv_shared_layers_are_checked():
    good = M["gemma-4-e4b"]
    engine.check_model(good)
    for bad in ({"kv_shared_layers": 42}, {"kv_shared_sliding_layers": 36},
                {"kv_shared_layers": 18, "kv_shared_sliding_layers": 10}, {"kv_shared_layers": 1.5}):
        with pytest.raises(EstimateError) as exc:
            engine.check_model(dict(good, **bad))
        assert exc.value.key == "est.err.layer_kinds", bad
    with pytest.raises(EstimateError) as exc:
        engine.check_model(dict(good, parameters_b=2.8))  # the table alone is 2.82B
    assert exc.value.key == "est.err.embeddings_above_params"


def test_without_advice_a_setup_that_does_not_fit_has_no_shortfall_and_the_same_figures():
    """Tables of many setups (the grid of the GPU and model pages) ask for no shortfall: the estimate
    is otherwise the same, and a setup that fits still says it has none."""
    bundle = read_bundle(ROOT / "data")
    options = {"weights": "q4_k_m", "runtime": "llama.cpp", "context": 4096}
    big, small = bundle.models["llama-3-1-70b"], bundle.gpus["rtx-4060"]
    full, light = estimate(big, small, options, TABLE), estimate(big, small, options, TABLE, advice=False)
    assert not full["fits"] and full["shortfall"]["suggestions"] and "shortfall" not in light
    assert {k: v for k, v in full.items() if k != "shortfall"} == light
    fits = estimate(bundle.models["llama-3-1-8b"], bundle.gpus["rtx-4090"], options, TABLE, advice=False)
    assert fits["fits"] and fits["shortfall"] is None
