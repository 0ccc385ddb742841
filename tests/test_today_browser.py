"""/today/ in Chromium, in four languages: every ranking sorts by the figure it names, cards today's
software does not run come last, the address keeps the choice, and the home form's workloads are
understood."""
from __future__ import annotations

import json

import pytest

LANGS = ("", "ko/", "zh/", "fr/")
WORKLOADS = ("transformer", "llm-inference", "llm-32b", "llm-70b", "memory", "cnn")

ORDER_JS = """(elec) => {
  const figureOf = JSON.parse(document.querySelector('#today-table').getAttribute('data-figure-of'));
  const w = document.querySelector('#wg-today-filters select[name=workload]').value;
  const f = figureOf[w];
  return Array.from(document.querySelectorAll('#today-table tbody tr')).filter((r) => !r.hidden).map((r) => {
    const v = JSON.parse(r.getAttribute('data-values') || '{}')[f];
    const buy = r.dataset.buy === '' ? NaN : Number(r.dataset.buy), kwh = r.dataset.kwh === '' ? 0 : Number(r.dataset.kwh);
    const value = v > 0 && buy > 0 ? v / (buy + kwh * elec) : null;
    return { gpu: r.dataset.gpu, runs: r.dataset.support === '' || r.dataset.support === 'current', value,
             shown: r.querySelector('.wg-today__value').textContent.trim() };
  });
}"""


def _check_order(rows):
    runs = [r["runs"] for r in rows]
    assert runs == sorted(runs, reverse=True), "a card today's software does not run ranks above one it runs"
    first = [r for r in rows if r["runs"]]
    has = [r["value"] is not None for r in first]
    assert has == sorted(has, reverse=True), "a card without the figure ranks above one with it"
    values = [r["value"] for r in first if r["value"] is not None]
    assert len(values) >= 3 and values == sorted(values, reverse=True)
    assert all(r["shown"] not in ("", "\u2014") for r in first if r["value"] is not None)


@pytest.mark.parametrize("lang", LANGS)
def test_every_ranking_of_today_sorts_in_every_language(server, page, lang):
    page.goto(f"{server}/{lang}today/")
    page.wait_for_selector("#today-table tbody tr", state="attached")
    for w in WORKLOADS:
        page.select_option("#wg-today-filters select[name=workload]", w)
        page.wait_for_function("w => new URL(location.href).searchParams.get('workload') === w || w === 'transformer'", arg=w)
        _check_order(page.evaluate(ORDER_JS, 0.17))
    # the reader's electricity price changes the ranking's figures and is kept in the address
    page.fill("#wg-today-filters input[name=electricity]", "0.5")
    page.wait_for_function("() => new URL(location.href).searchParams.get('electricity') === '0.5'")
    _check_order(page.evaluate(ORDER_JS, 0.5))


def test_the_home_forms_workloads_reach_today(server, page):
    for w in ("transformer", "llm-inference", "cnn", "rnn", "llm-70b"):
        page.goto(f"{server}/today/?workload={w}&budget=1500&memory=24")
        page.wait_for_selector("#today-table tbody tr", state="attached")
        assert page.eval_on_selector("#wg-today-filters select[name=workload]", "s => s.value") == w
        rows = page.evaluate(ORDER_JS, 0.17)
        assert rows and all(r["gpu"] for r in rows)
        budget_ok = page.evaluate("() => Array.from(document.querySelectorAll('#today-table tbody tr'))"
                                  ".filter(r => !r.hidden)"
                                  ".every(r => Number(r.dataset.buy) <= 1500 && Number(r.dataset.usable) >= 24)")
        assert budget_ok
    page.goto(f"{server}/today/?workload=decode_8b")  # the keys of the page's first version
    page.wait_for_selector("#today-table tbody tr", state="attached")
    assert page.eval_on_selector("#wg-today-filters select[name=workload]", "s => s.value") == "llm-inference"


def test_the_1500_usd_reader_is_shown_a_supported_card_first(server, page, built_site):
    site, _ds = built_site
    page.goto(f"{server}/today/?workload=transformer&budget=1500&memory=24")
    page.wait_for_selector("#today-table tbody tr", state="attached")
    first = page.evaluate("() => Array.from(document.querySelectorAll('#today-table tbody tr')).find(r => !r.hidden).dataset")
    assert first["support"] == "current" and first["gpu"] not in ("tesla-m40", "tesla-p40")
    doc = json.loads((site / "api" / "v1" / "today.json").read_text(encoding="utf-8"))
    assert {r["gpu"] for r in doc["rows"]} >= {first["gpu"]}
    assert page.locator(".wg-pick[data-persona='researcher'] li").count() >= 3


def test_the_compare_any_two_picker_offers_today_after_every_revision(server, page):
    page.goto(f"{server}/diffs/?a=2023-01-30&b=today")
    page.wait_for_function("document.querySelectorAll('#wg-diff tbody tr').length > 0")
    assert page.eval_on_selector("#wg-diff select[name=b]", "s => s.value") == "today"
    label = page.eval_on_selector("#wg-diff select[name=b]", "s => s.options[s.selectedIndex].textContent")
    assert "not a revision" in label
    best = page.locator('#wg-diff tbody tr[data-persona="best-overall"] td.wg-added')
    assert best.inner_text().strip()  # the site's pick for the best overall card stands as added
    page.select_option("#wg-diff select[name=a]", "today")
    page.select_option("#wg-diff select[name=b]", "2020-09-20")
    assert page.locator("#wg-diff table").is_hidden()  # today before a revision reads backwards: a message


@pytest.mark.parametrize("workload, head", [("llm-inference", "Tokens/s (estimate)"), ("transformer", "Relative performance")])
def test_the_pickers_today_mode_says_what_it_ranks_and_what_it_left_out(server, page, workload, head):
    from helpers import last, root_of, wait_ready

    page.goto(f"{server}/calculators/picker/?revision=today&workload={workload}&memory=16&budget=2000&prices=new")
    wait_ready(page, "picker")
    scope = root_of(page, "picker")
    assert scope.locator("[data-wg-col=perf]").inner_text().strip() == head
    text = scope.inner_text()
    assert "released after the revision" not in text and "today's software does not run" in text
    assert "1 cards" not in text
    result = last(page, "picker")
    rows = scope.locator("tbody tr")
    assert rows.count() > 0
    flagged = {r["id"] for r in result["rows"] if r["flag"] == "software"}
    vendors = {g: v for g, v in page.evaluate("WG_DATA.gpus.map(g => [g.id, g.vendor])")}
    assert flagged == {r["id"] for r in result["rows"] if vendors[r["id"]] != "nvidia"}
    values = [r["value"] for r in result["rows"]]
    assert values == sorted(values, reverse=True)


def test_the_picker_counts_the_flowchart_of_2023(server, page):
    page.goto(f"{server}/diffs/?a=2020-09-20&b=2023-01-30")
    page.wait_for_function("document.querySelectorAll('#wg-diff tbody tr').length > 0")
    added = page.locator('#wg-diff tbody tr[data-persona="advised"] td.wg-added').inner_text()
    for name in ("GeForce RTX 4090", "GeForce RTX 4080", "GeForce RTX 4070 Ti"):
        assert name in added, added
    best = page.locator('#wg-diff tbody tr[data-persona="best-overall"] td.wg-added').inner_text()
    assert "GeForce RTX 4090" in best
