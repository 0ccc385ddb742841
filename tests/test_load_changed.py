"""Loading again after the preview's watcher named the files written since the last load: only
those are looked at; a file created, deleted or moved makes the next load look at every file."""
from __future__ import annotations

import os
from pathlib import Path

from helpers import TODAY

from generator.data.loader import load_dataset


def _load(tree, changed=None):
    ds, problems = load_dataset(tree.data, tree.root, today=TODAY, changed=changed)
    return ds, [str(p) for p in problems]


def test_only_the_files_named_are_asked_for_their_status_and_no_folder_is_walked(tree, monkeypatch):
    _load(tree)
    tree.set("gpus/nvidia/rtx-2070.yaml", "name", "GeForce RTX 2070 Renamed")
    stats, walks = [], []
    real_stat, real_walk = Path.stat, os.walk
    monkeypatch.setattr(Path, "stat", lambda self, **k: stats.append(self) or real_stat(self, **k))
    monkeypatch.setattr(os, "walk", lambda *a, **k: walks.append(a[0]) or real_walk(*a, **k))
    ds, _ = _load(tree, [tree.path("gpus/nvidia/rtx-2070.yaml")])
    assert ds.gpus["rtx-2070"]["name"] == "GeForce RTX 2070 Renamed"
    # below the folders of records, only the file written; above them, the few top-level entries
    deep = [p.relative_to(tree.data).as_posix() for p in stats if len(p.relative_to(tree.data).parts) > 1]
    assert deep == ["gpus/nvidia/rtx-2070.yaml"] and walks == []


def test_what_the_walk_reported_is_reported_again_with_its_listing(tree):
    tree.write("gpus/nvidia/notes.txt", "a stray file\n")
    tree.write("translations/ko/gpus/nvidia/notes.txt", "another\n")
    ds, before = _load(tree)
    assert ds is None and sum("notes.txt" in p for p in before) == 2
    assert _load(tree, []) == (None, before)


def test_the_same_answer_as_a_full_load_for_an_edit_to_a_translated_record(tree):
    tree.set("gpus/nvidia/rtx-2070.yaml", "name", "GeForce RTX 2070 Renamed")
    _load(tree)
    tree.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "eight")
    told = _load(tree, [tree.path("gpus/nvidia/rtx-2070.yaml")])
    full = _load(tree)
    assert told[0] is None and told[1] == full[1]
    assert any("rtx-2070.yaml" in p and "memory_gb" in p for p in told[1])


def test_a_created_file_is_seen_once_the_caller_says_it_cannot_vouch(tree):
    _load(tree)
    text = tree.read("gpus/nvidia/rtx-2070.yaml").replace("id: rtx-2070", "id: rtx-2070-copy")
    tree.write("gpus/nvidia/rtx-2070-copy.yaml", text)
    ds, _ = _load(tree, [])  # what the caller vouched for: nothing created (the listing is reused)
    assert "rtx-2070-copy" not in ds.gpus
    ds, _ = _load(tree, None)  # a created file: every folder is listed again
    assert "rtx-2070-copy" in ds.gpus


def _reads(tree, monkeypatch) -> list[str]:
    from generator.data.loader import _Loader

    reads, real = [], _Loader.read
    monkeypatch.setattr(_Loader, "read", lambda self, path, *a, **k:
                        reads.append(Path(path).relative_to(tree.data).as_posix()) or real(self, path, *a, **k))
    return reads


def test_a_reload_visits_only_the_file_that_changed_and_the_translations_of_what_changed(tree, monkeypatch):
    """The other files (of other folders or of the same one) and the translations of unchanged
    records give what they gave at the last load, without visiting each file; the answer is a
    full load's."""
    from generator.data.load_translations import stale_translations

    tree.write("translations/ko/gpus/nvidia/rtx-2070.yaml",
               'notes:\n  text: "시험용 카드입니다."\n  source: "000000000000"\n')
    _load(tree)
    tree.set("gpus/nvidia/rtx-2070.yaml", "notes", "A fixture card, edited.")
    reads = _reads(tree, monkeypatch)
    told = load_dataset(tree.data, tree.root, today=TODAY, changed=[tree.path("gpus/nvidia/rtx-2070.yaml")])
    assert sorted(reads) == ["gpus/nvidia/rtx-2070.yaml", "personas.yaml", "translations/ko/gpus/nvidia/rtx-2070.yaml",
                             "ui.yaml"]
    full = load_dataset(tree.data, tree.root, today=TODAY)
    assert told[0] is not None and told == full
    assert told[0].gpus["rtx-2070"]["notes"] == "A fixture card, edited."
    assert stale_translations(told[0]) == stale_translations(full[0]) != []


def test_a_reload_after_a_translation_edit_reports_what_a_full_load_reports(tree, monkeypatch):
    _load(tree)
    rel = "translations/ko/revisions/2019-04-03.yaml"
    tree.write(rel, tree.read(rel).replace("시험용 개정판입니다.", "시험용 {gpu} 개정판입니다."))
    reads = _reads(tree, monkeypatch)
    told = _load(tree, [tree.path(rel)])
    assert rel in reads and "revisions/2019-04-03.yaml" not in reads
    full = _load(tree)
    assert told[0] is None and told == full
    assert any(rel in p and "placeholders" in p for p in told[1])
    # and back: the problem goes, as in a full load
    tree.write(rel, tree.read(rel).replace("시험용 {gpu} 개정판입니다.", "시험용 개정판입니다."))
    assert _load(tree, [tree.path(rel)]) == _load(tree) and _load(tree)[0] is not None


def test_what_a_load_kept_outlives_the_loads_of_other_data_folders(tree, tmp_path, monkeypatch):
    """Loads of other data folders in between (as in a test run, or two previews) drop no part of
    what this folder's last load kept: the reload still reads only what it must."""
    import shutil

    from generator import reuse

    _load(tree)
    for i in range(reuse.LOADS.limit - 1):
        other = tmp_path / f"other-{i}"
        shutil.copytree(tree.data, other / "data")
        assert load_dataset(other / "data", other, today=TODAY)[0] is not None
    tree.set("gpus/nvidia/rtx-2070.yaml", "notes", "A fixture card, edited.")
    reads = _reads(tree, monkeypatch)
    told = load_dataset(tree.data, tree.root, today=TODAY, changed=[tree.path("gpus/nvidia/rtx-2070.yaml")])
    assert sorted(reads) == ["gpus/nvidia/rtx-2070.yaml", "personas.yaml", "ui.yaml"]
    assert told == load_dataset(tree.data, tree.root, today=TODAY)


def test_the_folder_used_least_recently_is_dropped_whole():
    from generator.reuse import Scopes

    memory = Scopes("loads", ("folder",), limit=8)
    for n in range(memory.limit):
        memory.scope((n,))[("kind", "gpu")] = n
    memory.scope((0,))  # used again: now the most recent
    memory.scope(("new",))
    assert memory.scope((0,)) == {("kind", "gpu"): 0}
    assert memory.scope((1,)) == {}  # the least recently used went, with all it held


def test_an_unwritten_file_beside_the_written_one_gives_its_problems_again_without_being_read(tree, monkeypatch):
    """In the folder of the file written, each other file gives what it gave at the last load
    (its problems, its references, an unreadable file's one problem and the records that then go
    unchecked) without being read: the answer is a full load's, for a problem of the file
    written, of a file beside it, and for both."""
    tree.set("gpus/nvidia/gtx-1060-6gb.yaml", "memory_gb", "six")
    tree.write("gpus/nvidia/broken-card.yaml", "name: [unclosed\n")
    tree.write("translations/ko/gpus/nvidia/broken-card.yaml", 'notes:\n  text: "x"\n  source: "000000000000"\n')
    first = _load(tree)
    assert first[0] is None and any("gtx-1060-6gb.yaml" in p and "memory_gb" in p for p in first[1])
    assert any("broken-card.yaml" in p for p in first[1])
    for old, new in (("A fixture", "An edited fixture"), ("memory_gb: 8", "memory_gb: eight")):
        path = tree.path("gpus/nvidia/rtx-2070.yaml")
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        reads = _reads(tree, monkeypatch)
        told = _load(tree, [path])
        monkeypatch.undo()
        assert "gpus/nvidia/gtx-1060-6gb.yaml" not in reads and "gpus/nvidia/broken-card.yaml" not in reads
        assert told == _load(tree)
    assert any("rtx-2070.yaml" in p and "memory_gb" in p for p in told[1])
    # and the file beside it fixed: a full listing's answer again once it is named
    tree.set("gpus/nvidia/gtx-1060-6gb.yaml", "memory_gb", "6")
    assert _load(tree, [tree.path("gpus/nvidia/gtx-1060-6gb.yaml")]) == _load(tree)


def test_references_are_checked_again_only_in_the_files_written_while_the_ids_stay(tree, monkeypatch):
    """A reload checks the references of the files written; the others give their last answer,
    unless the records that exist or the unreadable files changed: then every reference is
    checked again. Each answer is a full load's."""
    from generator.data.loader import _Loader

    rev = "revisions/2019-04-03.yaml"
    checked = []
    real = _Loader._check_refs
    monkeypatch.setattr(_Loader, "_check_refs", lambda self, refs, *a: checked.append(len(refs)) or real(self, refs, *a))
    full = _load(tree)
    assert full[0] is not None
    every = checked[-1]
    assert every >= 2
    # a reference to a card that does not exist, in the file written
    tree.write(rev, tree.read(rev).replace("gpus: [rtx-2070]", "gpus: [rtx-2070, no-such-card]"))
    told = _load(tree, [tree.path(rev)])
    assert told == _load(tree)
    assert any(rev in p and "no-such-card" in p for p in told[1])
    # another file written: the revision's problem is given again, its references not checked
    tree.set("gpus/nvidia/gtx-1060-6gb.yaml", "notes", "Edited.")
    checked.clear()
    told = _load(tree, [tree.path("gpus/nvidia/gtx-1060-6gb.yaml")])
    assert checked == [0] and told == _load(tree)
    assert any(rev in p and "no-such-card" in p for p in told[1])
    # a card's file made unreadable: the ids changed, every reference is checked again
    card = "gpus/nvidia/rtx-2070.yaml"
    tree.write(card, "name: [unclosed\n")
    checked.clear()
    told = _load(tree, [tree.path(card)])
    assert checked[0] > 1 and told == _load(tree)
    assert any("rtx-2070.yaml" in p and "were not checked" in p for p in told[1])
    # and the reference fixed
    tree.write(rev, tree.read(rev).replace("gpus: [rtx-2070, no-such-card]", "gpus: [rtx-2070]"))
    told = _load(tree, [tree.path(rev)])
    assert told == _load(tree) and not any("no-such-card" in p for p in told[1])


def test_translations_of_a_record_made_unreadable_and_mended_are_what_a_full_load_gives(tree, monkeypatch):
    """The translations of the file written are looked at again, the others replayed: while the
    English record cannot be read its translation is not checked (a note on the English file),
    and once mended it is checked again; every answer is a full load's."""
    tree.write("translations/ko/gpus/nvidia/rtx-2070.yaml", 'notes:\n  text: "시험용 카드입니다."\n  source: "000000000000"\n')
    tree.set("gpus/nvidia/gtx-1060-6gb.yaml", "notes", "Another fixture card.")
    tree.write("translations/fr/gpus/nvidia/gtx-1060-6gb.yaml", 'notes:\n  text: "Une carte."\n  source: "000000000000"\n')
    _load(tree)
    card = tree.path("gpus/nvidia/rtx-2070.yaml")
    good = card.read_text(encoding="utf-8")
    card.write_text("name: [unclosed\n", encoding="utf-8")
    reads = _reads(tree, monkeypatch)
    told = _load(tree, [card])
    monkeypatch.undo()
    assert "translations/ko/gpus/nvidia/rtx-2070.yaml" in reads
    assert "translations/fr/gpus/nvidia/gtx-1060-6gb.yaml" not in reads
    assert told == _load(tree) and any("rtx-2070.yaml" in p and "were not checked" in p for p in told[1])
    card.write_text(good, encoding="utf-8")
    told = _load(tree, [card])
    assert told == _load(tree) and told[0] is not None
    assert told[0].translations["ko"]["gpus/nvidia/rtx-2070.yaml"]["notes"].text == "시험용 카드입니다."
    assert told[0].translations["fr"]["gpus/nvidia/gtx-1060-6gb.yaml"]["notes"].text == "Une carte."


def _kind_loads(monkeypatch) -> list[str]:
    """The kinds loaded file by file from here on (a pass over every file of the kind)."""
    from generator.data.loader import _Loader

    loads, real = [], _Loader._load_kind
    monkeypatch.setattr(_Loader, "_load_kind", lambda self, kind, *a: loads.append(kind.name) or real(self, kind, *a))
    return loads


def test_a_record_edited_in_place_replaces_its_own_record_only_and_says_which_changed(tree, monkeypatch):
    """A file that keeps its id and its place is read and its record put in place of the last one,
    with no pass over the kind's other files; every other record is the last load's object, and
    the dataset names what changed since. Each answer is a full load's: an edit, a problem
    brought in and taken out, in a map (cards) and in a list (revisions)."""
    from generator.data.loader import changes

    second = tree.read("revisions/2019-04-03.yaml").replace("date: 2019-04-03", "date: 2020-01-02")
    tree.write("revisions/2020-01-02.yaml", second)
    first, _ = _load(tree)
    assert first is not None and changes(first) is None  # a full load does not know
    card, rev = tree.path("gpus/nvidia/rtx-2070.yaml"), tree.path("revisions/2019-04-03.yaml")
    loads = _kind_loads(monkeypatch)
    previous = first
    for path, old, new in ((card, "A fixture card.", "An edited fixture card."),
                           (card, "memory_gb: 8", "memory_gb: eight"),  # an error, then mended
                           (card, "memory_gb: eight", "memory_gb: 8"),
                           (rev, "date: 2019-04-03", "date: 2019-04-03\n# edited"),
                           (card, "tdp_w: 175", "tdp_w: 180")):
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        told = _load(tree, [path])
        assert loads == []
        monkeypatch.undo()
        assert told == _load(tree)
        loads = _kind_loads(monkeypatch)
        _load(tree, [])  # the full load above is not the last for what follows
        told = _load(tree, [path])
        if told[0] is None:
            assert any("memory_gb" in p for p in told[1])
            continue
        before, changed = changes(told[0])
        attr, ident = ("gpus", "rtx-2070") if path == card else ("revisions", "2019-04-03")
        assert changed == {attr: frozenset({ident})}
        ds = told[0]
        assert ds.gpus["gtx-1060-6gb"] is before.gpus["gtx-1060-6gb"]
        assert [r.id for r in ds.revisions] == ["2019-04-03", "2020-01-02"]
        assert ds.revisions[1] is before.revisions[1]
        previous = ds
    assert previous.gpus["rtx-2070"]["tdp_w"] == 180


def test_a_file_made_unreadable_or_mended_loads_its_kind_file_by_file(tree, monkeypatch):
    """A file that becomes unreadable, or readable again, is not a record edited in place: its
    kind is loaded file by file, the dataset does not claim to know what changed, and the answer
    is a full load's."""
    from generator.data.loader import changes

    _load(tree)
    card = tree.path("gpus/nvidia/rtx-2070.yaml")
    good = card.read_text(encoding="utf-8")
    for text in ("name: [unclosed\n", good):
        card.write_text(text, encoding="utf-8")
        loads = _kind_loads(monkeypatch)
        told = _load(tree, [card])
        monkeypatch.undo()
        assert loads == ["gpu"]
        assert told == _load(tree)
        if told[0] is not None:
            assert changes(told[0]) is None
        _load(tree, [])
    assert told[0] is not None and told[0].gpus["rtx-2070"]["name"] == "GeForce RTX 2070"


def test_a_duplicate_that_is_edited_is_loaded_file_by_file(tree, monkeypatch):
    """Two files give the same id, neither with an error of its own: the one listed second is
    reported, and an edit to it (it holds no record) loads the kind file by file; an edit to the first replaces its record. Both
    answers are a full load's."""
    text = tree.read("gpus/nvidia/rtx-2070.yaml")
    tree.write("gpus/amd/rtx-2070.yaml", text.replace("vendor: nvidia", "vendor: amd").replace('compute_capability: "7.5"\n', ""))
    first = _load(tree)
    assert first[0] is None and any("duplicate GPU id 'rtx-2070': also data/gpus/amd/rtx-2070.yaml" in p
                                    for p in first[1])
    for folder, expected in (("nvidia", ["gpu"]), ("amd", [])):
        path = tree.path(f"gpus/{folder}/rtx-2070.yaml")
        path.write_text(path.read_text(encoding="utf-8").replace("card.", "card, edited."), encoding="utf-8")
        loads = _kind_loads(monkeypatch)
        told = _load(tree, [path])
        monkeypatch.undo()
        assert loads == expected and told == _load(tree)
        _load(tree, [])


def test_a_reload_shares_the_tables_and_ids_that_did_not_change_and_never_changes_the_last(tree, monkeypatch):
    """A card's edit gives the translation tables of the last reload (the same objects) and the
    ids that exist as found then; a translation edited gives a new table for its language only,
    and the last dataset's table is left as it was. Each answer is a full load's."""
    from generator.data.loader import _Loader

    ko = "translations/ko/gpus/nvidia/rtx-2070.yaml"
    tree.write(ko, 'notes:\n  text: "시험용 카드입니다."\n  source: "000000000000"\n')
    _load(tree)
    card = tree.path("gpus/nvidia/rtx-2070.yaml")
    looked, real = [], _Loader.known_ids
    monkeypatch.setattr(_Loader, "known_ids", lambda self, name: looked.append(name) or real(self, name))
    dss = []
    for tdp in (180, 185):
        tree.write("gpus/nvidia/rtx-2070.yaml", tree.read("gpus/nvidia/rtx-2070.yaml").replace(
            f"tdp_w: {tdp - 5}" if tdp > 180 else "tdp_w: 175", f"tdp_w: {tdp}"))
        looked.clear()
        dss.append(_load(tree, [card])[0])
    assert dss[1].gpus["rtx-2070"]["tdp_w"] == 185
    assert all(dss[1].translations[lang] is dss[0].translations[lang] for lang in dss[0].translations)
    assert set(looked) <= {"persona"}  # the cards' ids were not gone through again
    monkeypatch.undo()
    tree.write(ko, 'notes:\n  text: "고친 시험용 카드입니다."\n  source: "000000000000"\n')
    told = _load(tree, [tree.path(ko)])
    now = told[0]
    assert now.translations["ko"] is not dss[1].translations["ko"]
    assert now.translations["ko"]["gpus/nvidia/rtx-2070.yaml"]["notes"].text == "고친 시험용 카드입니다."
    assert dss[1].translations["ko"]["gpus/nvidia/rtx-2070.yaml"]["notes"].text == "시험용 카드입니다."
    assert all(now.translations[lang] is dss[1].translations[lang] for lang in now.translations if lang != "ko")
    assert told == _load(tree)
