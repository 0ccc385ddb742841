"""The raw-HTML hook (generator/site/mkdocs_hooks.py) changes the time of a build, never its output."""
from __future__ import annotations

import markdown
import pytest
from helpers import ROOT

from generator.site.mkdocs_hooks import stash, unstash

EXTENSIONS = ["admonition", "attr_list", "tables", "toc"]


def _convert(text: str, hooked: bool) -> str:
    if not hooked:
        return markdown.markdown(text, extensions=EXTENSIONS)
    token = "wgrawtest"
    body, blocks = stash(text, token)
    return unstash(markdown.markdown(body, extensions=EXTENSIONS), token, blocks)


@pytest.mark.parametrize("text", [
    "# Title\n\n<table>\n<tr><td>1</td></tr>\n</table>\n\nAfter *this*.\n",
    "<div class=\"a\">\n<div>\n\ninner\n\n</div>\n</div>\n\ntext\n",  # nested, blank lines inside
    "para\n<div>not a block: no blank line before</div>\n",
    "```\n\n<table>\n</table>\n\n```\n",  # in a fence: code, not HTML
    "<ul>\n<li>a</li>\n</ul>\n",  # last thing on the page
    "<div>\n<!-- comment -->\n</div>\n\nx\n",
    "<p class=\"n\">one <button hidden>two</button></p>\n\n## Next { #next }\n",
])
def test_same_html_with_and_without(text):
    assert _convert(text, True) == _convert(text, False)


def test_blocks_are_set_aside():
    body, blocks = stash("a\n\n<table>\n<tr><td>1</td></tr>\n</table>\n\nb\n", "t")
    assert blocks == ["<table>\n<tr><td>1</td></tr>\n</table>"] and "t-0" in body and "<td>" not in body


def test_every_generated_page_converts_the_same(built_site):
    """Every page kind of the real site, in the four languages, through Python-Markdown with and
    without the hook (a full build both ways was compared byte for byte when the hook came in)."""
    site, _ = built_site
    docs = site.parent / "build" / "docs"
    pages = []
    for lang in ("en", "ko", "zh", "fr"):
        files = sorted((docs / lang).rglob("*.md"))
        by_folder: dict[str, list] = {}
        for f in files:
            by_folder.setdefault(f.parent.as_posix(), []).append(f)
        pages += [f for group in by_folder.values() for f in group[:2]]
    assert len(pages) > 40
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert _convert(text, True) == _convert(text, False), page.relative_to(docs)


def test_the_build_uses_the_hook():
    assert "generator/site/mkdocs_hooks.py" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_privacy_plugin_reads_every_script_but_the_rows_of_long_tables(tmp_path):
    """The theme's privacy plugin, configured as the site configures it, finds an external asset
    in a script; a table's rows (``*.rows.js``) and the generated data (``assets/data/``) with the
    same text are not read once the build has set it to skip them; another script is read again
    only when it changed."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import File

    from generator.site.mkdocs_adapter import skip_rows_in_privacy

    docs = tmp_path / "docs"
    docs.mkdir()
    text = 'x = "https://example.org/list.json";\n'
    names = ("app.js", "gpu-table.rows.js", "assets/data/whichgpu-data.js")
    for name in names:
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    config = load_config(str(ROOT / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(tmp_path / "site"))
    plugin = config.plugins["material/privacy"]
    plugin.on_config(config)
    files = {name: File(name, str(docs), str(tmp_path / "site"), False) for name in names}
    found = {name: [u.geturl() for u in plugin._parse_media(f)] for name, f in files.items()}
    assert found == dict.fromkeys(names, ["https://example.org/list.json"])
    reads = []
    original = type(plugin)._parse_media
    type(plugin)._parse_media = lambda self, f: reads.append(f.src_uri) or original(self, f)
    try:
        skip_rows_in_privacy(plugin)
        found = {name: [u.geturl() for u in plugin._parse_media(f)] for name, f in files.items()}
        assert found == {"app.js": ["https://example.org/list.json"], "gpu-table.rows.js": [],
                         "assets/data/whichgpu-data.js": []}
        plugin._parse_media(files["app.js"])
        assert reads == ["app.js"]  # read once while its content stays the same
        (docs / "app.js").write_text('y = "https://example.org/other.json";\n', encoding="utf-8")
        assert [u.geturl() for u in plugin._parse_media(files["app.js"])] == ["https://example.org/other.json"]
        assert reads == ["app.js", "app.js"]
    finally:
        type(plugin)._parse_media = original
