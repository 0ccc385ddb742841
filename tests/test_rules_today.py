"""The validator rules of the newer record kinds and GPU fields, each with a passing and a failing
fixture, and the cascade rule: one unreadable file is one problem, not four."""
from __future__ import annotations

import pytest
from helpers import MODEL, MODEL_TEXT, write_model

GPU = "gpus/nvidia/rtx-2070.yaml"
GPU_SHOWN = "data/" + GPU
MODEL_SHOWN = "data/" + MODEL
MEAS = "measurements/bench.yaml"
PRICE = "prices/rtx-2070.yaml"
PRICE_SHOWN = "data/" + PRICE

MEAS_TEXT = """title: A benchmark table
url: https://example.org/bench
publisher: Example Lab
date: 2025-01-02
runtime: llama.cpp
runtime_version: "b1000"
results:
  - gpu: rtx-2070
    gpus: 1
    model: tiny-7b
    weights: q4_0
    context: 512
    batch: 1
    metric: prefill_tokens_per_s
    value: 1200
"""

PREFILL = "metric: prefill_tokens_per_s"
WORKLOAD_TEXT = """title: A training benchmark table
url: https://example.org/bench
publisher: Example Lab
date: 2025-01-02
runtime: pytorch
runtime_version: unknown
results:
  - gpu: rtx-2070
    gpus: 1
    workload: bert-large-squad
    mode: full
    batch: 64
    metric: training_throughput
    value: 120
"""

TREE_TEXT = """date: 2023-01-16
url: https://example.org/2023/01/16/advice/
kind: full
sources:
  - https://example.org/2023/01/16/advice/
summary: A fixture revision with a decision tree.
decision_tree:
  question: Will you train transformers?
  if_yes:
    gpus: [rtx-2070]
    workloads: [transformer]
  if_no:
    gpus: []
    note: Rent.
"""

PRICE_TEXT = """observations:
  - kind: used
    usd: 250
    date: 2025-06-01
    source: https://example.org/used
  - kind: cloud-hourly
    usd: 8
    gpus: 8
    provider: Example Cloud
    instance: x8
    date: 2025-06-01
    source: https://example.org/cloud
"""


def _gpu_extra(tree, text, fields):
    gpu = tree.read(GPU).replace("fields: [fp16_tensor_tflops,", f"fields: [fp16_tensor_tflops, {fields},")
    tree.write(GPU, gpu.rstrip("\n") + "\n" + text)


def _with_measurement(tree, text=MEAS_TEXT):
    write_model(tree)
    tree.write(MEAS, text)


SOURCE_URL = "url: https://example.org/bench\n"


def _source(lines: str):
    """The fixture measurements file with its source line replaced by ``lines``."""
    return lambda t: _with_measurement(t, MEAS_TEXT.replace(SOURCE_URL, lines))


CASES = {
    "fp8_dense_not_above_sparse": (
        lambda t: _gpu_extra(t, "fp8_tensor_tflops: 60\nfp8_tensor_tflops_sparse: 120\n",
                             "fp8_tensor_tflops, fp8_tensor_tflops_sparse"),
        lambda t: _gpu_extra(t, "fp8_tensor_tflops: 120\nfp8_tensor_tflops_sparse: 60\n",
                             "fp8_tensor_tflops, fp8_tensor_tflops_sparse"),
        f"{GPU_SHOWN}:21: fp8_tensor_tflops: dense 120 is above sparse 60; the sparse figure goes in fp8_tensor_tflops_sparse",
    ),
    "fp4_sparse_needs_dense": (
        lambda t: _gpu_extra(t, "fp4_tensor_tflops: 200\n", "fp4_tensor_tflops"),
        lambda t: _gpu_extra(t, "fp4_tensor_tflops_sparse: 400\n", "fp4_tensor_tflops_sparse"),
        f"{GPU_SHOWN}:21: fp4_tensor_tflops_sparse: a sparse figure needs the dense figure beside it",
    ),
    "l2_cache_is_sourced": (
        lambda t: _gpu_extra(t, "l2_cache_mb: 4\n", "l2_cache_mb"),
        lambda t: _gpu_extra(t, "l2_cache_mb: 4\n", "tdp_w"),
        f"{GPU_SHOWN}:21: l2_cache_mb: no source covers l2_cache_mb; add it to the fields of a source in sources",
    ),
    "unified_memory_needs_share": (
        lambda t: _gpu_extra(t, "unified_memory: true\ngpu_memory_share: 0.75\n", "gpu_memory_share"),
        lambda t: _gpu_extra(t, "unified_memory: true\n", "tdp_w"),
        f"{GPU_SHOWN}:1: unified_memory is true: give gpu_memory_share, the share of memory_gb the GPU may use (e.g. 0.75)",
    ),
    "share_only_with_unified_memory": (
        lambda t: _gpu_extra(t, "unified_memory: false\n", "tdp_w"),
        lambda t: _gpu_extra(t, "gpu_memory_share: 0.75\n", "gpu_memory_share"),
        f"{GPU_SHOWN}:21: gpu_memory_share: gpu_memory_share applies to unified memory only; "
        "set unified_memory: true or remove it",
    ),
    "new_numbers_are_sourced": (
        lambda t: _gpu_extra(t, "fp8_tensor_tflops: 60\n", "fp8_tensor_tflops"),
        lambda t: t.write(GPU, t.read(GPU).rstrip("\n") + "\nfp8_tensor_tflops: 60\n"),
        f"{GPU_SHOWN}:21: fp8_tensor_tflops: no source covers fp8_tensor_tflops; add it to the fields of a source in sources",
    ),
    "model_kv_heads_divide_heads": (
        lambda t: write_model(t),
        lambda t: write_model(t, "kv_heads: 8", "kv_heads: 5"),
        f"{MODEL_SHOWN}:11: kv_heads: attention_heads 32 is not a multiple of kv_heads 5",
    ),
    "model_kv_heads_not_above_heads": (
        lambda t: write_model(t, "kv_heads: 8", "kv_heads: 32"),
        lambda t: write_model(t, "kv_heads: 8", "kv_heads: 64"),
        f"{MODEL_SHOWN}:11: kv_heads: kv_heads 64 is above attention_heads 32",
    ),
    "model_mha_means_equal_heads": (
        lambda t: t.write(MODEL, MODEL_TEXT.replace("kv_heads: 8", "kv_heads: 32").replace("attention: gqa", "attention: mha")),
        lambda t: write_model(t, "attention: gqa", "attention: mha"),
        f"{MODEL_SHOWN}:15: attention: mha means one key/value head per query head; kv_heads is 8 of 32: use gqa",
    ),
    "model_mla_needs_cache_size": (
        lambda t: write_model(t, "attention: gqa", "attention: mla", "kv_lora_rank: 512\nqk_rope_head_dim: 64\n"),
        lambda t: write_model(t, "attention: gqa", "attention: mla"),
        f"{MODEL_SHOWN}:1: attention mla needs kv_lora_rank and qk_rope_head_dim (the compressed cache per token)",
    ),
    "model_experts_come_together": (
        lambda t: write_model(t, "active_parameters_b: 7", "active_parameters_b: 2", "experts: 8\nexperts_per_token: 2\n"),
        lambda t: write_model(t, extra="experts: 8\n"),
        f"{MODEL_SHOWN}:1: a mixture of experts gives both experts and experts_per_token",
    ),
    "model_dense_active_equals_total": (
        lambda t: write_model(t),
        lambda t: write_model(t, "active_parameters_b: 7", "active_parameters_b: 2"),
        f"{MODEL_SHOWN}:6: active_parameters_b: a dense model (no experts) has active_parameters_b equal to parameters_b",
    ),
    "model_window_gives_layers": (
        lambda t: write_model(t, extra="sliding_window: 4096\nsliding_window_layers: 16\n"),
        lambda t: write_model(t, extra="sliding_window: 4096\n"),
        f"{MODEL_SHOWN}:1: sliding-window attention gives both sliding_window and sliding_window_layers",
    ),
    "model_full_attention_shape_needs_windows": (
        lambda t: write_model(t, extra="sliding_window: 4096\nsliding_window_layers: 16\nfull_head_dim: 256\n"),
        lambda t: write_model(t, extra="full_head_dim: 256\n"),
        f"{MODEL_SHOWN}:19: full_head_dim: full_head_dim describes the full-attention layers beside sliding-window "
        "ones: give sliding_window and sliding_window_layers",
    ),
    "model_kv_shared_layers_below_the_attention_layers": (
        lambda t: write_model(t, extra="kv_shared_layers: 8\n"),
        lambda t: write_model(t, extra="kv_shared_layers: 32\n"),
        f"{MODEL_SHOWN}:19: kv_shared_layers: 32 KV-shared layers of 32 attention layers: at least one layer keeps "
        "the cache they reuse",
    ),
    "model_kv_shared_layers_say_how_many_slide": (
        lambda t: write_model(t, extra="sliding_window: 4096\nsliding_window_layers: 16\nkv_shared_layers: 8\n"
                                       "kv_shared_sliding_layers: 4\n"),
        lambda t: write_model(t, extra="sliding_window: 4096\nsliding_window_layers: 16\nkv_shared_layers: 8\n"),
        f"{MODEL_SHOWN}:21: kv_shared_layers: with sliding-window layers, give kv_shared_sliding_layers: how many of "
        "the KV-shared layers use the window",
    ),
    "model_figures_are_sourced": (
        lambda t: write_model(t),
        lambda t: write_model(t, "  - https://example.org/config.json",
                         "  - url: https://example.org/config.json\n    fields: [layers]"),
        f"{MODEL_SHOWN}:3: release_date: no source covers release_date; add it to the fields of a source in sources",
    ),
    "measurement_names_known_ids": (
        lambda t: _with_measurement(t),
        lambda t: _with_measurement(t, MEAS_TEXT.replace("model: tiny-7b", "model: tiny-7")),
        "data/measurements/bench.yaml:10: results[0].model: unknown model id 'tiny-7'; did you mean 'tiny-7b'?",
    ),
    "measurement_known_metric": (
        lambda t: _with_measurement(t),
        lambda t: _with_measurement(t, MEAS_TEXT.replace("metric: prefill_tokens_per_s", "metric: tokens")),
        "data/measurements/bench.yaml:14: results[0].metric: expected one of decode_tokens_per_s, prefill_tokens_per_s, "
        "peak_memory_gib, weights_gib, training_tokens_per_s, training_throughput; got 'tokens' (text)",
    ),
    "measurement_names_model_or_workload": (
        lambda t: _with_measurement(t),
        lambda t: _with_measurement(t, MEAS_TEXT.replace("    model: tiny-7b\n", "")),
        "data/measurements/bench.yaml:8: results[0]: a result names its model (or, for a training benchmark, a workload)",
    ),
    "measurement_workload_is_not_a_model_result": (
        lambda t: _with_measurement(t, WORKLOAD_TEXT),
        lambda t: _with_measurement(t, WORKLOAD_TEXT.replace("    batch: 64\n", "    batch: 64\n    context: 384\n")),
        "data/measurements/bench.yaml:13: results[0].context: context applies to model results; this result names a workload",
    ),
    "measurement_workload_metric": (
        lambda t: _with_measurement(t, WORKLOAD_TEXT),
        lambda t: _with_measurement(t, WORKLOAD_TEXT.replace("training_throughput", "decode_tokens_per_s")),
        "data/measurements/bench.yaml:13: results[0].metric: a workload result measures training_throughput",
    ),
    "measurement_training_mode": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: training_tokens_per_s\n    mode: lora")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: training_tokens_per_s\n    mode: inference")),
        "data/measurements/bench.yaml:15: results[0].mode: training_tokens_per_s is measured in a training mode",
    ),
    "measurement_names_its_source": (
        _source("script: benchmarks/gpu_measure.py\n"),
        _source(""),
        "data/measurements/bench.yaml:1: a measurements file names its source: url (a public address) or script",
    ),
    "measurement_source_is_an_address_or_the_sites_script_not_both": (
        _source(SOURCE_URL),
        _source(SOURCE_URL + "script: benchmarks/gpu_measure.py\n"),
        "data/measurements/bench.yaml:3: script: give url or script, not both",
    ),
    "measurement_script_is_one_of_the_sites": (
        _source("script: benchmarks/gpu_measure.py\n"),
        _source("script: my_bench.py\n"),
        "data/measurements/bench.yaml:2: script: ",
    ),
    "measurement_generated_tokens_times_decode": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: decode_tokens_per_s\n    generated_tokens: 2048")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, PREFILL + "\n    generated_tokens: 2048")),
        "data/measurements/bench.yaml:15: results[0].generated_tokens: generated_tokens describes an inference run "
        "that generated tokens after the prompt: a decode_tokens_per_s or peak_memory_gib result",
    ),
    "measurement_generated_tokens_sets_the_peak_of_an_inference_run": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    generated_tokens: 512")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: lora\n"
                                                                  "    generated_tokens: 512")),
        "data/measurements/bench.yaml:16: results[0].generated_tokens: generated_tokens describes an inference run",
    ),
    "measurement_kernel_is_for_gptq_or_awq_weights": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace("    weights: q4_0\n", "    weights: gptq\n    kernel: marlin\n")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace("    weights: q4_0\n", "    weights: q4_0\n    kernel: marlin\n")),
        "data/measurements/bench.yaml:12: results[0].kernel: kernel names the kernel of GPTQ or AWQ weights",
    ),
    "measurement_checkpointing_is_a_training_condition": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: full\n"
                                                                  "    gradient_checkpointing: false")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    gradient_checkpointing: false")),
        "data/measurements/bench.yaml:15: results[0].gradient_checkpointing: gradient_checkpointing describes a training run",
    ),
    "measurement_optimizer_is_a_training_condition": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: full\n"
                                                                  "    optimizer: paged-adamw-8bit")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    optimizer: adamw-8bit")),
        "data/measurements/bench.yaml:15: results[0].optimizer: optimizer describes a training run",
    ),
    "measurement_master_weights_is_a_full_fine_tuning_condition": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: full\n"
                                                                  "    master_weights: false\n    optimizer_in_backward: true")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: lora\n"
                                                                  "    master_weights: false")),
        "data/measurements/bench.yaml:16: results[0].master_weights: master_weights describes full fine-tuning (mode full)",
    ),
    "measurement_optimizer_in_backward_is_a_full_fine_tuning_condition": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: full\n"
                                                                  "    optimizer_in_backward: true")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    optimizer_in_backward: true")),
        "data/measurements/bench.yaml:15: results[0].optimizer_in_backward: optimizer_in_backward describes full fine-tuning",
    ),
    "measurement_lora_rank_and_targets_are_lora_conditions": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: qlora\n"
                                                                  "    lora_rank: 8\n    lora_targets: [q, v]")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: full\n"
                                                                  "    lora_targets: [q, v]")),
        "data/measurements/bench.yaml:16: results[0].lora_targets: lora_targets describes a LoRA or QLoRA run",
    ),
    "measurement_lora_targets_are_named_once": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: lora\n"
                                                                  "    lora_targets: [q, v]")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: lora\n"
                                                                  "    lora_targets: [q, v, q]")),
        "data/measurements/bench.yaml:16: results[0].lora_targets[2]: 'q' is listed twice (first as item 1)",
    ),
    "measurement_chunked_loss_is_a_training_condition": (
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    mode: lora\n"
                                                                  "    chunked_loss: true")),
        lambda t: _with_measurement(t, MEAS_TEXT.replace(PREFILL, "metric: peak_memory_gib\n    chunked_loss: true")),
        "data/measurements/bench.yaml:15: results[0].chunked_loss: chunked_loss describes a training run",
    ),
    "price_cloud_names_its_instance": (
        lambda t: t.write(PRICE, PRICE_TEXT),
        lambda t: t.write(PRICE, PRICE_TEXT.replace("    instance: x8\n", "")),
        f"{PRICE_SHOWN}:6: observations[1]: a cloud-hourly price names its instance",
    ),
    "price_no_cloud_fields_on_purchases": (
        lambda t: t.write(PRICE, PRICE_TEXT),
        lambda t: t.write(PRICE, PRICE_TEXT.replace("    usd: 250\n", "    usd: 250\n    provider: Shop\n")),
        f"{PRICE_SHOWN}:4: observations[0].provider: provider applies to cloud-hourly prices only",
    ),
    "price_not_in_the_future": (
        lambda t: t.write(PRICE, PRICE_TEXT),
        lambda t: t.write(PRICE, PRICE_TEXT.replace("date: 2025-06-01", "date: 2099-06-01", 1)),
        f"{PRICE_SHOWN}:4: observations[0].date: 2099-06-01 is in the future",
    ),
    "price_file_is_a_gpu_id": (
        lambda t: t.write(PRICE, PRICE_TEXT),
        lambda t: t.write("prices/rtx-2071.yaml", PRICE_TEXT),
        "data/prices/rtx-2071.yaml:1: prices/ files are named after a gpu id; 'rtx-2071' is not one; did you mean 'rtx-2070'?",
    ),
    "tree_workloads_need_a_card": (
        lambda t: t.write("revisions/2023-01-16.yaml", TREE_TEXT),
        lambda t: t.write("revisions/2023-01-16.yaml",
                          TREE_TEXT.replace("    note: Rent.", "    note: Rent.\n    workloads: [cnn]")),
        "data/revisions/2023-01-16.yaml:15: decision_tree.if_no.workloads: workloads on a leaf that names no GPU: "
        "the picker would have no card to rank; drop workloads or list the cards",
    ),
    "tree_personas_need_a_card": (
        lambda t: t.write("revisions/2023-01-16.yaml",
                          TREE_TEXT.replace("    workloads: [transformer]",
                                            "    workloads: [transformer]\n    personas: [best-overall]")),
        lambda t: t.write("revisions/2023-01-16.yaml",
                          TREE_TEXT.replace("    note: Rent.", "    note: Rent.\n    personas: [little-money]")),
        "data/revisions/2023-01-16.yaml:15: decision_tree.if_no.personas: personas on a leaf that names no GPU: "
        "the history matrix would have no card to show for them; drop personas or list the cards",
    ),
    "tree_persona_names_one_leaf": (
        lambda t: t.write("revisions/2023-01-16.yaml",
                          TREE_TEXT.replace("    workloads: [transformer]", "    personas: [best-overall, little-money]")),
        lambda t: t.write("revisions/2023-01-16.yaml",
                          TREE_TEXT.replace("    workloads: [transformer]", "    personas: [best-overall]")
                          .replace("    gpus: []\n    note: Rent.",
                                   "    gpus: [rtx-2070]\n    personas: [little-money, best-overall]")),
        "data/revisions/2023-01-16.yaml:14: decision_tree.if_no.personas[1]: persona best-overall is already answered by "
        "the leaf at decision_tree.if_yes; a persona names one leaf",
    ),
    "tree_personas_are_known": (
        lambda t: t.write("revisions/2023-01-16.yaml",
                          TREE_TEXT.replace("    workloads: [transformer]", "    personas: [little-money]")),
        lambda t: t.write("revisions/2023-01-16.yaml",
                          TREE_TEXT.replace("    workloads: [transformer]", "    personas: [best-overal]")),
        "data/revisions/2023-01-16.yaml:11: decision_tree.if_yes.personas[0]: unknown persona id 'best-overal'; "
        "did you mean 'best-overall'?",
    ),
    "search_terms_name_a_language": (
        lambda t: t.write("search.yaml", "ko:\n  타이탄: [TITAN]\n"),
        lambda t: t.write("search.yaml", "ko:\n  타이탄: [TITAN]\nkr:\n  램: [메모리]\n"),
        "data/search.yaml:3: kr: expected one of en, ko, zh, fr; got 'kr' (text)",
    ),
    "search_terms_are_single_words": (
        lambda t: t.write("search.yaml", "fr:\n  vram: [mémoire]\n"),
        lambda t: t.write("search.yaml", "fr:\n  vram: [mémoire vive]\n"),
        "data/search.yaml:2: fr.vram[0]: expected one word, without spaces",
    ),
    "used_price_far_above_launch_is_reported": (
        lambda t: t.write(PRICE, PRICE_TEXT),
        lambda t: t.write(PRICE, PRICE_TEXT.replace("usd: 250", "usd: 1250")),
        f"{PRICE_SHOWN}:3: observations[0].usd: used price 1250 USD is above twice the launch price (499 USD); "
        "check the figure or explain it in note [warning]",
    ),
}


def _all(tree):
    from generator.data.loader import load_dataset

    _ds, problems = load_dataset(tree.data, tree.root, today=__import__("datetime").date(2026, 11, 23))
    return [str(p) for p in problems]


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_passes_on_good_data(tree, rule):
    good, _bad, _expected = CASES[rule]
    good(tree)
    assert _all(tree) == []


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_reports_bad_data(tree, rule):
    _good, bad, expected = CASES[rule]
    bad(tree)
    problems = _all(tree)
    assert any(p.startswith(expected) for p in problems), "\n".join(problems)


def test_an_unreadable_file_is_one_problem_and_says_what_was_not_checked(tree):
    """A GPU file that does not parse: its translation and the references to it are not reported
    again as unknown; one note says they were not checked."""
    tree.write("translations/ko/" + GPU, '"notes":\n  text: "카드"\n  source: "0123456789ab"\n')
    tree.write(GPU, tree.read(GPU) + "notes: [unclosed\n")
    problems = _all(tree)
    errors = [p for p in problems if not p.endswith("[note]")]
    notes = [p for p in problems if p.endswith("[note]")]
    assert len(errors) == 1 and errors[0].startswith(f"{GPU_SHOWN}:") and "YAML syntax" in errors[0], problems
    assert len(notes) == 1 and notes[0].startswith(f"{GPU_SHOWN}:1: ") and "were not checked" in notes[0], problems
    assert not any("unknown gpu id" in p or "does not exist" in p for p in problems)
