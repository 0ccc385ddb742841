"""Loading each record kind's files: whole, replayed from the last load, or patched where
the preview's watcher saw files written.
"""
from __future__ import annotations

import bisect
from pathlib import Path

from generator.data.file_rules import rule_id_matches_filename, rule_revision_date_matches_filename, rule_vendor_matches_folder
from generator.data.load_checks import _FileRefs


def _order_key(kind):
    """How a list kind's records are ordered: by its order field (0 when absent), then by id."""
    field_name = kind.order_field
    if field_name:
        return lambda ident, data: (data.get(field_name, 0), ident)
    return lambda ident, data: (0, ident)


def _holders(files, given: dict) -> dict:
    """Of each id that several readable files give, the file that holds its record: the first (in
    the listing's order) with no error of its own, else the first. The others are duplicates."""
    firsts: dict = {}
    holders: dict = {}
    for path, _, where in files:
        ident, doc, problems, _ = given[where[0]]
        if doc is None or ident is None:
            continue
        clean = not _has_error(problems)
        first = firsts.setdefault(ident, (path, clean))
        if first[0] is path:
            continue
        held = holders.get(ident, first)
        holders[ident] = (path, clean) if clean and not held[1] else held
    return {ident: held[0] for ident, held in holders.items()}


def _has_error(problems) -> bool:
    return any(p.level == "error" for p in problems)


class _KindLoading:
    """Loading each record kind's files (a part of the loader, :class:`generator.data.loader._Loader`)."""

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
        duplicated = self.kept.get(("duplicated", kind.name), frozenset())
        for a, got in fresh.items():
            before = per_file.get(a)
            ident, doc = got[0], got[1]
            if before is None or before[1] is None or doc is None or ident is None or before[0] != ident:
                return False
            if ident in duplicated and _has_error(before[2]) != _has_error(got[2]):
                return False  # which of the files holds the record may change (see ``_holders``)
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
        holders = _holders(files, given)
        self.kept[("duplicated", kind.name)] = frozenset(holders)
        for path, rel, where in files:
            ident, doc, problems, refs = given[where[0]]
            holder = holders.get(ident) if doc is not None else None
            if holder is not None and holder is not path:
                # one cause, one problem: the file that repeats an id is not a record, and nothing
                # else is said of it (a copy in the wrong folder, say, is not also of the wrong vendor)
                self.problem(path, 1, "", f"duplicate {kind.label or kind.name} id {ident!r}: also {self.shown(holder)}")
                continue
            self.problems += problems
            self.refs += refs
            if doc is None:  # unreadable: one problem, and nothing that depends on it is checked
                self.broken[kind.name].add(path.stem)
                self.broken_files[rel] = path
                continue
            if ident is None:
                continue
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
