"""The engine's fixed tables live in one file, docs/assets/js/calc/tables.json: Python
(generator/estimate/formats.py) and the browser (estimate.mjs) read it, and the validator's enums,
the command's choices and the calculator's form are built from it. The formulas exist twice;
tests/fixtures/estimate_functions.json holds what each exported function of estimate.mjs gives
in Python, and tests/js/estimate.test.mjs checks the JavaScript against it.
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import yaml

from generator.data import records_llm
from generator.estimate import formats
from generator.estimate.engine import EstimateError, training_relative_only

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "docs" / "assets" / "js" / "calc"
LLM_MODULE = ROOT / "templates" / "pages" / "site" / "calculators" / "llm" / "llm.mjs"  # the calculator's own folder
# the browser's engine: estimate.mjs and the modules it re-exports, each the twin of a Python module
ENGINE_JS = ["estimate.mjs", "formats.mjs", "architecture.mjs", "memory.mjs", "speed.mjs", "offload.mjs"]
FUNCTIONS = json.loads((ROOT / "tests" / "fixtures" / "estimate_functions.json").read_text(encoding="utf-8"))
T = formats.TABLES


def _updater():
    spec = importlib.util.spec_from_file_location("update_estimate_functions",
                                                  ROOT / "tests" / "fixtures" / "update_estimate_functions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_python_and_the_browser_read_the_one_file():
    """formats.mjs reads tables.json, once; the other modules take the tables from it."""
    read = {p.name: re.findall(r'new URL\("\./([^"]+)", import\.meta\.url\)', p.read_text(encoding="utf-8"))
            for p in sorted(JS.glob("*.mjs"))}
    assert {name: urls for name, urls in read.items() if urls} == {"formats.mjs": ["tables.json"]}
    names = read["formats.mjs"]
    engine = re.findall(r'from "\./([a-z]+\.mjs)"', (JS / "estimate.mjs").read_text(encoding="utf-8"))
    assert set(engine) == set(ENGINE_JS[1:])
    assert (JS / names[0]).resolve() == formats.TABLES_PATH
    copies = [p for p in ROOT.glob("**/tables.json") if not {"site", "build", "node_modules", ".venv"} & set(p.parts)]
    assert copies == [formats.TABLES_PATH], copies
    for path in (JS / "llmform.mjs", LLM_MODULE):  # they take the tables from estimate.mjs
        assert not re.search(r'"\./tables\.json"', path.read_text(encoding="utf-8")), path


def test_python_still_gives_the_fixture_of_every_function():
    """The fixture is Python's answer; rewrite it with tests/fixtures/update_estimate_functions.py."""
    up = _updater()
    assert {c["fn"] for c in FUNCTIONS["calls"]} == set(up.PYTHON)
    for i, c in enumerate(FUNCTIONS["calls"]):
        assert up.call(c["fn"], c["args"]) == c["expect"], f"{c['fn']} #{i}"


def _literal_keys(path: Path) -> set[str]:
    return set(re.findall(r'"(est\.err\.[a-z_]+)"', path.read_text(encoding="utf-8")))


def test_error_keys_are_the_files_and_every_one_is_raised():
    declared = set(formats.ERRORS)
    in_python = set().union(*(_literal_keys(p) for p in (ROOT / "generator" / "estimate").glob("*.py")))
    in_js = set().union(*(_literal_keys(JS / name) for name in ENGINE_JS))
    assert in_python <= declared  # est.err.mode, .runtime, ... are made from the option's name
    assert in_js == declared - {"est.err.reference"}  # the browser has no training_relative_only
    # the calculator's form and the command read the keys from the file, not their own list
    for path in (JS / "llmform.mjs", LLM_MODULE, ROOT / "generator" / "cli" / "estimate.py"):
        assert not _literal_keys(path), path
    raised = {c["expect"]["error"]["key"] for c in FUNCTIONS["calls"]
              if isinstance(c["expect"], dict) and set(c["expect"]) == {"error"}}
    raised |= {e["key"] for c in FUNCTIONS["calls"] if c["fn"] == "run" for e in c["expect"]["errors"]}
    try:
        training_relative_only({"id": "x"}, {})
    except EstimateError as exc:
        raised.add(exc.key)
    assert raised == declared


def test_an_undeclared_key_is_refused():
    try:
        EstimateError("est.err.not_in_the_file")
    except KeyError:
        return
    raise AssertionError("EstimateError took a key tables.json does not declare")


def test_every_error_has_a_sentence_and_its_calculator_text_exists():
    ui = yaml.safe_load((ROOT / "data" / "ui.yaml").read_text(encoding="utf-8"))
    for key, spec in formats.ERRORS.items():
        assert isinstance(spec["cli"], str) and spec["cli"], key
        assert set(spec) <= {"field", "ui", "ui_full", "cli"}, key
        assert ("ui" in spec) == ("field" in spec), key
        for k in ("ui", "ui_full"):
            if k in spec:
                assert spec[k] in ui, (key, spec[k])


def test_the_validator_enums_and_the_command_choices_are_the_tables():
    assert records_llm.WEIGHT_FORMATS == tuple(T["weight_formats"])
    assert records_llm.KV_FORMATS == tuple(T["kv_cache"])
    assert records_llm.RUNTIMES == tuple(T["runtimes"])
    assert records_llm.MODES == tuple(T["modes"])
    assert records_llm.OPTIMIZERS == tuple(T["optimizers"])
    assert records_llm.LORA_TARGETS == tuple(T["lora_targets"])

    import argparse

    from generator.cli.estimate import MESSAGES, add_parser

    parser = add_parser(argparse.ArgumentParser().add_subparsers())
    actions = {a.dest: a for a in parser._actions}
    assert list(actions["weights"].choices) == list(T["weight_formats"])
    assert list(actions["kv_cache"].choices) == list(T["kv_cache"])
    assert list(actions["mode"].choices) == list(T["modes"])
    assert list(actions["optimizer"].choices) == list(T["optimizers"])
    assert list(actions["runtime"].choices) == [r for r, t in T["runtimes"].items() if t.get("offered")] + list(T["front_ends"])
    for name in ("mode", "kv_cache", "context", "batch", "gpus", "lora_rank", "optimizer"):
        assert actions[name].default == T["defaults"][name], name
    assert MESSAGES == {k: v["cli"] for k, v in formats.ERRORS.items()}


class _Text:
    """The bits of the page context the calculator's form uses: keys stand for their texts."""
    lang = "en"

    def ui(self, key):
        return key

    def ui_plain(self, key):
        return key


def test_the_forms_choices_defaults_and_messages_come_from_the_tables():
    from generator.publish.render import make_env

    env = make_env(ROOT / "templates" / "pages")
    html = env.get_template("site/calculators/llm/form.html.j2").render(c=_Text())
    selects = {m.group(1): m.group(2) for m in re.finditer(r'<select id="[^"]+" name="([a-z]+)"[^>]*>(.*?)</select>', html)}
    options = {name: re.findall(r'<option value="([^"]+)"', body) for name, body in selects.items()}
    chosen = {name: re.findall(r'<option value="([^"]+)" selected>', body) for name, body in selects.items()}
    first = T["calculator"]["weights_first"]
    assert options["mode"] == list(T["modes"])
    assert options["runtime"] == [r for r, t in T["runtimes"].items() if t.get("offered")]
    assert options["weights"] == first + [w for w in T["weight_formats"] if w not in first]
    assert options["kv"] == list(T["kv_cache"])
    assert options["opt"] == list(T["optimizers"])
    assert options["targets"] == list(T["calculator"]["lora_presets"])
    d = T["defaults"]
    assert chosen == {"mode": [d["mode"]], "runtime": [T["default_runtime"]], "weights": [T["default_weights"]],
                      "kv": [d["kv_cache"]], "opt": [d["optimizer"]], "targets": ["all"], "offload": [d["offload"]],
                      "backend": ["default"]}  # the vendor's backend
    assert options["backend"] == ["default", *T["runtimes"]["llama.cpp"]["backends"]]
    for name, value in (("context", d["context"]), ("batch", d["batch"]), ("gpus", d["gpus"]), ("rank", d["lora_rank"])):
        assert re.search(rf'name="{name}" type="text" inputmode="numeric" value="{value}"', html), name
    for name, on in (("ckpt", d["checkpointing"]), ("flash", d["flash_attention"]), ("master", d["master_weights"]),
                     ("inbwd", d["optimizer_in_backward"]), ("chunk", d["chunked_loss"])):
        tag = re.search(rf'<input [^>]*name="{name}" type="checkbox"[^>]*>', html).group(0)
        assert (" checked" in tag) == on, name
    # the page delivers every text the form maps an engine error to
    delivered = set(re.findall(r'data-m-([a-z0-9_-]+)=', html))
    for spec in formats.ERRORS.values():
        for k in ("ui", "ui_full"):
            if k in spec:
                assert spec[k].replace(".", "-") in delivered, spec[k]
