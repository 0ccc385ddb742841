"""The built site in a real browser: Debian's Chromium driven by Playwright.

Set CHROMIUM to another binary if needed. `make test` installs Debian's chromium when it
is missing; without a browser these tests fail rather than pass silently.
"""
from __future__ import annotations

import functools
import http.server
import threading
import time
from urllib.parse import urlparse

import pytest
from helpers import HOSTILE, DataTree, QuietHandler, build_fixture, open_language_menu_and_pick, serve_directory


class _LateRootSitemap(QuietHandler):
    """Answers the English sitemap last: the theme then learns the other languages' sitemaps
    first, the order in which it once rerouted the language menu to a language's home page."""

    def do_GET(self):
        if self.path.split("?")[0] == "/sitemap.xml":
            time.sleep(0.8)
        super().do_GET()


@pytest.fixture(scope="module")
def late_sitemap_server(built_site):
    yield from serve_directory(built_site[0], _LateRootSitemap)


@pytest.mark.parametrize("start, label, expected", [
    ("/revisions/2016-07-23/", "한국어", "/ko/revisions/2016-07-23/"),
    ("/ko/revisions/2016-07-23/", "简体中文", "/zh/revisions/2016-07-23/"),
    ("/zh/gpus/", "Français", "/fr/gpus/"),
    ("/fr/gpus/", "English", "/gpus/"),
    ("/fr/", "한국어", "/ko/"),
])
def test_language_switch_keeps_the_page(late_sitemap_server, page, start, label, expected):
    server = late_sitemap_server
    page.goto(server + start)
    open_language_menu_and_pick(page, label)  # waits until every sitemap has arrived
    page.wait_for_url(server + expected)
    lang = {"/ko/": "ko", "/zh/": "zh", "/fr/": "fr"}.get(expected[:4], "en")
    assert page.locator("html").get_attribute("lang") == lang


@pytest.mark.parametrize("lang", ["", "ko/", "zh/", "fr/"])
@pytest.mark.parametrize("query, expect", [("RTX 2080", "RTX 2080"), ("GTX 1060", "GTX 1060")])
def test_search_finds_a_gpu_by_name(server, page, lang, query, expect):
    page.goto(f"{server}/{lang}")
    page.locator("input.md-search__input").click()
    page.keyboard.type(query, delay=20)
    page.keyboard.press("End")  # text typed through an input method sends no key event by itself
    results = page.locator(".md-search-result__item")
    results.first.wait_for()
    assert expect in page.locator(".md-search-result").inner_text()


@pytest.mark.parametrize("lang", ["", "ko/"])
def test_search_index_is_fetched_on_first_use_only(server, page, lang):
    """A page load fetches no search index, however large the data; the first use of the search
    box fetches it, and the search works as before."""
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "search_index" in r.url else None)
    page.goto(f"{server}/{lang}gpus/rtx-2070/")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    assert asked == []
    page.locator("input.md-search__input").click()
    page.keyboard.type("RTX 2080", delay=20)
    page.keyboard.press("End")
    page.locator(".md-search-result__item").first.wait_for()
    assert len(asked) == 1 and asked[0].endswith(f"/{lang}search/search_index.json")
    assert "RTX 2080" in page.locator(".md-search-result").inner_text()


@pytest.mark.parametrize("lang, query, expect", [
    ("ko/", "개정판", "개정판"),
    ("zh/", "显卡", "显卡"),
    ("fr/", "carte", "cartes"),
    # accents folded: the word typed without them finds the pages that write it with them
    ("fr/", "memoire", "Mémoire"),
    # synonyms kept as data (data/search.yaml): the Korean spelling of a name finds the name
    ("ko/", "타이탄", "TITAN"),
    ("ko/", "그래픽카드", "GPU"),
    ("zh/", "英伟达", "NVIDIA"),
])
def test_search_finds_words_of_the_language(server, page, lang, query, expect):
    page.goto(f"{server}/{lang}")
    page.locator("input.md-search__input").click()
    page.keyboard.type(query, delay=20)
    page.keyboard.press("End")  # text typed through an input method sends no key event by itself
    page.locator(".md-search-result__item").first.wait_for()
    assert expect in page.locator(".md-search-result").inner_text()


def test_no_request_leaves_the_local_server(server, page, built_site):
    site, _ = built_site
    outside = []
    page.on("request", lambda r: outside.append(r.url) if urlparse(r.url).hostname != "127.0.0.1" else None)
    pages = sorted(p.relative_to(site).parent.as_posix() for p in site.rglob("index.html"))
    assert len(pages) >= 32
    # Pages made from one template per record make the same requests: visit every other page,
    # and three pages of each per-record kind in every language, so the time does not grow
    # with the catalogue.
    per_record = {"gpus", "models", "revisions", "diffs", "topics"}
    by_kind: dict[str, list[str]] = {}
    for rel in pages:
        parts = rel.split("/")
        key = "/".join(parts[:-1]) + "/*" if len(parts) >= 2 and parts[-2] in per_record else rel
        by_kind.setdefault(key, []).append(rel)
    sample = [rel for group in by_kind.values() for rel in group[:3]]
    assert len(sample) >= 60
    for rel in sample:
        page.goto(f"{server}/{'' if rel == '.' else rel + '/'}")
        page.wait_for_load_state("networkidle")
    assert outside == []


def test_hostile_data_runs_no_script_in_the_browser(browser, tmp_path_factory):
    """Hostile strings in every kind of field, built into a site: no page opens a dialog,
    runs injected code or logs an error caused by the data."""
    import json

    root = tmp_path_factory.mktemp("hostile")
    tree = DataTree(root)
    gpu = "gpus/nvidia/rtx-2070.yaml"
    tree.set(gpu, "name", json.dumps('<img src=x onerror="window.__xss=1;alert(1)">'))
    tree.set(gpu, "notes", json.dumps(" ".join(HOSTILE) + ' <svg onload="window.__xss=2">'))
    tree.set("revisions/2019-04-03.yaml", "summary", json.dumps("</script><script>window.__xss=3</script>"))
    tree.write("personas.yaml", "best-overall:\n  name: " + json.dumps('<script>window.__xss=4</script>') +
               "\nlittle-money:\n  name: " + json.dumps("[x](javascript:window.__xss=5)") + "\n")
    site = root / "site"
    build_fixture(tree, site, ui_edits={
        "nav.gpus": "<b onmouseover=alert(6)>GPUs</b>", "home.heading": "<script>alert(7)</script>",
        # the theme's tooltips insert a header button's title as HTML
        "theme.to_dark": '"><img src=x onerror="window.__xss=8">'})
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    context = browser.new_context()
    pg = context.new_page()
    dialogs = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        pages = sorted(p.relative_to(site).parent.as_posix() for p in site.rglob("index.html"))
        for rel in pages:
            pg.goto(f"{base}/{'' if rel == '.' else rel + '/'}")
            pg.wait_for_load_state("networkidle")
            assert pg.evaluate("window.__xss === undefined"), rel
            pg.mouse.move(10, 10)
        assert dialogs == []
        assert "onerror" in pg.goto(f"{base}/gpus/rtx-2070/").text()  # the string is there, as text
        assert pg.locator("h1").first.inner_text().startswith('<img src=x onerror=')
    finally:
        context.close()
        httpd.shutdown()
