"""The diff model and `python -m generator diff` (revisions, and data/ against a git ref)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT, TODAY, write_model

from generator.data.kinds import KINDS

REV = "revisions/2019-04-03.yaml"


def dataset(tree):
    from generator.data.loader import load_dataset

    ds, problems = load_dataset(tree.data, tree.root, today=TODAY)
    assert ds is not None, problems
    return ds


def add_update(tree, date="2020-01-01", changes=""):
    tree.write(f"revisions/{date}.yaml", f"""date: {date}
url: https://example.org/update
kind: update
sources: [https://example.org/update]
summary: An update.
changes:
{changes}""")


def test_update_revisions_derive_the_advice_from_their_changes(tree):
    from generator.facts.diff import advice_state

    add_update(tree, changes="""  - {type: recommendation-added, persona: best-overall, gpu: gtx-1060-6gb}
  - {type: recommendation-removed, persona: little-money, gpu: gtx-1060-6gb}
  - {type: section-added, note: A new section.}
""")
    ds = dataset(tree)
    before = advice_state(ds, "2019-04-03")
    assert before["best-overall"].gpus == ["rtx-2070"] and before["best-overall"].known == "source"
    after = advice_state(ds, "2020-01-01")
    assert after["best-overall"].gpus == ["rtx-2070", "gtx-1060-6gb"]
    assert after["little-money"].gpus == []
    assert {s.known for s in after.values()} == {"derived"}


def test_diff_of_a_derived_update(tree):
    from generator.facts.diff import diff_revisions

    add_update(tree, changes="  - {type: recommendation-removed, persona: best-overall, gpu: rtx-2070}\n")
    d = diff_revisions(dataset(tree), "2019-04-03", "2020-01-01")
    assert [(p.persona, p.removed, p.added) for p in d.personas] == [("best-overall", ["rtx-2070"], [])]
    assert d.unchanged == ["little-money"]


def test_known_pair_in_the_shipped_data():
    from generator.data.loader import load_dataset
    from generator.facts.diff import diff_revisions

    ds, problems = load_dataset(ROOT / "data", ROOT)
    assert ds is not None, problems
    d = diff_revisions(ds, "2016-07-23", "2019-04-03")
    best = next(p for p in d.personas if p.persona == "best-overall")
    assert (best.removed, best.added) == (["titan-x-pascal"], ["rtx-2070"])
    assert d.avoid_added == ["titan-rtx", "titan-v", "titan-xp"]
    assert set(d.avoid_classes_added) == {"tesla", "quadro", "founders-edition"}


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "generator", "diff", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_cli_formats(tree):
    tree.use_real_ui()
    add_update(tree, changes="  - {type: recommendation-added, persona: little-money, gpu: rtx-2070}\n")
    data = str(tree.data)
    text = cli("2019-04-03", "latest", "--data", data)
    assert text.returncode == 0 and "\033[" not in text.stdout
    assert "Little money (changed)\n  + GeForce RTX 2070\n" in text.stdout
    coloured = cli("previous", "latest", "--data", data, "--color", "always")
    assert "\033[32m+ GeForce RTX 2070\033[0m" in coloured.stdout
    md = cli("2019-04-03", "2020-01-01", "--data", data, "--format", "markdown")
    assert "| Little money | — | GeForce RTX 2070 |" in md.stdout
    js = json.loads(cli("2019-04-03", "2020-01-01", "--data", data, "--format", "json").stdout)
    assert js["personas"][0]["persona"] == "little-money" and js["personas"][0]["added"] == ["rtx-2070"]


def test_cli_language(tree):
    tree.use_real_ui()
    tree.write("translations/ko/personas.yaml", "little-money.name:\n  text: 적은 예산\n  source: abcdefabcdef\n")
    add_update(tree, changes="  - {type: recommendation-added, persona: little-money, gpu: rtx-2070}\n")
    out = cli("2019-04-03", "latest", "--data", str(tree.data), "--lang", "ko")
    assert "적은 예산" in out.stdout


def test_cli_bad_revision_is_a_usage_error(tree):
    out = cli("2019-04-03", "1999-01-01", "--data", str(tree.data))
    assert out.returncode == 2 and "no revision '1999-01-01'" in out.stderr and "Traceback" not in out.stderr


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})


@pytest.fixture
def repo(tree):
    tree.use_real_ui()
    git(tree.root, "init", "-q")
    git(tree.root, "add", "data")
    git(tree.root, "commit", "-qm", "base")
    return tree


def test_data_ref_diff_of_a_scripted_change(repo):
    repo.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "16")
    repo.set(REV, "summary", "A rewritten fixture revision.")
    repo.write(REV, repo.read(REV).replace("gpus: [gtx-1060-6gb]", "gpus: [gtx-1060-6gb, rtx-2070]"))
    repo.write("gpus/nvidia/rtx-2060.yaml", repo.read("gpus/nvidia/rtx-2070.yaml").replace("GeForce RTX 2070", "GeForce RTX 2060"))  # noqa: E501
    out = cli("--data-ref", "HEAD", "--format", "markdown", cwd=repo.root)
    assert out.returncode == 0, out.stderr
    md = out.stdout
    assert "### GPUs added\n\n- GeForce RTX 2060 (`rtx-2060`)" in md
    assert "| `rtx-2070` | `memory_gb` | 8 | 16 |" in md
    assert "- 2019-04-03: `summary`, `recommendations`" in md
    assert "| Little money | — | GeForce RTX 2070 |" in md
    assert "- `ko` `data/translations/ko/revisions/2019-04-03.yaml`: `summary`" in md
    js = json.loads(cli("--data-ref", "HEAD", "--format", "json", cwd=repo.root).stdout)
    assert js["gpus_changed"]["rtx-2070"] == [{"field": "memory_gb", "before": 8, "after": 16}]


def test_data_ref_reports_problems_introduced(repo):
    repo.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "eight")
    out = cli("--data-ref", "HEAD", cwd=repo.root)
    assert out.returncode == 1
    assert "### Validation problems introduced" in out.stdout
    assert "rtx-2070.yaml:5: memory\\_gb: expected a number" in out.stdout


def test_data_ref_unknown_ref(repo):
    out = cli("--data-ref", "no-such-ref", cwd=repo.root)
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_data_ref_whose_data_is_broken_is_reported_not_called_unchanged(repo):
    repo.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "eight")
    git(repo.root, "commit", "-qam", "broken")
    repo.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "8")
    out = cli("--data-ref", "HEAD", cwd=repo.root)
    assert out.returncode == 2 and out.stdout == "", out.stdout
    assert "data/ at HEAD has 1 problem(s)" in out.stderr and "memory_gb: expected a number" in out.stderr
    assert "Traceback" not in out.stderr


PRICES = """observations:
  - kind: used
    usd: 250
    date: 2026-06-01
    source: https://example.org/used
"""


def test_data_ref_diffs_every_kind_of_the_registry(repo):
    write_model(repo)
    repo.write("prices/rtx-2070.yaml", PRICES)
    git(repo.root, "add", "data")
    git(repo.root, "commit", "-qm", "a model and a price")
    write_model(repo, "parameters_b: 7\nactive_parameters_b: 7", "parameters_b: 7.2\nactive_parameters_b: 7.2")
    repo.write("prices/rtx-2070.yaml", PRICES.replace("usd: 250", "usd: 230"))
    repo.write("models/tiny-8b.yaml", repo.read("models/tiny-7b.yaml").replace("Tiny 7B", "Tiny 8B"))
    ko = "translations/ko/revisions/2019-04-03.yaml"
    repo.write(ko, repo.read(ko).replace("시험용 개정판입니다.", "시험용 개정판."))
    out = cli("--data-ref", "HEAD", "--format", "markdown", cwd=repo.root)
    assert out.returncode == 0, out.stderr
    md = out.stdout
    assert "No change to data/." not in md
    assert "### Added to data/models/\n\n- `tiny-8b`" in md
    assert "| `tiny-7b` | `parameters_b` | 7 | 7.2 |" in md
    assert "| `rtx-2070` | `observations[0].usd` | 250 | 230 |" in md
    assert "### Changed in data/translations/" in md
    assert "| `ko/revisions/2019-04-03.yaml` | `summary` | 시험용 개정판입니다. | 시험용 개정판. |" in md
    js = json.loads(cli("--data-ref", "HEAD", "--format", "json", cwd=repo.root).stdout)
    assert sorted(js["kinds"]) == sorted(k.name for k in KINDS)  # every kind of the registry, none named in the command
    assert js["kinds"]["price"]["changed"] == {"rtx-2070": [{"field": "observations[0].usd", "before": 250, "after": 230}]}
    assert js["kinds"]["model"]["added"] == ["tiny-8b"]


def test_data_ref_is_never_read_as_an_option(repo, tmp_path):
    target = tmp_path / "kept.txt"
    target.write_text("kept", encoding="utf-8")
    for ref in (f"--output={target}", "-h", ""):
        out = cli(f"--data-ref={ref}", cwd=repo.root)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (ref, out.stderr)
    assert "cannot start with '-'" in cli(f"--data-ref=--output={target}", cwd=repo.root).stderr
    assert target.read_text(encoding="utf-8") == "kept"


def test_data_ref_with_a_link_out_of_the_repository_is_refused(repo, tmp_path):
    (repo.data / "gpus" / "nvidia" / "outside.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    (repo.data / "gpus" / "up.yaml").symlink_to("../../../../../etc/passwd")
    git(repo.root, "add", "data")
    git(repo.root, "commit", "-qm", "links")
    out = cli("--data-ref", "HEAD", cwd=repo.root)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "points outside the repository" in out.stderr and "refused" in out.stderr


def test_data_ref_with_a_link_from_data_to_the_rest_of_the_tree_is_refused(repo):
    (repo.root / "README.md").write_text("name: not data\n", encoding="utf-8")
    (repo.data / "gpus" / "nvidia" / "readme.yaml").symlink_to("../../../README.md")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-qm", "a link out of data/")
    out = cli("--data-ref", "HEAD", cwd=repo.root)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "gpus/nvidia/readme.yaml, a link to ../../../README.md" in out.stderr
