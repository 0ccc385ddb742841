"""``python -m generator import-bench``: llama-bench's and vLLM's outputs to a valid measurements file."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.cli.format import format_text
from generator.cli.import_bench import command, llama_rows, matching, readers, writer
from generator.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "import-bench"
SOURCE = ("--source", "https://github.com/example-user/bench-notes/blob/main/README.md", "--date", "2025-09-01")


def cli(*args, data="data", stdin=""):
    r = subprocess.run([sys.executable, "-m", "generator", "import-bench", "--data", str(data), *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300, input=stdin)
    return r.returncode, r.stdout, r.stderr


def read(text: str) -> dict:
    return YAML(typ="safe", pure=True).load(text)


def by_metric(doc: dict) -> dict:
    out: dict = {}
    for r in doc["results"]:
        out.setdefault(r["metric"], []).append(r)
    return out


@pytest.fixture()
def data(tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(ROOT / "data", copy)
    return copy


@pytest.mark.parametrize("name, expect", [
    ("llama-bench.json", {"prefill": 7100.0, "decode": 118.88}),
    ("llama-bench.csv", {"prefill": 7285.68, "decode": 119.92}),
])
def test_the_json_and_csv_outputs_give_the_same_conditions(name, expect):
    rc, out, err = cli(str(FIX / name), *SOURCE, "--dry-run", "--no-input")
    assert rc == 0, err
    doc = read(out)
    assert doc["runtime"] == "llama.cpp" and doc["runtime_version"] == "b5163" and doc["publisher"] == "example-user"
    assert str(doc["date"]) == "2025-09-01"
    m = by_metric(doc)
    [pre], [dec], [size] = m["prefill_tokens_per_s"], m["decode_tokens_per_s"], m["weights_gib"]
    for r in (pre, dec, size):
        assert (r["gpu"], r["gpus"], r["model"], r["weights"], r["kv_cache"], r["batch"]) == (
            "rtx-4080", 1, "qwen2-5-7b", "q4_k_m", "f16", 1)
        assert "flash_attention" not in r  # flash_attn -1: llama.cpp chose, the file does not say what
    assert (pre["context"], pre["value"]) == (512, expect["prefill"])
    assert (dec["context"], dec["value"]) == (0, expect["decode"])
    assert size["value"] == round(4677120000 / 1024 ** 3, 2)
    assert "8cf427ff" in dec["note"] and "tg128" in dec["note"]


def test_jsonl_two_gpus_depth_and_prompt_plus_generation():
    rc, out, err = cli(str(FIX / "llama-bench.jsonl"), *SOURCE, "--dry-run", "--no-input")
    assert rc == 0, err
    doc = read(out)
    decodes = by_metric(doc)["decode_tokens_per_s"]
    assert {(r["gpu"], r["gpus"], r["model"], r["weights"], r["flash_attention"]) for r in decodes} == {
        ("rtx-3090", 2, "llama-3-1-8b", "q8_0", True)}
    plain, deep, whole = decodes
    assert (plain["context"], plain["value"]) == (0, 98.52)
    assert (deep["context"], deep["value"]) == (4096, 89.77)
    # pp512+tg128: llama-bench's rate counts all 640 tokens; the result the 128 generated over the call
    assert (whole["context"], whole["generated_tokens"]) == (512, 128)
    assert whole["value"] == round(438.16 * 128 / 640, 2)
    assert "2x GeForce RTX 3090" in doc["title"]


def test_markdown_reads_devices_and_build_and_needs_the_model():
    rc, out, err = cli(str(FIX / "llama-bench.md"), *SOURCE, "--dry-run", "--no-input")
    assert rc == 2 and out == ""
    assert "--model" in err and "llama 8B Q4_K - Medium" in err and "nothing was written" in err
    rc, out, err = cli(str(FIX / "llama-bench.md"), *SOURCE, "--model", "meta-llama/Llama-3.1-8B", "--dry-run",
                       "--no-input")
    assert rc == 0, err
    doc = read(out)
    assert doc["runtime_version"] == "b6245"
    m = by_metric(doc)
    assert [(r["context"], r["value"]) for r in m["decode_tokens_per_s"]] == [(0, 151.37), (4096, 139.62)]
    assert [(r["context"], r["value"]) for r in m["prefill_tokens_per_s"]] == [(512, 12543.21)]
    assert all(r["gpu"] == "rtx-4090" and r["gpus"] == 1 and r["model"] == "llama-3-1-8b" for r in doc["results"])
    assert "pp512 @ d4096" in err or "after 4096 tokens" in err  # a prompt after a filled cache is skipped, said


def test_vllm_serving_result_asks_what_it_does_not_record():
    rc, out, err = cli(str(FIX / "vllm-serve.json"), "--no-input")
    assert rc == 2 and out == ""
    for option in ("--gpu", "--gpus", "--weights", "--source", "--date"):
        assert option in err
    assert "--model" not in err  # meta-llama/Llama-3.1-8B-Instruct is found
    rc, out, err = cli(str(FIX / "vllm-serve.json"), "--no-input", "--gpu", "h100-sxm", "--gpus", "1", "--weights",
                       "bf16", "--source", "https://example.org/results", "--date", "2025-09-12", "--publisher",
                       "Example Lab", "--dry-run")
    assert rc == 0, err
    doc = read(out)
    assert doc["runtime"] == "vllm" and doc["runtime_version"] == "unknown"
    [r] = doc["results"]
    assert (r["gpu"], r["gpus"], r["model"], r["weights"], r["batch"], r["context"], r["generated_tokens"],
            r["metric"], r["value"]) == ("h100-sxm", 1, "llama-3-1-8b", "bf16", 16, 1024, 128,
                                         "decode_tokens_per_s", 623.12)


@pytest.mark.parametrize("name, extra", [
    ("llama-bench.jsonl", ()),
    ("llama-bench.csv", ("--id", "csv-import")),
    ("llama-bench.md", ("--model", "llama-3-1-8b")),
    ("vllm-serve.json", ("--gpu", "NVIDIA A100-SXM4-80GB", "--gpus", "1", "--weights", "bf16")),
])
def test_round_trip_to_a_valid_canonical_file(data, name, extra):
    before = set((data / "measurements").iterdir())
    rc, out, err = cli(str(FIX / name), *SOURCE, "--no-input", *extra, data=data)
    assert rc == 0, err
    [new] = set((data / "measurements").iterdir()) - before
    text = new.read_text()
    assert format_text(text, f"measurements/{new.name}") == text
    r = subprocess.run([sys.executable, "-m", "generator", "validate", "--data", str(data)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    if "--id" in extra:
        assert new.name == "csv-import.yaml"
    # a second import of the same file does not overwrite the first
    rc, out, err = cli(str(FIX / name), *SOURCE, "--no-input", *extra, data=data)
    assert rc == 2 and "exists" in err and new.read_text() == text


def test_an_unknown_gpu_is_named_and_exits_2(tmp_path, data):
    rows = json.loads((FIX / "llama-bench.json").read_text())
    for row in rows:
        row["gpu_info"] = "NVIDIA GeForce RTX 9999 Ti"
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(rows))
    before = sorted((data / "measurements").iterdir())
    rc, out, err = cli(str(path), *SOURCE, "--no-input", data=data)
    assert rc == 2 and out == ""
    assert "'NVIDIA GeForce RTX 9999 Ti' is not a GPU of data/gpus" in err and "--gpu" in err
    assert sorted((data / "measurements").iterdir()) == before
    rc, out, err = cli(str(path), *SOURCE, "--no-input", "--gpu", "rtx-9999", data=data)
    assert rc == 2 and "unknown GPU id 'rtx-9999'" in err


def test_missing_source_without_input_exits_2_and_writes_nothing(data):
    before = sorted((data / "measurements").iterdir())
    rc, out, err = cli(str(FIX / "llama-bench.json"), "--date", "2025-09-01", "--no-input", data=data)
    assert rc == 2 and out == "" and "--source" in err and "--date" not in err
    # without a terminal it is the same, --no-input or not
    rc, out, err = cli(str(FIX / "llama-bench.json"), "--date", "2025-09-01", data=data)
    assert rc == 2 and "--source" in err
    assert sorted((data / "measurements").iterdir()) == before


def test_on_a_terminal_the_missing_facts_are_asked(data, monkeypatch, capsys):
    answers = iter(["https://huggingface.co/datasets/example-org/gpu-runs", "2025-10-02"])
    asked = []

    def fake_input(prompt):
        asked.append(prompt)
        return next(answers)

    stdin = io.StringIO()
    stdin.isatty = lambda: True
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr("builtins.input", fake_input)
    rc = main(["import-bench", str(FIX / "llama-bench.json"), "--data", str(data), "--id", "asked"])
    assert rc == 0, capsys.readouterr().err
    assert [p.split(" ")[0] for p in asked] == ["source", "date"]
    doc = read((data / "measurements" / "asked.yaml").read_text())
    assert doc["url"] == "https://huggingface.co/datasets/example-org/gpu-runs"
    assert doc["publisher"] == "example-org" and str(doc["date"]) == "2025-10-02"


def test_bad_answers_and_unreadable_files_exit_2(tmp_path):
    rc, out, err = cli(str(FIX / "llama-bench.json"), "--source", "not-a-url", "--date", "2025-09-01", "--no-input")
    assert rc == 2 and "--source" in err
    rc, out, err = cli(str(FIX / "llama-bench.json"), "--source", "https://example.org/x", "--date", "2025-13-01",
                       "--no-input")
    assert rc == 2 and "YYYY-MM-DD" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a benchmark\n")
    rc, out, err = cli(str(bad), *SOURCE, "--no-input")
    assert rc == 2 and "not a llama-bench output" in err
    rc, out, err = cli(str(tmp_path / "missing.json"), *SOURCE, "--no-input")
    assert rc == 2 and "cannot read" in err


def test_rows_the_results_cannot_hold_are_skipped_with_a_note(tmp_path):
    rows = [json.loads(line) for line in (FIX / "llama-bench.jsonl").read_text().splitlines()]
    rows[1]["n_gpu_layers"] = 10  # 10 of 32 layers: a partial offload
    rows[2]["type_k"] = "q8_0"  # keys and values in different types
    path = tmp_path / "bench.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    rc, out, err = cli(str(path), *SOURCE, "--no-input", "--dry-run")
    assert rc == 0, err
    assert "only 10 of 32 layers" in err and "q8_0/f16" in err
    assert len(by_metric(read(out))["decode_tokens_per_s"]) == 1


def test_gguf_file_types_and_older_markdown():
    assert llama_rows.gguf_weights("qwen3moe 30B.A3B Q4_K - Medium") == "q4_k_m"
    assert llama_rows.gguf_weights("gpt-oss 20B MXFP4 MoE") == "mxfp4"
    assert llama_rows.gguf_weights("llama 7B mostly Q4_0") == "q4_0"
    assert llama_rows.gguf_weights("llama 8B IQ4_XS - 4.25 bpw") is None
    table = ("| model | size | params | backend | ngl | test | t/s |\n"
             "| --- | ---: | ---: | --- | --: | --- | ---: |\n"
             "| llama 7B mostly Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | pp 512 | 2368.80 ± 93.24 |\n"
             "| llama 7B mostly Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg 128 | 131.42 ± 0.59 |\n")
    kind, rows = readers.read_output(table)
    assert kind == "llama-bench"
    assert [(r["n_prompt"], r["n_gen"], r["avg_ts"]) for r in rows] == [(512, 0, 2368.80), (0, 128, 131.42)]
    assert rows[0]["model_size"] == int(3.56 * 1024 ** 3) and rows[0]["n_gpu_layers"] == "99"


def test_device_names_map_to_catalogue_ids():
    from generator.data.loader import load_dataset

    ds, _ = load_dataset(ROOT / "data")
    assert matching.match_gpu("NVIDIA GeForce RTX 4090", ds.gpus)[0] == "rtx-4090"
    assert matching.match_gpu("NVIDIA A100-SXM4-80GB", ds.gpus)[0] == "a100-sxm4-80gb"
    assert matching.match_gpu("NVIDIA GeForce RTX 4080 SUPER", ds.gpus)[0] == "rtx-4080-super"
    gid, near = matching.match_gpu("NVIDIA H100 80GB HBM3", ds.gpus)
    assert gid is None and "h100-sxm" in near
    assert matching.match_model("models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", ds.models)[0] == "qwen2-5-7b"
    assert matching.match_model("meta-llama/Llama-3.1-8B", ds.models)[0] == "llama-3-1-8b"
    assert matching.match_model("llama 8B Q4_K - Medium", ds.models)[0] is None


def test_one_model_in_two_file_types_and_two_models_refused(tmp_path):
    rows = [json.loads(line) for line in (FIX / "llama-bench.jsonl").read_text().splitlines()]
    q4 = dict(rows[1], model_filename="/srv/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
              model_type="llama 8B Q4_K - Medium", model_size=4920734720, avg_ts=131.4)
    path = tmp_path / "two-types.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [rows[1], q4]) + "\n")
    rc, out, err = cli(str(path), *SOURCE, "--no-input", "--dry-run")
    assert rc == 0, err
    m = by_metric(read(out))
    assert [(r["weights"], r["value"]) for r in m["decode_tokens_per_s"]] == [("q8_0", 98.52), ("q4_k_m", 131.4)]
    assert [r["weights"] for r in m["weights_gib"]] == ["q8_0", "q4_k_m"]
    other = dict(rows[1], model_filename="/srv/models/Qwen2.5-7B-Instruct-Q8_0.gguf", model_type="qwen2 7B Q8_0")
    path.write_text("\n".join(json.dumps(r) for r in [rows[1], other]) + "\n")
    rc, out, err = cli(str(path), *SOURCE, "--no-input", "--dry-run")
    assert rc == 2 and "one model at a time" in err


def test_vllm_appended_results_keep_each_concurrency_and_skip_a_bounded_rate(tmp_path):
    first = json.loads((FIX / "vllm-serve.json").read_text())
    single = dict(first, max_concurrency=1, output_throughput=151.2)
    paced = dict(first, request_rate=4.0)
    path = tmp_path / "appended.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (single, first, paced)) + "\n")
    rc, out, err = cli(str(path), *SOURCE, "--no-input", "--dry-run", "--gpu", "h100-sxm", "--gpus", "1",
                       "--weights", "bf16")
    assert rc == 0, err
    assert [(r["batch"], r["value"]) for r in read(out)["results"]] == [(1, 151.2), (16, 623.12)]
    assert "record 3: skipped" in err and "4.0 per second" in err
    unset = dict(first, max_concurrency=None)
    path.write_text(json.dumps(unset))
    rc, out, err = cli(str(path), *SOURCE, "--no-input", "--dry-run", "--gpu", "h100-sxm", "--gpus", "1",
                       "--weights", "bf16")
    assert rc == 2 and "--batch" in err


def test_a_file_that_does_not_validate_is_removed_and_exits_1(data, monkeypatch, capsys):
    real = writer.render
    monkeypatch.setattr(command, "render", lambda doc: real(doc).replace("batch: 1", "batch: 0"))
    rc = main(["import-bench", str(FIX / "llama-bench.json"), *SOURCE, "--no-input", "--data", str(data),
               "--id", "broken-import"])
    err = capsys.readouterr().err
    assert rc == 1 and "batch" in err and "removed" in err
    assert not (data / "measurements" / "broken-import.yaml").exists()


def test_a_date_in_the_future_exits_2():
    rc, out, err = cli(str(FIX / "llama-bench.json"), "--source", "https://example.org/x", "--date", "2999-01-01",
                       "--no-input", "--dry-run")
    assert rc == 2 and "in the future" in err
