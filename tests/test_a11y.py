"""Accessibility: axe-core (WCAG 2.1 A and AA rules) on every kind of page, in every language,
in the light and the dark colour scheme."""
from __future__ import annotations

import pytest

from benchmarks.lighthouse_server import ARGS, CHROMIUM

KINDS = ["", "latest/", "revisions/", "revisions/2019-04-03/", "revisions/2016-07-23/", "gpus/", "gpus/rtx-2070/",
         "compare/?gpus=rtx-4090,rtx-3090", "history/", "diffs/", "diffs/2016-07-23_2017-03-19/", "topics/",
         "topics/frameworks/", "api/", "contributing/"]
OPTIONAL = ["charts/", "calculators/"]
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


@pytest.fixture(scope="module")
def axe_browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("lang", ["", "ko/", "zh/", "fr/"])
def test_no_wcag_violations(server, axe_browser, built_site, lang, scheme):
    from axe_playwright_python.sync_playwright import Axe

    site, _ = built_site
    kinds = KINDS + [k for k in OPTIONAL if (site / k / "index.html").is_file()]
    context = axe_browser.new_context(color_scheme=scheme)
    page = context.new_page()
    axe = Axe()
    found = []
    for kind in kinds:
        page.goto(f"{server}/{lang}{kind}")
        page.wait_for_load_state("networkidle")
        result = axe.run(page, options={"runOnly": {"type": "tag", "values": TAGS}})
        for v in result.response["violations"]:
            found.append(f"/{lang}{kind}: {v['id']} ({v['impact']}) at {[n['target'] for n in v['nodes'][:3]]}")
    context.close()
    assert found == [], "\n".join(found)


def _ready(page, name):
    page.wait_for_function(f'(() => {{ const r = document.querySelector(\'[data-wg-calc="{name}"]\'); return r && "wgLast" in r; }})()')  # noqa: E501


# States a reader reaches by using a page, not by loading it: a drawn result, a chosen diff, the
# search dialog with results, a filtered catalogue.
def _picker(page):
    _ready(page, "picker")


def _llm(page):
    _ready(page, "llm")


def _diff(page):
    page.wait_for_function("document.querySelectorAll('#wg-diff tbody tr').length > 0")


def _settled(page):
    """Wait until no tooltip is fading in or out: a reader sees a tooltip shown or hidden, and axe
    would otherwise measure the contrast of a half-transparent one (the pointer ends on an element
    with a title after some of the steps)."""
    page.wait_for_function("""() => [...document.querySelectorAll('.md-tooltip')].every((t) => {
        const o = Number(getComputedStyle(t).opacity); return o === 0 || o === 1; })""")
    # nor any other transition under way (search results fading in as the query is typed): axe
    # measures what a reader sees once the page is still
    page.wait_for_function("""() => document.getAnimations().every((a) => a.playState !== 'running'
        || a.effect.getComputedTiming().endTime === Infinity)""")


def _search(page):
    # Opened without moving the pointer, which rests outside the page: a click would leave it on
    # the search's Clear button, whose tooltip fades in while axe runs (a reader's finger is not
    # left hovering there).
    page.mouse.move(-1, -1)
    page.locator('label.md-header__button[for="__search"]').dispatch_event("click")  # the phone header's search button
    page.locator("input.md-search__input").focus()
    page.keyboard.type("RTX", delay=20)
    page.keyboard.press("End")
    page.locator(".md-search-result__item").first.wait_for()
    # the results of the whole query, not of its first letters: the list stays the same for a poll
    page.wait_for_function("""() => { const list = document.querySelector('.md-search-result__list');
        const now = list ? list.innerHTML : null, same = now === window.__wgResults;
        window.__wgResults = now; return same; }""", polling=250)


def _filtered(page):
    page.select_option("#wg-filters select[name=vendor]", "amd")
    page.wait_for_function("document.querySelectorAll('#gpu-table tbody tr[hidden]').length > 0")


def _trail(page):
    _ready(page, "tree")
    page.wait_for_function("document.querySelectorAll('.wgc-trail li').length === 3")


def _tapped(page):
    point = page.locator("#wg-chart-spec-fp32 g.pt").first
    point.scroll_into_view_if_needed()
    b = point.bounding_box()
    page.mouse.click(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    page.wait_for_function("document.querySelector('#wg-chart-spec-fp32 .wg-chart__picked--on')")


def _columns(page):
    page.locator(".wg-columns summary").click()
    for box in page.locator('.wg-columns input[name="col"]').all():
        box.check()


def _matrix(page):
    page.locator("#wg-matrix td.wg-from-tree").first.scroll_into_view_if_needed()


STATES = [("calculators/picker/?workload=llm-inference&memory=24&budget=2000", _picker),
          ("calculators/memory-llm/", _llm), ("diffs/?a=2016-07-23&b=2019-04-03", _diff), ("gpus/", _search),
          ("gpus/", _filtered), ("calculators/picker/?tree=nyy", _trail), ("charts/", _tapped),
          ("gpus/", _columns), ("history/", _matrix)]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("lang", ["", "ko/", "zh/", "fr/"])
def test_no_wcag_violations_in_reached_states(server, axe_browser, built_site, lang, scheme):
    from axe_playwright_python.sync_playwright import Axe

    context = axe_browser.new_context(color_scheme=scheme, viewport={"width": 412, "height": 915})
    page = context.new_page()
    page.set_default_timeout(30000)
    axe = Axe()
    found = []
    for path, reach in STATES:
        page.goto(f"{server}/{lang}{path}")
        page.wait_for_load_state("networkidle")
        reach(page)
        _settled(page)
        result = axe.run(page, options={"runOnly": {"type": "tag", "values": TAGS}})
        for v in result.response["violations"]:
            found.append(f"/{lang}{path} after {reach.__name__[1:]}: {v['id']} ({v['impact']}) "
                         f"at {[n['target'] for n in v['nodes'][:3]]}")
    context.close()
    assert found == [], "\n".join(found)
