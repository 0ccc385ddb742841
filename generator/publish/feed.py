"""An Atom feed of the revisions per language: ``feed.atom`` beside each language's home page."""
from __future__ import annotations

import os
from xml.sax.saxutils import escape, quoteattr

from generator.data.dataset import Dataset, Localizer
from generator.data.locales import locale
from generator.publish.api import generated_at
from generator.publish.text import clean, format_date


def atom(ds: Dataset, lang: str) -> str:
    loc = Localizer(ds, lang)
    months = [loc.ui(f"date.month.{i}") for i in range(1, 13)]
    base = os.environ.get("WHICHGPU_SITE_URL", "").rstrip("/")
    root = (f"{base}/" if lang == "en" else f"{base}/{lang}/") if base else ""

    def text(value: str) -> str:
        return escape(clean(value))

    entries = []
    for rev in reversed(ds.revisions):
        title = loc.ui("revision.heading").replace("{date}", format_date(rev.id, lang, months))
        link = f"{root}revisions/{rev.id}/"
        entries.append(
            "  <entry>\n"
            f"    <id>tag:whichgpu,2014:revision/{rev.id}</id>\n"
            f"    <title>{text(title)}</title>\n"
            f"    <updated>{rev.id}T00:00:00Z</updated>\n"
            f"    <link rel=\"alternate\" type=\"text/html\" href={quoteattr(link)}/>\n"
            f"    <link rel=\"related\" href={quoteattr(rev['url'])}/>\n"
            f"    <summary type=\"text\">{text(loc.text(rev, ('summary',)))}</summary>\n"
            "  </entry>\n"
        )
    updated = f"{ds.latest.id}T00:00:00Z" if ds.revisions else generated_at()
    return (
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        f"<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang={quoteattr(locale(lang).html_lang)}>\n"
        f"  <id>tag:whichgpu,2014:revisions/{lang}</id>\n"
        f"  <title>{text(loc.ui('feed.title'))}</title>\n"
        f"  <subtitle>{text(loc.ui('site.description'))}</subtitle>\n"
        f"  <updated>{updated}</updated>\n"
        f"  <author><name>whichgpu</name></author>\n"
        f"  <link rel=\"self\" href={quoteattr(root + 'feed.atom')}/>\n"
        f"  <link rel=\"alternate\" type=\"text/html\" href={quoteattr(root or './')}/>\n"
        + "".join(entries) +
        "</feed>\n"
    )
