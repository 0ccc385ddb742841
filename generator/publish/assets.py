"""The static assets as the build writes them into each language's folder.

``docs/<lang>/`` and ``docs/assets/`` are copied as they are, the calculators' modules from their
folders (``templates/pages/site/calculators/<id>/*.mjs``) go beside the shared ones in
``assets/js/calc/``, and two assets get a part that follows from a table: the stylesheet's rules
per language (the locale table) and ``main.mjs``'s list of the calculators whose script reads the
client data (their ``calculator.yaml``). Each of those two files holds a marker comment where the
build writes its part.

The JavaScript modules (``*.mjs``) ship minified: the sources keep their comments and layout, the
site gets what the minifier makes of them (``shipped_modules``), the same for every language, each
module minified once and kept by the digest of its bytes (``reuse.MINIFIED``, and between builds
``build/cache/minified-js.json``). The minifier is the PyPI package ``minify-go`` (Go's
tdewolff/minify, imported as ``minify``), a requirement of the build (requirements.txt). It
renames local names only: a module's exported names, its top-level names and its file name stay.
"""
from __future__ import annotations

import hashlib
import json
import tempfile
from importlib import metadata
from pathlib import Path

from generator import reuse
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
    own = static / lang
    out = [(src, src.relative_to(own)) for src in sorted(own.rglob("*")) if src.is_file()] if own.is_dir() else []
    return out + shared_files(static, templates, {rel for _, rel in out})


def shared_files(static: Path, templates: Path = TEMPLATES, taken: frozenset | set = frozenset()) -> list[tuple[Path, Path]]:
    """(source, path below a language's folder) of the files every language has: the shared
    assets, then the calculators' modules (none of them at a path of ``taken`` or of another)."""
    assets = static / "assets"
    out = [(src, src.relative_to(static)) for src in sorted(assets.rglob("*")) if src.is_file()] if assets.is_dir() else []
    shared = set(taken) | {rel for _, rel in out}
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


# ------------------------------------------------------------------ minified modules

MINIFIER = "minify-go"  # the PyPI package; its module is ``minify``
MINIFIED_FILE = "minified-js.json"
# Go's minifier, for the newest ECMAScript it knows (0), local names shortened, numbers exact.
MINIFIER_SETTINGS = {"js-version": 0, "js-keep-var-names": False, "js-precision": 0}


def _missing() -> str:
    return f"the JavaScript minifier is missing: install the {MINIFIER} package of requirements.txt (`make venv`)"


class MinifyFailed(ValueError):
    """No minifier installed, or a module it cannot read (the message names the file)."""


def _minifier_key() -> str:
    """What every kept answer depends on besides the module: the minifier's version and settings."""
    try:
        version = reuse.PACKAGE_VERSIONS.get(MINIFIER, lambda: metadata.version(MINIFIER))
    except metadata.PackageNotFoundError:
        raise MinifyFailed(_missing()) from None
    settings = ", ".join(f"{k}={v}" for k, v in sorted(MINIFIER_SETTINGS.items()))
    return f"minified modules 1: {MINIFIER} {version} ({settings})"


def _minify(src: Path, data: bytes) -> str:
    try:
        import minify
    except ImportError:
        raise MinifyFailed(_missing()) from None
    minify.config(MINIFIER_SETTINGS)
    # through files: the package's string call writes into a buffer the size of its input
    with tempfile.TemporaryDirectory(prefix="whichgpu-minify-") as tmp:
        source, target = Path(tmp) / "in.mjs", Path(tmp) / "out.mjs"
        source.write_bytes(data)
        try:
            minify.file("text/javascript", str(source), str(target))
        except minify.MinifyError as exc:
            raise MinifyFailed(f"{src}: the JavaScript minifier cannot read this module: {exc}") from None
        text = target.read_text(encoding="utf-8")
    if data.strip() and not text.strip():
        raise MinifyFailed(f"{src}: the JavaScript minifier gave nothing for this module")
    return text


def shipped_modules(static: Path, templates: Path = TEMPLATES, cache: Path | None = None) -> dict[Path, bytes]:
    """Path below a language's folder -> the bytes the site ships, of every JavaScript module
    (``*.mjs``: the shared ones and the calculators'): the source with its generated part, minified.

    Each module is minified once per content: kept in memory by the digest of its bytes (a build
    minifies before its languages fork; the preview keeps them between steps) and in
    ``cache/minified-js.json`` between builds (``cache`` None: nothing kept in a file)."""
    key = _minifier_key()
    modules = [(src, rel, static_bytes(src, rel, templates))
               for src, rel in shared_files(static, templates) if rel.suffix == ".mjs"]
    digests = [hashlib.blake2b(data, digest_size=16).hexdigest() for _, _, data in modules]
    found = [reuse.MINIFIED.find((digest, key)) for digest in digests]
    if None in found:
        kept = reuse.Kept(cache / MINIFIED_FILE, key) if cache is not None else None
        for i, ((src, _rel, data), digest) in enumerate(zip(modules, digests, strict=True)):
            if kept is not None:
                if found[i] is None:
                    found[i] = kept.get(digest, lambda _q, src=src, data=data: _minify(src, data))
                else:
                    kept.keep(digest, found[i])
            elif found[i] is None:
                found[i] = _minify(src, data)
            reuse.MINIFIED.put((digest, key), found[i])
        if kept is not None:
            kept.save(keep_unused=False)  # the modules of this build, no other
    return {rel: text.encode("utf-8") for (_src, rel, _data), text in zip(modules, found, strict=True)}


def search_terms_json(ds, lang: str) -> str:
    """The search box's extra words for one language (data/search.yaml): word -> the words it also
    looks for, keys in lower case. Read by assets/js/search-terms.js on the first search."""
    terms = (ds.search_terms.data if ds.search_terms else {}).get(lang) or {}
    return json.dumps({"synonyms": {k.lower(): list(v) for k, v in terms.items()}},
                      ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
