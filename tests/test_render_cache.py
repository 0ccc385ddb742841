"""MkDocs' renders of the pages' Markdown are kept between builds (generator/site/mkdocs_adapter.py): a page
whose Markdown, place and site did not change is not converted again, and comes out the same."""
from __future__ import annotations

import logging

import markdown
import pytest

from generator.site import mkdocs_adapter, mkdocs_glue

CONFIG = """site_name: kept renders
docs_dir: docs
hooks:
  - {hooks}
markdown_extensions:
  - attr_list
  - toc:
      permalink: true
"""

PAGES = {
    "index.md": "# Home\n\nSee [the part](part.md#detail) and [the other](other.md).\n\n"
                "<div class=\"box\">\n<p>raw <b>block</b></p>\n</div>\n\n## Below { #below }\n\nText.\n",
    "part.md": "# Part\n\n## Detail\n\nA detail.\n",
    "other.md": "# Other\n\nPlain.\n",
}


@pytest.fixture()
def project(tmp_path, monkeypatch):
    from helpers import EPOCH, ROOT

    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)  # the pages' build date, the same in both builds
    (tmp_path / "mkdocs.yml").write_text(CONFIG.format(hooks=ROOT / "generator" / "site" / "mkdocs_hooks.py"), encoding="utf-8")
    for name, text in PAGES.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    mkdocs_glue.use_template_cache(tmp_path / "cache" / "jinja-theme")
    yield tmp_path
    mkdocs_glue.forget_kept_answers()


def _build(project, site: str, **kwargs) -> dict[str, bytes]:
    out = project / site
    mkdocs_glue.build(project / "mkdocs.yml", {"site_dir": str(out)}, **kwargs)
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.html"))}


def _converted(monkeypatch) -> list[str]:
    seen, real = [], markdown.Markdown.convert
    monkeypatch.setattr(markdown.Markdown, "convert", lambda self, text: seen.append(text) or real(self, text))
    return seen


def test_a_second_build_converts_nothing_and_writes_the_same_pages(project, monkeypatch):
    first = _build(project, "a")
    assert (project / "cache" / "renders-docs.json").is_file()
    mkdocs_glue.forget_kept_answers()  # read back from the file, as the next build's process does
    seen = _converted(monkeypatch)
    second = _build(project, "b")
    assert seen == [] and second == first
    assert b'<div class="box">\n<p>raw <b>block</b></p>\n</div>' in second["index.html"]
    assert b'id="below"' in second["index.html"] and b'href="part/#detail"' in second["index.html"]


def test_only_a_changed_page_is_converted_again(project, monkeypatch):
    _build(project, "a")
    (project / "docs" / "other.md").write_text("# Other\n\nChanged.\n", encoding="utf-8")
    seen = _converted(monkeypatch)
    pages = _build(project, "b")
    assert len(seen) == 1 and "Changed." in seen[0] and b"Changed." in pages["other/index.html"]


def test_a_new_file_converts_every_page_again(project, monkeypatch):
    """Links are resolved against every file of the site: a file added or removed changes them."""
    _build(project, "a")
    (project / "docs" / "more.md").write_text("# More\n", encoding="utf-8")
    seen = _converted(monkeypatch)
    _build(project, "b")
    assert len(seen) == 4


def test_a_render_that_warned_warns_on_every_build(project, monkeypatch):
    """The preview's build warns without failing: a page whose render logged a warning is not
    kept, so the warning comes again until the page is fixed."""
    (project / "docs" / "other.md").write_text("# Other\n\n[gone](missing.md)\n", encoding="utf-8")
    messages = []

    class Catch(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    catch = Catch(logging.WARNING)
    logging.getLogger("mkdocs").addHandler(catch)
    try:
        for _ in range(2):
            _build(project, "a", rebuild={"index.md", "part.md", "other.md"})
    finally:
        logging.getLogger("mkdocs").removeHandler(catch)
    assert sum("missing.md" in m for m in messages) == 2


def test_pages_outside_the_navigation_share_its_render_and_come_out_the_same(tmp_path, monkeypatch):
    """The English site built twice: once with the side navigation rendered once per folder of
    pages outside it, once rendered for every page. Every page is the same byte for byte, and
    the first build rendered the navigation for far fewer pages than it built."""
    from helpers import EPOCH

    from generator.site.pipeline import Paths, build_site

    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    real, keys = mkdocs_adapter._nav_key, []
    monkeypatch.setattr(mkdocs_adapter, "_nav_key", lambda context: keys.append(real(context)) or keys[-1])
    build_site(Paths(build=tmp_path / "build", site=tmp_path / "shared"), ("en",))
    monkeypatch.setattr(mkdocs_adapter, "_nav_key", lambda context: None)
    build_site(Paths(build=tmp_path / "build", site=tmp_path / "each"), ("en",))
    pages = sorted(p.relative_to(tmp_path / "each") for p in (tmp_path / "each").rglob("*.html"))
    assert len(pages) > 150
    for page in pages:
        assert (tmp_path / "shared" / page).read_bytes() == (tmp_path / "each" / page).read_bytes(), page
    outside = [k for k in keys if k is not None]
    assert len(keys) == len(pages)  # every page, the 404 page too
    assert len(outside) > len(pages) / 2 and len(set(outside)) < 10
    assert any(k[1] == "gpus" for k in outside) and any(k[1] == "models" for k in outside)
