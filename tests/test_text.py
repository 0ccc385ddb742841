"""Escaping and locale formatting (generator/publish/text.py)."""
from __future__ import annotations

import datetime as _dt
import html

import markdown
import pytest

from generator.publish.text import clean, escape_md, escape_title, format_date, format_number

MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]
MONTHS_FR = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
             "septembre", "octobre", "novembre", "décembre"]


def render(text: str) -> str:
    return markdown.markdown(text, extensions=["tables", "attr_list", "md_in_html", "admonition"])


@pytest.mark.parametrize("value", [
    "<script>alert(1)</script>", "[x](javascript:alert(1))", "*bold* _it_ `code`", "# heading",
    "a | b | c", "\\| escaped pipe", "&amp; &lt;", "{: .class }", "!!! note", "1. list", "- item",
    "<!-- comment -->", "http://example.org/<b>", "x\ny\n\nz",
])
def test_escaped_text_renders_as_the_same_text(value):
    rendered = render(f"<p>{escape_md(value)}</p>\n\nbefore {escape_md(value)} after")
    assert "<script" not in rendered and "<b>" not in rendered and "href" not in rendered
    assert "<strong>" not in rendered and "<em>" not in rendered and "<code>" not in rendered
    expected = " ".join(value.split())
    text = html.unescape(rendered)
    assert expected in " ".join(text.split())


def test_escaped_cell_keeps_the_table_shape():
    for cell in ["a | b", "\\|", "x\\|y|z", "|"]:
        rendered = render(f"| h1 | h2 |\n|---|---|\n| {escape_md(cell)} | x |\n")
        assert rendered.count("<td>") == 2, cell
        assert html.unescape(rendered.split("<td>")[1].split("</td>")[0]) == cell


def test_clean_drops_bidi_and_zero_width_but_keeps_text():
    assert clean("a\u202eb\u200bc\u2066d\ne\tf") == "abcd\ne\tf"
    assert clean("한국어 简体 français") == "한국어 简体 français"


def test_title_escape_is_html_safe_and_one_line():
    assert escape_title('a <b> "c"\n & d') == "a &lt;b&gt; &quot;c&quot; &amp; d"


@pytest.mark.parametrize("value, lang, expected", [
    (1234.5, "en", "1,234.5"), (1234.5, "fr", "1\u202f234,5"), (0.175, "ko", "0.175"),
    (448, "zh", "448"), (7.465, "fr", "7,465"), (12.0, "en", "12"), (None, "en", ""),
])
def test_format_number(value, lang, expected):
    assert format_number(value, lang) == expected


@pytest.mark.parametrize("lang, months, expected", [
    ("en", MONTHS_EN, "3 April 2019"), ("fr", MONTHS_FR, "3 avril 2019"),
    ("ko", MONTHS_EN, "2019년 4월 3일"), ("zh", MONTHS_EN, "2019年4月3日"),
])
def test_format_date(lang, months, expected):
    assert format_date(_dt.date(2019, 4, 3), lang, months) == expected


def test_french_first_of_the_month():
    assert format_date("2015-02-01", "fr", MONTHS_FR) == "1er février 2015"
