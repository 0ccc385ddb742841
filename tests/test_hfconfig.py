"""A model from a Hugging Face config.json (generator/estimate/hfconfig.py, its browser twin
docs/assets/js/calc/hfconfig.mjs) and ``python -m generator estimate --config FILE``.

``tests/fixtures/hf_configs.json`` holds the config.json each of several catalogue records
corresponds to (written from the record's fields in Hugging Face's naming by
``tests/fixtures/update_hf_configs.py``), and bad configs; both sides must read them alike.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator.estimate import engine, hfconfig

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "hf_configs.json").read_text(encoding="utf-8"))
GOLDEN = json.loads((ROOT / "tests" / "fixtures" / "estimate.json").read_text(encoding="utf-8"))
_spec = importlib.util.spec_from_file_location("update_hf_configs", ROOT / "tests" / "fixtures" / "update_hf_configs.py")
UPDATE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(UPDATE)
CASES = {c["id"]: c for c in FIXTURE["cases"]}
RECORDS = [c for c in FIXTURE["cases"] if c.get("record")]


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[c["id"] for c in FIXTURE["cases"]])
def test_python_reads_the_fixture_as_recorded(case):
    assert UPDATE.read(case["config"]) == {k: case[k] for k in ("model", "error") if k in case}


@pytest.mark.parametrize("case", RECORDS, ids=[c["id"] for c in RECORDS])
def test_each_config_gives_back_its_record(case):
    record = UPDATE.record(case["record"])
    if not case.get("as_published"):  # the others are written from the record
        assert UPDATE.config_of(record) == case["config"], "rewrite the fixture: python tests/fixtures/update_hf_configs.py"
    model = hfconfig.architecture_from_config(case["config"])
    for name in FIXTURE["engine_fields"]:
        if record.get(name) is not None:
            assert model.get(name) == record[name], name


# the cards count total parameters as the shapes do; some count active parameters otherwise
# (DeepSeek's and Kimi's low-rank queries, q_lora_rank, are not in the records; Qwen and IBM round
# their active counts), so those are held to the total only
ACTIVE_AS_CARD = ("llama-3-1-8b", "qwen3-8b", "mistral-7b", "gemma-2-9b", "gemma-3-27b", "qwen3-30b-a3b", "mixtral-8x7b",
                  "glm-4-5", "llama-4-scout", "nemotron-nano-9b-v2", "lfm2-1-2b", "minimax-m1")


@pytest.mark.parametrize("case", RECORDS, ids=[c["id"] for c in RECORDS])
def test_parameters_from_config_within_a_few_percent_of_the_card(case):
    record = UPDATE.record(case["record"])
    counted = hfconfig.parameters_from_config(case["config"])
    assert counted["parameters_b"] == pytest.approx(record["parameters_b"], rel=0.035)
    if case["record"] in ACTIVE_AS_CARD:
        assert counted["active_parameters_b"] == pytest.approx(record["active_parameters_b"], rel=0.06)
    assert counted["active_parameters_b"] <= counted["parameters_b"]


def test_parameters_of_a_dense_model_by_hand():
    c = CASES["llama-3-1-8b"]["config"]  # 32 layers of 4096, 32 heads, 8 KV heads of 128, MLP 14336, 128,256 tokens
    attention = 2 * 4096 * 32 * 128 + 2 * 4096 * 8 * 128
    mlp = 3 * 4096 * 14336
    total = 2 * 128256 * 4096 + 4096 + 32 * (attention + mlp + 2 * 4096)
    assert hfconfig.parameters_from_config(c) == {"parameters_b": total / 1e9, "active_parameters_b": total / 1e9}


def test_mla_low_rank_queries_bring_deepseek_to_its_card():
    c = dict(CASES["deepseek-v3"]["config"], q_lora_rank=1536, v_head_dim=128)
    counted = hfconfig.parameters_from_config(c)
    assert counted["parameters_b"] == pytest.approx(671, rel=0.005)
    assert counted["active_parameters_b"] == pytest.approx(37, rel=0.03)


def test_a_multimodal_config_reads_its_text_config():
    case = CASES["qwen3-5-27b"]
    assert set(case["config"]) == {"model_type", "text_config", "vision_config"}
    model = hfconfig.architecture_from_config(case["config"])
    assert model["state_layers"] == 48 and model["state_kind"] == "gated-deltanet"
    assert model["vision_encoder"] == "excluded"  # counted from the text model's shapes only


@pytest.mark.parametrize("golden", [g for g in GOLDEN["cases"] if isinstance(g["model"], str) and "expect" in g
                                    and g["model"] in {c["record"] for c in RECORDS}], ids=lambda g: g["id"])
def test_a_config_gives_its_records_estimate(golden):
    record = GOLDEN["models"][golden["model"]]
    config = next(c["config"] for c in RECORDS if c["record"] == golden["model"])
    model = hfconfig.model_from_config(config, record["parameters_b"], record["active_parameters_b"])
    want = engine.estimate(record, GOLDEN["gpus"][golden["gpu"]], golden["options"], GOLDEN["table"])
    got = engine.estimate(model, GOLDEN["gpus"][golden["gpu"]], golden["options"], GOLDEN["table"])
    for key in ("memory", "decode_tokens_per_s", "prefill_tokens_per_s", "max_context", "fits"):
        assert got[key] == want[key], key


def test_layer_kinds_from_the_other_spellings():
    base = {"hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
            "head_dim": 256, "vocab_size": 151936, "intermediate_size": 5120, "linear_num_value_heads": 32,
            "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
            "linear_conv_kernel_dim": 4}
    assert hfconfig.architecture_from_config(dict(base, full_attention_interval=4))["state_layers"] == 36
    lfm = {"hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 65536, "intermediate_size": 8192, "full_attn_idxs": [2, 5, 8, 10, 12, 14], "conv_L_cache": 3}
    m = hfconfig.architecture_from_config(lfm)
    assert (m["state_layers"], m["state_kind"], m["state_conv_kernel"]) == (10, "short-conv", 3)
    qwen = dict(base, sliding_window=4096, use_sliding_window=False, linear_num_value_heads=None)
    assert "sliding_window" not in hfconfig.architecture_from_config(qwen)
    gemma3 = {"hidden_size": 5376, "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16,
              "head_dim": 128, "vocab_size": 262208, "intermediate_size": 21504, "sliding_window": 1024,
              "sliding_window_pattern": 6}
    assert hfconfig.architecture_from_config(gemma3)["sliding_window_layers"] == 52


def cli(*args):
    r = subprocess.run([sys.executable, "-m", "generator", "estimate", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    return r.returncode, r.stdout, r.stderr


def test_cli_config_gives_the_catalogue_estimate(tmp_path):
    outs = {}
    for ident in ("qwen3-next-80b-a3b", "nemotron-nano-9b-v2", "deepseek-v3"):
        record = UPDATE.record(ident)
        path = tmp_path / f"{ident}.json"
        path.write_text(json.dumps(CASES[ident]["config"]), encoding="utf-8")
        common = ("--gpu", "h100-sxm", "--gpus", "8", "--runtime", "vllm", "--weights", "fp8", "--context", "65536",
                  "--format", "json")
        rc, out, err = cli("--config", str(path), "--params", str(record["parameters_b"]), "--active-params",
                           str(record["active_parameters_b"]), *common)
        assert rc == 0, err
        rc2, want, err2 = cli("--model", ident, *common)
        assert rc2 == 0, err2
        got, want = json.loads(out), json.loads(want)
        assert got["basis"]["model"] is None and want["basis"]["model"] == ident
        for key in ("memory", "decode_tokens_per_s", "prefill_tokens_per_s", "max_context", "fits"):
            assert got[key] == want[key], (ident, key)
        outs[ident] = got
    # without --params, the parameters come from the shapes
    rc, out, err = cli("--config", str(tmp_path / "nemotron-nano-9b-v2.json"), "--gpu", "rtx-4090", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["basis"]["weights_file_bytes"] == pytest.approx(8.89e9 * 2, rel=0.01)


@pytest.mark.parametrize("content,needle", [
    ('{"hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008}',
     "the config gives no num_hidden_layers"),
    ('{"hidden_size": 4096,\n "num_hidden_layers": }', ":2: not valid JSON"),
    ("[1, 2]", "one JSON object"),
    ('{"hidden_size": 4096, "num_hidden_layers": 32.5, "num_attention_heads": 32, "vocab_size": 32000}',
     "num_hidden_layers in the config is not a whole number above zero"),
    ('{"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "vocab_size": 32000, '
     '"intermediate_size": 1024, "layer_types": ["full_attention"]}', "layer_types does not list one entry per layer"),
])
def test_cli_bad_config_exits_2_naming_the_field(tmp_path, content, needle):
    path = tmp_path / "config.json"
    path.write_text(content, encoding="utf-8")
    rc, out, err = cli("--config", str(path), "--gpu", "rtx-4090")
    assert rc == 2 and out == ""
    assert needle in err and str(path) in err and len(err.strip().splitlines()) == 1, err


def test_cli_config_refuses_model_and_architecture_flags(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CASES["llama-3-1-8b"]["config"]), encoding="utf-8")
    rc, _, err = cli("--config", str(path), "--model", "llama-3-1-8b", "--gpu", "rtx-4090")
    assert rc == 2 and "either --model or --config" in err
    rc, _, err = cli("--config", str(path), "--layers", "40", "--gpu", "rtx-4090")
    assert rc == 2 and "leave out --layers" in err
    rc, _, err = cli("--config", str(tmp_path / "missing.json"), "--gpu", "rtx-4090")
    assert rc == 2 and "cannot read it" in err


def test_gemma_4_e4b_config_kv_shared_layers_and_per_layer_table():
    case = CASES["gemma-4-e4b-as-published"]
    model = hfconfig.architecture_from_config(case["config"])
    # the last 18 layers (3 periods of 5 windowed + 1 full) share: 15 windowed, 3 full
    assert (model["kv_shared_layers"], model["kv_shared_sliding_layers"], model["per_layer_embedding_dim"]) == (18, 15, 256)
    h, d, layers = 2560, 256, 42
    sliding_attn, full_attn = 2 * h * 8 * 256 + 2 * h * 2 * 256, 2 * h * 8 * 512 + 2 * h * 2 * 512
    attention = 35 * sliding_attn + 7 * full_attn - 15 * 2 * h * 2 * 256 - 3 * 2 * h * 2 * 512  # no k, v when shared
    per_layer = 262144 * layers * d + h * layers * d + d + layers * (2 * h * d + h)
    total = 262144 * h + h + attention + 2 * h * layers + layers * 3 * h * 10240 + per_layer
    assert hfconfig.parameters_from_config(case["config"])["parameters_b"] == pytest.approx(total / 1e9, abs=1e-12)
    assert round(total / 1e9, 2) == UPDATE.record("gemma-4-e4b")["parameters_b"]


def test_gemma_4_e2b_double_wide_mlp_counts_on_the_shared_layers():
    config = CASES["gemma-4-e2b-as-published"]["config"]
    narrow = {**config, "text_config": {**config["text_config"], "use_double_wide_mlp": False}}
    extra = hfconfig.parameters_from_config(config)["parameters_b"] - hfconfig.parameters_from_config(narrow)["parameters_b"]
    assert extra == pytest.approx(20 * 3 * 1536 * 6144 / 1e9)


@pytest.mark.parametrize("ident", ["gemma-4-e4b", "gemma-4-e2b"])
def test_gemma_4_small_config_gives_its_records_estimate(ident):
    record = GOLDEN["models"][ident]
    model = hfconfig.model_from_config(CASES[f"{ident}-as-published"]["config"], record["parameters_b"],
                                       record["active_parameters_b"])
    for options in ({"weights": "q4_k_m", "runtime": "llama.cpp", "context": 32768},
                    {"weights": "bf16", "runtime": "vllm", "context": 131072}):
        want = engine.estimate(record, GOLDEN["gpus"]["rtx-4090"], options, GOLDEN["table"])
        got = engine.estimate(model, GOLDEN["gpus"]["rtx-4090"], options, GOLDEN["table"])
        for key in ("memory", "decode_tokens_per_s", "prefill_tokens_per_s", "max_context", "fits"):
            assert got[key] == want[key], key
