"""benchmarks/gpu_measure.py without a GPU: the transformers configuration it builds from a record
of data/models, and the measurements file it writes (which must validate like any other source).
The measuring itself needs torch and a GPU and never runs here."""
from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest
from helpers import ROOT, write_model

from benchmarks import gpu_measure
from generator.estimate.memory import param_breakdown
from generator.facts.engine_input import read_bundle

BUNDLE = read_bundle(ROOT / "data")


def test_every_catalogue_model_gets_a_configuration_or_a_reason():
    built, refused = {}, {}
    for mid, model in sorted(BUNDLE.models.items()):
        try:
            built[mid] = gpu_measure.hf_config(mid, model)
        except gpu_measure.Unsupported as exc:
            refused[mid] = str(exc)
    # what the script cannot rebuild: latent attention (DeepSeek, Kimi), families without a rebuilt architecture,
    # and layers of kinds a record does not describe (linear attention, state-space and convolution mixers)
    assert set(refused) == {
        "deepseek-r1", "deepseek-r1-0528", "deepseek-v3", "deepseek-v3-1", "deepseek-v3-1-terminus", "deepseek-v3-2",
        "deepseek-v3-2-exp", "ernie-4-5-21b-a3b", "ernie-4-5-300b-a47b",
        "gemma-3n-e2b", "gemma-3n-e4b", "gemma-4-26b-a4b", "gemma-4-31b", "gemma-4-e2b", "gemma-4-e4b",
        "glm-4-5", "glm-4-5-air", "glm-4-5v", "glm-4-6", "glm-4-7", "glm-4-7-flash", "gpt-oss-120b",
        "gpt-oss-20b", "granite-4-0-h-small", "granite-4-0-h-tiny", "hunyuan-a13b", "kimi-k2", "kimi-k2-0905", "kimi-k2-thinking",
        "kimi-linear-48b-a3b",
        "lfm2-1-2b", "lfm2-350m", "llama-4-maverick", "llama-4-scout", "minimax-m1", "minimax-m2", "ministral-3-3b",
        "ministral-3-8b",
        "nemotron-3-nano-30b-a3b", "nemotron-nano-9b-v2", "olmo-2-13b", "olmo-2-32b", "olmo-2-7b", "olmo-3-32b", "olmo-3-7b",
        "qwen3-5-27b",
        "qwen3-5-35b-a3b", "qwen3-5-397b-a17b", "qwen3-5-4b", "qwen3-5-9b", "qwen3-next-80b-a3b",
        "qwen3-next-80b-a3b-thinking", "seed-oss-36b", "smollm3-3b"}, sorted(refused)
    assert refused["deepseek-v3"].startswith("deepseek-v3: multi-head latent attention")
    for mid, cfg in built.items():
        m = BUNDLE.models[mid]
        assert (cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]) == \
            (m["layers"], m["attention_heads"], m["kv_heads"], m["head_dim"]), mid
        assert cfg["tie_word_embeddings"] is bool(m.get("tied_embeddings")), mid


def test_hybrid_layers_are_refused_not_rebuilt_as_plain_attention():
    """Qwen3-Next and Qwen3.5 records read like Qwen3 ones, and Llama 4's like Llama's, but most of their
    layers are of another kind: rebuilding them as plain attention would measure another model."""
    for mid, what in (("qwen3-next-80b-a3b", "Gated DeltaNet"), ("qwen3-5-9b", "Gated DeltaNet"),
                      ("llama-4-scout", "chunked attention")):
        with pytest.raises(gpu_measure.Unsupported, match=what):
            gpu_measure.hf_config(mid, BUNDLE.models[mid])
    # their plain relatives still map: a Qwen3 mixture of experts, a Llama 3 distill, a Qwen2 reasoning model
    assert gpu_measure.hf_config("qwen3-coder-30b-a3b", BUNDLE.models["qwen3-coder-30b-a3b"])["model_type"] == "qwen3_moe"
    assert gpu_measure.hf_config("deepseek-r1-distill-llama-8b",
                                 BUNDLE.models["deepseek-r1-distill-llama-8b"])["model_type"] == "llama"
    assert gpu_measure.hf_config("qwq-32b", BUNDLE.models["qwq-32b"])["model_type"] == "qwen2"


def test_mixtures_of_experts_windows_and_families_map_to_their_architecture():
    cfg = gpu_measure.hf_config("qwen3-30b-a3b", BUNDLE.models["qwen3-30b-a3b"])
    assert cfg["model_type"] == "qwen3_moe"
    assert (cfg["num_experts"], cfg["num_experts_per_tok"], cfg["moe_intermediate_size"]) == (128, 8, 768)
    assert gpu_measure.hf_config("qwen3-8b", BUNDLE.models["qwen3-8b"])["model_type"] == "qwen3"
    mixtral = gpu_measure.hf_config("mixtral-8x7b", BUNDLE.models["mixtral-8x7b"])
    assert (mixtral["model_type"], mixtral["num_local_experts"], mixtral["intermediate_size"]) == ("mixtral", 8, 14336)
    # Mistral 7B v0.1: every layer windowed at 4,096 tokens
    assert gpu_measure.hf_config("mistral-7b", BUNDLE.models["mistral-7b"])["sliding_window"] == 4096
    # Gemma 3 4B: 29 of 34 layers windowed, so every 6th layer is global
    gemma = gpu_measure.hf_config("gemma-3-4b", BUNDLE.models["gemma-3-4b"])
    assert (gemma["model_type"], gemma["sliding_window"], gemma["sliding_window_pattern"]) == ("gemma3_text", 1024, 6)
    assert gpu_measure.hf_config("qwen2-5-7b", BUNDLE.models["qwen2-5-7b"])["model_type"] == "qwen2"
    with pytest.raises(gpu_measure.Unsupported, match="no transformers architecture"):
        gpu_measure.hf_config("falcon-7b", BUNDLE.models["llama-3-1-8b"])


def test_the_records_parameter_count_is_what_the_rebuilt_architecture_has():
    """The script refuses a model whose rebuilt parameter count is 2 % off the record; the
    engine's own count from the same fields agrees with the records, so the fields carry it."""
    for mid in ("llama-3-1-8b", "qwen2-5-7b", "mistral-7b", "llama-3-2-1b"):
        m = BUNDLE.models[mid]
        assert param_breakdown(m)["total"] / 1e9 == pytest.approx(m["parameters_b"], rel=0.02), mid


def test_the_written_file_validates_as_a_source(tree):
    write_model(tree)
    results = [
        gpu_measure.result("rtx-2070", "tiny-7b", "peak_memory_gib", 15.23456, "Forward pass.", context=4096),
        gpu_measure.result("rtx-2070", "tiny-7b", "decode_tokens_per_s", 41.234, "generate().", context=512,
                           generated_tokens=256),
        gpu_measure.result("rtx-2070", "tiny-7b", "peak_memory_gib", 30.5, "LoRA step.", mode="lora", context=2048,
                           gradient_checkpointing=False),
        gpu_measure.result("rtx-2070", "tiny-7b", "training_tokens_per_s", 3456.7, "Full step.", mode="full",
                           weights="f32", context=2048, gradient_checkpointing=True),
    ]
    meta = {"gpu_name": "GeForce RTX 2070", "url": "https://example.org/benchmarks/gpu_measure.py",
            "date": dt.date(2026, 1, 5), "versions": {"transformers": "4.57.1", "torch": "2.9.0"}}
    text = gpu_measure.measurements_file(meta, results)
    assert text.startswith("# yaml-language-server: $schema=../schema/measurement.schema.json\n")
    tree.write("measurements/own.yaml", text)
    assert tree.problems() == []
    from generator.cli.format import format_text

    assert format_text(text, "measurements/own.yaml") == text  # already in canonical form
    assert "runtime_version: 4.57.1" in text and "gradient_checkpointing: false" in text and "mode: full" in text
    assert "value: 3456.7" in text and "value: 15.235" in text


def test_without_an_address_the_file_names_the_script_and_validates(tree):
    """The site's own runs are sourced to the script itself (the card, versions and date beside it)."""
    write_model(tree)
    results = [gpu_measure.result("rtx-2070", "tiny-7b", "prefill_tokens_per_s", 12345.6, "Forward pass.", context=4096)]
    meta = {"gpu_name": "GeForce RTX 2070", "url": None, "date": dt.date(2026, 1, 5),
            "versions": {"transformers": "5.17.0", "torch": "2.11.0"}}
    text = gpu_measure.measurements_file(meta, results)
    assert "\nscript: benchmarks/gpu_measure.py\n" in text and "\nurl:" not in text
    assert "benchmarks/gpu_measure.py on one GeForce RTX 2070 (transformers 5.17.0, torch 2.11.0)" in text
    tree.write("measurements/own.yaml", text)
    assert tree.problems() == []


def test_the_graph_decode_file_is_a_pytorch_source_that_validates(tree):
    """--modes graph-decode writes decode rates at several batch sizes as runtime pytorch (the step is
    PyTorch's captured graph, not transformers' generate()), versioned by torch."""
    write_model(tree)
    results = [gpu_measure.result("rtx-2070", "tiny-7b", "decode_tokens_per_s", v, "Graph replay.", context=512, batch=b)
               for b, v in ((1, 61.23), (8, 470.5), (32, 1650.25))]
    meta = {"gpu_name": "GeForce RTX 2070", "url": None, "date": dt.date(2026, 1, 5), "graph": True,
            "versions": {"transformers": "5.17.0", "torch": "2.11.0+cu130"}}
    text = gpu_measure.measurements_file(meta, results)
    assert "\nruntime: pytorch\n" in text and "runtime_version: 2.11.0+cu130" in text and "CUDA graph" in text
    assert "\nscript: benchmarks/gpu_measure.py\n" in text and "batch: 32" in text and "generated_tokens" not in text
    tree.write("measurements/own.yaml", text)
    assert tree.problems() == []


def test_the_shipped_own_measurements_are_what_the_script_writes():
    """Every file sourced to the script holds results in the form the script gives them (so it was
    written by the script, not typed), and its notes are the script's for its card and versions."""
    import yaml

    own = [p for p in sorted((ROOT / "data" / "measurements").glob("*.yaml"))
           if (yaml.safe_load(p.read_text(encoding="utf-8")) or {}).get("script")]
    assert own, "no measurements file names benchmarks/gpu_measure.py"
    for path in own:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert doc["script"] == gpu_measure.SCRIPT and doc["publisher"] == "whichgpu (own measurements)"
        for res in doc["results"]:
            cond = {k: res[k] for k in ("mode", "weights", "context", "batch", "generated_tokens",
                                        "gradient_checkpointing") if k in res}
            again = gpu_measure.result(res["gpu"], res["model"], res["metric"], res["value"], res["note"], **cond)
            assert again == res, (path.name, res)
        assert BUNDLE.models.keys() >= {r["model"] for r in doc["results"]}


def test_bad_arguments_exit_2_with_a_message_before_any_torch_import():
    for args, message in ((["--gpu", "no-such-card", "--url", "https://example.org/x"], "no GPU 'no-such-card'"),
                          (["--gpu", "rtx-4090", "--url", "https://example.org/x", "--models", "nope"], "no model nope"),
                          (["--gpu", "rtx-4090", "--url", "https://example.org/x", "--contexts", "4k"], "--contexts takes"),
                          (["--gpu", "rtx-4090", "--url", "https://example.org/x", "--modes", "qlora"], "--modes takes"),
                          (["--gpu", "rtx-4090", "--modes", "decode", "--repeats", "0"], "--generate and --repeats take"),
                          (["--gpu", "rtx-4090", "--generate", "0"], "--generate and --repeats take"),
                          (["--gpu", "rtx-4090", "--modes", "graph-decode,lora"], "--modes graph-decode runs alone"),
                          (["--gpu", "rtx-4090", "--modes", "graph-decode", "--batches", "1,0"], "--batches takes"),
                          (["--gpu", "rtx-4090", "--url", "https://example.org/x", "--out", "x.yaml", "--device", "cpu"],
                           "--out needs a CUDA device")):
        r = subprocess.run([sys.executable, "-m", "benchmarks.gpu_measure", *args], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
