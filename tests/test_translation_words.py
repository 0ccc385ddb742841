"""One spelling per language in the translations: French writes units as its records do (GB, GiB,
MB, MiB) and keeps a no-break space before ? ! : ; (its typography); Korean says 파인튜닝 for
fine-tuning and 토큰/초 for tokens per second."""
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


def test_french_keeps_a_no_break_space_before_high_punctuation():
    loose = [(str(p), k, t[max(0, m.start() - 20):m.end()]) for p, k, t in texts("fr")
             for m in re.finditer(r" [?!;]| :(?=\s|$)|« | »", t)]
    assert not loose, loose[:10]


@pytest.mark.parametrize("word, instead", [("미세 조정", "파인튜닝"), ("미세조정", "파인튜닝"), ("tokens/s", "토큰/초")])
def test_korean_says_one_thing_one_way(word, instead):
    found = [(str(p), k) for p, k, t in texts("ko") if word in t]
    assert not found, f"{word} in {found[:5]}: write {instead}"
