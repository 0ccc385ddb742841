"""The changes of the advice, as ``python -m generator diff`` prints them: one revision against
another, or a revision or a kept snapshot against today's picks, in text, Markdown or JSON, with
GPU, persona and label names in one language."""
from __future__ import annotations

import json

from generator.data.dataset import Dataset, Localizer
from generator.facts.diff import RevisionDiff

GREEN, RED, BOLD, DIM, RESET = "\033[32m", "\033[31m", "\033[1m", "\033[2m", "\033[0m"


class Style:
    def __init__(self, colour: bool):
        self.colour = colour

    def __call__(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.colour else text


class Names:
    """Persona, GPU and label names in one language."""

    def __init__(self, ds: Dataset, lang: str):
        self.ds = ds
        self.loc = Localizer(ds, lang)

    def gpu(self, gid: str) -> str:
        return self.ds.gpus[gid]["name"] if gid in self.ds.gpus else gid

    def persona(self, pid: str) -> str:
        return self.loc.persona(pid)

    def ui(self, key: str) -> str:
        return self.loc.ui(key)

    def avoid_class(self, cls: str) -> str:
        return self.loc.ui(f"avoid_class.{cls}")

    def gpus(self, ids) -> str:
        return ", ".join(self.gpu(g) for g in ids) or "—"


def _num(v) -> str:
    return "—" if v is None else f"{v:g}"


def revision_text(d: RevisionDiff, n: Names, style: Style) -> str:
    out = [style(BOLD, f"{n.ui('diff.title')}: {d.a} → {d.b}")]
    if d.empty:
        out.append(n.ui("diff.no_change"))
    out += _persona_text(d, n, style)
    if d.advised_added or d.advised_removed:
        out.append(style(BOLD, n.ui("diff.advised")))
        out += ["  " + style(RED, f"- {n.gpu(g)}") for g in d.advised_removed]
        out += ["  " + style(GREEN, f"+ {n.gpu(g)}") for g in d.advised_added]
    if d.avoid_added or d.avoid_removed or d.avoid_classes_added or d.avoid_classes_removed:
        out += _avoid_text(d, n, style)
    for key in d.relative_tables_removed:
        out.append(style(RED, f"- {n.ui('diff.relative')} ({key})"))
    for key in d.relative_tables_added:
        out.append(style(GREEN, f"+ {n.ui('diff.relative')} ({key})"))
    for key, changes in d.relative_performance.items():
        out.append(style(BOLD, f"{n.ui('diff.relative')} ({key})"))
        out += [f"  {n.gpu(c.gpu)}: {_num(c.before)} → {_num(c.after)}" for c in changes]
    if d.prices:
        out.append(style(BOLD, n.ui("diff.prices")))
        out += [f"  {n.gpu(c.gpu)}: {_num(c.before)} → {_num(c.after)} USD" for c in d.prices]
    if d.summary_a != d.summary_b:
        out.append(style(BOLD, n.ui("diff.summary")))
        out.append("  " + style(DIM, d.a) + " " + d.summary_a)
        out.append("  " + d.b + " " + d.summary_b)
    if d.unchanged:
        out.append(style(DIM, f"{n.ui('diff.unchanged')}: " + ", ".join(n.persona(p) for p in d.unchanged)))
    return "\n".join(out) + "\n"


def _persona_text(d: RevisionDiff, n: Names, style: Style) -> list[str]:
    """The lines of the personas whose advice changed: the GPUs removed and added, or before and after."""
    out = []
    for pc in d.personas:
        out.append(f"{style(BOLD, n.persona(pc.persona))} ({n.ui('diff.status_' + pc.status)})")
        for g in pc.removed:
            out.append("  " + style(RED, f"- {n.gpu(g)}"))
        for g in pc.added:
            out.append("  " + style(GREEN, f"+ {n.gpu(g)}"))
        if not pc.added and not pc.removed:
            out.append(f"  {n.gpus(pc.before)} → {n.gpus(pc.after)}")
    return out


def _avoid_text(d: RevisionDiff, n: Names, style: Style) -> list[str]:
    """The lines of the avoid list's changes: GPUs and classes removed, then added."""
    out = [style(BOLD, n.ui("diff.avoid"))]
    out += ["  " + style(RED, f"- {n.gpu(g)}") for g in d.avoid_removed]
    out += ["  " + style(RED, f"- {n.avoid_class(c)}") for c in d.avoid_classes_removed]
    out += ["  " + style(GREEN, f"+ {n.gpu(g)}") for g in d.avoid_added]
    out += ["  " + style(GREEN, f"+ {n.avoid_class(c)}") for c in d.avoid_classes_added]
    return out


def md_safe(text: str) -> str:
    """Plain text safe inside a Markdown comment: no HTML, no links, no table breaks."""
    for ch in "\\`*_{}[]()#+!|<>":
        text = text.replace(ch, "\\" + ch)
    return " ".join(text.split())


def revision_markdown(d: RevisionDiff, n: Names) -> str:
    out = [f"### {md_safe(n.ui('diff.title'))}: {d.a} → {d.b}", ""]
    if d.empty:
        out += [md_safe(n.ui("diff.no_change")), ""]
    if d.personas:
        out += [f"| {md_safe(n.ui('diff.persona'))} | {md_safe(n.ui('diff.removed'))} | {md_safe(n.ui('diff.added'))} |",
                "|---|---|---|"]
        for pc in d.personas:
            out.append(f"| {md_safe(n.persona(pc.persona))} | {md_safe(n.gpus(pc.removed))} | "
                       f"{md_safe(n.gpus(pc.added))} |")
        out.append("")
    if d.avoid_added or d.avoid_removed or d.avoid_classes_added or d.avoid_classes_removed:
        out.append(f"**{md_safe(n.ui('diff.avoid'))}**")
        out += [f"- ➖ {md_safe(n.gpu(g))}" for g in d.avoid_removed]
        out += [f"- ➖ {md_safe(n.avoid_class(c))}" for c in d.avoid_classes_removed]
        out += [f"- ➕ {md_safe(n.gpu(g))}" for g in d.avoid_added]
        out += [f"- ➕ {md_safe(n.avoid_class(c))}" for c in d.avoid_classes_added]
        out.append("")
    for key in d.relative_tables_removed:
        out += [f"- ➖ {md_safe(n.ui('diff.relative'))} ({md_safe(key)})"]
    for key in d.relative_tables_added:
        out += [f"- ➕ {md_safe(n.ui('diff.relative'))} ({md_safe(key)})"]
    if d.relative_tables_added or d.relative_tables_removed:
        out.append("")
    for key, changes in d.relative_performance.items():
        out += [f"**{md_safe(n.ui('diff.relative'))} ({md_safe(key)})**", ""]
        out += [f"- {md_safe(n.gpu(c.gpu))}: {_num(c.before)} → {_num(c.after)}" for c in changes] + [""]
    if d.prices:
        out += [f"**{md_safe(n.ui('diff.prices'))}**", ""]
        out += [f"- {md_safe(n.gpu(c.gpu))}: {_num(c.before)} → {_num(c.after)} USD" for c in d.prices] + [""]
    if d.summary_a != d.summary_b:
        out += [f"**{md_safe(n.ui('diff.summary'))}**", "", f"- {d.a}: {md_safe(d.summary_a)}",
                f"- {d.b}: {md_safe(d.summary_b)}", ""]
    return "\n".join(out).rstrip() + "\n"


def revision_json(d: RevisionDiff, n: Names) -> str:
    doc = d.to_json()
    doc["names"] = {"personas": {p: n.persona(p) for p in [pc.persona for pc in d.personas] + d.unchanged},
                    "gpus": {g: n.gpu(g) for pc in d.personas for g in pc.before + pc.after}}
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
