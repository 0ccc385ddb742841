"""Loading the translation files of data/translations/<lang>/: each checked against the
English record it mirrors, replayed from the last load where nothing it reads changed.
"""
from __future__ import annotations

import os
from pathlib import Path

from generator.data.dataset import Dataset, Record, Translation, digest
from generator.data.file_rules import _near, rule_placeholders_kept
from generator.data.kinds import all_records
from generator.data.problems import Problem
from generator.data.records import TRANSLATION
from generator.data.schema import TRANSLATED_LANGS

_MISSING = object()


class _TranslationLoading:
    """Loading the translation files (a part of the loader, :class:`generator.data.loader._Loader`)."""

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
        look = self._translations_to_look_at(listing)
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
        self._replay_given(given, redone)
        self.kept[key] = (listing, done, dict(self.ds.translations), given)

    def _translations_to_look_at(self, listing) -> set[int]:
        """The places in ``listing`` of the files to read again: written, or of an English record read again."""
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
        return look

    def _replay_given(self, given: dict, redone: set) -> None:
        """Add what the files not read again gave on the last load: problems, references, what went unchecked."""
        for i, was in sorted(given.items()):
            if i in redone:  # what it gave is in already
                continue
            _, unreadable, problems, refs, unchecked, _ = was
            self.problems += problems
            self.refs += refs
            if unchecked:
                self.unchecked[unreadable] += 1

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
        if english is None and (self.data_dir / rel).is_file():
            return  # the file is there and holds no record (a duplicate id, say): its own problem says why
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
