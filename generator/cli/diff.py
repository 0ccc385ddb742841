"""`python -m generator diff`: revisions against each other, or data/ against a git ref."""
from __future__ import annotations

import json
import posixpath
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace

from generator.data.dataset import Dataset, Localizer, digest
from generator.data.kinds import KINDS, all_records
from generator.data.loader import load_dataset
from generator.data.plain import plain
from generator.data.problems import Problem
from generator.facts.derive import derive
from generator.facts.diff import TODAY, RevisionDiff, diff_revisions, diff_snapshot_today, diff_today, resolve_date
from generator.facts.today import newest_date

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


# ----------------------------------------------------------------- revisions


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


def _md(text: str) -> str:
    """Plain text safe inside a Markdown comment: no HTML, no links, no table breaks."""
    for ch in "\\`*_{}[]()#+!|<>":
        text = text.replace(ch, "\\" + ch)
    return " ".join(text.split())


def revision_markdown(d: RevisionDiff, n: Names) -> str:
    out = [f"### {_md(n.ui('diff.title'))}: {d.a} → {d.b}", ""]
    if d.empty:
        out += [_md(n.ui("diff.no_change")), ""]
    if d.personas:
        out += [f"| {_md(n.ui('diff.persona'))} | {_md(n.ui('diff.removed'))} | {_md(n.ui('diff.added'))} |", "|---|---|---|"]
        for pc in d.personas:
            out.append(f"| {_md(n.persona(pc.persona))} | {_md(n.gpus(pc.removed))} | {_md(n.gpus(pc.added))} |")
        out.append("")
    if d.avoid_added or d.avoid_removed or d.avoid_classes_added or d.avoid_classes_removed:
        out.append(f"**{_md(n.ui('diff.avoid'))}**")
        out += [f"- ➖ {_md(n.gpu(g))}" for g in d.avoid_removed] + [f"- ➖ {_md(n.avoid_class(c))}" for c in d.avoid_classes_removed]  # noqa: E501
        out += [f"- ➕ {_md(n.gpu(g))}" for g in d.avoid_added] + [f"- ➕ {_md(n.avoid_class(c))}" for c in d.avoid_classes_added]
        out.append("")
    for key in d.relative_tables_removed:
        out += [f"- ➖ {_md(n.ui('diff.relative'))} ({_md(key)})"]
    for key in d.relative_tables_added:
        out += [f"- ➕ {_md(n.ui('diff.relative'))} ({_md(key)})"]
    if d.relative_tables_added or d.relative_tables_removed:
        out.append("")
    for key, changes in d.relative_performance.items():
        out += [f"**{_md(n.ui('diff.relative'))} ({_md(key)})**", ""]
        out += [f"- {_md(n.gpu(c.gpu))}: {_num(c.before)} → {_num(c.after)}" for c in changes] + [""]
    if d.prices:
        out += [f"**{_md(n.ui('diff.prices'))}**", ""]
        out += [f"- {_md(n.gpu(c.gpu))}: {_num(c.before)} → {_num(c.after)} USD" for c in d.prices] + [""]
    if d.summary_a != d.summary_b:
        out += [f"**{_md(n.ui('diff.summary'))}**", "", f"- {d.a}: {_md(d.summary_a)}", f"- {d.b}: {_md(d.summary_b)}", ""]
    return "\n".join(out).rstrip() + "\n"


def revision_json(d: RevisionDiff, n: Names) -> str:
    doc = d.to_json()
    doc["names"] = {"personas": {p: n.persona(p) for p in [pc.persona for pc in d.personas] + d.unchanged},
                    "gpus": {g: n.gpu(g) for pc in d.personas for g in pc.before + pc.after}}
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


# ----------------------------------------------------------------- data against a git ref


@dataclass
class FieldChange:
    field: str  # a path into the record: memory_gb, observations[2].usd, recommendations.student.gpus
    before: object
    after: object


@dataclass
class KindDiff:
    """The records of one kind (generator/data/kinds.py) added, removed and changed field by field."""
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[FieldChange]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


@dataclass
class DataRefDiff:
    ref: str
    kinds: dict[str, KindDiff] = field(default_factory=dict)  # every kind of KINDS, in its order
    recommendation_changes: dict[str, RevisionDiff] = field(default_factory=dict)
    stale_translations: list[tuple[str, str, str]] = field(default_factory=list)
    translations: KindDiff = field(default_factory=KindDiff)  # by "<lang>/<file>", each key a field
    new_problems: list[Problem] = field(default_factory=list)

    def _kind(self, name: str) -> KindDiff:
        return self.kinds.get(name) or KindDiff()

    @property
    def gpus_added(self) -> list[str]:
        return self._kind("gpu").added

    @property
    def gpus_removed(self) -> list[str]:
        return self._kind("gpu").removed

    @property
    def gpus_changed(self) -> dict[str, list[FieldChange]]:
        return self._kind("gpu").changed

    @property
    def revisions_added(self) -> list[str]:
        return self._kind("revision").added

    @property
    def revisions_removed(self) -> list[str]:
        return self._kind("revision").removed

    @property
    def revisions_edited(self) -> dict[str, list[FieldChange]]:
        return self._kind("revision").changed


class RefError(ValueError):
    """The ref cannot be compared: not a commit, not safe to read, or its data/ has problems."""


def _commit(root: Path, ref: str) -> str:
    """The commit ``ref`` names; a ref that git would read as an option is refused."""
    if not ref or ref.startswith("-"):
        raise RefError(f"'{ref}' is not a git ref (a ref cannot start with '-')")
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], cwd=root,
                          capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RefError(f"'{ref}' names no commit of this repository")
    return proc.stdout.strip()


def _git_data(root: Path, ref: str, dest: Path) -> None:
    commit = _commit(root, ref)
    proc = subprocess.run(["git", "archive", "--format=tar", commit, "--", "data"], cwd=root, capture_output=True)
    if proc.returncode != 0:
        raise RefError(proc.stderr.decode("utf-8", "replace").strip() or f"cannot read data/ at {ref}")
    try:
        with tarfile.open(fileobj=BytesIO(proc.stdout)) as tar:
            for member in tar.getmembers():
                if member.issym() or member.islnk():
                    target = posixpath.normpath(posixpath.join(posixpath.dirname(member.name), member.linkname)
                                                if member.issym() else member.linkname)
                    if posixpath.isabs(member.linkname) or not target.startswith("data/"):
                        raise RefError(f"data/ at {ref} holds {member.name}, a link to {member.linkname}, which points "
                                       "outside the repository's data/; refused")
            tar.extractall(dest, filter="data")
    except tarfile.FilterError as exc:  # a link out of data/, an absolute path, a device file
        member = getattr(getattr(exc, "tarinfo", None), "name", "?")
        raise RefError(f"data/ at {ref} holds {member}, which points outside the repository; refused") from None
    except tarfile.TarError as exc:
        raise RefError(f"cannot read data/ at {ref}: {exc}") from None


def _flat(value, path: str = "") -> dict[str, object]:
    """Every leaf of ``value`` by its path (a.b[2].c); an empty list or mapping is a leaf."""
    if isinstance(value, dict) and value:
        out = {}
        for key, item in value.items():
            out.update(_flat(item, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, (list, tuple)) and value:
        out = {}
        for i, item in enumerate(value):
            out.update(_flat(item, f"{path}[{i}]"))
        return out
    return {path: value}


def _fields(before: dict, after: dict) -> list[FieldChange]:
    a, b = _flat(before), _flat(after)
    return [FieldChange(key, a.get(key), b.get(key)) for key in list(a) + [k for k in b if k not in a]
            if a.get(key) != b.get(key)]


def _records(ds: Dataset, kind) -> dict[str, object]:
    """The records of one kind by id; a single file under its kind's name."""
    value = getattr(ds, kind.attr)
    if value is None:
        return {}
    if kind.collection == "single":
        return {kind.name: value}
    return {r.id: r for r in (value.values() if isinstance(value, dict) else value)}


def _kind_diff(old: Dataset, new: Dataset, kind) -> KindDiff:
    before, after = _records(old, kind), _records(new, kind)
    return _kind_diff_of({i: plain(r.data) for i, r in before.items()}, {i: plain(r.data) for i, r in after.items()})


def _kind_diff_of(before: dict[str, dict], after: dict[str, dict]) -> KindDiff:
    out = KindDiff(sorted(set(after) - set(before)), sorted(set(before) - set(after)))
    for ident in sorted(set(before) & set(after)):
        changes = _fields(before[ident], after[ident])
        if changes:
            out.changed[ident] = changes
    return out


def _stale_translations(old: Dataset, new: Dataset) -> list[tuple[str, str, str]]:
    """(lang, file, key) of the translations made from an English text this change rewrites."""
    old_texts = {rec.relpath: rec.texts for rec in all_records(old)}
    new_texts = {rec.relpath: rec.texts for rec in all_records(new)}
    out = []
    for lang, files in new.translations.items():
        for rel, entries in files.items():
            for key, tr in entries.items():
                before = old_texts.get(rel, {}).get(key)
                now = new_texts.get(rel, {}).get(key)
                if before is not None and now is not None and before != now and tr.source == digest(before):
                    out.append((lang, rel, key))
    return out


def data_ref_diff(root: Path, ref: str, data_dir: Path | None = None) -> tuple[DataRefDiff, Dataset | None]:
    data_dir = data_dir or root / "data"
    result = DataRefDiff(ref)
    with tempfile.TemporaryDirectory(prefix="whichgpu-ref-") as tmp:
        tmp = Path(tmp)
        _git_data(root, ref, tmp)
        old, old_problems = load_dataset(tmp / "data", tmp)
        new, new_problems = load_dataset(data_dir, root)
    broken = [p for p in old_problems if p.level == "error"]
    if old is None or broken:
        lines = "\n".join(f"  {p}" for p in broken) or "  (data/ could not be read)"
        raise RefError(f"data/ at {ref} has {len(broken)} problem(s); nothing to compare against:\n{lines}")
    seen = {(p.path, p.field, p.message) for p in old_problems}
    result.new_problems = [p for p in new_problems if (p.path, p.field, p.message) not in seen and p.level == "error"]
    if new is None:
        return result, new
    result.kinds = {kind.name: _kind_diff(old, new, kind) for kind in KINDS}
    for rid in result.revisions_edited:
        d = diff_revisions(_combine(old, new, rid), "0000-00-00", rid)
        if not d.empty:
            result.recommendation_changes[rid] = d
    result.stale_translations = _stale_translations(old, new)
    result.translations = _translations_diff(old, new)
    return result, new


def _translations_diff(old: Dataset, new: Dataset) -> KindDiff:
    """The translated texts added, removed and rewritten, by data/translations/<lang>/<file>."""
    def texts(ds: Dataset) -> dict[str, dict[str, str]]:
        return {f"{lang}/{rel}": {key: tr.text for key, tr in entries.items()}
                for lang, files in ds.translations.items() for rel, entries in files.items()}

    return _kind_diff_of(texts(old), texts(new))


def _combine(old: Dataset, new: Dataset, rid: str) -> Dataset:
    """A two-revision dataset: the old version of ``rid`` (dated 0000-00-00) then the new one."""
    from dataclasses import replace

    before = replace(old.revision(rid), id="0000-00-00")
    return Dataset(gpus={**old.gpus, **new.gpus}, revisions=[before, new.revision(rid)],
                   personas=new.personas, ui=new.ui, translations=new.translations)


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."


def _gpu_markdown(r: DataRefDiff, names: Names | None) -> list[str]:
    """The Markdown sections of the GPUs added, removed and changed (none where nothing is)."""
    out = []
    if r.gpus_added:
        out += ["### GPUs added", ""] + [f"- {_md(names.gpu(g))} (`{g}`)" for g in r.gpus_added] + [""]
    if r.gpus_removed:
        out += ["### GPUs removed", ""] + [f"- `{g}`" for g in r.gpus_removed] + [""]
    if r.gpus_changed:
        out += ["### GPUs changed", "", "| GPU | field | old | new |", "|---|---|---|---|"]
        for gid, changes in r.gpus_changed.items():
            out += [f"| `{gid}` | `{c.field}` | {_md(_short(c.before))} | {_md(_short(c.after))} |" for c in changes]
        out.append("")
    return out


def _revisions_markdown(r: DataRefDiff) -> list[str]:
    """The Markdown sections of the revisions added, removed and edited (none where nothing is)."""
    out = []
    if r.revisions_added:
        out += ["### Revisions added", ""] + [f"- {d}" for d in r.revisions_added] + [""]
    if r.revisions_removed:
        out += ["### Revisions removed", ""] + [f"- {d}" for d in r.revisions_removed] + [""]
    if r.revisions_edited:
        out += ["### Revisions edited", ""]
        for rid, changes in r.revisions_edited.items():
            tops = dict.fromkeys(re.split(r"[.\[]", c.field, maxsplit=1)[0] for c in changes)
            out.append(f"- {rid}: " + ", ".join(f"`{t}`" for t in tops))
        out.append("")
    return out


MAX_ROWS = 40  # field changes shown per record


def _kind_markdown(kind, d: KindDiff) -> list[str]:
    """The Markdown sections of one kind's records added, removed and changed (none where nothing is)."""
    where = f"data/{kind.folder}" + ("" if kind.depth == 0 else "/")
    out = []
    if d.added:
        out += [f"### Added to {where}", ""] + [f"- `{i}`" for i in d.added] + [""]
    if d.removed:
        out += [f"### Removed from {where}", ""] + [f"- `{i}`" for i in d.removed] + [""]
    if d.changed:
        out += [f"### Changed in {where}", "", "| record | field | old | new |", "|---|---|---|---|"]
        for ident, changes in d.changed.items():
            out += [f"| `{ident}` | `{c.field}` | {_md(_short(c.before))} | {_md(_short(c.after))} |"
                    for c in changes[:MAX_ROWS]]
            if len(changes) > MAX_ROWS:
                out.append(f"| `{ident}` | {len(changes) - MAX_ROWS} more fields | | |")
        out.append("")
    return out


def data_ref_markdown(r: DataRefDiff, new: Dataset | None) -> str:
    names = Names(new, "en") if new else None
    out = [f"## Data changes against `{_md(r.ref)}`", ""]
    if r.new_problems:
        out += ["### Validation problems introduced", ""] + [f"- `{_md(str(p))}`" for p in r.new_problems] + [""]
    out += _gpu_markdown(r, names)
    out += _revisions_markdown(r)
    for kind in KINDS:
        if kind.name not in ("gpu", "revision") and kind.name in r.kinds:
            out += _kind_markdown(kind, r.kinds[kind.name])
    out += _kind_markdown(SimpleNamespace(folder="translations", depth=1), r.translations)
    for rid, d in r.recommendation_changes.items():
        d.a = f"{rid} (before)"
        out += [revision_markdown(d, names)]
    if r.stale_translations:
        out += ["### Translations this makes stale", ""]
        out += [f"- `{lang}` `data/translations/{lang}/{rel}`: `{key}`" for lang, rel, key in r.stale_translations] + [""]
    if len(out) == 2:
        out.append("No change to data/.")
    return "\n".join(out).rstrip() + "\n"


def _changes_json(changed: dict[str, list[FieldChange]]) -> dict:
    return {ident: [c.__dict__ for c in cs] for ident, cs in changed.items()}


def data_ref_json(r: DataRefDiff) -> str:
    doc = {
        "ref": r.ref, "gpus_added": r.gpus_added, "gpus_removed": r.gpus_removed,
        "gpus_changed": _changes_json(r.gpus_changed),
        "revisions_added": r.revisions_added, "revisions_removed": r.revisions_removed,
        "revisions_edited": _changes_json(r.revisions_edited),
        "kinds": {name: {"added": d.added, "removed": d.removed, "changed": _changes_json(d.changed)}
                  for name, d in r.kinds.items()},
        "recommendation_changes": {k: v.to_json() for k, v in r.recommendation_changes.items()},
        "translations": {"added": r.translations.added, "removed": r.translations.removed,
                         "changed": _changes_json(r.translations.changed)},
        "stale_translations": [list(t) for t in r.stale_translations],
        "new_problems": [str(p) for p in r.new_problems],
    }
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True, default=str) + "\n"


def _write_diff(d: RevisionDiff, ds: Dataset, args) -> None:
    names = Names(ds, args.lang)
    if args.format == "json":
        sys.stdout.write(revision_json(d, names))
    elif args.format == "markdown":
        sys.stdout.write(revision_markdown(d, names))
    else:
        colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
        sys.stdout.write(revision_text(d, names, Style(colour)))


def _snapshot_diff(ds: Dataset, date: str, args) -> int:
    """``diff snapshot:DATE today``: a kept snapshot of today's picks against today's picks."""
    snaps = {s.id: s for s in ds.snapshots}
    if args.revisions[1] != TODAY:
        print("diff: a snapshot is compared with today: diff snapshot:DATE today", file=sys.stderr)
        return 2
    if date not in snaps:
        known = ", ".join(snaps) or "none (python -m generator new snapshot keeps one)"
        print(f"diff: no snapshot {date!r}; known: {known}", file=sys.stderr)
        return 2
    newest = newest_date(ds)
    if newest is None:
        print("diff: no dated prices in data/prices, so there is no today to compare", file=sys.stderr)
        return 2
    _write_diff(diff_snapshot_today(ds, snaps[date], derive(ds).today_picks, newest.isoformat()), ds, args)
    return 0


def run(args) -> int:
    root = Path.cwd()
    if args.data_ref:
        try:
            result, new = data_ref_diff(root, args.data_ref, Path(args.data))
        except ValueError as exc:
            print(f"diff: {exc}", file=sys.stderr)
            return 2
        text = data_ref_json(result) if args.format == "json" else data_ref_markdown(result, new)
        sys.stdout.write(text)
        return 1 if result.new_problems else 0
    if len(args.revisions) != 2:
        print("diff: give two revisions (dates, 'latest' or 'previous'), or --data-ref REF", file=sys.stderr)
        return 2
    ds, problems = load_dataset(Path(args.data), root)
    if ds is None:
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    if args.revisions[0] == TODAY:
        print("diff: 'today' comes second: diff REVISION today", file=sys.stderr)
        return 2
    first = args.revisions[0]
    if first.startswith("snapshot:") or (first not in {r.id for r in ds.revisions}
                                          and first in {s.id for s in ds.snapshots}):
        return _snapshot_diff(ds, first.removeprefix("snapshot:"), args)
    try:
        a, b = (x if x == TODAY else resolve_date(ds, x) for x in args.revisions)
    except KeyError as exc:
        known = ", ".join(r.id for r in ds.revisions)
        print(f"diff: no revision {exc.args[0]!r}; known: latest, previous, today (second only), {known}",
              file=sys.stderr)
        return 2
    if b == TODAY:
        facts = derive(ds)
        newest = newest_date(ds)
        if newest is None:
            print("diff: no dated prices in data/prices, so there is no today to compare", file=sys.stderr)
            return 2
        d = diff_today(ds, a, facts.today_picks, newest.isoformat(), facts.states)
    else:
        d = diff_revisions(ds, a, b)
    _write_diff(d, ds, args)
    return 0
