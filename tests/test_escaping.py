"""Escaping per context, checked over every built page of every language: attribute names never
hold a character reference, visible text never shows one, and no raw field name stands where a
label belongs."""
from __future__ import annotations

import re
from html.parser import HTMLParser

from generator.data.schema import SOURCED_FIELDS

NAME_OK = re.compile(r"^[a-z][a-z0-9_:.-]*$")
SKIP_TEXT = {"script", "style", "textarea"}  # code is visible text too: a reference there shows
FIELD_WORDS = re.compile(r"\b(" + "|".join(f for f in SOURCED_FIELDS if "_" in f) + r")\b")


class Scan(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad_names, self.bad_text, self.fields, self.stack = [], [], [], []

    def handle_starttag(self, tag, attrs):
        for name, _value in attrs:
            if not NAME_OK.match(name):
                self.bad_names.append(f"<{tag} {name}>")
        if tag not in ("br", "img", "input", "meta", "link", "hr", "source", "wbr", "col", "area", "base", "embed",
                       "param", "track"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if set(self.stack) & SKIP_TEXT:
            return
        if "&#" in data or "&amp;#" in data:
            self.bad_text.append(data.strip()[:80])
        if m := FIELD_WORDS.search(data):
            self.fields.append(m.group(1))


def _scan(path):
    s = Scan()
    s.feed(path.read_text(encoding="utf-8"))
    return s


def _rel(site, p):
    return str(p.relative_to(site))


def test_no_character_reference_in_names_or_visible_text_on_any_page(built_site):
    site, _ds = built_site
    names, texts = [], []
    for path in sorted(site.rglob("*.html")):
        s = _scan(path)
        names += [f"{_rel(site, path)}: {n}" for n in s.bad_names]
        texts += [f"{_rel(site, path)}: {t}" for t in s.bad_text]
    assert not names, names[:10]
    assert not texts, texts[:10]


def test_gpu_pages_label_fields_instead_of_printing_their_names(built_site):
    site, _ds = built_site
    found = []
    for lang in ("", "ko/", "zh/", "fr/"):
        for path in sorted((site / lang / "gpus").glob("*/index.html")):
            s = _scan(path)
            found += [f"{_rel(site, path)}: {f}" for f in s.fields]
    assert not found, found[:10]


def test_today_rows_carry_their_figures_in_values_not_in_attribute_names(built_site):
    site, _ds = built_site
    for lang in ("", "ko/", "zh/", "fr/"):
        html = (site / lang / "today" / "index.html").read_text(encoding="utf-8")
        rows = re.findall(r"<tr data-gpu=\"([a-z0-9-]+)\"[^>]*data-values=\"([^\"]*)\"", html)
        assert len(rows) >= 20, lang
        assert "data-pd-" not in html


def test_revisions_list_names_the_best_card_of_flowchart_revisions(built_site):
    site, _ds = built_site
    html = (site / "revisions" / "index.html").read_text(encoding="utf-8")
    for date in ("2023-01-30", "2023-01-16", "2020-09-20"):
        row = re.search(rf'<tr id="r{date}">(.*?)</tr>', html, re.S)
        assert row and "/gpus/" in row.group(1).split("</td>")[1], date


def test_a_card_advised_used_is_never_priced_at_its_launch_price(built_site):
    site, _ds = built_site
    for lang in ("", "ko/", "zh/", "fr/"):
        html = (site / lang / "latest" / "index.html").read_text(encoding="utf-8")
        for leaf in re.findall(r"<p>(.*?)</p>", html, re.S):
            if "(used)" in leaf or "(중고)" in leaf or "（二手）" in leaf or "(occasion)" in leaf:
                assert "wg-price" not in leaf or "launch" not in leaf, leaf
