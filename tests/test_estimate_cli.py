"""``python -m generator estimate`` as a subprocess: good input, bad input, data problems."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = os.environ.get("ESTIMATE_TEST_DATA", "data")


def cli(*args, data=DATA):
    r = subprocess.run([sys.executable, "-m", "generator", "estimate", "--data", str(data), *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def test_json_keys_for_a_model_id():
    rc, out, err = cli("--gpu", "rtx-4090", "--model", "llama-3-1-8b", "--weights", "q4_k_m", "--format", "json")
    assert rc == 0, err
    r = json.loads(out)
    assert set(r["memory"]) >= {"weights_bytes", "kv_cache_bytes", "activations_bytes", "overhead_bytes", "total_bytes"}
    assert r["fits"] is True and r["decode_tokens_per_s"] > 0 and r["prefill_tokens_per_s"] > 0
    assert r["training_relative"] is None
    assert r["basis"]["runtime"] == "llama.cpp" and r["basis"]["context"] == 4096
    assert set(r["error"]) >= {"decode_tokens_per_s", "prefill_tokens_per_s"}


def test_text_table_with_error_bands():
    rc, out, err = cli("--gpu", "h100-sxm", "--model", "qwen3-30b-a3b", "--runtime", "vllm", "--kv-cache", "fp8",
                       "--batch", "8")
    assert rc == 0, err
    assert "decode" in out and "tokens/s" in out and "vLLM reserves" in out and "%" in out


def test_custom_architecture_moe_and_gpus():
    rc, out, err = cli("--gpu", "a100-sxm4-80gb", "--gpus", "2", "--params", "46.7", "--layers", "32", "--hidden", "4096",
                       "--heads", "32", "--kv-heads", "8", "--head-dim", "128", "--vocab", "32000", "--intermediate",
                       "14336", "--experts", "8", "--active-params", "12.9", "--format", "json")
    assert rc == 0, err
    r = json.loads(out)
    assert r["basis"]["gpus"] == 2 and r["memory"]["weights_bytes"] < 50e9


def test_training_modes_and_relative():
    totals = {}
    for mode in ("qlora", "lora", "full"):
        rc, out, err = cli("--gpu", "a100-sxm4-80gb", "--model", "llama-3-1-8b", "--mode", mode, "--context", "2048",
                           "--format", "json")
        assert rc == 0, err
        r = json.loads(out)
        totals[mode] = r["memory"]["total_bytes"]
        assert r["training_relative"] is not None
    assert totals["qlora"] < totals["lora"] < totals["full"]
    rc, out, err = cli("--gpu", "rtx-3090", "--training-relative", "--format", "json")
    assert rc == 0, err
    r = json.loads(out)
    assert 0 < r["training_relative"] < 5 and r["basis"]["reference"]
    rc, out, err = cli("--gpu", "rtx-4090", "--training-relative", "--reference", "rtx-4090")
    assert rc == 0 and "1.00x" in out


@pytest.mark.parametrize("args, needle", [
    (("--gpu", "rtx-409", "--model", "llama-3-1-8b"), "unknown GPU id 'rtx-409'; did you mean 'rtx-4090'?"),
    (("--gpu", "rtx-4090", "--model", "llama-3-1-8"),
     "unknown model id or Hugging Face repository 'llama-3-1-8'; the nearest: llama-3-1-8b"),
    (("--gpu", "rtx-4090", "--params", "7", "--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-heads", "64",
      "--head-dim", "128", "--vocab", "32000"), "--kv-heads cannot be above --heads"),
    (("--gpu", "rtx-4090", "--params", "7", "--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-heads", "6",
      "--head-dim", "128", "--vocab", "32000"), "multiple of --kv-heads"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--context", "0"), "context must be a positive"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--context", "-5"), "context must be a positive"),
    (("--gpu", "rtx-4090", "--params", "7", "--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-heads", "8",
      "--head-dim", "128", "--vocab", "32000", "--experts", "8"), "--experts needs --active-params"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--weights", "q4_k_m", "--runtime", "vllm"), "only llama.cpp runs it"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--params", "7"), "not both"),
    (("--gpu", "rtx-4090", "--layers", "32"), "missing"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--mode", "full", "--weights", "q4_0"), "training is estimated"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--mode", "lora", "--runtime", "vllm"), "training is estimated"),
    (("--gpu", "tpu-v5e", "--model", "llama-2-7b", "--weights", "q4_k_m"), "llama.cpp does not run on Cloud TPU v5e"),
    (("--gpu", "gtx-680", "--model", "llama-2-7b", "--weights", "q4_k_m"), "llama.cpp does not run on"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--runtime", "mlx"), "mlx does not run on"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--weights", "q4_k_m", "--backend", "metal"),
     "the metal backend of llama.cpp does not run nvidia cards"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--weights", "q4_k_m", "--offload", "layers:33"), "--offload takes"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--weights", "q4_k_m", "--offload", "experts"),
     "--offload experts needs a mixture-of-experts model"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--runtime", "vllm", "--offload", "auto"),
     "vllm does not offload auto to host memory"),
    (("--gpu", "rtx-4090", "--model", "llama-2-7b", "--weights", "q4_k_m", "--host-memory-gb", "-1"),
     "--host-memory-gb must be a positive number"),
])
def test_bad_input_exits_2_with_one_line(args, needle):
    rc, out, err = cli(*args)
    assert rc == 2, (out, err)
    assert "Traceback" not in err
    assert needle in err, err
    assert len(err.strip().splitlines()) == 1


def test_invalid_data_exits_1_with_problems(tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(ROOT / DATA, copy)
    gpu = next((copy / "gpus").rglob("*.yaml"))
    gpu.write_text(gpu.read_text(encoding="utf-8").replace("memory_gb:", "memory_gbx:", 1), encoding="utf-8")
    rc, out, err = cli("--gpu", "rtx-4090", "--model", "llama-2-7b", data=copy)
    assert rc == 1
    assert "memory_gbx" in err and "Traceback" not in err


def test_the_optimizer_moves_the_training_state_and_is_in_the_basis():
    base = ("--gpu", "a100-sxm4-80gb", "--model", "llama-3-1-8b", "--mode", "full", "--format", "json")
    runs = {}
    for opt in ("adamw", "paged-adamw-8bit"):
        rc, out, err = cli(*base, "--optimizer", opt)
        assert rc == 0, err
        runs[opt] = json.loads(out)
        assert runs[opt]["basis"]["optimizer"] == opt
    adamw, paged = runs["adamw"]["memory"], runs["paged-adamw-8bit"]["memory"]
    assert paged["host_bytes"] > 0 == adamw["host_bytes"]
    # the paged state leaves the card: AdamW's 8 bytes per parameter, less nothing else
    assert adamw["total_bytes"] - paged["total_bytes"] == pytest.approx(4 * paged["host_bytes"])
    rc, out, err = cli(*base)
    assert rc == 0 and json.loads(out)["memory"] == adamw


def test_pure_16_bit_training_and_the_step_in_the_backward_pass_are_switches_in_the_basis():
    base = ("--gpu", "rtx-4090", "--model", "llama-3-1-8b", "--mode", "full", "--context", "2048", "--batch", "2",
            "--optimizer", "paged-adamw-8bit", "--format", "json")
    runs = {}
    for flags in ((), ("--no-master-weights",), ("--no-master-weights", "--optimizer-in-backward")):
        rc, out, err = cli(*base, *flags)
        assert rc == 0, err
        runs[flags] = json.loads(out)
    mixed, pure, stepped = runs.values()
    assert (mixed["basis"]["master_weights"], mixed["basis"]["optimizer_in_backward"]) == (True, False)
    assert (stepped["basis"]["master_weights"], stepped["basis"]["optimizer_in_backward"]) == (False, True)
    params = mixed["basis"]["trainable_params"]
    assert mixed["memory"]["total_bytes"] - pure["memory"]["total_bytes"] == pytest.approx(4 * params)
    assert stepped["memory"]["gradients_bytes"] < pure["memory"]["gradients_bytes"] / 10
    # torchtune's single-GPU recipe for this model ran on a 24 GB card: the estimate agrees only with both switches
    assert (mixed["fits"], pure["fits"], stepped["fits"]) == (False, False, True)
    rc, out, err = cli(*base, "--optimizer-in-backward", "--mode", "lora")
    assert rc == 0 and json.loads(out)["memory"]["gradients_bytes"] > 0


def test_lora_targets_rank_and_the_chunked_loss_are_options_in_the_basis():
    base = ("--gpu", "rtx-4090", "--model", "llama-3-1-8b", "--mode", "lora", "--context", "2048", "--batch", "2",
            "--format", "json")
    rc, out, err = cli(*base)
    assert rc == 0, err
    every = json.loads(out)
    assert every["basis"]["lora_targets"] == ["q", "k", "v", "o", "gate", "up", "down"]
    assert every["basis"]["lora_rank"] == 16 and every["basis"]["chunked_loss"] is False
    rc, out, err = cli(*base, "--lora-rank", "8", "--lora-targets", "v, q", "--chunked-loss")
    assert rc == 0, err
    qv = json.loads(out)
    assert qv["basis"]["lora_targets"] == ["q", "v"] and qv["basis"]["lora_rank"] == 8 and qv["basis"]["chunked_loss"]
    assert qv["basis"]["trainable_params"] == 3_407_872
    assert qv["memory"]["activations_bytes"] < every["memory"]["activations_bytes"]
    assert qv["memory"]["optimizer_bytes"] == 3_407_872 * 8
    for bad in ("q,x", "q,q", ","):
        rc, out, err = cli(*base, "--lora-targets", bad)
        assert rc == 2 and out == "", bad
        assert err.strip() == ("error: --lora-targets takes projections from q, k, v, o, gate, up, down, "
                               "comma-separated, each once")


ARCH = ("--gpu", "rtx-4090", "--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-heads", "8", "--head-dim", "128",
        "--vocab", "32000")
DENSE = (*ARCH, "--params", "7")


@pytest.mark.parametrize("args, needle", [
    # no infinite or NaN figure reaches the formulas
    ((*ARCH, "--params", "inf"), "--params must be at most 100,000"),
    ((*ARCH, "--params", "1e309", "--format", "json"), "--params must be at most 100,000"),
    ((*ARCH, "--params", "nan"), "--params must be a positive number"),
    ((*DENSE, "--context", "9" * 400), "--context must be at most 10,000,000"),
    ((*DENSE, "--context", "1000000000000"), "--context must be at most 10,000,000"),
    ((*DENSE, "--context", "1e12"), "--context must be at most 10,000,000"),
    # the figures the options give are used as given, never replaced by a default
    ((*DENSE, "--intermediate", "-5"), "--intermediate must be a positive whole number"),
    ((*DENSE, "--intermediate", "0"), "--intermediate must be a positive whole number"),
    ((*DENSE, "--experts", "0", "--active-params", "2"), "--experts must be a positive whole number"),
    ((*DENSE, "--experts", "8", "--active-params", "2", "--experts-per-token", "0"),
     "--experts-per-token must be a positive whole number"),
    ((*DENSE, "--experts", "8", "--active-params", "2", "--experts-per-token", "9"), "experts per token must be between"),
    ((*DENSE, "--experts-per-token", "2"), "--experts-per-token needs --experts"),
    # the limits of the calculator's form (tables.json)
    ((*DENSE, "--gpus", "1000000000"), "--gpus must be at most 1,024"),
    ((*DENSE, "--batch", "1e15"), "--batch must be at most 100,000"),
    ((*DENSE, "--mode", "lora", "--lora-rank", "1000000000"), "--lora-rank must be at most 4,096"),
    (("--gpu", "rtx-4090", "--params", "7", "--layers", "1000000000", "--hidden", "4096", "--heads", "32", "--kv-heads", "8",
      "--head-dim", "128", "--vocab", "32000"), "--layers must be at most 10,000"),
    # active parameters below the total describe a mixture of experts (the engine's rule, the form's too)
    ((*DENSE, "--active-params", "2"), "--active-params below --params needs --experts"),
])
def test_impossible_figures_exit_2_naming_the_option(args, needle):
    rc, out, err = cli(*args)
    assert (rc, out) == (2, ""), (out, err)
    assert "Traceback" not in err and needle in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_dense_model_may_give_its_active_parameters_equal_to_the_total():
    rc, out, err = cli(*DENSE, "--active-params", "7", "--intermediate", "11008", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["decode_tokens_per_s"] > 0


def test_a_whole_number_may_be_written_with_an_exponent_but_not_as_a_fraction():
    rc, out, err = cli(*DENSE, "--batch", "2e0", "--format", "json")
    assert rc == 0 and json.loads(out)["basis"]["batch"] == 2, err
    rc, out, err = cli(*DENSE, "--batch", "2.5")
    assert rc == 2 and "not a whole number: '2.5'" in err and "Traceback" not in err


def test_a_model_is_found_by_its_hugging_face_repository_ignoring_case(tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(ROOT / DATA, copy, ignore=shutil.ignore_patterns("translations"))
    path = copy / "models" / "qwen3-32b.yaml"
    text = path.read_text(encoding="utf-8")
    if "hf_repo:" not in text:
        path.write_text(text.replace("\nsources:", "\nhf_repo: Qwen/Qwen3-32B\nsources:", 1), encoding="utf-8")
    rc, out, err = cli("--gpu", "h100-sxm", "--model", "qwen/qwen3-32b", "--format", "json", data=copy)
    assert rc == 0, err
    assert json.loads(out)["basis"]["model"] == "qwen3-32b"
    rc, out, err = cli("--gpu", "h100-sxm", "--model", "Qwen/Qwen3-33B", data=copy)
    assert rc == 2 and "Traceback" not in err
    assert "unknown model id or Hugging Face repository 'Qwen/Qwen3-33B'" in err and "Qwen/Qwen3-32B" in err, err


def test_error_blocks_give_the_unseen_band_and_the_fitted_one():
    """The JSON error block carries both bands (and the older flat keys); the table prints the
    band on results the fit has not seen first."""
    rc, out, err = cli("--gpu", "rtx-4090", "--model", "llama-3-1-8b", "--weights", "q4_k_m", "--format", "json")
    assert rc == 0, err
    band = json.loads(out)["error"]["decode_tokens_per_s"]
    assert set(band["in_sample"]) == set(band["unseen"]) == {"median_pct", "p90_pct", "count", "sources"}
    assert band["median_pct"] == band["in_sample"]["median_pct"]
    assert (band["loso_median_pct"], band["loso_p90_pct"]) == (band["unseen"]["median_pct"], band["unseen"]["p90_pct"])
    rc, out, err = cli("--gpu", "rtx-4090", "--model", "llama-3-1-8b", "--weights", "q4_k_m")
    assert rc == 0, err
    line = next(x for x in out.splitlines() if x.lstrip().startswith("decode"))
    unseen, fitted = band["unseen"], band["in_sample"]
    assert (f"+-{unseen['median_pct']:g} % median, p90 {unseen['p90_pct']:g} % on results the fit has not seen" in line
            and f"fitted on {fitted['count']} measurements" in line), line


def test_a_model_too_large_prints_no_speed_but_the_shortfall_and_what_would_fit():
    rc, out, err = cli("--gpu", "rtx-4090", "--model", "qwen3-30b-a3b", "--weights", "q8_0")
    assert rc == 0, err
    assert "GiB short on the card; no speed is estimated" in out
    assert "tokens/s" not in out and "paged optimizer" not in out
    assert "--weights q5_k_m" in out and "--offload experts:" in out and "--gpus 2" in out


def test_offload_experts_to_host_memory_in_json_and_text():
    rc, out, err = cli("--gpu", "rtx-4090", "--model", "qwen3-30b-a3b", "--weights", "q8_0", "--offload", "auto",
                       "--host-memory-gb", "64", "--host-bandwidth-gbs", "80", "--format", "json")
    assert rc == 0, err
    r = json.loads(out)
    assert r["fits"] and r["decode_tokens_per_s"] > 0 and r["shortfall"] is None
    assert r["offload"]["host_layers"] == 0 and r["offload"]["expert_layers"] > 0
    assert r["basis"]["host_bandwidth_gbs"] == 80 and r["basis"]["backend"] == "cuda"
    rc, out, err = cli("--gpu", "rtx-4090", "--model", "qwen3-30b-a3b", "--weights", "q8_0", "--offload", "auto")
    assert rc == 0, err
    assert "the routed experts of" in out and "offloaded weights and cache" in out and "paged optimizer" not in out


def test_front_ends_and_backends_name_the_runtime_they_run():
    rc, out, err = cli("--gpu", "rx-7900-xtx", "--model", "llama-3-1-8b", "--runtime", "ollama", "--weights", "q4_k_m",
                       "--backend", "vulkan", "--format", "json")
    assert rc == 0, err
    basis = json.loads(out)["basis"]
    assert basis["runtime"] == "llama.cpp" and basis["front_end"] == "ollama" and basis["backend"] == "vulkan"
    rc, out, err = cli("--gpu", "apple-m3-max", "--model", "llama-3-1-8b", "--runtime", "lm-studio", "--weights",
                       "mlx_4bit", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["basis"]["runtime"] == "mlx"
