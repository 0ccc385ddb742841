"""The preview of `serve`: the open page is rebuilt first, then only the pages whose Markdown
changed, language by language; errors are shown and the last good build stays."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import time

import pytest
from helpers import EPOCH, FIXTURE_SOFTWARE, ROOT

from generator.site.pipeline import Paths
from generator.site.preview import Preview, html_of, page_of, url_of


@pytest.mark.parametrize("url, page", [
    ("/", ("en", "index.md")),
    ("/index.html", ("en", "index.md")),
    ("/gpus/rtx-2070/", ("en", "gpus/rtx-2070.md")),
    ("/ko/", ("ko", "index.md")),
    ("/ko/gpus/rtx-2070/", ("ko", "gpus/rtx-2070.md")),
    ("/zh/gpus/", ("zh", "gpus.md")),
    ("/assets/js/whichgpu.js", None),
    ("/search/search_index.json", None),
    ("/sitemap.xml", None),
])
def test_page_of_an_address(url, page):
    assert page_of(url) == page


@pytest.mark.parametrize("md, html", [("index.md", "index.html"), ("gpus/index.md", "gpus/index.html"),
                                      ("gpus/rtx-2070.md", "gpus/rtx-2070/index.html")])
def test_where_mkdocs_writes_a_page(md, html):
    assert html_of(md) == html


@pytest.mark.parametrize("lang, md, url", [("en", "index.md", "/"), ("ko", "gpus/index.md", "/ko/gpus/"),
                                           ("en", "gpus/rtx-2070.md", "/gpus/rtx-2070/")])
def test_address_of_a_page(lang, md, url):
    assert url_of(lang, md) == url
    assert page_of(url)[0] == lang


def _wait(preview: Preview, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while not preview.changes[-1].done:
        assert time.monotonic() < end, "the background step did not finish"
        time.sleep(0.1)


def _stamps(site):
    return {p.relative_to(site).as_posix(): p.stat().st_mtime_ns for p in site.rglob("*.html")}


@pytest.fixture(scope="module")
def preview(tmp_path_factory):
    base = tmp_path_factory.mktemp("preview")
    shutil.copytree(ROOT / "tests" / "fixtures" / "valid", base / "data")
    shutil.copyfile(ROOT / "data" / "ui.yaml", base / "data" / "ui.yaml")
    (base / "data" / "software.yaml").write_text(FIXTURE_SOFTWARE, encoding="utf-8")
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    out = io.StringIO()
    pv = Preview(Paths(data=base / "data", build=base / "build", site=base / "site"), out=out)
    pv.start()
    yield pv, base, out
    if old is None:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
    else:
        os.environ["SOURCE_DATE_EPOCH"] = old


def _edit(base, rel: str, old: str, new: str) -> None:
    path = base / "data" / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_open_page_first_then_only_changed_pages(preview):
    pv, base, out = preview
    site = pv.paths.site
    before = _stamps(site)
    index_before = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    pv.seen("/gpus/rtx-2070/")
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "name: GeForce RTX 2070", "name: GeForce RTX 2070 Edited")
    pv.update()
    change = pv.changes[-1]
    # the open page alone, before anything else
    assert [(s.lang, s.built) for s in change.steps] == [("en", ["gpus/rtx-2070.md"])]
    assert "GeForce RTX 2070 Edited" in (site / "gpus/rtx-2070/index.html").read_text(encoding="utf-8")
    _wait(pv)
    assert [s.lang for s in change.steps] == ["en", "en", "ko", "zh", "fr"]
    built = {(s.lang, md) for s in change.steps for md in s.built}
    assert ("en", "gpus/index.md") in built and ("ko", "gpus/rtx-2070.md") in built
    assert not any(s.full for s in change.steps)
    after = _stamps(site)
    touched = {rel for rel in after if after[rel] != before.get(rel)}
    expected = {(f"{lang}/" if lang != "en" else "") + html_of(md) for lang, md in built}
    assert touched == expected
    # pages the edit did not change were not built again
    assert {"api/index.html", "ko/api/index.html", "404.html"} <= set(after) - touched
    for lang in ("", "ko/", "fr/"):
        assert "GeForce RTX 2070 Edited" in (site / lang / "gpus/index.html").read_text(encoding="utf-8")
    # the search index still holds every page, with the new text
    index_after = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    pages = {d["location"].split("#")[0] for d in index_after["docs"]}
    assert pages == {d["location"].split("#")[0] for d in index_before["docs"]}
    assert any("GeForce RTX 2070 Edited" in d["title"] + d["text"] for d in index_after["docs"])
    assert "rebuilt in" in out.getvalue() and "every language is up to date" in out.getvalue()
    # the JSON API follows, outside MkDocs' pages
    api = json.loads((site / "api/v1/gpus/rtx-2070.json").read_text(encoding="utf-8"))
    assert api["result"]["name"] == "GeForce RTX 2070 Edited"
    assert not (pv.paths.build / "docs/en/api/v1").exists()


@pytest.fixture
def slow_background(monkeypatch):
    """The background step's English build takes a second longer: what a reader asks for meanwhile."""
    real = Preview._mkdocs

    def slow(self, ds, lang, rebuild, theme_pages, static=None, search_index=True, narrow=False):
        if not narrow and lang == "en":
            time.sleep(1.0)
        return real(self, ds, lang, rebuild, theme_pages, static, search_index, narrow)

    monkeypatch.setattr(Preview, "_mkdocs", slow)


def _served(pv, url: str) -> tuple[float, str]:
    """What a request for ``url`` gets, as the server answers it (held first, then read), and how
    long it was held."""
    t0 = time.monotonic()
    pv.wait_for(url)
    held = time.monotonic() - t0
    page = page_of(url)
    rel = html_of(page[1]) if page else url.lstrip("/")
    prefix = page[0] + "/" if page and page[0] != "en" else ""
    return held, (pv.paths.site / (prefix + rel)).read_text(encoding="utf-8")


def test_after_an_edit_the_pages_and_the_api_served_come_from_the_same_load(preview, slow_background):
    """The open page first; then a card's page, the API and the files made from every page, each
    as the newest load makes them, never the load before (a request waits until it is so), and
    the API within a moment, not after the pages' builds."""
    pv, base, _ = preview
    pv.seen("/gpus/")
    card = base / "data/gpus/nvidia/rtx-2070.yaml"
    text = card.read_text(encoding="utf-8")
    card.write_text(re.sub(r"(?m)^name: .*$", "name: GeForce RTX 2070 Same Load", text), encoding="utf-8")
    try:
        pv.update()
        _, catalogue = _served(pv, "/gpus/")
        assert "GeForce RTX 2070 Same Load" in catalogue
        held, api = _served(pv, "/api/v1/gpus/rtx-2070.json")
        assert json.loads(api)["result"]["name"] == "GeForce RTX 2070 Same Load"
        assert held < 0.9  # before the first of the background's (slowed) builds
        assert not pv.changes[-1].done
        listed = json.loads(_served(pv, "/api/v1/gpus.json")[1])
        assert "GeForce RTX 2070 Same Load" in {g["name"] for g in listed["result"]}
        assert "GeForce RTX 2070 Same Load" in _served(pv, "/gpus/rtx-2070/")[1]
        _, index = _served(pv, "/search/search_index.json")
        assert any("GeForce RTX 2070 Same Load" in d["title"] + d["text"] for d in json.loads(index)["docs"])
        assert "GeForce RTX 2070 Same Load" in _served(pv, "/assets/data/whichgpu-data.js")[1]
        assert "GeForce RTX 2070 Same Load" in _served(pv, "/ko/assets/data/whichgpu-data.js")[1]
    finally:
        _wait(pv)
        card.write_text(text, encoding="utf-8")
        pv.update()
        _wait(pv)


def test_the_open_pages_own_files_are_not_held_for_the_background(preview, slow_background):
    """The files the open page's step wrote (its scripts and styles, the data file it reads) are
    served at once; only the background's own files wait for it."""
    pv, base, _ = preview
    pv.seen("/compare/")
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 175", "tdp_w: 178")
    try:
        pv.update()
        styles = sorted((pv.paths.site / "assets" / "stylesheets").glob("*.css"))
        for url in ("/compare/", "/assets/data/whichgpu-data.js", "/" + styles[0].relative_to(pv.paths.site).as_posix()):
            held, _ = _served(pv, url)
            assert held < 0.5, url
        assert '"tdp_w":178' in _served(pv, "/assets/data/whichgpu-data.js")[1]
        assert not pv.changes[-1].done
    finally:
        _wait(pv)
        _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 178", "tdp_w: 175")
        pv.update()
        _wait(pv)


def test_the_api_gains_and_loses_the_files_of_a_card_added_and_removed(preview):
    pv, base, _ = preview
    site = pv.paths.site
    card = base / "data/gpus/nvidia/rtx-2070-test-copy.yaml"
    text = (base / "data/gpus/nvidia/rtx-2070.yaml").read_text(encoding="utf-8")
    card.write_text(re.sub(r"(?m)^name: .*$", "name: GeForce RTX 2070 Test Copy", text), encoding="utf-8")
    try:
        pv.update()
        _wait(pv)
        copy = json.loads((site / "api/v1/gpus/rtx-2070-test-copy.json").read_text(encoding="utf-8"))
        assert copy["result"]["name"] == "GeForce RTX 2070 Test Copy"
        listed = json.loads((site / "api/v1/gpus.json").read_text(encoding="utf-8"))
        assert "rtx-2070-test-copy" in {g["id"] for g in listed["result"]}
    finally:
        card.unlink()
    pv.update()
    _wait(pv)
    assert not (site / "api/v1/gpus/rtx-2070-test-copy.json").exists()
    listed = json.loads((site / "api/v1/gpus.json").read_text(encoding="utf-8"))
    assert "rtx-2070-test-copy" not in {g["id"] for g in listed["result"]}
    assert (site / "api/v1/gpus/rtx-2070.json").is_file()


def test_the_open_pages_step_runs_without_the_cyclic_collector_and_gives_it_back(preview, monkeypatch):
    """A full collection walks the loaded data: it is held off while the open page is rebuilt,
    and on again once the step is over (a failed step included)."""
    import gc

    import generator.site.preview as preview_module

    pv, base, _ = preview
    seen = []
    real = preview_module.generate_language
    monkeypatch.setattr(preview_module, "generate_language",
                        lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    pv.seen("/gpus/rtx-2070/")
    assert gc.isenabled()
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 175", "tdp_w: 177")
    try:
        pv.update()
        assert seen[0] is False and gc.isenabled()
        _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 177", "tdp_w: -1")
        pv.update()
        assert pv.changes[-1].problems and gc.isenabled()
    finally:
        _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: -1", "tdp_w: 175")
        pv.update()
        _wait(pv)


def test_first_step_writes_the_shared_data_only_for_a_page_that_reads_it(preview):
    """The data file holds every card: a GPU page's first step leaves it to the step after (the
    page does not read it); the compare page's first step writes it, so its table is not stale."""
    from generator.site.pipeline import generate_language, load_or_fail

    pv, base, _ = preview
    data_file = pv.paths.build / "docs" / "en" / "assets" / "data" / "whichgpu-data.js"
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 175", "tdp_w: 176")
    ds = load_or_fail(pv.paths)
    changed = generate_language(ds, pv.paths, "en", only={"gpus/rtx-2070.md"})
    assert changed == {"gpus/rtx-2070.md"}
    assert '"tdp_w":176' not in data_file.read_text(encoding="utf-8")
    changed = generate_language(ds, pv.paths, "en", only={"compare/index.md"})
    assert "assets/data/whichgpu-data.js" in changed
    assert '"tdp_w":176' in data_file.read_text(encoding="utf-8")
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 176", "tdp_w: 175")


def test_data_error_is_shown_and_the_last_good_build_stays(preview):
    pv, base, out = preview
    site = pv.paths.site
    pv.seen("/gpus/")
    before = _stamps(site)
    page = (site / "gpus/index.html").read_bytes()
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "memory_gb: 8", "memory_gb: eight")
    try:
        pv.update()
        banner = pv.banner().decode("utf-8")
        assert "gpus/nvidia/rtx-2070.yaml:" in banner and "memory_gb" in banner and "last good build" in banner
        assert _stamps(site) == before and (site / "gpus/index.html").read_bytes() == page
        assert "rtx-2070.yaml" in out.getvalue()
    finally:
        _edit(base, "gpus/nvidia/rtx-2070.yaml", "memory_gb: eight", "memory_gb: 8")
    pv.update()
    assert pv.banner() is None
    _wait(pv)


def test_hostile_problem_text_is_escaped(preview):
    pv, base, _ = preview
    pv.seen("/")
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "memory_gb: 8", "memory_gb: <script>alert(1)</script>")
    try:
        pv.update()
        banner = pv.banner().decode("utf-8")
        assert "<script>" not in banner and "&lt;script&gt;" in banner
    finally:
        _edit(base, "gpus/nvidia/rtx-2070.yaml", "memory_gb: <script>alert(1)</script>", "memory_gb: 8")
    pv.update()
    _wait(pv)


def test_a_page_template_edit_rebuilds_only_the_pages_it_renders(preview, tmp_path):
    """templates/ is the project's own: the edit is made on a copy of the page templates."""
    pv, base, _ = preview
    templates = base / "templates"
    if not templates.exists():
        shutil.copytree(ROOT / "templates", templates)
    paths = Paths(root=base, data=pv.paths.data, build=pv.paths.build, site=pv.paths.site)
    assert paths.templates == templates / "pages"
    shutil.copyfile(ROOT / "mkdocs.yml", base / "mkdocs.yml")
    (base / "generator" / "site").mkdir(parents=True, exist_ok=True)  # mkdocs.yml names its hooks by path
    shutil.copyfile(ROOT / "generator" / "site" / "mkdocs_hooks.py", base / "generator" / "site" / "mkdocs_hooks.py")
    pv.paths = paths
    pv.update()  # the copy of the theme is a theme change: every page once
    _wait(pv)
    assert all(s.full for s in pv.changes[-1].steps[1:])
    pv.seen("/api/")
    tpl = templates / "pages" / "api.md.j2"
    tpl.write_text(tpl.read_text(encoding="utf-8") + "\nTemplate edit marker\n", encoding="utf-8")
    pv.update()
    change = pv.changes[-1]
    assert change.steps[0].built == ["api/index.md"]
    _wait(pv)
    built = {(s.lang, md) for s in change.steps for md in s.built}
    assert built == {(lang, "api/index.md") for lang in ("en", "ko", "zh", "fr")}
    assert "Template edit marker" in (pv.paths.site / "ko/api/index.html").read_text(encoding="utf-8")


def test_the_watcher_names_the_files_written_and_anything_else_means_every_file(tmp_path):
    from types import SimpleNamespace

    from generator.site.mkdocs_adapter import telling as _telling

    pv = Preview(Paths(data=tmp_path / "data", build=tmp_path / "build", site=tmp_path / "site"), out=io.StringIO())
    gpu, other = tmp_path / "data" / "gpus" / "a.yaml", tmp_path / "data" / "b.yaml"
    pv.saw("modified", str(gpu))
    assert pv._take_written() is None  # no watcher reports here yet: look at every file
    pv.watched()
    pv.saw("modified", str(gpu))
    pv.saw("closed", str(other))
    assert pv._take_written() == {str(gpu), str(other)}
    assert pv._take_written() == set()  # taken: nothing written since
    for event, is_dir in (("created", False), ("deleted", False), ("moved", False), ("created", True)):
        pv.saw("modified", str(gpu))
        pv.saw(event, str(other), is_dir)
        assert pv._take_written() is None, event
    # the observer's handler tells the preview before it asks the server for a build
    asked, scheduled = [], []
    handler = SimpleNamespace(on_any_event=lambda event: asked.append(pv._written))
    _telling(lambda h, path, **kw: scheduled.append((h, path, kw)), pv, handler, "/data", recursive=True)
    assert scheduled == [(handler, "/data", {"recursive": True})]
    handler.on_any_event(SimpleNamespace(event_type="modified", src_path=os.fsencode(gpu), is_directory=False))
    assert asked == [{str(gpu)}]


def test_the_first_step_copies_only_the_files_that_changed_and_the_next_step_the_rest(preview, monkeypatch):
    """Besides the open page, the first step's MkDocs build copies the other files that changed
    since the language was last built, without comparing every asset with its copy, and leaves
    the search index alone; the step after it copies what the first one did not write (here the
    shared data file) and builds the page again to index it."""
    import threading

    from mkdocs import utils

    pv, base, _ = preview
    gate, catch_up = threading.Event(), Preview._catch_up
    monkeypatch.setattr(Preview, "_catch_up", lambda self, *a: (gate.wait(120), catch_up(self, *a)))
    copied, copy = [], utils.copy_file
    monkeypatch.setattr(utils, "copy_file", lambda src, dest: copied.append(os.path.relpath(src, pv.paths.build / "docs" / "en"))
                        or copy(src, dest))
    from mkdocs.structure.files import File

    compared, is_modified = [], File.is_modified  # MkDocs' comparison of a file's time with its copy's
    monkeypatch.setattr(File, "is_modified", lambda self: compared.append(self.src_uri) or is_modified(self))
    index = pv.paths.site / "search" / "search_index.json"
    indexed = index.stat().st_mtime_ns
    pv.seen("/gpus/rtx-2070/")
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 175", "tdp_w: 177")
    try:
        pv.update()
        assert [s.built for s in pv.changes[-1].steps] == [["gpus/rtx-2070.md"]]
        assert copied == [] and compared == []
        assert index.stat().st_mtime_ns == indexed  # the search index is the next step's work
    finally:
        gate.set()
        _wait(pv)
    assert "assets/data/whichgpu-data.js" in copied
    assert ("en", "gpus/rtx-2070.md") in {(s.lang, md) for s in pv.changes[-1].steps[1:] for md in s.built}
    docs = json.loads(index.read_text(encoding="utf-8"))["docs"]
    assert index.stat().st_mtime_ns != indexed and any(d["location"].startswith("gpus/rtx-2070/") for d in docs)
    assert '"tdp_w":177' in (pv.paths.site / "assets/data/whichgpu-data.js").read_text(encoding="utf-8")
    _edit(base, "gpus/nvidia/rtx-2070.yaml", "tdp_w: 177", "tdp_w: 175")
    pv.update()
    _wait(pv)


def test_the_open_pages_step_reuses_the_last_listing_of_the_pages_unless_a_named_file_is_new(tmp_path):
    """MkDocs' list of files: walked by every build that names nothing (and kept); the open page's
    step, which names what changed, gets fresh copies of the kept list without a walk, unless it
    names a file the list does not hold."""
    from types import SimpleNamespace

    from mkdocs.structure.files import File, Files

    from generator.site.mkdocs_glue import _listed_files

    config = SimpleNamespace(docs_dir=str(tmp_path / "docs"), site_dir=str(tmp_path / "site"), use_directory_urls=True,
                             exclude_docs=None)
    names, walks = ["index.md", "gpus/a.md", "assets/app.js"], []

    def get_files(config):
        walks.append(list(names))
        return Files([File(n, config.docs_dir, config.site_dir, True) for n in names])

    walked = _listed_files(config, get_files, None)
    assert len(walks) == 1
    walked.get_file_from_path("gpus/a.md").page = "a page of the last build"
    kept = _listed_files(config, get_files, {"gpus/a.md", "assets/app.js"})
    assert len(walks) == 1
    assert [f.src_uri for f in kept] == [f.src_uri for f in walked]
    assert all(f is not g for f, g in zip(kept, walked, strict=True))
    assert all(f.page is None for f in kept)
    kept.get_file_from_path("gpus/a.md").page = "a page of this build"
    assert _listed_files(config, get_files, {"gpus/a.md"}).get_file_from_path("gpus/a.md").page is None
    names.append("gpus/b.md")
    fresh = _listed_files(config, get_files, {"gpus/b.md"})
    assert len(walks) == 2 and fresh.get_file_from_path("gpus/b.md") is not None
    assert _listed_files(config, get_files, {"gpus/b.md"}).get_file_from_path("gpus/b.md") is not None
    assert len(walks) == 2


# -- the open page's MkDocs build, told only of the files it reads ------------------------------

NARROWED = [("en", "gpus/rtx-4090.md"), ("en", "models/llama-3-8b.md"), ("en", "gpus/index.md"), ("en", "index.md"),
            ("ko", "revisions/2019-04-03.md"), ("zh", "calculators/memory-llm.md"), ("fr", "accuracy/index.md"),
            ("fr", "diffs/2014-08-14_2014-09-28.md"), ("ko", "topics/compute-growth.md")]


@pytest.fixture(scope="module")
def copied_site(built_site, tmp_path_factory):
    """A copy of the shipped data's four-language build (its pages' Markdown and its site), to
    build pages into in place."""
    from generator.site import mkdocs_glue

    site, ds = built_site
    base = tmp_path_factory.mktemp("narrow")
    shutil.copytree(site.parent / "build" / "docs", base / "docs")
    shutil.copytree(site, base / "site")
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    mkdocs_glue.use_template_cache(base / "cache")
    yield base, ds
    if old is None:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
    else:
        os.environ["SOURCE_DATE_EPOCH"] = old


def _build_page(base, ds, lang: str, md: str, narrow: bool) -> bytes:
    from generator.site import mkdocs_glue
    from generator.site.pipeline import mkdocs_overrides, read_base_config

    site = base / "site" if lang == "en" else base / "site" / lang
    overrides = mkdocs_overrides(ds, lang, base / "docs" / lang, site, read_base_config(Paths()))
    target = site / html_of(md)
    target.unlink()
    mkdocs_glue.build(ROOT / "mkdocs.yml", overrides, rebuild={md}, theme_pages=False, static=set(),
                      search_index=False, narrow=narrow)
    return target.read_bytes()


def _told(monkeypatch) -> list[int]:
    """How many pages each of MkDocs' lists of files holds, from here on."""
    from generator.site import mkdocs_glue

    counts, listed = [], mkdocs_glue._listed_files

    def counting(*args, **kwargs):
        files = listed(*args, **kwargs)
        counts.append(len(files.documentation_pages()))
        return files

    monkeypatch.setattr(mkdocs_glue, "_listed_files", counting)
    return counts


@pytest.mark.parametrize("lang, md", NARROWED)
def test_the_open_page_built_knowing_only_the_files_it_reads_is_the_page_a_full_list_gives(copied_site, monkeypatch,
                                                                                           lang, md):
    base, ds = copied_site
    pages = sum(1 for _ in (base / "docs" / lang).rglob("*.md"))
    told = _told(monkeypatch)
    whole = _build_page(base, ds, lang, md, narrow=False)
    narrowed = _build_page(base, ds, lang, md, narrow=True)
    assert narrowed == whole
    assert told[0] == pages  # the first build of the list walks the folder and knows every page
    # the narrowed build knew the navigation's pages and the page's own links, not every card
    assert len(told) == 2 and told[1] < pages / 3


def test_a_narrowed_build_that_warns_is_built_again_knowing_every_file(copied_site, monkeypatch):
    """When MkDocs warns during the narrowed build (here a link to a page the list left out), the
    page is built again with the full list: its HTML is the full list's, and a warning that a full
    list gives too (a link to no file at all) is shown once, by that second build."""
    import logging

    from generator.site import mkdocs_glue

    base, ds = copied_site
    md = "topics/compute-growth.md"
    page = base / "docs" / "en" / md
    page.write_text(page.read_text(encoding="utf-8") + "\n\n[broken](nowhere.md) and [a card](../gpus/rtx-2070.md)\n",
                    encoding="utf-8")
    whole = _build_page(base, ds, "en", md, narrow=False)
    assert 'href="../../gpus/rtx-2070/"' in whole.decode("utf-8")

    shown = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: shown.append(record.getMessage())
    logging.getLogger("mkdocs").addHandler(handler)
    told = _told(monkeypatch)
    monkeypatch.setattr(mkdocs_glue, "_reach", lambda config, pages, listed: set(pages))  # links not followed
    try:
        again = _build_page(base, ds, "en", md, narrow=True)
    finally:
        logging.getLogger("mkdocs").removeHandler(handler)
    assert again == whole
    assert len(told) == 2 and told[0] < told[1]  # narrowed, then every page
    assert len([m for m in shown if "nowhere.md" in m]) == 1
    assert not [m for m in shown if "rtx-2070" in m]  # the narrowed build's own complaint is not shown


def test_reach_follows_the_navigation_and_the_pages_markdown_links(tmp_path):
    from types import SimpleNamespace

    from generator.site.mkdocs_glue import _reach

    (tmp_path / "gpus").mkdir()
    (tmp_path / "gpus" / "a.md").write_text(
        "[b](b.md) [rev](../revisions/r1.md#top \"title\") ![img](../assets/x.png) [out](https://example.org/c.md)\n"
        "[d]: <../models/m.md>\n[folder](../topics/)\n[anchor](#here)\n", encoding="utf-8")
    listed = {p: None for p in ("index.md", "gpus/a.md", "gpus/b.md", "gpus/c.md", "revisions/r1.md", "revisions/r2.md",
                                "assets/x.png", "models/m.md", "topics/index.md", "nav/one.md", "nav/two.md")}
    config = SimpleNamespace(docs_dir=str(tmp_path), nav=[{"Home": "index.md"}, {"Group": ["nav/one.md", {"Two": "nav/two.md"}]},
                                                          {"Outside": "https://example.org/"}])
    assert _reach(config, {"gpus/a.md"}, listed) == {
        "index.md", "gpus/a.md", "gpus/b.md", "revisions/r1.md", "assets/x.png", "models/m.md", "topics/index.md",
        "nav/one.md", "nav/two.md"}


def test_a_walk_that_finds_the_same_files_keeps_what_the_narrowed_step_worked_out(tmp_path):
    """A narrowed step works out once per list where each path stands and which files are not
    pages. The background's full builds walk the folder again; when the walk finds the same
    files, the next narrowed step does not work those out again (a pass over every card's page);
    when it finds a new file, it does, and the new file is listed."""
    from types import SimpleNamespace

    from mkdocs.structure.files import File, Files

    from generator.site.mkdocs_glue import _listed_files

    docs = tmp_path / "docs"
    (docs / "gpus").mkdir(parents=True)
    names = ["index.md", "gpus/a.md", "gpus/b.md", "assets/app.js"]
    for name in names:
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text("[b](b.md)\n" if name == "gpus/a.md" else "x\n", encoding="utf-8")
    config = SimpleNamespace(docs_dir=str(docs), site_dir=str(tmp_path / "site"), use_directory_urls=True,
                             exclude_docs=None, nav=None)
    asked = []

    class Counted(File):
        def is_documentation_page(self):
            asked.append(self.src_uri)
            return super().is_documentation_page()

    def get_files(config):
        return Files([Counted(n, config.docs_dir, config.site_dir, True) for n in names])

    def narrowed():
        return [f.src_uri for f in _listed_files(config, get_files, {"gpus/a.md"}, {"gpus/a.md"})]

    _listed_files(config, get_files, None)
    assert narrowed() == ["index.md", "gpus/a.md", "gpus/b.md", "assets/app.js"]
    assert len(asked) == len(names)  # worked out once, for this list
    asked.clear()
    _listed_files(config, get_files, None)  # the background walks again and finds the same files
    assert narrowed() == ["index.md", "gpus/a.md", "gpus/b.md", "assets/app.js"]
    assert asked == []
    names.insert(3, "assets/new.css")
    _listed_files(config, get_files, None)
    assert narrowed() == ["index.md", "gpus/a.md", "gpus/b.md", "assets/new.css", "assets/app.js"]
    assert len(asked) == len(names)


def test_a_narrowed_build_that_fails_is_built_again_knowing_every_file(copied_site, monkeypatch):
    from generator.site import mkdocs_glue

    base, ds = copied_site
    md = "gpus/rtx-2070.md"
    whole = _build_page(base, ds, "en", md, narrow=False)

    def broken(config, pages, listed):
        raise RuntimeError("a narrowed list that cannot be made")

    monkeypatch.setattr(mkdocs_glue, "_reach", broken)
    told = _told(monkeypatch)
    assert _build_page(base, ds, "en", md, narrow=True) == whole
    assert len(told) == 1  # the narrowed list was never made; the full one was


def test_a_narrowed_build_neither_finds_nor_keeps_renders_and_leaves_the_kept_ones_loaded(copied_site):
    """The renders kept between builds are keyed by every file's place: a narrowed build does not
    use them, and the next build finds them still loaded (at a hundred times the data, reading
    them again from disk would cost the background step seconds)."""
    from generator import reuse

    base, ds = copied_site
    # the second build finds what the first kept (run alone, the first keeps them afresh and
    # leaves nothing in use)
    _build_page(base, ds, "en", "gpus/rtx-4090.md", narrow=False)
    _build_page(base, ds, "en", "gpus/rtx-4090.md", narrow=False)
    kept = reuse.KEPT_FILES.find("renders")
    assert kept is not None and kept.used
    used = dict(kept.used)
    _build_page(base, ds, "en", "gpus/rtx-4090.md", narrow=True)
    assert reuse.KEPT_FILES.find("renders") is kept and kept.used == used
