"""Every validator rule, each with a passing and a failing fixture.

Each case edits the small valid tree of tests/fixtures/valid: the ``good`` edit must
leave the data clean, the ``bad`` edit must produce exactly the expected message.
"""
from __future__ import annotations

import pytest

GPU = "gpus/nvidia/rtx-2070.yaml"
GPU_SHOWN = "data/" + GPU
REV = "revisions/2019-04-03.yaml"
REV_SHOWN = "data/" + REV


def _append(tree, rel, text):
    tree.write(rel, tree.read(rel).rstrip("\n") + "\n" + text)


def _sparse(tree, value):
    text = tree.read(GPU).replace("fields: [fp16_tensor_tflops,", "fields: [fp16_tensor_tflops, fp16_tensor_tflops_sparse,")
    tree.write(GPU, text.rstrip("\n") + f"\nfp16_tensor_tflops_sparse: {value}\n")


CASES = {
    # rule: (good edit, bad edit, expected problem, exact match?)
    "yaml_syntax": (
        lambda t: t.set(GPU, "notes", '"a: b"'),
        lambda t: t.set(GPU, "notes", "[unclosed"),
        f"{GPU_SHOWN}:16: YAML syntax: while parsing a flow sequence: did not find expected ',' or ']'",
        False,
    ),
    "duplicate_keys": (
        lambda t: _append(t, GPU, "aliases: [RTX 2070]\n"),
        lambda t: _append(t, GPU, "memory_gb: 16\n"),
        f"{GPU_SHOWN}:21: memory_gb: duplicate key 'memory_gb' (first given on line 5)",
        True,
    ),
    "aliases_and_anchors": (
        lambda t: t.set(GPU, "notes", '"R&D board *not* sold; 50% off"'),
        lambda t: (t.set(GPU, "memory_gb", "&m 8"), t.set(GPU, "tdp_w", "*m")),
        f"{GPU_SHOWN}:11: tdp_w: aliases (*name) are not allowed; write the value out",
        True,
    ),
    "anchor_alone": (
        lambda t: None,
        lambda t: t.set(GPU, "memory_gb", "&m 8"),
        f"{GPU_SHOWN}:5: anchors (&m) are not allowed; write values out in full",
        True,
    ),
    "wrong_type_number": (
        lambda t: t.set(GPU, "memory_gb", "8.0"),
        lambda t: t.set(GPU, "memory_gb", "eight"),
        f"{GPU_SHOWN}:5: memory_gb: expected a number (write the number alone, without units), got 'eight' (text)",
        True,
    ),
    "wrong_type_bool": (
        lambda t: t.set(GPU, "tensor_cores", "true"),
        lambda t: t.set(GPU, "tensor_cores", '"yes"'),
        f"{GPU_SHOWN}:10: tensor_cores: expected true or false, got 'yes' (text)",
        True,
    ),
    "wrong_type_unquoted_version": (
        lambda t: t.set(GPU, "compute_capability", '"7.5"'),
        lambda t: t.set(GPU, "compute_capability", "7.5"),
        f"{GPU_SHOWN}:13: compute_capability: expected text (quote it), got 7.5 (a number)",
        True,
    ),
    "negative_number": (
        lambda t: t.set(GPU, "tdp_w", "1"),
        lambda t: t.set(GPU, "tdp_w", "-175"),
        f"{GPU_SHOWN}:11: tdp_w: expected a number greater than 0, got -175",
        True,
    ),
    "absurd_number": (
        lambda t: t.set(GPU, "memory_gb", "4096"),
        lambda t: t.set(GPU, "memory_gb", "80000"),
        f"{GPU_SHOWN}:5: memory_gb: 80000 is out of range; the largest plausible value is 4096",
        True,
    ),
    "unknown_field": (
        lambda t: _append(t, GPU, "aliases: [RTX 2070]\n"),
        lambda t: _append(t, GPU, "memory: 8\n"),
        f"{GPU_SHOWN}:21: memory: unknown field; did you mean 'memory_gb'?",
        False,
    ),
    "missing_required_field": (
        lambda t: t.set(GPU, "tdp_w", "null"),
        lambda t: t.drop(GPU, "tdp_w"),
        f"{GPU_SHOWN}:1: missing required field 'tdp_w' (write null if unknown)",
        True,
    ),
    "not_nullable": (
        lambda t: t.set(GPU, "launch_price_usd", "null"),
        lambda t: t.set(GPU, "memory_gb", "null"),
        f"{GPU_SHOWN}:5: memory_gb: memory_gb cannot be empty (null)",
        True,
    ),
    "id_is_a_valid_file_name": (
        lambda t: None,
        lambda t: t.path(GPU).rename(t.path("gpus/nvidia/RTX_2070.yaml")),
        "data/gpus/nvidia/RTX_2070.yaml:1: file name 'RTX_2070.yaml' is not a valid id: use lowercase letters, digits and single dashes",  # noqa: E501
        True,
    ),
    "revision_date_matches_file_name": (
        lambda t: None,
        lambda t: t.set(REV, "date", "2019-04-04"),
        f"{REV_SHOWN}:1: date: date 2019-04-04 differs from the file name 2019-04-03.yaml",
        True,
    ),
    "vendor_matches_folder": (
        lambda t: None,
        lambda t: t.set(GPU, "vendor", "amd"),
        f"{GPU_SHOWN}:2: vendor: vendor 'amd' differs from the folder 'nvidia'; move the file or fix the vendor",
        True,
    ),
    "duplicate_ids": (
        lambda t: t.write("gpus/amd/rx-580.yaml", t.read(GPU).replace("vendor: nvidia", "vendor: amd").replace('compute_capability: "7.5"\n', "")),  # noqa: E501
        lambda t: t.write("gpus/amd/rtx-2070.yaml", t.read(GPU).replace("vendor: nvidia", "vendor: amd").replace('compute_capability: "7.5"\n', "")),  # noqa: E501
        f"{GPU_SHOWN}:1: duplicate GPU id 'rtx-2070': also data/gpus/amd/rtx-2070.yaml",
        True,
    ),
    "unknown_gpu_in_revision": (
        lambda t: t.write(REV, t.read(REV).replace("gpus: [rtx-2070]", "gpus: [rtx-2070, gtx-1060-6gb]")),
        lambda t: t.write(REV, t.read(REV).replace("gpus: [rtx-2070]", "gpus: [rtx-2070x]")),
        f"{REV_SHOWN}:9: recommendations.best-overall.gpus[0]: unknown gpu id 'rtx-2070x'; did you mean 'rtx-2070'?",
        True,
    ),
    "unknown_persona_in_revision": (
        lambda t: None,
        lambda t: t.write(REV, t.read(REV).replace("  best-overall:", "  best-overal:")),
        f"{REV_SHOWN}:8: recommendations.best-overal: unknown persona id 'best-overal'; did you mean 'best-overall'?",
        True,
    ),
    "date_not_a_date": (
        lambda t: t.set(GPU, "release_date", "2018-10-17"),
        lambda t: t.set(GPU, "release_date", "soon"),
        f"{GPU_SHOWN}:4: release_date: expected a date as YYYY-MM-DD (unquoted), got 'soon' (text)",
        True,
    ),
    "date_impossible": (
        lambda t: t.set(GPU, "release_date", "2016-02-29"),
        lambda t: t.set(GPU, "release_date", "2018-02-30"),
        f"{GPU_SHOWN}:4: release_date: '2018-02-30' is not a real calendar date",
        True,
    ),
    "date_in_future": (
        lambda t: t.set(GPU, "release_date", "2026-11-22"),
        lambda t: t.set(GPU, "release_date", "2027-01-05"),
        f"{GPU_SHOWN}:4: release_date: 2027-01-05 is in the future (today is 2026-11-22)",
        True,
    ),
    "dense_not_above_sparse": (
        lambda t: _sparse(t, 59.8),
        lambda t: _sparse(t, 20),
        f"{GPU_SHOWN}:9: fp16_tensor_tflops: dense 29.9 is above sparse 20; dense figures go in fp16_tensor_tflops "
        "and the (usually doubled) sparse figure in fp16_tensor_tflops_sparse",
        True,
    ),
    "tensor_cores_consistent": (
        lambda t: None,
        lambda t: t.set(GPU, "tensor_cores", "false"),
        f"{GPU_SHOWN}:9: fp16_tensor_tflops: tensor_cores is false, so fp16_tensor_tflops must be null",
        True,
    ),
    "compute_capability_nvidia_only": (
        lambda t: None,
        lambda t: t.drop(GPU, "compute_capability"),
        f"{GPU_SHOWN}:1: missing required field 'compute_capability' (NVIDIA GPUs have one, e.g. \"8.6\")",
        True,
    ),
    "every_number_sourced": (
        lambda t: None,
        lambda t: t.write(GPU, t.read(GPU).replace("fields: [fp16_tensor_tflops, launch_price_usd, compute_capability]",
                                                   "fields: [fp16_tensor_tflops, compute_capability]")),
        f"{GPU_SHOWN}:12: launch_price_usd: no source covers launch_price_usd; add it to the fields of a source in sources",
        True,
    ),
    "full_revision_has_recommendations": (
        lambda t: None,
        lambda t: t.write(REV, t.read(REV).split("recommendations:")[0] + "avoid: []\n"),
        f"{REV_SHOWN}:1: a revision of kind full lists its recommendations (persona: gpus) or a decision_tree",
        True,
    ),
    "recommended_and_avoided": (
        lambda t: t.set(REV, "avoid", "[gtx-1060-6gb]") or t.write(REV, t.read(REV).replace("gpus: [gtx-1060-6gb]", "gpus: []")),
        lambda t: t.set(REV, "avoid", "[rtx-2070]"),
        f"{REV_SHOWN}:9: recommendations.best-overall.gpus[0]: rtx-2070 is recommended here and also listed in avoid",
        True,
    ),
    "reference_is_one": (
        lambda t: _append(t, REV, "relative_performance:\n  - workload: overall\n    reference: rtx-2070\n    values: {rtx-2070: 1, gtx-1060-6gb: 0.4}\n"),  # noqa: E501
        lambda t: _append(t, REV, "relative_performance:\n  - workload: overall\n    reference: rtx-2070\n    values: {rtx-2070: 1.5, gtx-1060-6gb: 0.4}\n"),  # noqa: E501
        f"{REV_SHOWN}:17: relative_performance[0].values.rtx-2070: the reference GPU rtx-2070 is 1 by definition, got 1.5",
        True,
    ),
    "priorities_distinct": (
        lambda t: _append(t, REV, "priorities:\n  - network: rnn\n    order: [memory-bandwidth, flops]\n"),
        lambda t: _append(t, REV, "priorities:\n  - network: rnn\n    order: [flops, flops]\n"),
        f"{REV_SHOWN}:16: priorities[0].order: a feature appears twice in one priority order",
        True,
    ),
    "translation_of_unknown_key": (
        lambda t: None,
        lambda t: t.write("translations/ko/ui.yaml", t.read("translations/ko/ui.yaml") + "nav.homme:\n  text: 홈\n  source: 3a78695388b3\n"),  # noqa: E501
        "data/translations/ko/ui.yaml:4: nav.homme: no translatable English text has this key in data/ui.yaml; did you mean 'nav.home'?",  # noqa: E501
        True,
    ),
    "translation_of_unknown_record": (
        lambda t: None,
        lambda t: t.write("translations/ko/gpus/nvidia/rtx-2070ti.yaml", "notes:\n  text: 카드\n  source: 3a78695388b3\n"),
        "data/translations/ko/gpus/nvidia/rtx-2070ti.yaml:1: translation of an unknown record: data/gpus/nvidia/rtx-2070ti.yaml does not exist; did you mean 'gpus/nvidia/rtx-2070.yaml'?",  # noqa: E501
        True,
    ),
    "translation_digest_shape": (
        lambda t: None,
        lambda t: t.write("translations/ko/ui.yaml", "nav.home:\n  text: 홈\n  source: abc123\n"),
        "data/translations/ko/ui.yaml:3: nav.home.source: expected the 12-hex digest of the English text, got 'abc123' (text)",
        True,
    ),
    "translation_keeps_placeholders": (
        lambda t: (t.write("ui.yaml", "nav.home: Home of {date}\n"),
                   t.write("translations/ko/ui.yaml", "nav.home:\n  text: \"{date} 홈\"\n  source: abcdefabcdef\n")),
        lambda t: (t.write("ui.yaml", "nav.home: Home of {date}\n"),
                   t.write("translations/ko/ui.yaml", "nav.home:\n  text: \"홈 {data}\"\n  source: abcdefabcdef\n")),
        "data/translations/ko/ui.yaml:2: nav.home.text: placeholders differ from the English text: expected {date}, got {data}",
        True,
    ),
    "not_utf8": (
        lambda t: t.set(GPU, "notes", "카드 — ünïcode"),
        lambda t: t.write(GPU, t.read(GPU).replace("notes: A fixture card.", "notes: caf").encode() + b"\xe9\n"),
        f"{GPU_SHOWN}:21: not UTF-8 (byte 0xe9 at offset",
        False,
    ),
    "empty_file": (
        lambda t: None,
        lambda t: t.write(GPU, "# nothing here yet\n"),
        f"{GPU_SHOWN}:1: file is empty; a record needs at least its required fields",
        True,
    ),
    "not_a_mapping": (
        lambda t: None,
        lambda t: t.write(GPU, "- name: GeForce RTX 2070\n"),
        f"{GPU_SHOWN}:1: expected a mapping of field: value at the top of the file, got list",
        True,
    ),
    "custom_tag": (
        lambda t: None,
        lambda t: t.set(GPU, "notes", "!!python/object/apply:os.system [echo hi]"),
        f"{GPU_SHOWN}:15: notes: custom tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
        True,
    ),
    "url_scheme": (
        lambda t: None,
        lambda t: t.set(REV, "url", "javascript:alert(1)"),
        f"{REV_SHOWN}:2: url: expected an http(s) URL, got 'javascript:alert(1)' (text)",
        True,
    ),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_passes_on_good_data(tree, rule):
    good, _bad, _expected, _exact = CASES[rule]
    good(tree)
    assert tree.problems() == []


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_reports_bad_data(tree, rule):
    _good, bad, expected, exact = CASES[rule]
    bad(tree)
    problems = tree.problems()
    if exact:
        assert expected in problems, "\n".join(problems)
    else:
        assert any(p.startswith(expected) for p in problems), "\n".join(problems)


def test_valid_fixture_is_clean(tree):
    assert tree.problems() == []


def test_every_problem_is_reported_in_one_run(tree):
    tree.set(GPU, "memory_gb", "eight")
    tree.set("gpus/nvidia/gtx-1060-6gb.yaml", "tdp_w", "-1")
    tree.write(REV, tree.read(REV).replace("gpus: [rtx-2070]", "gpus: [nope]"))
    tree.write("personas.yaml", "best-overall:\n  name: Best\n  name: Again\nlittle-money:\n  name: Little money\n")
    problems = tree.problems()
    assert len(problems) == 4, problems
    assert [p.split(":")[0] for p in problems] == [
        "data/gpus/nvidia/gtx-1060-6gb.yaml", "data/gpus/nvidia/rtx-2070.yaml",
        "data/personas.yaml", "data/revisions/2019-04-03.yaml"]


def test_stale_translation_is_a_warning_not_an_error(tree):
    from generator.data.load_translations import stale_translations
    from generator.data.loader import load_dataset

    tree.write("ui.yaml", "nav.home: Start page\n")
    ds, problems = load_dataset(tree.data, tree.root)
    assert problems == [] and ds is not None
    assert stale_translations(ds) == [("ko", "ui.yaml", "nav.home")]


def test_unreadable_value_is_reported_once_and_rules_still_safe(tree):
    tree.set(GPU, "fp16_tensor_tflops", "!!python/name:os.system")
    tree.write(GPU, tree.read(GPU) + "fp16_tensor_tflops_sparse: 1\n")
    problems = tree.problems()
    assert problems == [f"{GPU_SHOWN}:9: fp16_tensor_tflops: custom tag 'tag:yaml.org,2002:python/name:os.system' is not allowed"]
