"""The built site: valid HTML (Nu Html Checker), no broken internal link or anchor, and the
theme-inherited exceptions listed with their reason."""
from __future__ import annotations

import json
import posixpath
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from helpers import ROOT

VNU = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"

# Errors that come from Material's own markup, not from this project's templates.
THEME_HTML_ERRORS = {
    # The drawer and search toggles are checkboxes with autocomplete="off" (keeps browsers from
    # restoring their state); the attribute is not allowed on checkboxes.
    "Attribute “autocomplete” is only allowed when the input type is",
    # The table-of-contents title in the secondary sidebar is a label for the "__toc" toggle,
    # which the theme only renders when the table of contents is integrated into the primary one.
    "The value of the “for” attribute of the “label” element must be the ID of a non-hidden form control.",
}


def test_html_is_valid(built_site):
    site, _ = built_site
    java = shutil.which("java")
    if not java or not VNU.is_file():
        pytest.fail("the Nu Html Checker needs a JDK and node_modules/vnu-jar: run `make test` (installs both)")
    proc = subprocess.run([java, "-jar", str(VNU), "--errors-only", "--skip-non-html", "--format", "json", str(site)],
                          capture_output=True, text=True)
    messages = json.loads(proc.stderr or proc.stdout)["messages"]
    ours = [m for m in messages if not any(m["message"].startswith(t) for t in THEME_HTML_ERRORS)]
    assert ours == [], "\n".join(f"{m['url']}:{m.get('lastLine')}: {m['message']}" for m in ours[:20])
    assert len(list(site.rglob("*.html"))) > 300


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a and a["id"]:
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and not (tag == "link" and a.get("rel") in ("alternate", "canonical") and key == "href"
                                   and a[key].startswith("http")):
                self.links.append(a[key])


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_no_broken_internal_link_or_anchor(built_site):
    site, _ = built_site
    pages = {p: _parse(p) for p in site.rglob("*.html")}
    broken = []
    checked = 0
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            if parts.path.startswith("/"):  # only the 404 page, which must work at any depth;
                # browsers drop ".." above the root, as posixpath.normpath does here
                target = (site / posixpath.normpath(unquote(parts.path)).lstrip("/")).resolve()
            else:
                target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert checked > 10000
    assert broken == [], "\n".join(broken[:30])


def test_site_root_stays_inside_the_site(built_site):
    site, _ = built_site
    for page in site.rglob("*.html"):
        for link in _parse(page).links:
            parts = urlsplit(link)
            if not parts.scheme and not parts.netloc and parts.path and not parts.path.startswith("/"):
                resolved = (page.parent / unquote(parts.path)).resolve()
                assert str(resolved).startswith(str(site.resolve())), (page, link)
