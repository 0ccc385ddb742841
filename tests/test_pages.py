"""The generated pages of the real data: GPU pages, history, diffs, topics, API files and feeds."""
from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET

LANG_DIRS = ("", "ko/", "zh/", "fr/")


def test_every_gpu_has_a_page_in_every_language(built_site):
    site, ds = built_site
    for gid in ds.gpus:
        for prefix in LANG_DIRS:
            assert (site / prefix / "gpus" / gid / "index.html").is_file(), (prefix, gid)


def test_gpu_pages_stay_out_of_the_sidebar(built_site):
    site, ds = built_site
    home = (site / "index.html").read_text(encoding="utf-8")
    nav = home.split('<nav class="md-nav md-nav--primary"', 1)[1].split("md-sidebar--secondary", 1)[0]
    assert "gpus/rtx-2070/" not in nav and 'href="gpus/"' in nav


def test_gpu_page_has_sources_derived_figures_and_history(built_site):
    site, ds = built_site
    page = (site / "gpus" / "rtx-2070" / "index.html").read_text(encoding="utf-8")
    assert page.count('id="source-') == len(ds.gpus["rtx-2070"]["sources"])
    assert "59.92" in html.unescape(page)  # 29.9 dense tensor TFLOPS / 499 USD x 1000
    assert 'href="../../revisions/2019-04-03/"' in page and "Best GPU overall" in page


def test_history_matrix_has_a_column_per_persona_and_a_row_per_revision_newest_first(built_site):
    site, ds = built_site
    page = (site / "history" / "index.html").read_text(encoding="utf-8")
    table = page.split('id="wg-matrix"', 1)[1].split("</table>", 1)[0]
    header = table.split("</thead>", 1)[0]
    assert re.findall(r'<th scope="col" data-persona="([a-z0-9-]+)"', header) == list(ds.persona_ids())
    rows = re.findall(r'<tr id="m([0-9-]+)"><th scope="row">.*?</th>(.*?)</tr>', table)
    assert [r for r, _ in rows] == [r.id for r in reversed(ds.revisions)]  # every revision, newest first
    cells = {rid: re.findall(r'<td data-persona="([a-z0-9-]+)"[^>]*>(.*?)</td>', body) for rid, body in rows}
    # a revision that speaks to no profile has one cell saying so; the others a cell per profile
    silent = {rid for rid, body in rows if "This revision speaks to no reader profile" in body}
    assert "2014-08-14" in silent and "2015-08-20" not in silent
    assert all(cells[rid] == [] for rid in silent)
    assert all(len(cells[rid]) == len(ds.persona_ids()) and any(text for _, text in cells[rid])
               for rid in set(cells) - silent)
    # the 2023 flowchart answers "best overall" (a leaf tagged personas: [best-overall]); marked as such
    cell_2023 = dict(cells["2023-01-16"])["best-overall"]
    assert "GeForce RTX 4090" in cell_2023 and "from the flowchart" in cell_2023
    timeline = page.split('id="timeline-best-overall"', 1)[1].split("<h3", 1)[0]
    assert "GeForce RTX 4090" in timeline and "not addressed" not in timeline
    dates = re.findall(r'<time datetime="([0-9-]+)"', timeline)
    assert dates == sorted(dates, reverse=True) and dates[0] == "2023-01-16"  # where the advice changed, newest first


def test_a_diff_page_per_consecutive_pair(built_site):
    site, ds = built_site
    pairs = list(zip(ds.revisions, ds.revisions[1:], strict=False))
    for a, b in pairs:
        assert (site / "diffs" / f"{a.id}_{b.id}" / "index.html").is_file()
    page = (site / "diffs" / "2016-07-23_2017-03-19" / "index.html").read_text(encoding="utf-8")
    assert "<h1" in page
    # the list of pairs, newest first, links each one
    index = (site / "diffs" / "index.html").read_text(encoding="utf-8")
    listed = re.findall(r'<tr id="p([0-9-]+)_([0-9-]+)"><td><a href="([^"]+)"', index)
    assert listed == [(a.id, b.id, f"{a.id}_{b.id}/") for a, b in reversed(pairs)]


def test_revision_pages_show_changes_since_the_previous_one(built_site):
    site, ds = built_site
    page = (site / "revisions" / "2019-04-03" / "index.html").read_text(encoding="utf-8")
    section = page.split('id="since-previous"', 1)[1].split('id="recommendations"', 1)[0]
    assert "GeForce RTX 2070" in section


def test_feeds_are_atom_with_one_entry_per_revision(built_site):
    site, ds = built_site
    ns = {"a": "http://www.w3.org/2005/Atom"}
    for prefix in LANG_DIRS:
        root = ET.parse(site / prefix / "feed.atom").getroot()
        entries = root.findall("a:entry", ns)
        assert len(entries) == len(ds.revisions)
        assert entries[0].find("a:id", ns).text == f"tag:whichgpu,2014:revision/{ds.latest.id}"
    head = (site / "ko" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<link rel="alternate" type="application/atom\+xml" href="[^"]*feed.atom"', head)


def test_api_item_files_and_dump(built_site):
    site, ds = built_site
    api = site / "api" / "v1"
    one = json.loads((api / "gpus" / "rtx-2070.json").read_text(encoding="utf-8"))
    assert one["result"]["id"] == "rtx-2070" and one["result"]["memory_gb"] == 8
    rev = json.loads((api / "revisions" / f"{ds.latest.id}.json").read_text(encoding="utf-8"))
    assert rev["result"]["date"] == ds.latest.id
    dump = json.loads((api / "all.json").read_text(encoding="utf-8"))["result"]
    assert len(dump["gpus"]) == len(ds.gpus) and len(dump["revisions"]) == len(ds.revisions)
    assert len(list((api / "gpus").glob("*.json"))) == len(ds.gpus)


def test_api_objects_follow_the_published_schema(built_site):
    import jsonschema

    site, _ = built_site
    api = site / "api" / "v1"
    schema = json.loads((api / "schema.json").read_text(encoding="utf-8"))
    gpus = json.loads((api / "gpus.json").read_text(encoding="utf-8"))["result"]
    revisions = json.loads((api / "revisions.json").read_text(encoding="utf-8"))["result"]
    for kind, items in (("gpu", gpus), ("revision", revisions)):
        validator = jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{kind}"})
        for item in items:
            assert validator.is_valid(item), (kind, list(validator.iter_errors(item))[:1])


def test_topics_have_pages(built_site):
    site, ds = built_site
    assert ds.topics
    for t in ds.topics:
        assert (site / "fr" / "topics" / t.id / "index.html").is_file()


def test_gpu_page_says_which_models_it_runs_and_what_was_measured(built_site):
    """The GPU page's table is the derive stage's estimate for every catalogue model, and the
    measurements made on the card are listed with their sources."""
    from generator.facts.derive import derive

    site, ds = built_site
    facts = derive(ds)
    page = html.unescape((site / "gpus" / "rtx-4090" / "index.html").read_text(encoding="utf-8"))
    section = page.split('id="fits"', 1)[1].split('id="history"', 1)[0]
    runs, measured = section.split('id="measured"', 1)
    rows = re.findall(r"<tr><th scope=\"row\"><a href=\"../../models/([a-z0-9-]+)/\">", runs)
    assert rows and set(rows) == {mid for mid in ds.models if (mid, "rtx-4090") in facts.grid}
    est = facts.grid["llama-3-1-8b", "rtx-4090"]
    assert f"{est['memory']['total_bytes'] / 1073741824:.1f} GiB" in runs and est["fits"]
    assert facts.grid["llama-3-1-405b", "rtx-4090"]["fits"] is False
    on_card = [m for m in facts.measured if m["gpu"] == "rtx-4090"]
    assert on_card and measured.count("<tr><th scope=\"row\">") == len(on_card)
    assert all(m["url"] in measured for m in on_card)


def _pages(site):
    return sorted(site.rglob("*.html"))


def test_no_script_blocks_the_first_paint(built_site):
    """Every external script is deferred or a module, and no page lists the shared data file
    (whichgpu.js loads it on the pages that use it)."""
    site, _ = built_site
    blocking, data = [], []
    for path in _pages(site):
        text = path.read_text(encoding="utf-8")
        for tag in re.findall(r"<script\b[^>]*\bsrc=[^>]*>", text):
            if " defer" not in tag and 'type="module"' not in tag:
                blocking.append(f"{path.relative_to(site)}: {tag}")
            if "whichgpu-data.js" in tag:
                data.append(str(path.relative_to(site)))
    assert blocking == []
    assert data == []
    assert (site / "assets" / "data" / "whichgpu-data.js").is_file()


def test_search_index_is_utf8_and_leaves_out_repeated_figures(built_site):
    site, _ = built_site
    for lang in LANG_DIRS:
        raw = (site / lang / "search" / "search_index.json").read_text(encoding="utf-8")
        assert not re.search(r"\\u[0-9a-fA-F]{4}", raw[raw.index('"docs":'):]), lang  # the config holds regex escapes
        docs = json.loads(raw)["docs"]
        where = {d["location"] for d in docs}
        # GPU pages are found by name, their notes and their history ...
        assert "gpus/rtx-2070/" in where and "gpus/rtx-2070/#history" in where, lang
        # ... not by computed figures, model tables or source URLs, nor by the catalogue's copies
        for left_out in ("gpus/rtx-2070/#derived", "gpus/rtx-2070/#fits", "gpus/rtx-2070/#sources", "gpus/#notes", "history/#matrix"):  # noqa: E501
            assert left_out not in where, (lang, left_out)
        catalogue = next(d for d in docs if d["location"] == "gpus/")
        assert "techpowerup" not in catalogue["text"]
    ko = json.loads((site / "ko" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any("개정판" in d["text"] or "개정판" in d["title"] for d in ko["docs"])
    assert json.loads((site / "ko" / "assets" / "data" / "search-terms.json").read_text(encoding="utf-8"))[
        "synonyms"]["타이탄"] == ["TITAN"]


def test_search_index_holds_each_text_once(built_site):
    """Texts repeated on list pages are found on their own page only, so a query does not return
    the list of all revisions, the copy of the newest revision or three copies of the flowchart."""
    site, ds = built_site
    tree_rev = [r for r in ds.revisions if r.get("decision_tree")][-1]
    question = tree_rev["decision_tree"]["question"]
    for lang in LANG_DIRS:
        docs = json.loads((site / lang / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
        assert not [d["location"] for d in docs if d["location"].startswith("latest/")], lang
        listing = next(d for d in docs if d["location"] == "revisions/")
        assert len(listing["text"]) < 600, (lang, len(listing["text"]))
        if lang == "":
            summary = ds.revision("2019-04-03")["summary"][:60]
            assert [d["location"] for d in docs if summary in d["text"]] == ["revisions/2019-04-03/#summary"]
            assert [d["location"] for d in docs if question in d["text"]] == [f"revisions/{tree_rev.id}/#decision-tree"]


def test_measured_rows_say_how_their_generated_tokens_count(built_site):
    """A decode rate timed with its prompt and a peak of a run that generated tokens say so, each in
    its own words: the peak's tokens are in the cache, not in a timing."""
    import re

    site, _ = built_site
    text = (site / "models" / "qwen2-5-7b" / "index.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr><th scope=\"row\">.*?</tr>", text, flags=re.S)
    peak = [r for r in rows if "Peak memory, GiB" in r and "tokens generated" in r]
    decode = [r for r in rows if "Decode, tokens/s" in r and "tokens generated" in r]
    assert peak and decode
    assert all("held in the cache at the peak" in r and "timed with the prompt" not in r for r in peak)
    assert all("timed with the prompt" in r for r in decode)


def test_the_sites_own_measurements_are_described_and_their_rows_lead_there(built_site):
    """Results sourced to benchmarks/gpu_measure.py have no address: the accuracy page describes
    each such file (in the reader's language), and every table row of one links to that section."""
    site, ds = built_site
    own = [m for m in ds.measurements if m.get("script")]
    assert own
    for prefix, heading in (("", "Measured by the site"), ("ko/", "사이트가 직접 잰 값"), ("zh/", "本站自测"),
                            ("fr/", "Mesuré par le site")):
        page = html.unescape((site / prefix / "accuracy" / "index.html").read_text(encoding="utf-8"))
        section = page.split('id="own"', 1)[1].split("<h2", 1)[0]
        assert heading in section.split("</h2>", 1)[0], prefix
        text = re.sub(r"<[^>]+>", "", section)
        for src in own:
            assert str(len(src["results"])) in text and "python -m benchmarks.gpu_measure" in text, prefix
        # the charts' tables link the site's rows to the section, the others to their address
        rows = re.findall(r"<tr>.*?</tr>", page.split('id="charts"', 1)[1], flags=re.S)
        mine = [r for r in rows if "whichgpu (own measurements)" in r]
        assert mine and all('href="#own"' in r for r in mine), prefix
        assert not any('href="#own"' in r for r in rows if r not in mine), prefix
    # model pages carry their first rows of results (the rest load on demand): every carried one links
    rows = []
    for model in sorted({r["model"] for src in own for r in src["results"]}):
        page = html.unescape((site / "models" / model / "index.html").read_text(encoding="utf-8"))
        rows += [r for r in re.findall(r"<tr>.*?</tr>", page, flags=re.S) if "whichgpu (own measurements)" in r]
    assert rows and all('href="../../accuracy/#own"' in r for r in rows)


def test_accuracy_page_shows_both_bands_and_the_held_out_check():
    """The accuracy page prints, per metric and runtime, the error on results the fit has not seen
    and on those it was fitted on, and the held-out check with the figures and counts that
    ``python -m benchmarks.holdout`` gives."""
    from pathlib import Path

    from benchmarks import holdout
    from generator.data.loader import load_dataset
    from generator.facts.derive import derive
    from generator.publish.render import Context, render_language

    root = Path(__file__).resolve().parent.parent
    ds, _ = load_dataset(root / "data", root)
    facts = derive(ds)
    pages = {p.path: p.text for p in render_language(ds, "en", root / "templates" / "pages", only={"accuracy/index.md"})}
    page = html.unescape(pages["accuracy/index.md"])
    ctx = Context(ds, "en")
    table = page.split("{ #errors }", 1)[1].split("</table>", 1)[0]
    assert "Median error, unseen" in table and "Median error, fitted" in table
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>.*?</t[hd]>", table)]
    row = cells.index(ctx.ui_plain("metric.decode_tokens_per_s"), 8)  # the first decode row
    per = facts.estimates["errors"]["decode_tokens_per_s"]
    entry = per[min(rt for rt in per if rt != "all")]  # the first row, "all" coming last
    shown = [f"{ctx.num(x, 1)} %" for x in (entry["unseen"]["median_pct"], entry["unseen"]["p90_pct"], entry["median_pct"],
                                            entry["p90_pct"])]
    assert cells[row + 2:row + 6] == shown
    assert cells[row + 6:row + 8] == [str(entry["count"]), str(entry["unseen"]["sources"])]
    # the held-out check: benchmarks.holdout's figures, validated and fitted on their own
    rows, problems = holdout.validate(root / "data", holdout.HOLDOUT)
    assert not problems
    expected = holdout.errors(root / "data", rows)
    assert facts.holdout["errors"] == expected and facts.holdout["results"] == len(rows)
    section = page.split("{ #holdout }", 1)[1].split("</table>", 1)[0]
    assert f"{ctx.num(len(rows))} public results in {len({r['source'] for r in rows})} files" in section
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>.*?</t[hd]>", section)][6:]
    printed = [cells[i:i + 6] for i in range(0, len(cells), 6)]
    want = [[ctx.ui_plain("metric." + metric), ctx.ui_plain("accuracy.all_runtimes") if rt == "all" else rt,
             f"{ctx.num(e['median_pct'], 1)} %", f"{ctx.num(e['p90_pct'], 1)} %", str(e["count"]), str(e["sources"])]
            for metric, per in expected.items() for rt, e in per.items()]
    assert printed == want
    # every page's band text names the unseen band
    band = ctx.band_text(facts.estimates["errors"]["decode_tokens_per_s"]["llama.cpp"])
    assert "has not seen" in band and "fitted on" in band
