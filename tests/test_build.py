"""Builds of the real site and of small fixture sites: layout, strictness, escaping, safety."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EPOCH, HOSTILE, ROOT, build_fixture, run_cli

from generator.data.locales import TRANSLATED_LANGS  # noqa: E402


def html_files(site: Path):
    return sorted(site.rglob("*.html"))


# ------------------------------------------------------------------ the real site

def test_every_language_has_every_page(built_site):
    site, _ = built_site
    english = {p.relative_to(site).as_posix() for p in html_files(site)
               if p.relative_to(site).parts[0] not in TRANSLATED_LANGS}
    assert {"index.html", "latest/index.html", "revisions/index.html", "gpus/index.html",
            "revisions/2015-08-20/index.html", "revisions/2016-07-23/index.html",
            "revisions/2019-04-03/index.html", "api/index.html"} <= english
    for lang in TRANSLATED_LANGS:
        theirs = {p.relative_to(site / lang).as_posix() for p in html_files(site / lang)}
        assert theirs == english, lang


def test_html_lang_per_language(built_site):
    site, _ = built_site
    for lang, prefix in (("en", ""), ("ko", "ko/"), ("zh", "zh/"), ("fr", "fr/")):
        text = (site / prefix / "gpus" / "index.html").read_text(encoding="utf-8")
        assert re.search(rf'<html lang="{lang}"', text), lang


def test_language_switcher_points_to_the_same_page(built_site):
    site, _ = built_site
    page = (site / "ko" / "revisions" / "2016-07-23" / "index.html").read_text(encoding="utf-8")
    links = dict(re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', page))
    targets = {lang: href for href, lang in links.items()}
    assert targets["en"] == "../../../revisions/2016-07-23/"
    assert targets["fr"] == "../../../fr/revisions/2016-07-23/"
    for lang, href in targets.items():
        resolved = (site / "ko" / "revisions" / "2016-07-23" / href).resolve()
        assert (resolved / "index.html").is_file(), (lang, href)


def test_api_files_only_at_the_root(built_site):
    site, _ = built_site
    for name in ("gpus.json", "revisions.json", "personas.json"):
        assert (site / "api" / "v1" / name).is_file()
        assert not (site / "ko" / "api" / "v1" / name).exists()


def test_chinese_search_index_is_segmented(built_site):
    site, _ = built_site
    index = (site / "zh" / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "\\u200b" in index or "\u200b" in index  # jieba boundaries


def test_no_page_loads_anything_from_outside(built_site):
    site, _ = built_site
    external = re.compile(r'<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)="(?:https?:)?//', re.I)
    for page in html_files(site):
        text = page.read_text(encoding="utf-8")
        assert not external.search(text), page
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text


def test_old_revisions_link_the_latest(built_site):
    site, ds = built_site
    old = (site / "revisions" / ds.revisions[0].id / "index.html").read_text(encoding="utf-8")
    assert f'href="../{ds.latest.id}/"' in old
    newest = (site / "revisions" / ds.latest.id / "index.html").read_text(encoding="utf-8")
    assert "admonition warning" not in newest


# ------------------------------------------------------------------ fixture sites

def fixture_repo(tmp_path: Path, tree) -> Path:
    """A repo-like folder: the project's templates/docs/mkdocs.yml with the tree's data."""
    (tmp_path / "data" / "ui.yaml").write_text((ROOT / "data" / "ui.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path


def test_hostile_strings_stay_text_everywhere(tree, tmp_path):
    import json

    gpu = "gpus/nvidia/rtx-2070.yaml"
    tree.set(gpu, "name", json.dumps(HOSTILE[0] + " " + HOSTILE[5]))
    tree.set(gpu, "architecture", json.dumps(HOSTILE[1]))
    tree.set(gpu, "memory_type", json.dumps("<b>|x</b>*"))
    tree.set(gpu, "notes", json.dumps(" ".join(HOSTILE)))
    tree.set(gpu, "aliases", json.dumps([HOSTILE[2], HOSTILE[3]]))
    tree.set("revisions/2019-04-03.yaml", "summary", json.dumps(" ".join(HOSTILE)))
    rev = tree.read("revisions/2019-04-03.yaml").replace("    note: A used card.", "    note: " + json.dumps(HOSTILE[4] + HOSTILE[1]))  # noqa: E501
    rev += "changes:\n  - type: section-added\n    note: " + json.dumps(HOSTILE[0]) + "\n"
    rev += "memory_guidance:\n  - text: " + json.dumps(HOSTILE[5] + HOSTILE[2]) + "\n"
    rev += "vendors:\n  amd:\n    verdict: usable\n    note: " + json.dumps(HOSTILE[3] + HOSTILE[9]) + "\n"
    tree.write("revisions/2019-04-03.yaml", rev)
    tree.write("topics/hostile.yaml", "title: " + json.dumps(HOSTILE[0]) + "\nsummary: " + json.dumps(HOSTILE[2]) +
               "\norder: 1\nsections:\n  - heading: " + json.dumps(HOSTILE[5]) + "\n    paragraphs: [" + json.dumps(HOSTILE[1]) +
               "]\n    table:\n      caption: " + json.dumps(HOSTILE[3]) + "\n      columns: [" + json.dumps(HOSTILE[4]) +
               "]\n      rows:\n        - [" + json.dumps(HOSTILE[8]) + "]\nsources: [https://example.org/t]\n")
    tree.write("personas.yaml", "best-overall:\n  name: " + json.dumps(HOSTILE[0] + HOSTILE[2]) +
               "\nlittle-money:\n  name: " + json.dumps(HOSTILE[4] + HOSTILE[9]) + "\n")
    tree.write("translations/ko/revisions/2019-04-03.yaml",
               "summary:\n  text: " + json.dumps(HOSTILE[1] + HOSTILE[3]) + "\n  source: abcdefabcdef\n")
    site = tmp_path / "site"
    build_fixture(tree, site, ui_edits={"nav.gpus": HOSTILE[0], "gpus.title": HOSTILE[4], "home.heading": HOSTILE[2],
                                        "revision.heading": "{date} " + HOSTILE[1]})
    bad = re.compile(r"<script>alert|<img src=x|<[^>]*onerror=|href=\"javascript:|<b>entity|\{\{ 7\*7|>49<", re.I)
    seen_escaped = False
    for page in html_files(site):
        text = page.read_text(encoding="utf-8")
        assert not bad.search(text), (page, bad.search(text).group(0))
        assert "\u202e" not in text and "\u200b" not in text.replace("search_index", "")
        seen_escaped |= "&lt;script&gt;alert" in text or "&#60;script&#62;alert" in text
    assert seen_escaped
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#34;x1&#34;)&lt;/script&gt;" in home or "&lt;script&gt;alert(&quot;x1&quot;)&lt;/script&gt;" in home  # noqa: E501
    # the title and nav carry the persona-free page titles; the GPU table shows the name as text
    import html as _html

    table = (site / "gpus" / "index.html").read_text(encoding="utf-8")
    cell = re.search(r'<tr id="rtx-2070"[^>]*>\s*<th scope="row"[^>]*><a href="rtx-2070/">(.*?)</a></th>', table, re.S).group(1)
    assert "<" not in cell and _html.unescape(cell) == HOSTILE[0] + " " + HOSTILE[5]
    # a chart reaches the page as one raw HTML block, escaped for HTML alone: Markdown leaves its
    # texts as they are (no emphasis, no code span, no heading made of the name)
    charts = (site / "charts" / "index.html").read_text(encoding="utf-8")
    tips = [_html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", charts, re.S) if "x1" in t]
    assert tips and all(HOSTILE[0] + " " + HOSTILE[5] in t for t in tips)
    assert "<em>emph</em>" not in charts and "<code>code</code>" not in charts
    import xml.etree.ElementTree as ET

    feed = ET.parse(site / "feed.atom").getroot()
    summaries = [e.text for e in feed.iter("{http://www.w3.org/2005/Atom}summary")]
    assert " ".join(HOSTILE).replace("\u202e", "").replace("\u202c", "").replace("\u200b", "") in summaries
    api = json.loads((site / "api" / "v1" / "gpus.json").read_text(encoding="utf-8"))
    assert api["result"][1]["name"].startswith('<script>alert("x1")</script>')


def test_invalid_data_leaves_the_site_untouched(tree, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "marker.txt").write_text("previous build")
    tree.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "eight")
    result = run_cli("build", "--data", str(tree.data), "--site-dir", str(site))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "rtx-2070.yaml:5: memory_gb: expected a number" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "site"]
    assert [p.name for p in site.iterdir()] == ["marker.txt"]


def test_failed_mkdocs_build_leaves_the_site_untouched(tree, tmp_path, monkeypatch):
    from generator.site import mkdocs_glue

    site = tmp_path / "site"
    site.mkdir()
    (site / "marker.txt").write_text("previous build")

    def boom(config_file, overrides):
        # one language's MkDocs build fails, whichever process runs it
        if str(overrides["site_dir"]).endswith("-ko"):
            raise mkdocs_glue.BuildFailed("Aborted with 1 warnings in strict mode!")
        Path(overrides["site_dir"]).mkdir(parents=True, exist_ok=True)

    monkeypatch.setattr(mkdocs_glue, "build", boom)
    with pytest.raises(mkdocs_glue.BuildFailed):
        build_fixture(tree, site)
    assert [p.name for p in site.iterdir()] == ["marker.txt"]
    assert not list(tmp_path.glob("site.tmp-*"))


def test_two_builds_are_identical(tree, tmp_path):
    from generator.site.pipeline import manifest

    a, b = tmp_path / "a", tmp_path / "b"
    build_fixture(tree, a)
    build_fixture(tree, b)
    ma, mb = manifest(a), manifest(b)
    assert ma == mb
    for rel in ma:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_missing_interface_text_is_a_clean_error(tree, tmp_path):
    from generator.data.problems import DataError
    from generator.site.pipeline import Paths, generate, load_or_fail

    tree.write("ui.yaml", "nav.home: Home\n")
    paths = Paths(root=ROOT, data=tree.data, build=tmp_path / "build", site=tmp_path / "site")
    ds = load_or_fail(paths)
    with pytest.raises(DataError) as info:
        generate(ds, paths, ["en"])
    assert str(info.value.problems[0]).endswith("missing: the page templates need this interface text")


_FORK_STATE = r"""
import json, sys
from pathlib import Path
import generator.site.pipeline as site
from generator.publish.render import make_env

seen = {}
def fork_map(fn, items, shared):
    ds, paths, parts = shared
    from material.plugins.search import plugin
    env = make_env(paths.templates, paths.build / ".cache" / "jinja-pages")
    from generator import reuse
    seen.update(theme_files=max(map(len, reuse.THEME_FILES._answers.values()), default=0))
    seen.update(mkdocs="mkdocs.commands.build" in sys.modules, parser="generator.site.mkdocs_adapter" in sys.modules,
                templates=sorted(k[1] for k in env.cache.keys()), items=list(items))
    raise SystemExit(0)
site._fork_map = fork_map
paths = site.Paths(root=Path(sys.argv[1]), data=Path(sys.argv[2]), build=Path(sys.argv[3]), site=Path(sys.argv[4]))
try:
    site.build_site(paths, ("en", "ko"))
finally:
    print(json.dumps(seen))
"""


@pytest.mark.skipif(not hasattr(os, "fork") or (os.cpu_count() or 1) < 2, reason="the parallel build forks on two cores or more")
def test_a_full_build_readies_mkdocs_and_the_templates_before_it_forks(tree, tmp_path):
    """What every language process would redo is done once in the parent: MkDocs and the theme's
    plugins imported, the search parser installed, every page template compiled, the theme's
    files listed."""
    import json

    r = subprocess.run([sys.executable, "-c", _FORK_STATE, str(ROOT), str(tree.data), str(tmp_path / "build"),
                        str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH})
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert seen["items"] == ["en", "ko"]
    assert seen["mkdocs"] and seen["parser"] and seen["theme_files"] > 10
    pages = sorted(p.relative_to(ROOT / "templates" / "pages").as_posix() for p in (ROOT / "templates" / "pages").rglob("*.j2"))
    assert seen["templates"] == pages


def test_preloading_a_broken_configuration_leaves_the_error_to_the_build(tmp_path):
    from generator.site import mkdocs_glue

    bad = tmp_path / "mkdocs.yml"
    bad.write_text("site_name: x\ntheme:\n  name: no-such-theme\n", encoding="utf-8")
    from generator import reuse

    with mkdocs_glue.preloaded(bad, tmp_path):  # no exception: the build itself reports it, with its message
        pass
    assert not len(reuse.THEME_FILES)
    with pytest.raises(mkdocs_glue.BuildFailed):
        mkdocs_glue.build(bad, {"docs_dir": str(tmp_path), "site_dir": str(tmp_path / "site")})
