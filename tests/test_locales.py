"""The locale table: every language the site knows comes from generator/data/locales.py, so a language
added there (plus its translations folder) is known to the validator, the commands, the pages,
the language menu and the formatting, with no other change."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

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


# ------------------------------------------------------------------ no language named elsewhere

# Where a language may be named: the table, and each language's own folders.
TABLE = Path("generator") / "data" / "locales.py"
SCANNED = ("generator", "docs/assets", "templates")


def _named_codes() -> list[str]:
    """The codes and lang attributes of the translated languages, longest first. The default
    language is also the language the data is written in; it is named as such (DEFAULT_LANG)."""
    named = {t for loc in LOCALES if loc.code in TRANSLATED_LANGS for t in (loc.code, loc.html_lang)}
    return sorted(named, key=len, reverse=True)


def _python_literals(path) -> list[tuple[int, str]]:
    """String literals of a Python file (docstrings included) with their line numbers."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _hard_coded_languages(root: Path = ROOT) -> list[str]:
    import re

    alt = "|".join(re.escape(code) for code in _named_codes())
    literal = re.compile(rf"^(?:{alt})(?:[-/].*)?$", re.S)  # a Python string that is a code or starts a path with one
    text = re.compile(rf"""(["'`])(?:{alt})(?:[-/][^"'`\s]*)?\1|:lang\((?:{alt})\b""")  # "fr", 'ko/…', :lang(zh)
    folders = [root / "docs" / code for code in TRANSLATED_LANGS]
    found = []
    for top in SCANNED:
        for path in sorted((root / top).rglob("*")):
            if not path.is_file() or path == root / TABLE or any(path.is_relative_to(f) for f in folders):
                continue
            # golden cases are test inputs, typed in one language or another; they do not ship
            if path.name == "cases.json" or path.suffix in (".pyc", ".svg", ".png", ".ico", ".woff2"):
                continue
            rel = path.relative_to(root).as_posix()
            if path.suffix == ".py":
                found += [f"{rel}:{line}: {value!r}" for line, value in _python_literals(path) if literal.match(value)]
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            found += [f"{rel}:{i}: {line.strip()[:120]}" for i, line in enumerate(lines, 1) if text.search(line)]
    return found


def test_no_language_is_named_outside_the_table_and_its_folders():
    """A language added to the table needs nothing else in the code: no module, script,
    stylesheet or template names a translated language's code."""
    assert _named_codes()
    found = _hard_coded_languages()
    assert not found, "name the language in generator/data/locales.py instead:\n" + "\n".join(found)


def test_the_check_finds_a_named_language(tmp_path):
    code = TRANSLATED_LANGS[-1]
    files = {"templates/pages/a.j2": f'{{% if c.lang == "{code}" %}}x{{% endif %}}\n',
             "docs/assets/js/b.mjs": f'if (lang === "{code}") x();\n',
             "docs/assets/css/c.css": f":lang({code}) p {{ x: y; }}\n",
             "generator/d.py": f'ORDER = ("{code}",)\n',
             "generator/e.py": f'"""An example: ``{code}`` in a sentence, not a literal of its own."""\n',
             f"docs/{code}/f.md": f'"{code}"\n', str(TABLE): f'X = "{code}"\n'}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    found = {f.split(":")[0] for f in _hard_coded_languages(tmp_path)}
    assert found == {"templates/pages/a.j2", "docs/assets/js/b.mjs", "docs/assets/css/c.css", "generator/d.py"}


def test_the_build_order_follows_the_weights():
    from generator.data.locales import build_order
    from generator.site.pipeline import BUILD_ORDER

    assert sorted(BUILD_ORDER) == sorted(LANGS)
    weights = [locale(code).build_weight for code in BUILD_ORDER]
    assert weights == sorted(weights, reverse=True)
    assert build_order(["xx", *LANGS])[-1] == "xx"  # an unknown language last


def test_the_stylesheet_rules_come_from_the_table():
    from generator.publish.assets import static_bytes

    css = static_bytes(ROOT / "docs" / "assets" / "css" / "whichgpu.css", Path("assets/css/whichgpu.css")).decode("utf-8")
    assert "/* locales */" not in css
    for loc in LOCALES:
        if loc.fonts:
            assert f"html:lang({loc.code}) > body {{ --md-text-font-family:" in css and loc.fonts[0] in css, loc.code
        assert (f":lang({loc.code}) .md-typeset" in css) == loc.keep_words, loc.code


def test_the_scripts_read_numbers_with_the_tables_decimal_mark():
    """The calculators parse what a reader types with the decimal mark of the page's language as
    the browser's number formatting has it (formulas.mjs, decimalMark); that must be the table's."""
    import shutil

    node = shutil.which("node")
    assert node, "node is needed for the calculators' JavaScript"
    module = (ROOT / "docs" / "assets" / "js" / "calc" / "formulas.mjs").as_uri()
    script = (f"import {{ decimalMark, normalizeNumber }} from {json.dumps(module)};\n"
              f"const langs = {json.dumps(list(LANGS))};\n"
              "console.log(JSON.stringify(langs.map((l) => [decimalMark(l), normalizeNumber(`1${decimalMark(l)}5`, l)])));")
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    for code, (mark, parsed) in zip(LANGS, json.loads(done.stdout), strict=True):
        assert mark == locale(code).decimal, code
        assert parsed == "1.5", code
