"""MkDocs hooks (mkdocs.yml ``hooks:``): raw HTML blocks skip Python-Markdown.

The generated pages are mostly raw HTML: tables, forms, charts. Python-Markdown passes such
blocks through unchanged, but finds where each ends by running an HTML parser written in Python
over all of it, which was most of a build's time. Before Markdown runs, each top-level block
(one that starts a line after a blank line with an opening tag, and ends with its matching
closing tag at the end of a line before a blank line) is set aside behind a placeholder; after
Markdown ran, the placeholders get their blocks back. The HTML that comes out is the same byte
for byte (tests/test_build.py builds the site both ways and compares); only the time changes.

This module does not import MkDocs: the hooks receive plain strings.
"""
from __future__ import annotations

import re
import secrets

# Block-level tags Python-Markdown treats as raw HTML when they open a block.
_TAGS = ("table", "div", "figure", "form", "details", "section", "svg", "nav", "aside", "dl", "ol", "ul", "p")
_OPEN = re.compile(r"<(" + "|".join(_TAGS) + r")\b[^>]*>")
_KEY = "wg_raw_blocks"


def _depth_change(line: str, tag: str) -> int:
    opened = len(re.findall(rf"<{tag}\b", line))
    closed = len(re.findall(rf"</{tag}\s*>", line))
    return opened - closed


def stash(markdown: str, token: str) -> tuple[str, list[str]]:
    """Replace each top-level raw HTML block by ``<token>-<n>``; return the text and the blocks."""
    lines = markdown.split("\n")
    out, blocks = [], []
    i, n, fence = 0, len(lines), None
    while i < n:
        line = lines[i]
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if marker and (fence is None or marker[1].startswith(fence)):
            fence = None if fence else marker[1]
        m = _OPEN.match(line) if fence is None else None
        if m and (i == 0 or not lines[i - 1].strip()):
            tag, depth, j = m[1], 0, i
            while j < n:
                depth += _depth_change(lines[j], tag)
                if depth <= 0:
                    break
                j += 1
            last = lines[j] if j < n else ""
            ends_well = (j < n and depth == 0 and last.rstrip().endswith(">")
                         and (j + 1 == n or not lines[j + 1].strip()))
            if ends_well and not any("<!--" in x for x in lines[i:j + 1]):
                blocks.append("\n".join(lines[i:j + 1]))
                out.append(f"{token}-{len(blocks) - 1}")
                i = j + 1
                continue
        out.append(line)
        i += 1
    return "\n".join(out), blocks


def unstash(html: str, token: str, blocks: list[str]) -> str:
    if not blocks:
        return html
    # Python-Markdown keeps the line end of a raw block's last line, except at the very end
    return re.sub(rf"<p>{re.escape(token)}-(\d+)</p>",
                  lambda m: blocks[int(m[1])] + ("" if m.end() == len(html) else "\n"), html)


def on_page_markdown(markdown, page, config, files):
    token = "wgraw" + secrets.token_hex(6)
    text, blocks = stash(markdown, token)
    page.__dict__[_KEY] = (token, blocks)
    return text


def stash_token(page) -> str:
    """The placeholder token of ``page``'s blocks set aside ("" when none was)."""
    return page.__dict__.get(_KEY, ("", []))[0]


def on_page_content(html, page, config, files):
    token, blocks = page.__dict__.pop(_KEY, ("", []))
    return unstash(html, token, blocks)
