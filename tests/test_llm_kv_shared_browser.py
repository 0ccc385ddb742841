"""The large-model calculator's fields for KV-shared layers and the per-layer embedding table, in
Chromium on the real site: a custom architecture with Gemma 4 E2B's values draws the estimate of its
catalogue record, shows a smaller KV cache than the same shape with the three fields at 0, says
which field is out of range, and a pasted config.json fills the fields."""
from __future__ import annotations

import json
import re

import yaml
from helpers import LLM_URL, ROOT, last, llm_field, root_of, wait_ready

from generator.estimate import memory

GIB = 2**30
RECORD = yaml.safe_load((ROOT / "data" / "models" / "gemma-4-e2b.yaml").read_text(encoding="utf-8"))
SHARING = ("kv_shared", "kv_shared_sliding", "per_layer")
E2B = {"kv_shared": "20", "kv_shared_sliding": "16", "per_layer": "256"}
NUMERIC = re.compile(r"NaN|Infinity|undefined")


def out(page, name: str) -> str:
    return root_of(page, "llm").locator(f'[data-wg-out="{name}"]').inner_text().strip()


def shown_gib(page, term: str) -> float:
    return float(out(page, f"v_{term}").replace(",", ""))


def error(page, name: str) -> str:
    return root_of(page, "llm").locator(f'[data-wg-err="{name}"]').inner_text().strip()


def test_kv_shared_fields_in_the_custom_architecture(server, page):
    context = 131072
    page.goto(f"{server}{LLM_URL}?model=gemma-4-e2b&runtime=transformers&weights=bf16&kv=f16&context={context}")
    wait_ready(page, "llm")
    record = last(page, "llm")
    assert record is not None and record["basis"]["model"] == "gemma-4-e2b"
    # the catalogue model's values are shown, the fields off until the architecture is custom
    for name, value in E2B.items():
        assert llm_field(page, name).input_value() == value, name
        assert llm_field(page, name).is_disabled(), name
    labels = root_of(page, "llm").locator('label[for="wg-llm-kv-shared"]').inner_text().strip()
    assert labels == "Layers reusing a KV cache"

    # custom: the same values give the record's estimate (15 of 35 layers keep a cache, as Python counts it)
    llm_field(page, "custom").check()
    assert not any(llm_field(page, name).is_disabled() for name in SHARING)
    llm_field(page, "kv_shared").fill("20")  # typed: the estimate is drawn again from the custom fields
    custom = last(page, "llm")
    assert custom is not None and custom["basis"]["model"] is None
    assert custom["memory"] == record["memory"]
    assert custom["decode_tokens_per_s"] == record["decode_tokens_per_s"]
    assert custom["memory"]["kv_cache_bytes"] == memory.kv_cache_bytes(RECORD, context, 1, "f16")
    shared_kv = shown_gib(page, "kv")
    assert shared_kv == round(custom["memory"]["kv_cache_bytes"] / GIB, 2)

    # the three fields at 0: every layer keeps its cache, the figure shown grows; the sliding share is off
    for name in reversed(SHARING):  # the sliding share before the shared layers, which turn its field off
        llm_field(page, name).fill("0")
    plain = last(page, "llm")
    assert plain is not None and llm_field(page, "kv_shared_sliding").is_disabled()
    assert shown_gib(page, "kv") > shared_kv
    no_sharing = {k: v for k, v in RECORD.items() if k not in ("kv_shared_layers", "kv_shared_sliding_layers")}
    assert plain["memory"]["kv_cache_bytes"] == memory.kv_cache_bytes(no_sharing, context, 1, "f16")
    assert shown_gib(page, "kv") == round(plain["memory"]["kv_cache_bytes"] / GIB, 2)
    assert plain["memory"]["kv_cache_bytes"] > 2 * custom["memory"]["kv_cache_bytes"]

    # out of range: the field says what it takes, no figure is drawn, nothing reads NaN
    llm_field(page, "kv_shared").fill("35")
    assert last(page, "llm") is None
    assert error(page, "kv_shared") == "At most 34: one attention layer at least has to keep its own cache."
    assert llm_field(page, "kv_shared").get_attribute("aria-invalid") == "true"
    llm_field(page, "kv_shared").fill("20")
    llm_field(page, "kv_shared_sliding").fill("12")  # 8 full-attention layers left to share, of 7
    assert last(page, "llm") is None and error(page, "kv_shared") == ""
    assert error(page, "kv_shared_sliding").startswith("Enter 13 to 20:")
    llm_field(page, "kv_shared_sliding").fill("16")
    llm_field(page, "per_layer").fill("256")
    assert last(page, "llm")["memory"] == record["memory"] and error(page, "kv_shared_sliding") == ""
    assert not NUMERIC.search(root_of(page, "llm").inner_text())


def test_pasted_config_fills_the_sharing_fields(server, page):
    cases = json.loads((ROOT / "tests" / "fixtures" / "hf_configs.json").read_text(encoding="utf-8"))["cases"]
    config = next(c["config"] for c in cases if c["id"] == "gemma-4-e2b-as-published")
    page.goto(server + LLM_URL)
    wait_ready(page, "llm")
    assert llm_field(page, "kv_shared").input_value() == ""  # Llama 3.1 8B shares no cache
    scope = root_of(page, "llm")
    scope.locator("[data-wg-config]").fill(json.dumps(config))
    scope.locator("[data-wg-config-read]").click()
    assert out(page, "config_status").startswith("Read: 35 layers, 15 of them with a KV cache.")
    assert {name: llm_field(page, name).input_value() for name in SHARING} == E2B
    r = last(page, "llm")
    assert r is not None and r["basis"]["model"] is None
    assert r["memory"]["kv_cache_bytes"] == memory.kv_cache_bytes(RECORD, 4096, 1, "f16")
