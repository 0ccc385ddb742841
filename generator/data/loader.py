"""Load every file of ``data/``, check it, and build the :class:`Dataset`.

``load_dataset`` never raises for bad data: it returns the dataset (or ``None``) and the
full list of problems, so one run reports everything. Rules that need more than one
file (ids against file names, duplicate ids, references, translations) live here; the
per-record rules live in :mod:`generator.data.records`.
"""
from __future__ import annotations

import collections
import datetime as _dt
import functools
import itertools
import os
from pathlib import Path

from generator import reuse
from generator.data.dataset import Dataset, Record, freeze, today_utc
from generator.data.file_rules import _usd_keypaths
from generator.data.kinds import KINDS
from generator.data.load_checks import _CrossFileChecks
from generator.data.load_kinds import _KindLoading
from generator.data.load_translations import _TranslationLoading
from generator.data.problems import Problem
from generator.data.schema import LANGS, Ctx, walk_text
from generator.data.yamlload import Document, dotted, load_file

KNOWN_DOCS = ("README.md", "schema")  # things in data/ that are not records


@functools.lru_cache(maxsize=1 << 18)
def _shown(path: Path, root: Path) -> str:
    """The path as problems name it: relative to the project root (kept per path: the preview
    reloads every file on each change, and resolving each one costs system calls)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


class _Loader(_KindLoading, _CrossFileChecks, _TranslationLoading):
    def __init__(self, data_dir: Path, root: Path, today: _dt.date, changed: frozenset[str] | None = None):
        self.data_dir = data_dir
        # What the last load of this folder did (generator.reuse.LOADS): the files found, what
        # loading each kind's files and each translation file gave, by the listing it was done
        # from. A load that vouches for the unchanged files replays it without visiting each.
        self.kept = reuse.LOADS.scope((os.path.abspath(data_dir), os.path.abspath(root), today))
        # None: look at every file. A set: the absolute paths of the only files written since the
        # last load (and none created, deleted or moved); every other file holds what it held.
        self.changed = changed
        self.root = root
        self.today = today
        self.problems: list[Problem] = []
        self.refs: list[tuple[str, str, Document, tuple]] = []
        # what kinds replayed or patched give besides ``refs``, each whole: a kind's references are
        # added as one part, not copied one by one (200,000 at a hundred times the data)
        self.ref_parts: list = []
        self.known_now: dict[str, frozenset] = {}  # ids that exist, per kind name, once found
        self.fresh_refs: list[tuple[str, str, Document, tuple]] = []  # of the files written since the last load
        self.written: set[str] = set()  # those files, as problems name them
        self.english_read: set[str] = set()  # records read (not replayed) by this load, by path in data/
        # kind attribute -> ids of the records read again and put in place of the last load's,
        # every other record of those kinds being the last load's (see ``_patch_kind``)
        self.patched: dict[str, set[str]] = {}
        self.whole: set[str] = set()  # kinds loaded file by file (a file created, moved, renamed...)
        self.ds = Dataset()
        self.english_docs: dict[str, tuple] = {}  # relpath -> (schema, Record)
        self.broken: dict[str, set[str]] = collections.defaultdict(set)  # kind -> ids of unreadable files
        self.broken_files: dict[str, Path] = {}  # relpath -> path of each unreadable file
        self.unchecked: collections.Counter = collections.Counter()  # unreadable file -> what was skipped
        self.lines: dict[str, dict] = {}  # relpath -> keypath -> line, for rules across files

    def shown(self, path: Path) -> str:
        return _shown(path, self.root)

    def problem(self, path: Path, line: int, fieldpath: str, message: str) -> None:
        self.problems.append(Problem(self.shown(path), line, fieldpath, message))

    def read(self, path: Path, schema, where: tuple[str, str] | None = None) -> tuple[Document | None, Ctx | None]:
        """``where``: the file's absolute path and its path as problems name it, when known."""
        absolute, shown = where or (os.path.abspath(path), self.shown(path))
        unchanged = self.changed is not None and absolute not in self.changed
        if self.changed is not None and not unchanged:
            self.written.add(shown)
        doc, problems = load_file(path, shown, unchanged)
        self.problems += problems
        if doc is None:
            return None, None
        ctx = Ctx(doc, self.today)
        # A document read again unchanged (the parse cache gives the same object) was checked
        # against this schema already: reuse what the check found.
        checked = doc.__dict__.setdefault("_checked", {})
        key = (id(schema), self.today)
        if key in checked:
            ctx.problems, ctx.refs = list(checked[key][0]), list(checked[key][1])
        else:
            schema.check(doc.data, ctx, ())
            checked[key] = (tuple(ctx.problems), tuple(ctx.refs))
        for kind, ident, kp in ctx.refs:
            self.refs.append((kind, ident, doc, kp))
        if self.changed is not None and not unchanged:
            self.fresh_refs += ((kind, ident, doc, kp) for kind, ident, kp in ctx.refs)
        return doc, ctx

    def make_record(self, ident: str, path: Path, doc: Document, schema, rel: str | None = None) -> Record:
        rel = rel or path.relative_to(self.data_dir).as_posix()
        # A document read again unchanged gives the same record (records are immutable): the
        # preview's reload does not freeze and walk every unchanged file again.
        made = doc.__dict__.setdefault("_records", {})
        key = (id(schema), ident, rel)
        rec = made.get(key)
        if rec is None:
            texts = {dotted(kp): text for kp, text in walk_text(schema, doc.data)}
            rec = made[key] = Record(ident, rel, freeze(doc.data), freeze(texts))
        if rel.startswith(("prices/", "gpus/")):
            self.lines[rel] = {kp: doc.line(kp) for kp in _usd_keypaths(doc.data)}
        self.english_docs[rel] = (schema, rec)
        return rec

    # ------------------------------------------------------------------ files

    def run(self) -> None:
        if not self.data_dir.is_dir():
            self.problems.append(Problem(self.shown(self.data_dir), 1, "", "data folder not found"))
            return
        self.walk_unexpected()
        for kind in KINDS:
            if kind.depth == 0:
                self.load_single(kind)
            else:
                self.load_kind(kind)
        self.check_refs()
        self.check_named_by()
        self.load_translations()
        self.check_prices()
        self.check_new_prices()
        self.check_support()
        self.report_unchecked()

    def walk_unexpected(self) -> None:
        known = {k.folder: k for k in KINDS}
        for entry in sorted(self.data_dir.iterdir()):
            if entry.name.startswith(".") or entry.name in KNOWN_DOCS or entry.name == "translations":
                continue
            kind = known.get(entry.name)
            if kind is not None and entry.is_dir() == (kind.depth > 0):
                continue
            where = ", ".join(f"{k.folder}/" if k.depth else k.folder for k in KINDS)
            self.problem(entry, 1, "", f"unexpected file or folder in data/ (records go in {where}, translations/)")

    def listed(self, key: tuple, walk) -> tuple:
        """What ``walk()`` finds (it reports what does not belong as problems), or, when no file was
        created, deleted or moved since the last load, what it found then and the same problems."""
        key = ("listing", *key)
        hit = self.kept.get(key) if self.changed is not None else None
        if hit is None:
            before = len(self.problems)
            found = tuple(walk())
            hit = self.kept[key] = (found, tuple(self.problems[before:]))
        else:
            self.problems += hit[1]
        return hit[0]

    def yaml_files(self, folder: Path, depth: int) -> tuple[tuple[Path, str, tuple[str, str]], ...]:
        """(file, its path relative to the data folder, ``where`` for ``read``) of the files
        ``depth`` levels below ``folder``; anything else is reported."""
        return self.listed(("records", folder.name, depth),
                           lambda: [(p, p.relative_to(self.data_dir).as_posix(), self.where(p))
                                    for p in self._walk_yaml(folder, depth)])

    def where(self, path: Path) -> tuple[str, str]:
        return os.path.abspath(path), self.shown(path)

    def _walk_yaml(self, folder: Path, depth: int) -> list[Path]:
        out = []
        if not folder.is_dir():
            return out
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            here = Path(dirpath)
            level = len(here.relative_to(folder).parts) + 1
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                p = here / name
                if p.suffix == ".yml":
                    self.problem(p, 1, "", "use the .yaml extension")
                elif p.suffix != ".yaml":
                    self.problem(p, 1, "", "only .yaml records belong here")
                elif level != depth:
                    self.problem(p, 1, "", f"misplaced: expected {folder.name}/{'<vendor>/' if depth == 2 else ''}<id>.yaml")
                else:
                    out.append(p)
        return out

    def _effects(self) -> tuple[int, int, int, int, int]:
        """Where each list and map a load adds to stands (see ``_since``)."""
        return len(self.problems), len(self.refs), len(self.broken_files), len(self.english_docs), len(self.lines)

    def _since(self, mark: tuple) -> tuple:
        """What was added since ``mark``: problems, references, unreadable files, English records,
        price lines (each map only grows, in order)."""
        p, r, b, e, ln = mark

        def tail(table: dict, start: int) -> dict:
            return dict(itertools.islice(table.items(), start, None)) if start else dict(table)

        return (tuple(self.problems[p:]), tuple(self.refs[r:]), tail(self.broken_files, b),
                tail(self.english_docs, e), tail(self.lines, ln))

    def _replay(self, added: tuple) -> None:
        problems, refs, broken_files, english, lines = added
        self.problems += problems
        self.ref_parts.append(refs)
        self.broken_files.update(broken_files)
        self.english_docs.update(english)
        self.lines.update(lines)


def load_dataset(data_dir: Path, root: Path | None = None, today: _dt.date | None = None, changed=None):
    """Return ``(dataset or None, problems)``; the dataset is None when any error was found.

    ``changed``: None (every file is looked at), or the paths of the only files written since the
    last load of ``data_dir`` in this process, when no file was created, deleted or moved (the
    preview's watcher knows): the others are not listed or asked for their status again."""
    data_dir = Path(data_dir)
    root = Path(root) if root else data_dir.parent
    if changed is not None:
        changed = frozenset(os.path.abspath(p) for p in changed)
    loader = _Loader(data_dir, root, today or today_utc(), changed)
    loader.run()
    _keep_changes(loader)
    problems = sorted(set(loader.problems), key=lambda p: (p.path, p.line, p.field, p.message))
    errors = [p for p in problems if p.level == "error"]
    if not errors and (not loader.ds.revisions):
        errors.append(Problem(_shown(data_dir / "revisions", root), 1, "", "no revisions: at least one is needed"))
        problems.append(errors[-1])
    return (None if errors else loader.ds), problems


def _keep_changes(loader: _Loader) -> None:
    """Tell the dataset how it differs from the one the last load of the same folder made, when
    the load knows (see :func:`changes`), and keep it for the next load to compare with."""
    before = loader.kept.get(("dataset",))
    ds = loader.ds
    if before is not None and loader.changed is not None and not loader.whole:
        changed = {attr: frozenset(ids) for attr, ids in loader.patched.items()}
        for kind in KINDS:
            if kind.collection == "single" and getattr(ds, kind.attr) is not getattr(before, kind.attr):
                changed[kind.attr] = frozenset(("*",))
        reuse.CHANGES.put(before, None)  # one step back only: no chain of datasets stays alive
        reuse.CHANGES.put(ds, (before, changed))
    loader.kept[("dataset",)] = ds


def changes(ds: Dataset) -> tuple[Dataset, dict[str, frozenset[str]]] | None:
    """(the dataset of the last load of the same folder, kind attribute -> ids of the records that
    differ from it) when ``ds`` comes from a load told which files were written (the preview's)
    and every record kind was either unchanged or had records replaced in place: the same ids,
    in the same order, every other record the same object. A single file that changed (ui.yaml)
    is named with the id "*". Translations are not compared. None when not known."""
    return reuse.CHANGES.find(ds)


__all__ = ["load_dataset", "changes", "LANGS"]
