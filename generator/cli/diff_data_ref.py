"""``python -m generator diff --data-ref REF``: the working tree's data/ against data/ at a git
ref, record by record and field by field, with the advice each edited revision changes, the
translations an English edit makes stale and the validation problems it introduces; in Markdown
or JSON."""
from __future__ import annotations

import json
import posixpath
import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field, replace
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace

from generator.cli.diff_advice import Names, md_safe, revision_markdown
from generator.data.dataset import Dataset, digest
from generator.data.kinds import KINDS, all_records
from generator.data.loader import load_dataset
from generator.data.plain import plain
from generator.data.problems import Problem
from generator.facts.diff import RevisionDiff, diff_revisions


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
        out += ["### GPUs added", ""] + [f"- {md_safe(names.gpu(g))} (`{g}`)" for g in r.gpus_added] + [""]
    if r.gpus_removed:
        out += ["### GPUs removed", ""] + [f"- `{g}`" for g in r.gpus_removed] + [""]
    if r.gpus_changed:
        out += ["### GPUs changed", "", "| GPU | field | old | new |", "|---|---|---|---|"]
        for gid, changes in r.gpus_changed.items():
            out += [f"| `{gid}` | `{c.field}` | {md_safe(_short(c.before))} | {md_safe(_short(c.after))} |" for c in changes]
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
            out += [f"| `{ident}` | `{c.field}` | {md_safe(_short(c.before))} | {md_safe(_short(c.after))} |"
                    for c in changes[:MAX_ROWS]]
            if len(changes) > MAX_ROWS:
                out.append(f"| `{ident}` | {len(changes) - MAX_ROWS} more fields | | |")
        out.append("")
    return out


def data_ref_markdown(r: DataRefDiff, new: Dataset | None) -> str:
    names = Names(new, "en") if new else None
    out = [f"## Data changes against `{md_safe(r.ref)}`", ""]
    if r.new_problems:
        out += ["### Validation problems introduced", ""] + [f"- `{md_safe(str(p))}`" for p in r.new_problems] + [""]
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
