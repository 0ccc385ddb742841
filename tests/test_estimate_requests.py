"""``python -m generator estimate --requests FILE.jsonl``: one JSON answer per line, in order, errors included."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args, stdin=None):
    r = subprocess.run([sys.executable, "-m", "generator", "estimate", *args], cwd=ROOT, input=stdin,
                       capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def single(*args):
    rc, out, err = run(*args, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


GOOD_A = {"gpu": "rtx-4090", "model": "llama-3-1-8b", "weights": "q4_k_m", "context": 8192}
GOOD_B = {"gpu": "a100-sxm4-80gb", "model": "llama-3-1-8b", "kv_cache": "fp8", "batch": 4, "runtime": "vllm",
          "no-flash-attention": True}


def test_mixed_lines_keep_their_order_and_each_error_is_json(tmp_path):
    lines = [json.dumps(GOOD_A),
             '{"gpu": "rtx-409", "model": "llama-3-1-8b"}',
             "",
             '{"gpu": "rtx-4090", "model": "llama-3-1-8b", "contxt": 5}',
             '{"gpu": "rtx-4090", "model": ',
             '{"gpu": "rtx-4090", "model": "llama-3-1-8b", "context": "many"}',
             json.dumps(GOOD_B),
             '{"model": "llama-3-1-8b"}',
             '{"gpu": "rtx-4090", "model": "llama-3-1-8b", "tied": 1}',
             '["rtx-4090"]',
             '{"gpu": "rtx-4090", "model": "llama-3-1-8b", "context": 0}',
             '{"gpu": "rtx-4090", "model": "llama-3-1-8b", "format": "text"}']
    path = tmp_path / "requests.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rc, out, err = run("--requests", str(path))
    assert rc == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert len(answers) == len(lines)
    assert answers[0] == single("--gpu", "rtx-4090", "--model", "llama-3-1-8b", "--weights", "q4_k_m", "--context", "8192")
    assert answers[6] == single("--gpu", "a100-sxm4-80gb", "--model", "llama-3-1-8b", "--kv-cache", "fp8", "--batch", "4",
                                "--runtime", "vllm", "--no-flash-attention")
    # a result has an "error" object too (the measured error bands); a failed line has only the message
    errors = {i: a["error"] for i, a in enumerate(answers) if isinstance(a.get("error"), str)}
    assert set(errors) == {1, 2, 3, 4, 5, 7, 8, 9, 10, 11}
    assert all(set(answers[i]) == {"error"} for i in errors)
    assert "unknown GPU id 'rtx-409'" in errors[1]
    assert "blank line" in errors[2]
    assert "unknown option 'contxt'" in errors[3] and "context" in errors[3]
    assert errors[4].startswith("not JSON")
    assert "--context" in errors[5] and "many" in errors[5]
    assert "'gpu' is required" in errors[7]
    assert "'tied'" in errors[8] and "true or false" in errors[8]
    assert "JSON object" in errors[9]
    assert "context" in errors[10]
    assert "'format'" in errors[11]


def test_standard_input_and_snake_case_names():
    stdin = json.dumps({"gpu": "rtx-4090", "model": "llama-3-1-8b", "kv_cache": "q8_0", "weights": "q4_k_m",
                        "lora_rank": None}) + "\n"
    rc, out, err = run("--requests", "-", stdin=stdin)
    assert rc == 0, err
    [answer] = [json.loads(line) for line in out.splitlines()]
    assert answer == single("--gpu", "rtx-4090", "--model", "llama-3-1-8b", "--kv-cache", "q8_0", "--weights", "q4_k_m")


def test_options_beside_requests_and_an_unreadable_file_exit_2(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(GOOD_A) + "\n")
    rc, out, err = run("--requests", str(path), "--gpu", "rtx-4090")
    assert rc == 2 and out == "" and "--gpu" in err
    rc, out, err = run("--requests", str(tmp_path / "missing.jsonl"))
    assert rc == 2 and out == "" and "cannot read" in err


def test_without_requests_gpu_is_still_required():
    rc, out, err = run("--model", "llama-3-1-8b")
    assert rc == 2 and out == "" and "--gpu" in err
