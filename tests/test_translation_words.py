"""One spelling per language in the translations: French writes units as its records do (GB, GiB,
MB, MiB), and its texts get a no-break space before ? ! : ; (its typography) when they are read;
Korean says 파인튜닝 for fine-tuning and 토큰/초 for tokens per second."""
from __future__ import annotations

import re

import pytest
import yaml
from helpers import ROOT

TRANSLATIONS = ROOT / "data" / "translations"


def texts(lang: str):
    """(file, key, text) of every translated text of ``lang``."""
    for path in sorted((TRANSLATIONS / lang).rglob("*.yaml")):
        for key, entry in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("text"), str):
                yield path.relative_to(ROOT), key, entry["text"]


def test_french_units_are_spelled_as_the_records_spell_them():
    wrong = [(str(p), k, m.group(0)) for p, k, t in texts("fr") for m in re.finditer(r"(?<![\w.-])(?:Gio|Go|Mio|Mo)(?![\w-])", t)]
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("typed, set_", [
    ("Pourquoi ? Parce que : oui ; non !", "Pourquoi\u202f? Parce que\u00a0: oui\u202f; non\u202f!"),
    ("la date « De » plus ancienne", "la date «\u00a0De\u00a0» plus ancienne"),
    ("{gpu} : {gib} GiB", "{gpu}\u00a0: {gib} GiB"),
    ("https://example.org:8080/a?b=c", "https://example.org:8080/a?b=c"),
])
def test_french_high_punctuation_keeps_its_word(typed, set_):
    from generator.data.locales import LANGS, typeset

    assert typeset(typed, "fr") == set_
    for other in LANGS:
        if other != "fr":
            assert typeset(typed, other) == typed


def test_french_texts_get_their_no_break_spaces_when_read():
    from generator.data.dataset import Localizer
    from generator.data.loader import load_dataset

    ds, _ = load_dataset(ROOT / "data", ROOT)
    text = Localizer(ds, "fr").ui("diffs.reversed")
    assert " :" not in text and "\u00a0:" in text and "«\u00a0" in text


@pytest.mark.parametrize("word, instead", [("미세 조정", "파인튜닝"), ("미세조정", "파인튜닝"), ("tokens/s", "토큰/초")])
def test_korean_says_one_thing_one_way(word, instead):
    found = [(str(p), k) for p, k, t in texts("ko") if word in t]
    assert not found, f"{word} in {found[:5]}: write {instead}"
