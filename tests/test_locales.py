"""The locale table: every language the site knows comes from generator/locales.py, so a language
added there (plus its translations folder) is known to the validator, the commands, the pages,
the language menu and the formatting, with no other change."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

from generator.data.locales import LANGS, LOCALES, TRANSLATED_LANGS, locale
from generator.publish.text import format_date, format_number

ADD_GERMAN = """
import generator.data.locales as L
L.LOCALES = L.LOCALES + (L.Locale("de", "de", "Deutsch", decimal=",", group=".", date="{day}. {month} {year}"),)
L.BY_CODE = {loc.code: loc for loc in L.LOCALES}
L.LANGS = tuple(loc.code for loc in L.LOCALES)
L.TRANSLATED_LANGS = L.LANGS[1:]
"""


def test_the_table_is_the_list_of_languages():
    assert LANGS == tuple(loc.code for loc in LOCALES) and LANGS[0] == "en"
    assert TRANSLATED_LANGS == LANGS[1:]
    for code in TRANSLATED_LANGS:
        assert (ROOT / "data" / "translations" / code / "ui.yaml").is_file()
    assert locale("zh").html_lang == "zh-Hans"
    assert format_number(1234.5, "fr") == "1\u202f234,5" and format_number(1234.5, "en") == "1,234.5"
    months = [f"m{i}" for i in range(1, 13)]
    assert format_date("2023-01-01", "fr", months) == "1er m1 2023"
    assert format_date("2023-01-30", "ko", months) == "2023년 1월 30일"


def test_a_language_added_to_the_table_is_known_everywhere(tree):
    tree.use_real_ui()
    tree.write("translations/de/ui.yaml", '"nav.home":\n  text: "Start"\n  source: "000000000000"\n')
    script = ADD_GERMAN + f"""
from pathlib import Path
from generator.data.loader import load_dataset
from generator.publish.render import alternates
from generator.publish.text import format_number
from generator.cli.main import main
ds, problems = load_dataset(Path({str(tree.data)!r}), Path({str(tree.root)!r}))
out = {{
    "problems": [str(p) for p in problems if p.level == "error"],
    "translations": sorted(ds.translations) if ds else None,
    "menu": [a["name"] for a in alternates("en")],
    "number": format_number(1234.5, "de"),
}}
from generator.site.pipeline import Paths, generate
generate(ds, Paths(data=Path({str(tree.data)!r}), build=Path({str(tree.root)!r}, "build")), ["de"])
out["pages"] = len(list(Path({str(tree.root)!r}, "build", "docs", "de").rglob("*.md")))
try:
    main(["build", "--lang", "de", "--lang", "xx"])
except SystemExit as exc:  # argparse refuses "xx" (exit 2) after accepting "de"
    out["cli"] = exc.code
print(json.dumps(out))
"""
    result = subprocess.run([sys.executable, "-c", "import json\n" + script], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["problems"] == [], out
    assert "de" in out["translations"]
    assert out["menu"][-1] == "Deutsch"
    assert out["number"] == "1.234,5"
    assert out["pages"] > 5  # its pages render
    assert out["cli"] == 2 and "invalid choice: 'xx'" in result.stderr and "'de'" in result.stderr


def test_an_unknown_translations_folder_is_reported(tree):
    tree.write("translations/xx/ui.yaml", '"nav.home":\n  text: "x"\n  source: "000000000000"\n')
    problems = tree.problems()
    assert any(p.startswith("data/translations/xx:1: translations are kept per language: one of ") for p in problems), problems
