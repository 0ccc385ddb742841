"""Rendering: translation status, placeholders, and the same pages in every language."""
from __future__ import annotations

import pytest
from helpers import ROOT
from markupsafe import Markup

from generator.data.locales import LANGS


@pytest.fixture
def dataset(tree):
    import shutil

    from generator.data.loader import load_dataset

    shutil.copyfile(ROOT / "data" / "ui.yaml", tree.data / "ui.yaml")
    (tree.data / "translations" / "ko" / "ui.yaml").unlink()
    ds, problems = load_dataset(tree.data, tree.root)
    assert ds is not None, problems
    return ds


def test_localizer_status(dataset):
    from generator.data.dataset import Localizer

    rev = dataset.revision("2019-04-03")
    assert Localizer(dataset, "en").field(rev, ("summary",)) == ("A fixture revision.", "source")
    assert Localizer(dataset, "ko").field(rev, ("summary",)) == ("시험용 개정판입니다.", "ok")
    assert Localizer(dataset, "zh").field(rev, ("summary",)) == ("A fixture revision.", "missing")


def test_stale_translation_is_shown_with_a_mark(dataset, tree):
    from generator.data.loader import load_dataset
    from generator.publish.render import Context

    tree.set("revisions/2019-04-03.yaml", "summary", "A changed fixture revision.")
    ds, _ = load_dataset(tree.data, tree.root)
    out = Context(ds, "ko").t(ds.revision("2019-04-03"), "summary")
    assert out.startswith("시험용 개정판입니다&#46;") and "wg-i18n--stale" in out


def test_missing_translation_is_english_marked_as_such(dataset):
    from generator.publish.render import Context

    out = Context(dataset, "zh").t(dataset.revision("2019-04-03"), "summary")
    assert out.startswith('<span lang="en">A fixture revision&#46;</span>')


def test_fill_keeps_links_and_escapes_the_rest(dataset):
    from generator.publish.render import Context

    c = Context(dataset, "en")
    out = c.fill("revision.old_body", date=c.link("3 April 2019", "2019-04-03.md"))
    assert "[3 April 2019](2019-04-03.md)" in out
    assert out.startswith("The advice has been revised since;")
    assert c.fill_plain("revision.heading", date="3 April 2019") == "Advice of 3 April 2019"


def test_gpu_link_refuses_anything_but_an_id(dataset):
    from generator.publish.render import Context, safe_id

    assert Context(dataset, "en").gpu_link("rtx-2070") == Markup("[GeForce RTX 2070](../gpus/rtx-2070.md)")
    with pytest.raises(ValueError):
        safe_id('x" onmouseover="alert(1)')


def test_every_language_renders_the_same_pages(dataset):
    from generator.publish.render import render_language

    paths = {lang: [p.path for p in render_language(dataset, lang, ROOT / "templates" / "pages")]
             for lang in LANGS}
    assert paths["en"] == paths["ko"] == paths["zh"] == paths["fr"]
    assert "revisions/2019-04-03.md" in paths["en"] and "latest/index.md" in paths["en"]


def test_nav_titles_are_escaped(dataset):
    from generator.publish.render import nav

    entries = nav(dataset, "en")
    assert list(entries[0]) == ["Home"]
    assert entries[2]["Revisions"][1] == {"3 April 2019": "revisions/2019-04-03.md"}


def test_page_kinds_come_from_one_registry(tmp_path):
    """Every page the site renders belongs to a registered kind or is a stand-alone site page, and a
    new kind is one registry entry: rendering and the sidebar pick it up."""
    import shutil

    from helpers import ROOT

    from generator.data.loader import load_dataset
    from generator.publish import pages as registry
    from generator.publish.render import nav, render_language, site_page_templates

    ds, _ = load_dataset(ROOT / "data", ROOT)
    templates = tmp_path / "pages"
    shutil.copytree(ROOT / "templates" / "pages", templates)
    (templates / "extra.md.j2").write_text("# {{ c.ui('nav.gpus') }} and {{ ds.gpus|length }}\n", encoding="utf-8")
    rendered = {p.path for p in render_language(ds, "en", templates)}
    before = {p for p in rendered if p.endswith(".md")}
    # templates/pages/site/<path>.md.j2, and each calculator folder's page (generator/data/calculators.py)
    site_pages = set(site_page_templates(templates))
    assert site_pages >= {p.relative_to(templates / "site").as_posix()[:-3] for p in (templates / "site").glob("*.md.j2")}
    kind_pages = {path for k in registry.PAGE_KINDS for path, _ in k.pages(ds, _ctx(ds))}
    assert before == kind_pages | site_pages
    # besides pages, only the rows long lists do not carry, each beside its own page (a page at
    # models/x.md is served at models/x/)
    for rest in rendered - before:
        folder = rest.rsplit("/", 1)[0]
        assert rest.endswith(".rows.js") and (folder + "/index.md" in before or folder + ".md" in before), rest
    extra = registry.PageKind("extra", "extra.md.j2", "extra/index.md")
    old_kinds, old_nav = registry.PAGE_KINDS, registry.NAV
    try:
        registry.PAGE_KINDS = (*old_kinds, extra)
        registry.NAV = (*old_nav, registry.NavEntry("nav.gpus", "extra/index.md"))
        pages = {p.path: p.text for p in render_language(ds, "en", templates)}
        assert pages["extra/index.md"].startswith(f"# GPUs and {len(ds.gpus)}")
        assert {"GPUs": "extra/index.md"} in nav(ds, "en", templates)
    finally:
        registry.PAGE_KINDS, registry.NAV = old_kinds, old_nav
    assert {"GPUs": "extra/index.md"} not in nav(ds, "en", templates)


def _ctx(ds):
    from generator.publish.render import Context

    return Context(ds, "en")


def test_a_kind_of_many_pages_finds_one_page_by_its_path_as_its_list_gives_it():
    """The preview renders the open page alone: a kind that finds a page by its path gives, for
    every page it lists, the same path and variables (a diff's, once called), and nothing for a
    path it does not list: another kind's, an unknown id, a diff between revisions that do not
    follow each other."""
    from generator.data.loader import load_dataset
    from generator.publish import pages as registry

    ds, _ = load_dataset(ROOT / "data", ROOT)
    ctx = _ctx(ds)
    finders = [k for k in registry.PAGE_KINDS if k.find is not None]
    assert {k.name for k in finders} >= {"gpu", "revision", "diff", "model"}

    def plain(variables):
        return variables() if callable(variables) else variables

    for kind in finders:
        listed = list(kind.pages(ds, ctx))
        assert len(listed) > 2
        for path, variables in listed[:3] + listed[-3:]:
            found = kind.pages(ds, ctx, only=[path])
            assert [p for p, _ in found] == [path]
            assert plain(found[0][1]) == plain(variables)
        others = [p for k in finders if k is not kind for p, _ in list(k.pages(ds, ctx))[:1]]
        assert kind.pages(ds, ctx, only=[*others, listed[0][0].replace(".md", "-nope.md")]) == []
    revs = [r.id for r in ds.revisions]
    assert registry.PAGE_KINDS[[k.name for k in registry.PAGE_KINDS].index("diff")].pages(
        ds, ctx, only=[f"diffs/{revs[0]}_{revs[2]}.md"]) == []
