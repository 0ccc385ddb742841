"""The search indexer's parser (generator/site/search_parser.py) reads pages exactly as the theme's does."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EPOCH
from material.plugins.search import plugin

from generator.reuse import Kept as KeptAnswers
from generator.site import search_parser


def sections(parser_class, html: str) -> list[tuple]:
    p = parser_class()
    p.feed(html)
    p.close()
    return [(s.el.tag, s.id, s.depth, list(s.title), list(s.text), s.is_excluded()) for s in p.data]


def indexed(parser_class, html: str) -> list[tuple]:
    """The sections the index keeps."""
    return [s[:5] for s in sections(parser_class, html) if not s[5]]


def article(page: str) -> str:
    return page[page.find("<article"):page.rfind("</article>") + len("</article>")]


@pytest.fixture(scope="module")
def parsers():
    # the theme's own class, also where an earlier build in this process installed the other
    return search_parser.Parser, search_parser.TagCountingParser


QUIRKS = [
    # text before any heading, a heading with a permalink, kept tags, whitespace runs
    '<p>lead\n text</p><h2 id="a">Title <a class="headerlink" href="#a">¶</a></h2><ul><li> x </li><li>  </li></ul>',
    # an excluded block inside others of its tag; a closing tag of the same name ends the skipping early
    '<div><div data-search-exclude><div>hidden</div> shown again</div> after</div><p>end</p>',
    # scripts and styles stay skipped; an excluded script does not unskip them
    '<p>a<script>var x = "<p>";</script>b</p><script data-search-exclude>y</script><style>p{}</style><p>c</p>',
    # pre keeps its whitespace and newlines; code inside a title
    '<h1 id="t">Top <code>x</code></h1><pre><code>a\n\n  b</code></pre>\n\n<p>  </p>',
    # nested headings, void tags, a heading without id, a table, stray closing tags
    '<div><h3 id="n">Nested</h3><p>in<br>side</p></div><p>out</p><h4>no id</h4><table><tr><td>1</td></tr></table></span>',
    '<div class="linenodiv"><pre>1\n2</pre></div><p>after lines</p><h2 id="b">B</h2><sub>2</sub><sup></sup>',
]


@pytest.mark.parametrize("html", QUIRKS)
def test_the_counting_parser_matches_the_theme_on_its_quirks(parsers, html):
    original, fast = parsers
    assert sections(fast, html) == sections(original, html)


def test_the_counting_parser_matches_the_theme_on_every_page_of_the_site(built_site, parsers):
    """Every built page of every language, whole (header, navigation and footer included)."""
    site, _ = built_site
    original, fast = parsers
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 400
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert sections(fast, html) == sections(original, html), page.relative_to(site)


@pytest.mark.parametrize(("html", "stripped"), [
    ('<p>a</p><div class="x" data-search-exclude><p>chart</p></div><p>b</p>',
     "<p>a</p><div data-search-exclude></div><p>b</p>"),
    # first on the page: the empty element left in its place opens the page's first section, as the whole did
    ('<svg data-search-exclude viewBox="0 0 1 1"><text>t</text></svg><h2 id="n">N</h2>',
     '<svg data-search-exclude></svg><h2 id="n">N</h2>'),
    # a heading inside starts a section even where nothing is read: the block stays
    ('<div data-search-exclude><h3 id="h">H</h3><p>x</p></div><p>y</p>',
     '<div data-search-exclude><h3 id="h">H</h3><p>x</p></div><p>y</p>'),
    # a nested element of the same name: the theme reads on after its closing tag, so it stays
    ('<div data-search-exclude><div>a</div>b</div>', '<div data-search-exclude><div>a</div>b</div>'),
    # the name in a value, a longer attribute name, an excluded heading: untouched
    ('<div title="data-search-exclude"><p>k</p></div>', '<div title="data-search-exclude"><p>k</p></div>'),
    ('<div data-search-excluded><p>k</p></div>', '<div data-search-excluded><p>k</p></div>'),
    ('<h2 id="c" data-search-exclude>C</h2><p>under</p>', '<h2 id="c" data-search-exclude>C</h2><p>under</p>'),
])
def test_blocks_the_theme_skips_are_dropped_before_parsing(parsers, html, stripped):
    original, fast = parsers
    assert search_parser.strip_excluded(html) == stripped
    assert indexed(fast, stripped) == indexed(original, html)


def test_every_page_indexes_the_same_without_its_skipped_blocks(built_site, parsers):
    """The content of every built page of every language: what the index keeps is the same when
    the blocks marked data-search-exclude are dropped before the parse, and most of them are."""
    site, _ = built_site
    original, fast = parsers
    before = after = 0
    for page in sorted(site.rglob("*.html")):
        html = article(page.read_text(encoding="utf-8"))
        lean = search_parser.strip_excluded(html)
        before, after = before + len(html), after + len(lean)
        assert indexed(fast, lean) == indexed(original, html), page.relative_to(site)
    assert after < 0.8 * before


def test_a_builds_index_segments_chinese_through_the_kept_answers(tmp_path):
    """The adapter replaces the segmenter of a build's own index (the theme's class keeps its
    own): a text is segmented by the theme's code once, then taken from the kept answers; a text
    without Han characters is never segmented."""
    from types import SimpleNamespace

    from generator.site import mkdocs_adapter

    calls = []

    def theme_segment(text):
        calls.append(text)
        return "\u200b" + "\u200b".join(text) + "\u200b"

    theme_class = plugin.SearchIndex._segment_chinese
    index = SimpleNamespace(_segment_chinese=theme_segment)
    mkdocs_adapter.segment_through_kept(index, KeptAnswers(tmp_path / "segments.json", "v1"))
    assert [index._segment_chinese(t) for t in ("中文", "中文", "\u200bplain\u200b")] == [
        "\u200b中\u200b文\u200b"] * 2 + ["plain"]
    assert calls == ["中文"]
    assert plugin.SearchIndex._segment_chinese is theme_class


def test_kept_answers_answer_each_question_once_per_key(tmp_path):
    calls = []

    def segment(text):
        calls.append(text)
        return text.replace("中", "\u200b中\u200b")

    path = tmp_path / "segments.json"
    cache = KeptAnswers(path, "v1")
    assert [cache.get(t, segment) for t in ("一中", "一中", "二中")] == ["一\u200b中\u200b"] * 2 + ["二\u200b中\u200b"]
    assert calls == ["一中", "二中"]
    cache.save(keep_unused=False)
    again = KeptAnswers(path, "v1")
    assert again.get("一中", segment) == "一\u200b中\u200b" and calls == ["一中", "二中"]
    again.save(keep_unused=True)  # a build of a few pages keeps what it did not use
    assert set(json.loads(path.read_text(encoding="utf-8"))["answers"]) == {"一中", "二中"}
    again.get("一中", segment)
    again.save(keep_unused=False)  # a full build keeps only what it used
    assert set(json.loads(path.read_text(encoding="utf-8"))["answers"]) == {"一中"}
    other = KeptAnswers(path, "v2")  # another theme or jieba version: nothing reused
    other.get("一中", segment)
    assert calls == ["一中", "二中", "一中"]
    path.write_text("{not json", encoding="utf-8")
    assert KeptAnswers(path, "v1").known == {}


def test_a_build_of_a_few_pages_writes_the_kept_answers_only_when_it_found_a_new_one(tmp_path, monkeypatch):
    """The preview's build of one page asks a few known questions: nothing is written then; a new
    answer, or a known question answered otherwise, is written with every other answer."""
    path = tmp_path / "segments.json"
    first = KeptAnswers(path, "v1")
    for text in ("一", "二", "三"):
        first.get(text, str.upper)
    first.save(keep_unused=False)
    again = KeptAnswers(path, "v1")
    writes, real = [], Path.write_text
    monkeypatch.setattr(Path, "write_text", lambda self, *a, **k: writes.append(self) or real(self, *a, **k))
    again.get("二", str.upper)
    again.save(keep_unused=True)
    assert writes == []
    again.keep("二", "other")
    again.get("四", str.upper)
    again.save(keep_unused=True)
    assert len(writes) == 1
    assert json.loads(path.read_text(encoding="utf-8"))["answers"] == {"一": "一", "二": "other", "三": "三", "四": "四"}


def test_a_page_is_parsed_again_only_when_its_html_or_the_parser_changed(tmp_path, monkeypatch):
    """The sections of a page's HTML come from the kept parse of the same HTML, and give the
    index the same entries as a parse; new HTML, or another parser, is parsed."""
    from types import SimpleNamespace

    from generator.site import mkdocs_adapter

    parsed, real = [], search_parser.page_sections
    monkeypatch.setattr(search_parser, "page_sections", lambda html: parsed.append(html) or real(html))
    entries = []
    index = SimpleNamespace(create_entry_for_section=lambda section, toc, url, page:
                            entries.append((section.id, "".join(section.title), "".join(section.text), url)))

    def index_page(html, sections):
        entries.clear()
        mkdocs_adapter.index_from_kept_sections(index, sections)
        index.add_entry_from_context(SimpleNamespace(meta={}, content=html, toc=[], url="p/"))
        return list(entries)

    path = tmp_path / "sections.json"
    html = QUIRKS[0] + QUIRKS[3]
    plain = index_page(html, None)  # nothing kept: parsed
    kept = KeptAnswers(path, search_parser.sections_key())
    assert index_page(html, kept) == plain and len(parsed) == 2
    assert index_page(html, kept) == plain and len(parsed) == 2  # kept
    kept.save(keep_unused=False)
    kept = KeptAnswers(path, search_parser.sections_key())  # read back from the file, as the next build does
    assert index_page(html, kept) == plain and len(parsed) == 2
    assert index_page(html + "<p>more</p>", kept) != plain and len(parsed) == 3
    kept.save(keep_unused=False)
    monkeypatch.setattr(search_parser, "_own_code", lambda: "another parser")
    assert index_page(html, KeptAnswers(path, search_parser.sections_key())) == plain and len(parsed) == 4


def test_a_chinese_build_reuses_the_segmentation_and_the_sections_of_the_last(tmp_path, monkeypatch):
    """A second build of the Chinese site with the same text segments nothing (jieba is not
    called, so its dictionary is not loaded) and parses no page, and its search index is the
    same, byte for byte."""
    import jieba

    from generator.site.pipeline import Paths, build_site

    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    build_site(Paths(build=tmp_path / "build", site=tmp_path / "a"), ("zh",))
    saved = json.loads((tmp_path / "build" / ".cache" / "search-segments-zh.json").read_text(encoding="utf-8"))
    assert len(saved["answers"]) > 100

    def no_jieba(*args, **kwargs):
        raise AssertionError("jieba or the page parser was called")

    monkeypatch.setattr(jieba, "cut", no_jieba)
    monkeypatch.setattr(search_parser, "page_sections", no_jieba)  # and no page is parsed again
    build_site(Paths(build=tmp_path / "build", site=tmp_path / "b"), ("zh",))
    first, second = ((tmp_path / s / "zh" / "search" / "search_index.json").read_bytes() for s in ("a", "b"))
    assert first == second and "\u200b".encode() in first
