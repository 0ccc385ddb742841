"""Long lists stay light: a page carries its first rows and loads the rest on first use.

The shipped data is below the threshold, so these tests lower it (``render.LIST_ROWS`` and
``pages.LIST_ROWS``) and build the small fixture data, whose catalogue then needs its second part."""
from __future__ import annotations

import html
import json
import os
import shutil

import pytest
from helpers import EPOCH, ROOT, serve_directory

from generator.publish import pages, render
from generator.publish.render import Page, split_rest
from generator.site.pipeline import Paths, build_site


def _rows_of(script: str, table: str) -> str:
    prefix = f'(window.wgRows = window.wgRows || {{}})["{table}"] = '
    assert script.startswith(prefix) and script.endswith(";\n")
    return json.loads(script[len(prefix):-2])


def test_split_moves_the_rows_after_the_mark_into_a_script_beside_the_page():
    text = ('<table id="t"><tbody data-wg-rest="t.rows.js"><tr><td>1</td></tr>\n<!--wg-rest:t--><tr><td>2</td></tr>\n'
            '<tr><td>&#60;3&#62; \u2028</td></tr>\n</tbody></table>\nafter')
    page, rest = split_rest(Page("gpus/index.md", text))
    assert page.path == "gpus/index.md" and rest.path == "gpus/t.rows.js"
    assert "<td>2</td>" not in page.text and "<td>1</td>" in page.text and page.text.endswith("</tbody></table>\nafter")
    assert "\u2028" not in rest.text  # a line separator would end a string in older JavaScript
    assert _rows_of(rest.text, "t") == "<tr><td>2</td></tr>\n<tr><td>&#60;3&#62; \u2028</td></tr>"
    # a page at revisions/x.md is served at revisions/x/: its script sits there
    assert split_rest(Page("revisions/x.md", text))[1].path == "revisions/x/t.rows.js"
    assert split_rest(Page("a.md", "no mark")) == [Page("a.md", "no mark")]


@pytest.fixture(scope="module")
def small_lists(tmp_path_factory):
    """The fixture data built (English) with a threshold of one row."""
    base = tmp_path_factory.mktemp("lists")
    shutil.copytree(ROOT / "tests" / "fixtures" / "valid", base / "data")
    shutil.copyfile(ROOT / "data" / "ui.yaml", base / "data" / "ui.yaml")
    # a later revision that changes the best card and keeps the other, and one that changes
    # nothing: the history has three rows, and the diffs two consecutive pairs
    first = (base / "data" / "revisions" / "2019-04-03.yaml").read_text(encoding="utf-8")
    later = first.replace("2019-04-03", "2020-01-01").replace("gpus: [rtx-2070]", "gpus: [gtx-1060-6gb]")
    (base / "data" / "revisions" / "2020-01-01.yaml").write_text(later, encoding="utf-8")
    (base / "data" / "revisions" / "2021-01-01.yaml").write_text(later.replace("2020-01-01", "2021-01-01"), encoding="utf-8")
    paths = Paths(data=base / "data", build=base / "build", site=base / "site")
    return paths.site, _build_with_one_row(paths)


def _build_with_one_row(paths: Paths):
    """The English site of ``paths`` built with a threshold of one row (and a fixed date)."""
    old_rows, old_epoch = render.LIST_ROWS, os.environ.get("SOURCE_DATE_EPOCH")
    render.LIST_ROWS = pages.LIST_ROWS = 1  # the page split and the lists carried in part each read it
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    try:
        return build_site(paths, ["en"])
    finally:
        render.LIST_ROWS = pages.LIST_ROWS = old_rows
        if old_epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old_epoch


def test_catalogue_carries_the_newest_cards_and_the_rest_beside_it(small_lists):
    site, ds = small_lists
    html = (site / "gpus" / "index.html").read_text(encoding="utf-8")
    newest = max(ds.gpus, key=lambda g: (ds.gpus[g]["release_date"], g))
    others = sorted(set(ds.gpus) - {newest})
    assert f'id="{newest}"' in html and not any(f'id="{g}"' in html for g in others)
    assert f'data-wg-rest="gpu-table.rows.js" data-wg-total="{len(ds.gpus)}"' in html
    assert "wg-rest" in html and f"1 of the {len(ds.gpus)} rows" in html
    rest = _rows_of((site / "gpus" / "gpu-table.rows.js").read_text(encoding="utf-8"), "gpu-table")
    assert all(f'id="{g}"' in rest for g in others) and f'id="{newest}"' not in rest


@pytest.fixture(scope="module")
def lists_server(small_lists):
    yield from serve_directory(small_lists[0])


PHONE = {"width": 390, "height": 800}


def _open(browser, url, viewport=None, **kw):
    context = browser.new_context(viewport=viewport or {"width": 1280, "height": 900}, **kw)
    page = context.new_page()
    page.set_default_timeout(30000)
    asked = []
    page.on("request", lambda r: asked.append(r.url) if r.url.endswith(".rows.js") else None)
    page.goto(url)
    page.wait_for_load_state("networkidle")
    return context, page, asked


def test_rest_loads_on_show_all(lists_server, browser, small_lists):
    _, ds = small_lists
    context, page, asked = _open(browser, lists_server + "/gpus/")
    try:
        rows = page.locator("#gpu-table tbody tr")
        assert rows.count() == 1 and asked == []  # nothing more on load
        button = page.locator(".wg-rest button")
        assert button.is_visible()
        button.click()
        page.wait_for_function(f"document.querySelectorAll('#gpu-table tbody tr').length === {len(ds.gpus)}")
        assert len(asked) == 1 and not page.locator(".wg-rest").is_visible()
    finally:
        context.close()


def test_sorting_and_filtering_cover_every_card(lists_server, browser, small_lists):
    _, ds = small_lists
    total = len(ds.gpus)
    context, page, _ = _open(browser, lists_server + "/gpus/")
    try:
        # a sort before the rest is in sorts every card, in the order the reader asked for
        page.locator("#gpu-table thead th[data-key=memory]").click()  # numbers sort largest first
        page.wait_for_function(f"document.querySelectorAll('#gpu-table tbody tr').length === {total}")
        mems = [float(x) for x in page.locator("#gpu-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.mem)")]
        assert mems == sorted(mems, reverse=True)
    finally:
        context.close()
    vendor = sorted({g["vendor"] for g in ds.gpus.values()})[0]
    expected = sum(1 for g in ds.gpus.values() if g["vendor"] == vendor)
    context, page, asked = _open(browser, lists_server + f"/gpus/?vendor={vendor}")
    try:  # a filter in the address: the count is over every card
        page.wait_for_function(f"document.querySelectorAll('#gpu-table tbody tr').length === {total}")
        assert page.locator("#wg-filters output").inner_text().startswith(f"{expected} of {total}")
        assert len(asked) == 1
    finally:
        context.close()


def test_a_link_to_a_row_the_page_does_not_carry_still_lands(lists_server, browser, small_lists):
    _, ds = small_lists
    newest = max(ds.gpus, key=lambda g: (ds.gpus[g]["release_date"], g))
    other = sorted(set(ds.gpus) - {newest})[0]
    context, page, _ = _open(browser, lists_server + f"/gpus/#{other}")
    try:
        page.locator(f"#{other}").wait_for()
        assert page.locator(f"#{other} a").first.get_attribute("href") == f"{other}/"
    finally:
        context.close()


def test_without_javascript_the_carried_rows_and_the_note_show(lists_server, browser):
    context, page, _ = _open(browser, lists_server + "/gpus/", java_script_enabled=False)
    try:
        assert page.locator("#gpu-table tbody tr").count() == 1
        assert page.locator("#gpu-table tbody tr a").first.is_visible()
        assert page.locator(".wg-rest").is_visible() and not page.locator(".wg-rest button").is_visible()
    finally:
        context.close()


def test_history_carries_the_newest_revision_and_the_rest_beside_it(small_lists):
    site, ds = small_lists
    assert [r.id for r in ds.revisions] == ["2019-04-03", "2020-01-01", "2021-01-01"]
    page = (site / "history" / "index.html").read_text(encoding="utf-8")
    matrix = page.split('id="wg-matrix"', 1)[1].split("</table>", 1)[0]
    assert 'id="m2021-01-01"' in matrix and 'id="m2020-01-01"' not in matrix and 'id="m2019-04-03"' not in matrix
    assert 'data-wg-rest="wg-matrix.rows.js" data-wg-total="3"' in matrix
    rest = _rows_of((site / "history" / "wg-matrix.rows.js").read_text(encoding="utf-8"), "wg-matrix")
    assert rest.count("<tr ") == 2 and rest.index('id="m2020-01-01"') < rest.index('id="m2019-04-03"')
    assert "GeForce RTX 2070" in rest
    # the best card changed once: its timeline has two lines (2021 changed nothing), the newest
    # carried; the other profile's one line is whole
    best = page.split('id="tl-best-overall"', 1)[1].split("</table>", 1)[0]
    assert 'data-wg-rest="tl-best-overall.rows.js"' in best and "2020-01-01" in best and "2019-04-03" not in best
    assert "2019-04-03" in (site / "history" / "tl-best-overall.rows.js").read_text(encoding="utf-8")
    little = page.split('id="tl-little-money"', 1)[1].split("</table>", 1)[0]
    assert "data-wg-rest" not in little and not (site / "history" / "tl-little-money.rows.js").exists()


def test_history_rows_load_on_show_all_on_a_phone(lists_server, browser):
    context, page, asked = _open(browser, lists_server + "/history/", viewport=PHONE)
    try:
        assert page.locator("#wg-matrix tbody tr").count() == 1 and asked == []
        button = page.locator("[data-wg-rest-for=wg-matrix] button")
        button.scroll_into_view_if_needed()
        assert button.is_visible() and button.bounding_box()["width"] <= PHONE["width"]
        button.click()
        page.wait_for_function("document.querySelectorAll('#wg-matrix tbody tr').length === 3")
        assert [a.rsplit("/", 1)[1] for a in asked] == ["wg-matrix.rows.js"]
        assert "GeForce RTX 2070" in page.locator("#m2019-04-03").inner_text()
        page.locator("[data-wg-rest-for=tl-best-overall] button").click()
        page.wait_for_function("document.querySelectorAll('#tl-best-overall tbody tr').length === 2")
        assert len(asked) == 2 and not page.locator("[data-wg-rest-for=tl-best-overall]").is_visible()
    finally:
        context.close()


def test_the_diffs_page_carries_the_newest_pair_and_its_picker_one_date_per_select(small_lists):
    site, _ = small_lists
    page = (site / "diffs" / "index.html").read_text(encoding="utf-8")
    pairs = page.split('id="diff-pairs"', 1)[1].split("</table>", 1)[0]
    assert 'href="2020-01-01_2021-01-01/"' in pairs and "2019-04-03_2020-01-01" not in pairs
    assert 'data-wg-rest="diff-pairs.rows.js" data-wg-total="2"' in pairs
    rest = _rows_of((site / "diffs" / "diff-pairs.rows.js").read_text(encoding="utf-8"), "diff-pairs")
    assert 'href="2019-04-03_2020-01-01/"' in rest and (site / "diffs" / "2019-04-03_2020-01-01" / "index.html").is_file()
    picker = page.split('id="wg-diff"', 1)[1].split("</div>", 1)[0]
    assert picker.count("<option") == 2 and 'value="2020-01-01" selected' in picker and 'value="2021-01-01" selected' in picker


# ------------------------------------------------------------------ tables that grow with the measurements
# The shipped data has more measured results than a page carries: hundreds on the accuracy page's
# charts, and on the pages of the most measured cards.

def _most_measured_gpu(site) -> str:
    pages = [p for p in (site / "gpus").glob("*/measured-table.rows.js")]
    assert pages, "no GPU page leaves measured results beside it"
    return max(pages, key=lambda p: p.stat().st_size).parent.name


def test_measured_results_and_chart_data_carry_their_first_rows(built_site):
    import re

    from generator.publish.svg import CHART_TABLE_ROWS

    site, _ = built_site
    limit = render.LIST_ROWS
    for lang_dir in (site, site / "ko"):
        html = (lang_dir / "accuracy" / "index.html").read_text(encoding="utf-8")
        tables = re.findall(r'<table class="wg-chart__table" id="([a-z0-9-]+)">.*?<tbody( data-wg-rest="[^"]+" '
                            r'data-wg-total="(\d+)")?>(.*?)</tbody>', html, re.S)
        split = [t for t in tables if t[1]]
        assert split, "no chart data table on the accuracy page is split"
        for table, _, total, body in split:
            carried = body.count("<tr>")
            rest = _rows_of((lang_dir / "accuracy" / f"{table}.rows.js").read_text(encoding="utf-8"), table)
            # a chart's table, in its closed <details>, carries fewer rows than a list page
            assert carried == CHART_TABLE_ROWS and carried + rest.count("<tr>") == int(total) > limit
            assert f'data-wg-rest-for="{table}"' in html
        assert all(t[3].count("<tr>") <= limit for t in tables)
    gid = _most_measured_gpu(site)
    html = (site / "gpus" / gid / "index.html").read_text(encoding="utf-8")
    total = int(re.search(r'data-wg-rest="measured-table.rows.js" data-wg-total="(\d+)"', html)[1])
    body = html[html.index('id="measured-table"'):]
    body = body[:body.index("</tbody>")]
    rest = _rows_of((site / "gpus" / gid / "measured-table.rows.js").read_text(encoding="utf-8"), "measured-table")
    assert body.count("<tr>") - 1 == limit  # the header row, then the carried ones
    assert limit + rest.count("<tr>") == total
    assert "이 페이지에는" in (site / "ko" / "gpus" / gid / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def real_server(built_site):
    yield from serve_directory(built_site[0])


def test_a_chart_data_table_loads_its_rows_when_opened(real_server, browser):
    context, page, asked = _open(browser, real_server + "/accuracy/", viewport=PHONE)
    try:
        name = page.locator("table.wg-chart__table tbody[data-wg-rest]").first.locator("xpath=..").get_attribute("id")
        table = page.locator(f"#{name}")
        total = int(table.locator("tbody").get_attribute("data-wg-total"))
        from generator.publish.svg import CHART_TABLE_ROWS

        assert table.locator("tbody tr").count() == CHART_TABLE_ROWS and asked == []  # nothing more on load
        page.locator(f"figure:has(#{name}) summary").click()
        page.wait_for_function(f"document.querySelectorAll('#{name} tbody tr').length === {total}")
        assert len(asked) == 1 and asked[0].endswith(f"/accuracy/{name}.rows.js")
        assert not page.locator(f"[data-wg-rest-for='{name}']").is_visible()
        # closed and opened again: nothing is fetched or added twice
        page.locator(f"figure:has(#{name}) summary").click()
        page.locator(f"figure:has(#{name}) summary").click()
        page.wait_for_timeout(200)
        assert table.locator("tbody tr").count() == total and len(asked) == 1
    finally:
        context.close()


def test_a_cards_measured_results_load_on_show_all_on_a_phone(real_server, browser, built_site):
    gid = _most_measured_gpu(built_site[0])
    context, page, asked = _open(browser, real_server + f"/gpus/{gid}/", viewport=PHONE)
    try:
        rows = page.locator("#measured-table tbody tr")
        total = int(page.locator("#measured-table tbody").get_attribute("data-wg-total"))
        assert rows.count() == render.LIST_ROWS and asked == []
        button = page.locator("[data-wg-rest-for=measured-table] button")
        button.scroll_into_view_if_needed()
        assert button.is_visible() and button.bounding_box()["width"] <= PHONE["width"]
        button.click()
        page.wait_for_function(f"document.querySelectorAll('#measured-table tbody tr').length === {total}")
        assert len(asked) == 1 and not page.locator("[data-wg-rest-for=measured-table]").is_visible()
    finally:
        context.close()


def test_the_sites_own_measurement_files_beyond_the_newest_are_a_list_carried_in_part(tmp_path):
    """The accuracy page describes the newest file of the site's own measurements in full and lists
    the earlier ones in a table, carried in part like every list that grows with the data."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    own = data / "measurements" / "whichgpu-h100-sxm-2026-11-27.yaml"
    for other in own.parent.glob("whichgpu-*.yaml"):  # the site's own files of other cards: this test needs one
        if other != own:
            other.unlink()
            for lang in ("ko", "zh", "fr"):
                (data / "translations" / lang / "measurements" / other.name).unlink(missing_ok=True)
    text = own.read_text(encoding="utf-8")
    for day in ("2026-01-05", "2026-02-05", "2026-03-05"):
        copy = text.replace("date: 2026-11-27", f"date: {day}").replace(
            "title: 'whichgpu''s own", f"title: 'Run of {day}: whichgpu''s own")
        (own.parent / f"whichgpu-h100-sxm-{day}.yaml").write_text(copy, encoding="utf-8")
    paths = Paths(data=data, build=tmp_path / "build", site=tmp_path / "site")
    _build_with_one_row(paths)
    page = html.unescape((paths.site / "accuracy" / "index.html").read_text(encoding="utf-8"))
    section = page.split('id="own"', 1)[1].split("<h2", 1)[0]
    # the newest (2026-11-27) in full, under its own heading
    assert section.count("<h3") == 1 and "Run of" not in section.split("<h3", 1)[1].split("</h3>", 1)[0]
    carried = section.split('id="own-list"', 1)[1].split("</table>", 1)[0]
    assert carried.count("<tr>") == 2 and "Run of 2026-03-05" in carried  # the head row and the newest earlier file
    rest = html.unescape(_rows_of((paths.site / "accuracy" / "own-list.rows.js").read_text(encoding="utf-8"), "own-list"))
    assert rest.count("<tr>") == 2 and rest.index("Run of 2026-02-05") < rest.index("Run of 2026-01-05")
