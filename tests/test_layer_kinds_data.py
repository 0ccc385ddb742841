"""The model records' layer kinds (state layers, MLP-only blocks, sparse attention): each rule of
generator/data/records_llm.py gives its ``path:line: field: message`` on a copy of data/ edited to
break it, and the shipped records keep the hybrid models' attention layers few."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from generator.estimate import architecture, memory

ROOT = Path(__file__).resolve().parent.parent

EDITS = {  # file: (text, replacement)
    "nemotron-nano-9b-v2": ("mlp_only_layers: 25", "mlp_only_layers: 35"),
    "qwen3-next-80b-a3b": ("state_conv_kernel: 4\n", "state_conv_kernel: 4\nstate_groups: 8\n"),
    "minimax-m1": ("state_kind: lightning\n", ""),
    "lfm2-1-2b": ("state_kind: short-conv", "state_kind: rwkv"),
    "granite-4-0-h-tiny": ("state_groups: 1\n", ""),
    "deepseek-v3-2": ("index_heads: 64\n", ""),
    "llama-2-7b": ("max_context:", "state_heads: 8\nmax_context:"),
}
EXPECT = [
    "models/nemotron-nano-9b-v2.yaml:19: state_layers: 27 state layers and 35 MLP-only blocks exceed the 56 layers",
    "models/qwen3-next-80b-a3b.yaml:31: state_groups: state_groups does not apply to state_kind gated-deltanet, which takes "
    "state_heads, state_head_dim, state_key_heads, state_key_dim, state_conv_kernel",
    "models/minimax-m1.yaml:24: state_layers: state layers give both state_layers and state_kind",
    "models/lfm2-1-2b.yaml:20: state_kind: expected one of gated-deltanet, mamba2, lightning, short-conv; got 'rwkv' (text)",
    "models/granite-4-0-h-tiny.yaml:25: state_kind: state_kind mamba2 needs state_groups",
    "models/deepseek-v3-2.yaml:26: index_topk: sparse attention gives index_topk, index_heads and index_head_dim together "
    "(index_heads missing)",
    "state_heads: state_heads describes state layers: give state_layers and state_kind",
]


def test_each_layer_rule_names_the_line(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    for ident, (old, new) in EDITS.items():
        path = data / "models" / f"{ident}.yaml"
        text = path.read_text(encoding="utf-8")
        assert old in text, ident
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "generator", "validate", "--data", str(data)], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1
    for line in EXPECT:
        assert line in r.stdout + r.stderr, line


def _record(ident):
    return yaml.safe_load((ROOT / "data" / "models" / f"{ident}.yaml").read_text(encoding="utf-8"))


def test_hybrid_records_keep_few_attention_layers():
    attention = {ident: architecture.attention_layers(_record(ident)) for ident in (
        "qwen3-next-80b-a3b", "qwen3-next-80b-a3b-thinking", "qwen3-5-27b", "qwen3-5-35b-a3b", "qwen3-5-9b", "qwen3-5-4b",
        "minimax-m1", "nemotron-nano-9b-v2", "granite-4-0-h-tiny", "granite-4-0-h-small", "lfm2-1-2b", "lfm2-350m")}
    assert attention == {"qwen3-next-80b-a3b": 12, "qwen3-next-80b-a3b-thinking": 12, "qwen3-5-27b": 16,
                         "qwen3-5-35b-a3b": 10, "qwen3-5-9b": 8, "qwen3-5-4b": 8, "minimax-m1": 10,
                         "nemotron-nano-9b-v2": 4, "granite-4-0-h-tiny": 4, "granite-4-0-h-small": 4, "lfm2-1-2b": 6,
                         "lfm2-350m": 6}


def test_qwen3_next_cache_at_128k_is_about_a_quarter_of_a_dense_48_layer_model():
    m = _record("qwen3-next-80b-a3b")
    dense = dict(m, state_layers=None, state_kind=None)
    hybrid, full = memory.kv_cache_bytes(m, 131072), memory.kv_cache_bytes(dense, 131072)
    assert full == 48 * 2 * 2 * 256 * 131072 * 2  # 48 layers, K and V, 2 heads of 256, 2 bytes
    assert 0.25 < hybrid / full < 0.26  # 12 of 48 layers, plus 36 fixed states of 2.2 MB
    # the state does not grow with the context
    assert memory.kv_cache_bytes(m, 262144) - memory.kv_cache_bytes(m, 131072) == full / 4


def test_sparse_attention_keeps_the_cache_but_reads_top_k():
    v32, v31 = _record("deepseek-v3-2"), _record("deepseek-v3-1")
    n = 131072
    assert memory.kv_values_per_sequence(v32, n) == 61 * (512 + 64 + 128) * n  # latent, rotary part and indexer key
    assert memory.kv_values_per_sequence(v31, n) == 61 * (512 + 64) * n
    assert memory.kv_read_values_per_sequence(v32, n) == 61 * (128 * n + 576 * 2048)
    assert memory.kv_read_values_per_sequence(v32, 1000) == 61 * (128 + 576) * 1000


def test_state_per_layer_of_each_kind_by_hand():
    assert architecture.state_parts(_record("qwen3-next-80b-a3b")) == (32 * 128 * 128, 3 * (2 * 16 * 128 + 32 * 128))
    assert architecture.state_parts(_record("nemotron-nano-9b-v2")) == (128 * 80 * 128, 3 * (128 * 80 + 2 * 8 * 128))
    assert architecture.state_parts(_record("minimax-m1")) == (64 * 128 * 128, 0.0)
    assert architecture.state_parts(_record("lfm2-1-2b")) == (0.0, 2 * 2048)
    assert architecture.state_bytes(_record("lfm2-1-2b"), batch=3) == 10 * 2 * 2048 * 4 * 3
    assert architecture.state_parts(_record("llama-3-1-8b")) == (0.0, 0.0)


def test_a_decode_step_reads_and_writes_the_state():
    from generator.estimate import speed

    m = _record("nemotron-nano-9b-v2")
    gpu = {"memory_gb": 24, "memory_bandwidth_gbs": 1000, "fp16_tensor_tflops": 100}
    step = speed.decode_terms(m, gpu, "bf16", "f16", 4096, 2, "vllm")["bytes_per_step"]
    w = memory.weights_parts(m, "bf16", "vllm")
    kv = 4 * 2 * 8 * 128 * 4096 * 2 * 2  # 4 attention layers, K and V of 8 heads of 128, 2 sequences, 2 bytes
    assert step == w["other"] + w["head"] + kv + 2 * architecture.state_bytes(m, 2)
