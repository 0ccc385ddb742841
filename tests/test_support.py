"""The support rule of generator/facts/support.py over a small data tree, and the validator's
checks that tie data/software.yaml to the GPU records."""
from __future__ import annotations

import pytest

from generator.data.loader import load_dataset
from generator.facts.support import support_of
from tests.helpers import TODAY

ARCHS = """\
architectures:
  Pascal: {bf16: false, fp8: false, fp4: false, flash_attention: [], source: https://example.org/pascal}
  Turing: {bf16: false, fp8: false, fp4: false, flash_attention: [], source: https://example.org/turing}
"""


def build(name, cc, release="2.15", date="2026-10-28", legacy=False):
    caps = ", ".join(f'"{c}"' for c in cc)
    return (f"      - name: {name}\n        vendor: nvidia\n        release: \"{release}\"\n        date: {date}\n"
            f"        compute_capabilities: [{caps}]\n" + ("        legacy: true\n" if legacy else "")
            + "        source: https://example.org/build\n")


def software(*builds, decides=True, archs=ARCHS):
    return ("as_of: 2026-11-20\nstacks:\n  pytorch:\n    name: PyTorch\n"
            f"    decides_status: {'true' if decides else 'false'}\n    builds:\n" + "".join(builds) + archs)


def load(tree):
    ds, problems = load_dataset(tree.data, tree.root, today=TODAY)
    errors = [str(p) for p in problems if p.severity != "note"]
    return ds, errors


def status(tree, gpu_id):
    ds, errors = load(tree)
    assert errors == []
    return support_of(ds, ds.gpus[gpu_id])


def test_current_card(tree):
    tree.write("software.yaml", software(build("CUDA 13.0 wheels", ["7.5", "8.0"])))
    s = status(tree, "rtx-2070")
    assert s.status == "current"
    assert s.last is None
    assert [d["build"] for d in s.details] == ["CUDA 13.0 wheels"]


def test_legacy_card_names_its_last_build(tree):
    tree.write("software.yaml", software(
        build("CUDA 13.0 wheels", ["7.5", "8.0"]),
        build("CUDA 12.6 wheels", ["5.0", "6.0", "7.5"], release="2.14", date="2026-09-02", legacy=True),
        build("CUDA 11.8 wheels", ["3.7", "6.0"], release="2.0", date="2023-03-15", legacy=True)))
    s = status(tree, "gtx-1060-6gb")  # 6.1 runs the 6.0 kernels of both legacy builds
    assert s.status == "legacy"
    assert s.last == "PyTorch 2.14, CUDA 12.6 wheels"
    # the card with a current build is current even though a legacy build also runs it
    assert status(tree, "rtx-2070").status == "current"


def test_unsupported_card(tree):
    tree.write("software.yaml", software(build("CUDA 13.0 wheels", ["7.5", "8.0"])))
    s = status(tree, "gtx-1060-6gb")
    assert s.status == "unsupported"
    assert s.last is None and s.details == ()


def test_a_stack_that_does_not_decide_lists_but_leaves_the_status(tree):
    tree.write("software.yaml", software(build("CUDA backend", ["6.1"]), decides=False))
    s = status(tree, "gtx-1060-6gb")
    assert s.status == "unsupported"
    assert [d["stack"] for d in s.details] == ["pytorch"]


@pytest.mark.parametrize(("cc", "shipped", "runs"), [
    ("8.9", ["8.6"], True),     # same major, a newer minor runs the older kernels
    ("8.6", ["8.6"], True),
    ("8.0", ["8.6"], False),    # an older minor does not run newer kernels
    ("9.0", ["8.6"], False),    # another major never does
    ("12.1", ["12.0"], True),
    ("10.3", ["10.0", "12.0"], True),
    ("12.0", ["10.0"], False),
    ("3.5", ["3.7"], False),
])
def test_cuda_binary_compatibility(tree, cc, shipped, runs):
    tree.set("gpus/nvidia/rtx-2070.yaml", "compute_capability", f'"{cc}"')
    tree.write("software.yaml", software(build("wheels", shipped)))
    assert status(tree, "rtx-2070").status == ("current" if runs else "unsupported")


def test_no_software_file_means_no_status(tree):
    ds, errors = load(tree)
    assert errors == [] and support_of(ds, ds.gpus["rtx-2070"]) is None


def test_missing_architecture_is_reported_at_the_card(tree):
    tree.write("software.yaml", software(build("wheels", ["7.5"]), archs=ARCHS.replace(
        "  Pascal: {bf16: false, fp8: false, fp4: false, flash_attention: [], source: https://example.org/pascal}\n",
        "")))
    line = tree.read("gpus/nvidia/gtx-1060-6gb.yaml").splitlines().index("architecture: Pascal") + 1
    assert any(p.startswith(f"data/gpus/nvidia/gtx-1060-6gb.yaml:{line}:")
               and "architecture 'Pascal' has no features in data/software.yaml" in p
               for p in tree.problems()), tree.problems()


def test_fp8_figure_needs_an_architecture_with_fp8(tree):
    tree.set("gpus/nvidia/rtx-2070.yaml", "fp8_tensor_tflops", "100")
    tree.write("software.yaml", software(build("wheels", ["7.5"])))
    line = tree.read("gpus/nvidia/rtx-2070.yaml").splitlines().index("architecture: Turing") + 1
    problems = tree.problems()
    assert any(p.startswith(f"data/gpus/nvidia/rtx-2070.yaml:{line}:")
               and "fp8_tensor_tflops is given but data/software.yaml says Turing has no fp8" in p
               for p in problems), problems
    # with fp8 true the same card passes that check
    tree.write("software.yaml", software(build("wheels", ["7.5"]), archs=ARCHS.replace(
        "Turing: {bf16: false, fp8: false", "Turing: {bf16: false, fp8: true")))
    assert not any("fp8_tensor_tflops is given" in p for p in tree.problems())
