"""The static assets as the build writes them into each language's folder.

``docs/<lang>/`` and ``docs/assets/`` are copied as they are, the calculators' modules from their
folders (``templates/pages/site/calculators/<id>/*.mjs``) go beside the shared ones in
``assets/js/calc/``, and two assets get a part that follows from a table: the stylesheet's rules
per language (the locale table) and ``main.mjs``'s list of the calculators whose script reads the
client data (their ``calculator.yaml``). Each of those two files holds a marker comment where the
build writes its part.
"""
from __future__ import annotations

import json
from pathlib import Path

from generator.data.calculators import TEMPLATES, calculators
from generator.data.locales import DEFAULT_LANG, LOCALES

CALC_JS = Path("assets") / "js" / "calc"
# Fonts of the theme's Latin text, named before a language's own (the locale table's ``fonts``).
LATIN_FONTS = ("-apple-system", "BlinkMacSystemFont", "Helvetica", "Arial")


def locale_css() -> str:
    """The stylesheet's rules per language: word breaking, then font stacks."""
    lines = [f":lang({loc.code}) .md-typeset, .md-typeset :lang({loc.code}) {{ word-break: keep-all; overflow-wrap: anywhere; }}"
             for loc in LOCALES if loc.keep_words]
    lines += [f"html:lang({loc.code}) > body {{ --md-text-font-family: {', '.join(LATIN_FONTS + loc.fonts)}, sans-serif; }}"
              for loc in LOCALES if loc.fonts]
    return "\n".join(lines)


def client_data_calculators(templates: Path = TEMPLATES) -> str:
    """The ids of the calculators that read the client data, as a JavaScript list."""
    return json.dumps([c.id for c in calculators(templates) if c.client_data], separators=(", ", ": "))


# Asset -> its markers, each with what the build writes in its place.
FILLED = {
    "assets/css/whichgpu.css": {"/* locales */": lambda templates: locale_css()},
    "assets/js/calc/main.mjs": {"/* calculators that read the client data */": client_data_calculators,
                                "/* the default language */": lambda templates: json.dumps(DEFAULT_LANG)},
}


def static_files(static: Path, lang: str, templates: Path = TEMPLATES) -> list[tuple[Path, Path]]:
    """(source, path below the language's folder) of every static file of ``lang``: its own
    hand-written pages, the shared assets, then the calculators' modules."""
    out = []
    for src_dir, base in ((static / lang, static / lang), (static / "assets", static)):
        if src_dir.is_dir():
            out += [(src, src.relative_to(base)) for src in sorted(src_dir.rglob("*")) if src.is_file()]
    shared = {rel for _, rel in out}
    for calc in calculators(templates):
        for module in calc.modules:
            rel = CALC_JS / module.name
            if rel in shared:
                raise ValueError(f"{module}: {rel.as_posix()} is already a shared module or another calculator's")
            shared.add(rel)
            out.append((module, rel))
    return out


def static_bytes(src: Path, rel: Path, templates: Path = TEMPLATES) -> bytes:
    """A static file's content as the site serves it (with its generated part, if it has one)."""
    data = src.read_bytes()
    filled = FILLED.get(rel.as_posix())
    if filled is None:
        return data
    text = data.decode("utf-8")
    for marker, part in filled.items():
        if marker not in text:
            raise ValueError(f"{src}: the build writes a part of this file in place of {marker}, which is missing")
        text = text.replace(marker, part(templates), 1)
    return text.encode("utf-8")
