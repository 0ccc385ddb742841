"""Load every file of ``data/``, check it, and build the :class:`Dataset`.

``load_dataset`` never raises for bad data: it returns the dataset (or ``None``) and the
full list of problems, so one run reports everything. Rules that need more than one
file (ids against file names, duplicate ids, references, translations) live here; the
per-record rules live in :mod:`generator.data.records`.
"""
from __future__ import annotations

import bisect
import collections
import datetime as _dt
import difflib
import functools
import itertools
import operator
import os
import re
from pathlib import Path

from generator import reuse
from generator.data.dataset import Dataset, Record, Translation, digest, freeze, today_utc
from generator.data.kinds import BY_NAME, KINDS
from generator.data.problems import Problem
from generator.data.records import TRANSLATION
from generator.data.schema import ID_RE, LANGS, TRANSLATED_LANGS, Ctx, walk_text
from generator.data.yamlload import Document, dotted, load_file

KNOWN_DOCS = ("README.md", "schema")  # things in data/ that are not records


def _order_key(kind):
    """How a list kind's records are ordered: by its order field (0 when absent), then by id."""
    field_name = kind.order_field
    if field_name:
        return lambda ident, data: (data.get(field_name, 0), ident)
    return lambda ident, data: (0, ident)


def _usd_keypaths(data) -> list[tuple]:
    obs = data.get("observations") if isinstance(data, dict) else None
    return [("observations", i, "usd") for i in range(len(obs))] if isinstance(obs, list) else []


@functools.lru_cache(maxsize=1 << 18)
def _shown(path: Path, root: Path) -> str:
    """The path as problems name it: relative to the project root (kept per path: the preview
    reloads every file on each change, and resolving each one costs system calls)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _near(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def rule_id_matches_filename(path: Path, ctx: Ctx) -> str | None:
    stem = path.stem
    if not ID_RE.match(stem):
        ctx.err((), f"file name {path.name!r} is not a valid id: use lowercase letters, digits and single dashes")
        return None
    return stem


def rule_revision_date_matches_filename(path: Path, doc: Document, ctx: Ctx) -> str | None:
    stem = path.stem
    try:
        file_date = _dt.date.fromisoformat(stem)
    except ValueError:
        ctx.err((), f"revision files are named YYYY-MM-DD.yaml; got {path.name!r}")
        return None
    if isinstance(doc.data.get("date"), _dt.date) and doc.data["date"] != file_date:
        ctx.err(("date",), f"date {doc.data['date'].isoformat()} differs from the file name {path.name}")
    return stem


def rule_vendor_matches_folder(path: Path, doc: Document, ctx: Ctx) -> None:
    vendor = doc.data.get("vendor")
    if isinstance(vendor, str) and vendor != path.parent.name:
        ctx.err(("vendor",), f"vendor {vendor!r} differs from the folder {path.parent.name!r}; move the file or fix the vendor")


PLACEHOLDER = re.compile(r"\{[a-z][a-z0-9_]*\}")


def rule_placeholders_kept(english: str, translated: str, doc: Document, key: str, problems: list) -> bool:
    """A translation keeps every ``{placeholder}`` of the English text, and adds none."""
    want, got = sorted(PLACEHOLDER.findall(english)), sorted(PLACEHOLDER.findall(translated))
    if want != got:
        problems.append(Problem(doc.path, doc.line((key, "text")), f"{key}.text",
                                f"placeholders differ from the English text: expected {' '.join(want) or 'none'}, got {' '.join(got) or 'none'}"))  # noqa: E501
        return False
    return True


_MISSING = object()


class _Loader:
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
        if rel.startswith("prices/"):
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

    def load_kind(self, kind) -> None:
        files = self.yaml_files(self.data_dir / kind.folder, kind.depth)
        key = ("kind", kind.name)
        last = self.kept.get(key) if self.changed is not None else None
        # the same listing object: no file of the folder created, deleted or moved since it was made
        same = last is not None and last[0] is files
        written = self._written_in(kind, files) if same else None
        if same and not written:
            _, added, broken, value, _ = last
            self._replay(added)
            self.broken[kind.name] |= broken
            setattr(self.ds, kind.attr, value.copy())
            return
        # the same listing, some of its files written: each is read again, and when each keeps its
        # id and its place, the rest is what the last load gave (see ``_patch_kind``)
        fresh = {a: self._kind_file(kind, *written[a]) for a in sorted(written)} if same else {}
        if same and self._patch_kind(kind, key, last, written, fresh):
            return
        self.whole.add(kind.name)
        mark = self._effects()
        # what each unwritten file gave is replayed
        files_before = last[4] if same else None
        per_file = self._load_kind(kind, files, files_before, fresh)
        value = getattr(self.ds, kind.attr)
        self.kept[key] = (files, self._since(mark), frozenset(self.broken[kind.name]), value.copy(), per_file)

    def _written_in(self, kind, files) -> dict[str, tuple]:
        """The files of this listing written since the last load: absolute path -> (file, its path
        in the data folder, ``where``); a look-up in an index kept with the listing, not a pass
        over its files."""
        key = ("index", kind.name)
        index = self.kept.get(key)
        if index is None or index[0] is not files:
            index = self.kept[key] = (files, {where[0]: (path, rel, where) for path, rel, where in files})
        by_abs = index[1]
        return {a: by_abs[a] for a in self.changed if a in by_abs}

    def _patch_kind(self, kind, key: tuple, last: tuple, written: dict, fresh: dict) -> bool:
        """The kind's records when every file written keeps its id, stays readable and held the
        record of that id (not a duplicate), and, in a list, its place: the last load's records
        with those replaced, and what every other file gave then (problems, references, records),
        without a pass over the other files in Python (a card's edit among 11,600 cards). False,
        with nothing done, when one of them does not: the caller loads the kind file by file."""
        files, added, broken, value, per_file = last
        order = _order_key(kind)
        places = {}
        for a, got in fresh.items():
            before = per_file.get(a)
            ident, doc = got[0], got[1]
            if before is None or before[1] is None or doc is None or ident is None or before[0] != ident:
                return False
            rel = written[a][1]
            if kind.collection == "map":
                old = value.get(ident)
                place = ident
            else:
                i = bisect.bisect_left(value, order(ident, before[1].data), key=lambda r: order(r.id, r.data))
                old = value[i] if i < len(value) else None
                place = i
                if order(ident, doc.data) != order(ident, before[1].data):
                    return False
            if old is None or old.relpath != rel:
                return False
            places[a] = place
        mark = self._effects()
        problems, _, broken_files, english, lines = added
        self.problems += problems
        now = dict(per_file)
        for a, got in fresh.items():
            for p in per_file[a][2]:
                self.problems.remove(p)
            self.problems += got[2]
            now[a] = got
        refs = _FileRefs(now)
        self.ref_parts.append(refs)
        self.broken_files.update(broken_files)
        self.english_docs.update(english)
        self.lines.update(lines)
        self.broken[kind.name] |= broken
        value = value.copy()
        for a, got in fresh.items():
            path, rel, _ = written[a]
            value[places[a]] = self.make_record(got[0], path, got[1], kind.schema, rel)
            self.english_read.add(rel)
            self.patched.setdefault(kind.attr, set()).add(got[0])
        setattr(self.ds, kind.attr, value)
        # what the kind gives from now on: the maps of the last load with the records written
        # replaced (copies of whole maps, not a pass over their entries in Python)
        english, lines = dict(english), dict(lines)
        for a in fresh:
            rel = written[a][1]
            english[rel] = self.english_docs[rel]
            if rel in self.lines:
                lines[rel] = self.lines[rel]
        self.kept[key] = (files, (tuple(self.problems[mark[0]:]), refs, broken_files, english, lines),
                          broken, value.copy(), now)
        return True

    def _load_kind(self, kind, files, before: dict | None = None, fresh: dict | None = None) -> dict:
        """Every file of one kind, in the listing's order. ``before``: what each file gave at the
        last load of the same listing (see ``_kind_file``); a file not written since gives that
        again without being read or checked. ``fresh``: what the files written gave, read
        already. Returns what each file gave this time."""
        seen: dict[str, Path] = {}
        loaded = []
        given = {}
        fresh = fresh or {}
        for path, rel, where in files:
            got = fresh.get(where[0])
            read = got is not None
            if got is None and before is not None and where[0] not in self.changed:
                got = before.get(where[0])
            if got is None:
                got = self._kind_file(kind, path, rel, where)
                read = True
            if read:
                self.english_read.add(rel)
            given[where[0]] = got
            ident, doc, problems, refs = got
            self.problems += problems
            self.refs += refs
            if doc is None:  # unreadable: one problem, and nothing that depends on it is checked
                self.broken[kind.name].add(path.stem)
                self.broken_files[rel] = path
                continue
            if ident is None:
                continue
            if ident in seen:
                self.problem(path, 1, "", f"duplicate {kind.label or kind.name} id {ident!r}: also {self.shown(seen[ident])}")
                continue
            seen[ident] = path
            loaded.append(self.make_record(ident, path, doc, kind.schema, rel))
        if kind.collection == "map":
            setattr(self.ds, kind.attr, {rec.id: rec for rec in loaded})
        else:
            order = _order_key(kind)
            setattr(self.ds, kind.attr, sorted(loaded, key=lambda r: order(r.id, r.data)))
        return given

    def _kind_file(self, kind, path: Path, rel: str, where: tuple[str, str]) -> tuple:
        """What one record file gives, a pure function of its bytes and place: (its id or None, its
        document or None when unreadable, the problems and the references found in it)."""
        p, r = len(self.problems), len(self.refs)
        doc, ctx = self.read(path, kind.schema, where)
        if doc is not None:
            if kind.ident == "date":
                ident = rule_revision_date_matches_filename(path, doc, ctx)
            else:
                ident = rule_id_matches_filename(path, ctx)
            if kind.name == "gpu":
                rule_vendor_matches_folder(path, doc, ctx)
            self.problems += ctx.problems
        else:
            ident = None
        got = (ident, doc, tuple(self.problems[p:]), tuple(self.refs[r:]))
        del self.problems[p:], self.refs[r:]  # the caller adds them, as it adds a replayed file's
        return got

    def load_single(self, kind) -> None:
        path = self.data_dir / kind.folder
        if not path.is_file() and kind.optional:
            return
        self.english_read.add(kind.folder)  # read again on every load: its translations are looked at again too
        if not path.is_file():
            self.problem(path, 1, "", f"missing: data/{kind.folder} is required")
            return
        doc, ctx = self.read(path, kind.schema)
        if doc is None:
            self.broken_files[kind.folder] = path
            self.broken[kind.name].add("*")
            return
        self.problems += ctx.problems
        setattr(self.ds, kind.attr, self.make_record(path.stem, path, doc, kind.schema))

    def known_ids(self, name: str) -> set[str]:
        if name == "persona":
            return set(self.ds.persona_ids())
        value = getattr(self.ds, BY_NAME[name].attr)
        return set(value) if isinstance(value, dict) else {r.id for r in value}

    def check_refs(self) -> None:
        """Every reference names a record that exists. What a reference gives depends only on it,
        the ids that exist and the unreadable files: when those are what they were at the last
        load, only the references of the files written since are checked, and every other file
        gives what it gave then (the preview's reload: 200,000 references at a hundred times the
        data, those of one card's file new)."""
        last = self.kept.get(("refs",)) if self.changed is not None else None
        if last is not None:
            signature, outcomes, known_then = last
            if {kind for kind, *_ in self.fresh_refs} <= known_then.keys():
                known = self._known(known_then, known_then)
                if self._ref_signature(known) == signature:
                    outcomes = {path: o for path, o in outcomes.items() if path not in self.written}
                    self._give_refs(known, self._check_refs(self.fresh_refs, known, outcomes))
                    return
        refs = [*itertools.chain.from_iterable(self.ref_parts), *self.refs]
        known = self._known(frozenset(kind for kind, *_ in refs))
        self._give_refs(known, self._check_refs(refs, known, {}))

    def _known(self, kinds, then: dict | None = None) -> dict[str, frozenset]:
        """The ids that exist, for each kind named (one pass over each kind's records). ``then``:
        the ids of the last load's check; a kind of records that was not loaded file by file has
        the same ids as then (replayed, or records replaced in place under the same ids) and
        gives the same set, not a pass over its records again."""
        out = {}
        for name in kinds:
            kind = BY_NAME.get(name)
            same = (then is not None and name in then and kind is not None and kind.collection != "single"
                    and kind.name not in self.whole)
            out[name] = then[name] if same else frozenset(self.known_ids(name))
        self.known_now.update(out)
        return out

    def _ref_signature(self, known: dict) -> tuple:
        return (tuple(sorted(known.items())),
                tuple(sorted((name, frozenset(ids)) for name, ids in self.broken.items() if ids)))

    def _check_refs(self, refs, known: dict, outcomes: dict) -> dict:
        """``outcomes`` (a file's path as problems name it -> (problems, unreadable files it could
        not be checked against)) with what ``refs`` give added; ``known``: see ``_known``."""
        added: dict[str, tuple[list, list]] = {}
        for kind, ident, doc, kp in refs:
            if ident in known[kind]:
                continue
            problems, unchecked = added.setdefault(doc.path, ([], []))
            if ident in self.broken[kind] or "*" in self.broken[kind]:
                unchecked.append(self._broken_path(kind, ident))
                continue
            problems.append(Problem(doc.path, doc.line(kp), dotted(kp),
                                    f"unknown {kind} id {ident!r}{_near(ident, known[kind])}"))
        for path, (problems, unchecked) in added.items():
            before = outcomes.get(path, ((), ()))
            outcomes[path] = (before[0] + tuple(problems), before[1] + tuple(unchecked))
        return outcomes

    def _give_refs(self, known: dict, outcomes: dict) -> None:
        for problems, unchecked in outcomes.values():
            self.problems += problems
            for path in unchecked:
                self.unchecked[path] += 1
        self.kept[("refs",)] = (self._ref_signature(known), outcomes, known)

    def _broken_path(self, kind: str, ident: str) -> Path:
        folder = BY_NAME[kind].folder
        for rel, path in self.broken_files.items():
            if rel == folder or (rel.startswith(folder + "/") and path.stem == ident):
                return path
        return self.data_dir / folder

    def check_named_by(self) -> None:
        """Files named by another kind's ids (prices/<gpu-id>.yaml) name an existing record."""
        for kind in KINDS:
            if not kind.id_of:
                continue
            known = self.known_now.get(kind.id_of) or self.known_ids(kind.id_of)
            for ident, rec in getattr(self.ds, kind.attr).items():
                if ident in known:
                    continue
                path = self.data_dir / rec.relpath
                if ident in self.broken[kind.id_of]:
                    self.unchecked[self._broken_path(kind.id_of, ident)] += 1
                    continue
                self.problem(path, 1, "", f"{kind.folder}/ files are named after a {kind.id_of} id; "
                             f"{ident!r} is not one{_near(ident, known)}")

    def check_prices(self) -> None:
        """Plausible ratios: a used or street price far above the card's launch price is reported."""
        for gid, rec in self.ds.prices.items():
            gpu = self.ds.gpus.get(gid)
            launch = gpu.get("launch_price_usd") if gpu else None
            if not launch:
                continue
            doc_path = self.data_dir / rec.relpath
            for i, obs in enumerate(rec.get("observations") or ()):
                if obs.get("kind") in ("used", "street") and obs.get("usd", 0) > 2 * launch:
                    line = self.lines.get(rec.relpath, {}).get(("observations", i, "usd"), 1)
                    self.problems.append(Problem(self.shown(doc_path), line, dotted(("observations", i, "usd")),
                                                 f"{obs['kind']} price {obs['usd']:g} USD is above twice the launch "
                                                 f"price ({launch:g} USD); check the figure or explain it in note",
                                                 "warning"))

    def report_unchecked(self) -> None:
        for path, count in sorted(self.unchecked.items()):
            self.problem_note(path, f"{count} reference(s) or translation(s) of this file were not checked "
                                    "because it could not be read")

    def problem_note(self, path: Path, message: str) -> None:
        self.problems.append(Problem(self.shown(path), 1, "", message, "note"))

    def load_translations(self) -> None:
        """Every translation file. A load that vouches for the unchanged files replays what the last
        load found in a file that did not change, of an English record that did not change either
        (the same record object), instead of reading and checking it again."""
        listing = self.listed(("translations",), self._walk_translations)
        key = ("translations",)
        last = self.kept.get(key) if self.changed is not None else None
        if last is not None and last[0] is listing and last[2] is not None:
            self._translations_again(key, *last)
            return
        last = last[1] if last is not None and last[0] is listing else None
        done = []
        for i, (lang, path, rel, where) in enumerate(listing):
            table = self.ds.translations.setdefault(lang, {})
            if path is None:
                done.append(None)
                continue
            english = self.english_docs.get(rel)
            record = english[1] if english is not None else None
            unreadable = self.broken_files.get(rel)
            was = last[i] if last is not None else None
            if was is not None and was[0] is record and was[1] is unreadable and where[0] not in self.changed:
                _, _, problems, refs, unchecked, entries = was
                self.problems += problems
                self.refs += refs
                if unchecked:
                    self.unchecked[unreadable] += 1
                if entries is not _MISSING:
                    table[rel] = entries
                done.append(was)
                continue
            done.append(self._read_translation(path, rel, where, table, record, unreadable))
        self._keep_translations(key, listing, done)

    def _read_translation(self, path: Path, rel: str, where: tuple[str, str], table: dict, record, unreadable) -> tuple:
        """One translation file read and checked into ``table`` (an entry already there keeps its
        place); what it gave: (its English record, that record's unreadable file, problems,
        references, whether it went unchecked, its entries or _MISSING)."""
        p, r = len(self.problems), len(self.refs)
        before = sum(self.unchecked.values())
        fresh: dict = {}
        self.load_translation(path, rel, where, fresh)
        entries = fresh.get(rel, _MISSING)
        if entries is _MISSING:
            table.pop(rel, None)
        else:
            table[rel] = entries
        return (record, unreadable, tuple(self.problems[p:]), tuple(self.refs[r:]),
                sum(self.unchecked.values()) != before, entries)

    def _keep_translations(self, key: tuple, listing, done: list) -> None:
        """What this load of the translations gave, for the next: each file's answer, the tables,
        and what the files gave besides entries (problems, references, what went unchecked) of
        the files that gave any (few)."""
        tables = {lang: dict(table) for lang, table in self.ds.translations.items()}
        given = {i: was for i, was in enumerate(done) if was is not None and (was[2] or was[3] or was[4])}
        self.kept[key] = (listing, done, tables, given)

    def _translations_again(self, key: tuple, listing, done: list, tables: dict, given: dict) -> None:
        """The translations when the last load's listing holds: the last tables and what the files
        gave, with only the files to look at again read again: a translation file written, or
        the translation of an English record that may have changed (its file written; the
        single files such as ui.yaml are always read again). Each such file is read and checked
        as a full load does; an entry keeps its place in its table."""
        where_of = self.kept.get(("translations-index",))
        if where_of is None or where_of[0] is not listing:
            by_abs, by_rel = {}, {}
            for i, (_, path, rel, where) in enumerate(listing):
                if path is not None:
                    by_abs[where[0]] = i
                    by_rel.setdefault(rel, []).append(i)
            where_of = self.kept[("translations-index",)] = (listing, by_abs, by_rel)
        _, by_abs, by_rel = where_of
        look = {by_abs[p] for p in self.changed if p in by_abs}
        for rel in self.english_read:
            look.update(by_rel.get(rel, ()))
        # the last tables are shared with the last dataset: a table is copied before its first
        # change, and only a file whose entries differ changes it (a card's tdp edited: its
        # translations are checked again and give the same entries; no table is copied)
        given, redone, copied = dict(given), set(), set()
        self.ds.translations = dict(tables)
        for i in sorted(look):
            lang, path, rel, where = listing[i]
            english = self.english_docs.get(rel)
            record = english[1] if english is not None else None
            unreadable = self.broken_files.get(rel)
            was = done[i]
            if was is not None and was[0] is record and was[1] is unreadable and where[0] not in self.changed:
                continue
            scratch: dict = {}
            now = self._read_translation(path, rel, where, scratch, record, unreadable)
            table = self.ds.translations.get(lang)
            if table is None or table.get(rel, _MISSING) != now[5]:
                if lang not in copied:
                    table = self.ds.translations[lang] = dict(table or {})
                    copied.add(lang)
                if now[5] is _MISSING:
                    table.pop(rel, None)
                else:
                    table[rel] = now[5]
            done[i] = now  # the last load's list, held by nothing else: changed in place
            redone.add(i)
            given.pop(i, None)
            if now[2] or now[3] or now[4]:
                given[i] = now
        for i, was in sorted(given.items()):
            if i in redone:  # what it gave is in already
                continue
            _, unreadable, problems, refs, unchecked, _ = was
            self.problems += problems
            self.refs += refs
            if unchecked:
                self.unchecked[unreadable] += 1
        self.kept[key] = (listing, done, dict(self.ds.translations), given)

    def _walk_translations(self) -> list[tuple]:
        """(language, None, None, None) for each language's folder, then (language, file, its path
        relative to the language's folder, ``where`` for ``read``) for each of its translation
        files; anything else is reported."""
        base = self.data_dir / "translations"
        out = []
        if not base.is_dir():
            return out
        for lang_dir in sorted(p for p in base.iterdir() if not p.name.startswith(".")):
            if not lang_dir.is_dir() or lang_dir.name not in TRANSLATED_LANGS:
                self.problem(lang_dir, 1, "", f"translations are kept per language: one of {', '.join(TRANSLATED_LANGS)} (English is the data itself)")  # noqa: E501
                continue
            out.append((lang_dir.name, None, None, None))
            for dirpath, dirnames, filenames in os.walk(lang_dir):
                dirnames.sort()
                for fname in sorted(filenames):
                    path = Path(dirpath) / fname
                    if fname.startswith("."):
                        continue
                    if path.suffix != ".yaml":
                        self.problem(path, 1, "", "only .yaml translation files belong here")
                        continue
                    out.append((lang_dir.name, path, path.relative_to(lang_dir).as_posix(), self.where(path)))
        return out

    def load_translation(self, path: Path, rel: str, where: tuple[str, str], table: dict) -> None:
        doc, ctx = self.read(path, TRANSLATION, where)
        if doc is None:
            return
        self.problems += ctx.problems
        english = self.english_docs.get(rel)
        if english is None and rel in self.broken_files:
            self.unchecked[self.broken_files[rel]] += 1
            return
        if english is None:
            self.problem(path, 1, "", f"translation of an unknown record: data/{rel} does not exist{_near(rel, self.english_docs)}")  # noqa: E501
            return
        _, rec = english
        # A translation read again unchanged, of the same English record, was checked already:
        # the preview's reload reuses what the check found (the record is kept to compare).
        done = doc.__dict__.setdefault("_translated", {}).get(rel)
        if done is not None and done[0] is rec:
            self.problems += done[1]
            table[rel] = done[2]
            return
        before = len(self.problems)
        entries = {}
        for key, value in doc.data.items():
            if key not in rec.texts:
                self.problems.append(Problem(doc.path, doc.line((key,)), key,
                                             f"no translatable English text has this key in data/{rel}{_near(key, rec.texts)}"))
                continue
            if isinstance(value, dict) and isinstance(value.get("text"), str) and isinstance(value.get("source"), str):
                if rule_placeholders_kept(rec.texts[key], value["text"], doc, key, self.problems):
                    entries[key] = Translation(value["text"], value["source"])
        table[rel] = entries
        doc.__dict__["_translated"][rel] = (rec, tuple(self.problems[before:]), entries)


class _FileRefs:
    """The references of a kind's files, from what each file gave (see ``_Loader._kind_file``):
    gone through only when every reference is checked again."""

    __slots__ = ("given",)

    def __init__(self, given: dict) -> None:
        self.given = given

    def __iter__(self):
        return itertools.chain.from_iterable(map(operator.itemgetter(3), self.given.values()))


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


def stale_translations(ds: Dataset) -> list[tuple[str, str, str]]:
    """(lang, relpath, key) of every translation whose English text changed since."""
    out = []
    for lang, per_file in ds.translations.items():
        for rel, entries in per_file.items():
            schema_rec = _record_by_rel(ds, rel)
            if schema_rec is None:
                continue
            for key, tr in entries.items():
                english = schema_rec.texts.get(key)
                if english is not None and tr.source != digest(english):
                    out.append((lang, rel, key))
    return sorted(out)


def _record_by_rel(ds: Dataset, rel: str) -> Record | None:
    for rec in all_records(ds):
        if rec.relpath == rel:
            return rec
    return None


def all_records(ds: Dataset):
    """Every record of every kind, in the order of the kinds registry."""
    for kind in KINDS:
        value = getattr(ds, kind.attr)
        if value is None:
            continue
        if kind.collection == "single":
            yield value
        else:
            yield from (value.values() if isinstance(value, dict) else value)


__all__ = ["load_dataset", "changes", "stale_translations", "all_records", "LANGS"]
