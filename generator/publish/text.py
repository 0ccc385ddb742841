"""Escaping at the edge and locale formatting.

Generated pages are Markdown that Python-Markdown turns into HTML, so a string from
``data/`` must survive two interpreters. ``escape_md`` writes every character that
either HTML or Markdown gives meaning to as a numeric character reference: the text
then reaches the reader as text, whatever it contains.
"""
from __future__ import annotations

import datetime as _dt
import functools
import html
import json
import re
import unicodedata

from markupsafe import Markup

from generator.data.locales import locale

# HTML metacharacters plus everything Markdown (and its extensions: tables, attr_list,
# admonitions, emphasis, links, code, footnotes, abbreviations) can act on.
_MD_SPECIAL = set("&<>\"'\\`*_{}[]()#+-.!|~:=^$%@")
_CONTROL_CATEGORIES = {"Cc", "Cf", "Zl", "Zp"}
_ALLOWED_CONTROLS = {"\n", "\t"}


def clean(text: str) -> str:
    """Drop control and format characters (bidi overrides, zero-width joiners...)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        ch for ch in text
        if ch in _ALLOWED_CONTROLS or unicodedata.category(ch) not in _CONTROL_CATEGORIES
    )


_ESCAPES = {ord(ch): f"&#{ord(ch)};" for ch in _MD_SPECIAL}
_ESCAPES.update({ord("\n"): " ", ord("\t"): " "})


def escape_md(value) -> Markup:
    """Text that renders literally in Markdown and in HTML, attributes included."""
    if isinstance(value, Markup):
        return value
    return _escape_str(value if type(value) is str else str(value))


@functools.lru_cache(maxsize=1 << 17)
def _escape_str(text: str) -> Markup:
    # Pages repeat the same interface texts and names thousands of times: escape each once.
    return Markup(clean(text).translate(_ESCAPES))


_HTML_EXTRA = {ord("\n"): " ", ord("\t"): " "}
_BRACES = {ord("{"): "&#123;", ord("}"): "&#125;"}


def escape_html(value) -> Markup:
    """Text for a raw HTML block (a chart and its table), which Markdown passes through untouched:
    the characters HTML gives a meaning to, attribute values included, and braces (no data string
    reads as template syntax anywhere, as with :func:`escape_md`)."""
    if isinstance(value, Markup):
        return value
    return _escape_html_str(value if type(value) is str else str(value))


@functools.lru_cache(maxsize=1 << 17)
def _escape_html_str(text: str) -> Markup:
    return Markup(html.escape(clean(text).translate(_HTML_EXTRA), quote=True).translate(_BRACES))


def escape_title(value) -> str:
    """For page titles and descriptions that the theme inserts without escaping."""
    text = " ".join(clean(str(value)).split())
    return html.escape(text, quote=True)


def yaml_str(value: str) -> str:
    """A YAML-safe scalar (JSON strings are valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def slug(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")


def format_number(value, lang: str, digits: int | None = None) -> str:
    """1234.5 -> '1,234.5' (en, ko, zh) or '1 234,5' (fr): separators from the locale table."""
    if value is None:
        return ""
    if digits is None:
        text = f"{value:,.3f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"
    else:
        text = f"{value:,.{digits}f}"
    loc = locale(lang)
    if (loc.group, loc.decimal) != (",", "."):
        text = text.replace(",", "\x00").replace(".", loc.decimal).replace("\x00", loc.group)
    return text


def format_date(value: _dt.date | str, lang: str, months: list[str]) -> str:
    """A long date in the reader's language; ``months`` are the 12 localized month names."""
    if isinstance(value, str):
        value = _dt.date.fromisoformat(value)
    loc = locale(lang)
    day = loc.first_day.format(day=value.day) if value.day == 1 else str(value.day)
    return loc.date.format(day=day, month=months[value.month - 1], month_number=value.month, year=value.year)
