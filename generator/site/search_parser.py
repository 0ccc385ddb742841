"""The theme's search indexer, with the same index in a fraction of the time.

mkdocs-material's search plugin reads every page through an HTML parser written in Python that
keeps a stack of open elements and a set of elements to skip. On each tag and each piece of text
it asks whether any open element is skipped by intersecting that set with the whole stack,
hashing every open element through a Python method; the parser underneath also counts lines and
columns of every tag, for error positions nothing asks for. Indexing took about half of a
language's MkDocs build.

- The theme's elements hash and compare by tag name alone, so both the skip set and every test
  against the stack are about tag names. ``TagCountingParser`` keeps a count of open elements per
  tag beside the same stack, answers each test from the counts, and skips the line counting.
  Everything else is the theme's code path: the sections, titles, text and their quirks (a
  closing tag of the same name as a skipped element ends the skipping) come out the same.
- About half of a page's markup sits in blocks marked data-search-exclude (charts, the tables of
  measurements), which the parser reads only to skip. ``strip_excluded`` empties those it would
  skip whole before the parse.

- Chinese text is segmented into words by jieba, whose dictionary alone takes about 0.6 s to load
  in each build. :func:`segment_chinese` keeps each text's segmentation in a file between builds
  (:func:`segments_key`: the theme's and jieba's versions), so a build whose Chinese text is
  unchanged loads no dictionary; a new text is segmented by the theme's own code.
- A page whose HTML did not change since the last build gives the sections it gave then:
  :func:`add_entry_from_context` keeps them in a file between builds (by a digest of the HTML;
  :func:`sections_key`: the theme's version and this module's code), so a build parses only the
  pages that changed.

``tests/test_search_parser.py`` checks all of it on every page of the four languages.
generator/site/mkdocs_adapter.py puts them in place of the theme's methods, on each build's search
index, for the theme versions it knows only.
"""
from __future__ import annotations

import hashlib
import re
from html import escape
from pathlib import Path

from backrefs import bre
from material.plugins.search.plugin import Element, Parser, Section, void

from generator import reuse
from generator.reuse import Kept as KeptAnswers

# Elements marked data-search-exclude that the indexer may drop before parsing (headings stay:
# an excluded heading excludes the section after it, which needs the parse).
_BLOCKS = ("div", "details", "svg", "table", "figure", "section")
_ATTR = r"""\s+([^\s"'>/=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?"""
_EXCLUDED_OPEN = re.compile(r"<(" + "|".join(_BLOCKS) + r")((?:" + _ATTR + r")*)\s*>")
_ATTR_NAME = re.compile(_ATTR)
_HEADINGS = frozenset(f"h{x}" for x in range(1, 7))
_KEEP_SKIPPED = frozenset(("script", "style", "object"))  # skipped from the start, never unskipped


def strip_excluded(html: str) -> str:
    """``html`` with the elements marked data-search-exclude that the theme's parser skips whole
    emptied: from the opening tag to the first closing tag of its name, when no element of that
    name opens in between (the theme stops skipping at the first such closing tag, so a nested
    one stays for the parser to read as the theme does) and no heading does (a heading starts a
    section even there). An empty element of the same name stays in its place, so the parser's
    state after it (the section a first tag opens) is the same."""
    out, pos, start = [], 0, 0
    while True:
        m = _EXCLUDED_OPEN.search(html, start)
        if m is None:
            break
        start = m.end()
        if "data-search-exclude" not in (a[1] for a in _ATTR_NAME.finditer(m[2])):
            continue
        tag = m[1]
        close = re.compile(rf"</{tag}\s*>").search(html, m.end())
        if close is None or re.compile(rf"<(?:{tag}|h[1-6])[\s>/]").search(html, m.end(), close.start()):
            continue
        out.append(html[pos:m.start()])
        out.append(f"<{tag} data-search-exclude></{tag}>")
        pos = start = close.end()
    out.append(html[pos:])
    return "".join(out)


class TagCountingParser(Parser):
    """material.plugins.search.plugin.Parser with the tag tests answered from counts."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.skip_tags = set(_KEEP_SKIPPED)
        self.open_tags: dict[str, int] = {}

    def updatepos(self, i, j):
        # html.parser counts lines and columns here for getpos(), which nothing reads
        return j

    def _skipping(self) -> bool:
        counts = self.open_tags
        return any(counts.get(tag) for tag in self.skip_tags)

    def _target(self) -> list:
        if self.open_tags.get(self.section.el.tag):
            return self.section.title
        return self.section.text

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in void:
            return
        el = Element(tag, attrs)
        self.context.append(el)
        self.open_tags[tag] = self.open_tags.get(tag, 0) + 1

        if tag in _HEADINGS:
            depth = len(self.context)
            if "id" in attrs:
                if tag != "h1" and not self.data:
                    self.section = Section(Element("hx"), depth)
                    self.data.append(self.section)
                self.section = Section(el, depth)
                if self.data:
                    self.section.id = attrs["id"]
                self.data.append(self.section)

        if not self.section:
            self.section = Section(Element("hx"))
            self.data.append(self.section)

        for key, value in attrs.items():
            if key == "data-search-exclude" or (key == "class" and value == "linenodiv"):
                self.skip_tags.add(tag)
                return

        if tag in self.keep and not self._skipping():
            self._target().append(f"<{tag}>")

    def handle_endtag(self, tag):
        if not self.context or self.context[-1].tag != tag:
            return

        if self.section.depth > len(self.context):
            for section in reversed(self.data):
                if section.depth <= len(self.context):
                    self.section.depth = float("inf")
                    self.section = section
                    break

        self.context.pop()
        self.open_tags[tag] -= 1
        if tag in self.skip_tags:
            if tag not in _KEEP_SKIPPED:
                self.skip_tags.discard(tag)
            return

        if tag in self.keep and not self._skipping():
            data = self._target()
            index = data.index(f"<{tag}>")
            for i in range(index + 1, len(data)):
                if not data[i].isspace():
                    index = len(data)
                    break
            if len(data) > index:
                while len(data) > index:
                    data.pop()
            else:
                data.append(f"</{tag}>")

    def handle_data(self, data):
        if self._skipping():
            return
        pre = bool(self.open_tags.get("pre"))
        if not pre:
            data = data.replace("\n", " ") if not data.isspace() else " "

        if not self.section:
            self.section = Section(Element("hx"))
            self.data.append(self.section)

        if self.open_tags.get(self.section.el.tag):
            permalink = any(el.tag == "a" and el.attrs.get("class") == "headerlink" for el in self.context)
            if not permalink:
                self.section.title.append(escape(data, quote=False))
        elif data.isspace():
            text = self.section.text
            if not text or not text[-1].isspace() or pre:
                text.append(data)
        else:
            self.section.text.append(escape(data, quote=False))


def segments_key(settings: str = "") -> str | None:
    """The key of the kept Chinese segmentation: the versions of the theme and jieba, and
    ``settings`` (the search plugin's dictionary settings); None without jieba (nothing to keep)."""
    try:
        import jieba
    except ImportError:
        return None
    from material import __version__

    return f"mkdocs-material {__version__}, jieba {jieba.__version__}, {settings or 'default dictionary'}"


def sections_key() -> str:
    """The key of the kept sections: the theme's version and this module's own code (a change to
    either parses every page again)."""
    from material import __version__

    return f"mkdocs-material {__version__}, parser {_own_code()}"


def _own_code() -> str:
    return reuse.CODE_DIGESTS.get(__file__, lambda: hashlib.blake2b(Path(__file__).read_bytes(),
                                                                     digest_size=12).hexdigest())


# The theme's pattern for a run of Han characters (backrefs' script property).
_HAN = bre.compile(r"(\p{script: Han}+)", bre.UNICODE)


def segment_chinese(theme_segment, segments: KeptAnswers, data: str) -> str:
    """The theme's ``SearchIndex._segment_chinese`` (``theme_segment``), each text's answer kept
    in ``segments``."""
    if not _HAN.search(data):
        return data.strip("\u200b")  # what the theme's substitution gives a text without Han characters
    return segments.get(data, theme_segment)


def add_entry_from_context(index, sections: KeptAnswers | None, page) -> None:
    """The theme's ``SearchIndex.add_entry_from_context`` of ``index``, parsing the page without
    the blocks it skips, or taking from ``sections`` what the last parse of the same HTML gave."""
    search = page.meta.get("search") or {}
    if search.get("exclude"):
        return
    html = page.content
    if sections is None:
        found = page_sections(html)
    else:
        digest = hashlib.blake2b(html.encode("utf-8"), digest_size=16).hexdigest()
        found = sections.get(digest, lambda _: page_sections(html))
    for ident, title, text in found:
        index.create_entry_for_section(_Kept(ident, list(title), [text]), page.toc, page.url, page)


def page_sections(html: str) -> list[list]:
    """[id, title parts, text] of each section of ``html`` the index takes, in order: what the
    theme's parser finds, kept as plain data."""
    parser = TagCountingParser()
    parser.feed(strip_excluded(html))
    parser.close()
    return [[section.id, list(section.title), "".join(section.text)]
            for section in parser.data if not section.is_excluded()]


class _Kept:
    """What ``create_entry_for_section`` reads of a section."""

    __slots__ = ("id", "title", "text")

    def __init__(self, ident, title: list, text: list):
        self.id, self.title, self.text = ident, title, text
