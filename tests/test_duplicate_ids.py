"""Two files that give the same id: one cause, one problem, naming both files, and nothing else
said of the copy or of what refers to its path (translations)."""
from __future__ import annotations

from helpers import TODAY

from generator.data.loader import load_dataset

CARD = "gpus/nvidia/rtx-2070.yaml"
TRANSLATION = 'notes:\n  text: "시험용 카드입니다."\n  source: "000000000000"\n'


def _load(tree, changed=None):
    ds, problems = load_dataset(tree.data, tree.root, today=TODAY, changed=changed)
    return ds, [str(p) for p in problems]


def _as_amd(tree) -> str:
    """The card's file as it would read in the amd folder with nothing wrong of its own."""
    return tree.read(CARD).replace("vendor: nvidia", "vendor: amd").replace('compute_capability: "7.5"\n', "")


def _translated(tree):
    for lang in ("ko", "fr"):
        tree.write(f"translations/{lang}/{CARD}", TRANSLATION)


def test_a_card_copied_into_another_vendors_folder_is_one_problem(tree):
    _translated(tree)
    _, before = _load(tree)
    tree.write("gpus/amd/rtx-2070.yaml", tree.read(CARD))  # its vendor still says nvidia
    ds, after = _load(tree)
    assert ds is None
    assert [p for p in after if p not in before] == [
        "data/gpus/amd/rtx-2070.yaml:1: duplicate GPU id 'rtx-2070': also data/gpus/nvidia/rtx-2070.yaml"]
    assert [p for p in before if p not in after] == []


def test_a_duplicate_with_nothing_else_wrong_names_both_files_and_no_translation(tree):
    _translated(tree)
    tree.write("translations/ko/gpus/amd/rtx-2070.yaml", TRANSLATION)
    _, before = _load(tree)
    tree.write("gpus/amd/rtx-2070.yaml", _as_amd(tree))
    ds, after = _load(tree)
    new = [p for p in after if p not in before]
    assert ds is None and len(new) == 1
    assert new[0] == "data/gpus/nvidia/rtx-2070.yaml:1: duplicate GPU id 'rtx-2070': also data/gpus/amd/rtx-2070.yaml"
    assert not any("translation" in p for p in after if p not in before)


def test_an_edit_that_changes_which_file_holds_the_record_gives_a_full_loads_answer(tree):
    """The preview's reload of the written file alone says what a load of every file says."""
    copy = tree.write("gpus/amd/rtx-2070.yaml", _as_amd(tree))
    _load(tree)
    for text in (tree.read("gpus/amd/rtx-2070.yaml").replace("vendor: amd", "vendor: intel"),
                 tree.read("gpus/amd/rtx-2070.yaml")):
        copy.write_text(text, encoding="utf-8")
        told = _load(tree, [copy])
        assert told == _load(tree)
        assert sum("duplicate GPU id" in p for p in told[1]) == 1
        _load(tree, [])
