"""Reuse between builds and in the preview: everything the generator keeps, in one place.

A stage (load, derive, render, publish) is a plain function of its inputs. What is kept of its
answers lives here, in stores declared below with the inputs their keys are made of, so that an
edit to a stage cannot leave a stale answer somewhere out of sight:

- :class:`Memo`: answers in memory by a key built from the query's declared inputs. An input is a
  content digest (the serialized fields a computation reads) or an immutable object (a record, a
  measured row: the loader gives the same object again for an unchanged file), compared by
  identity and held by the entry so that its identity cannot be reused while the entry lives.
  Each store is bounded; the preview's long-running process keeps them between its steps.
- :class:`PerObject`: answers that live exactly as long as the object they are about (a dataset's
  facts, what the loader tells of the load that made a dataset), none kept on the object itself.
- :class:`Scopes`: a few scopes (one per data folder a process loads), each a dict of its own, the
  least recently used dropped: what the loader remembers of its last load of that folder.
- :class:`Kept`: answers kept in a file between builds, valid while a key (versions, settings) that
  the answers depend on besides their question stays the same.
- :func:`read_json` and :func:`write_json`: the files under ``build/`` that keep answers between
  builds. A file that cannot be used (missing, truncated, not JSON, not of the expected shape) is
  no answer: the answer is worked out again and the file written anew. A file is written whole
  or not at all (a temporary file beside it, then renamed over it).

``clear()`` empties every in-memory store (tests; a process that wants a cold start).
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

_NONE = object()


class Memo:
    """Answers of one query by a hashable key of its declared inputs, at most ``limit`` of them
    (past that the store starts again empty: a cold step, never a wrong answer)."""

    def __init__(self, name: str, inputs: Sequence[str], limit: int):
        self.name, self.inputs, self.limit = name, tuple(inputs), limit
        self._answers: dict[Hashable, Any] = {}

    def get(self, key: Hashable, make: Callable[[], Any]):
        """The answer kept under ``key``, or ``make()`` kept from now on."""
        found = self._answers.get(key, _NONE)
        if found is _NONE:
            if len(self._answers) >= self.limit:
                self._answers.clear()
            found = self._answers[key] = make()
        return found

    def of(self, obj: object, make: Callable[[], Any], *key: Hashable):
        """The answer for the immutable ``obj`` (by identity, with the rest of ``key``)."""
        cell = (id(obj), *key)
        hit = self._answers.get(cell)
        if hit is None or hit[0] is not obj:
            if len(self._answers) >= self.limit:
                self._answers.clear()
            hit = self._answers[cell] = (obj, make())
        return hit[1]

    def of_items(self, name: Hashable, items: Sequence, make: Callable[[], Any]):
        """The answer made from ``items``: kept while the same item objects come again, in the same
        order (a reload of unchanged files gives the same records and rows)."""
        last = self._answers.get(name)
        if last is not None and len(last[0]) == len(items) and (last[2] is items or all(map(_same, last[0], items))):
            return last[1]
        value = make()
        if name not in self._answers and len(self._answers) >= self.limit:
            self._answers.clear()
        self._answers[name] = (tuple(items), value, items)
        return value

    def clear(self) -> None:
        self._answers.clear()

    def __len__(self) -> int:
        return len(self._answers)


def _same(a, b) -> bool:
    return a is b


class Lru:
    """Answers by key, at most ``limit``, the least recently used dropped first."""

    def __init__(self, name: str, inputs: Sequence[str], limit: int):
        self.name, self.inputs, self.limit = name, tuple(inputs), limit
        self._answers: OrderedDict = OrderedDict()

    def find(self, key: Hashable, default=None):
        hit = self._answers.get(key, _NONE)
        if hit is _NONE:
            return default
        self._answers.move_to_end(key)
        return hit

    def put(self, key: Hashable, answer) -> None:
        self._answers[key] = answer
        self._answers.move_to_end(key)
        if len(self._answers) > self.limit:
            self._answers.popitem(last=False)

    def clear(self) -> None:
        self._answers.clear()

    def __len__(self) -> int:
        return len(self._answers)


class PerObject:
    """Answers about an object, by identity, dropped with the object (weakly keyed): nothing is
    stashed on the object, and nothing outlives it."""

    def __init__(self, name: str, inputs: Sequence[str]):
        self.name, self.inputs = name, tuple(inputs)
        self._answers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def get(self, obj: object, make: Callable[[], Any]):
        found = self._answers.get(obj, _NONE)
        if found is _NONE:
            found = self._answers[obj] = make()
        return found

    def find(self, obj: object, default=None):
        return self._answers.get(obj, default)

    def put(self, obj: object, answer) -> None:
        self._answers[obj] = answer

    def clear(self) -> None:
        self._answers.clear()


class Scopes:
    """A dict per scope, for at most ``limit`` scopes, the least recently used dropped whole: what
    one scope kept never loses part of itself to another scope's work."""

    def __init__(self, name: str, inputs: Sequence[str], limit: int):
        self.name, self.inputs, self.limit = name, tuple(inputs), limit
        self._scopes: dict[Hashable, dict] = {}

    def scope(self, key: Hashable) -> dict:
        kept = self._scopes.pop(key, None)
        if kept is None:
            kept = {}
            while len(self._scopes) >= self.limit:
                self._scopes.pop(next(iter(self._scopes)))
        self._scopes[key] = kept  # the most recently used goes last
        return kept

    def clear(self) -> None:
        self._scopes.clear()


def read_json(path: Path, shape: Callable[[Any], bool] = lambda value: True):
    """The JSON value kept in ``path``, or None when there is none to use: no file, an unreadable
    one, a truncated one, one that is not JSON, or a value that ``shape`` rejects."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None
    return value if shape(value) else None


def write_json(path: Path, value, **dumps) -> bool:
    """Write ``value`` as JSON (``dumps``: json.dumps' options) to ``path`` whole or not at all: into
    a temporary file of the same folder, then renamed over ``path``. A process killed meanwhile
    leaves the last file as it was. False when it could not be written (a read-only tree)."""
    text = json.dumps(value, **dumps)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    os.close(fd)
    try:
        Path(tmp).write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True


class Kept:
    """Answers kept in ``path`` between builds, by question: valid while ``key`` (what the answers
    depend on besides the question: versions, settings) stays the same."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = path, key
        self.known: dict = {}
        self.used: dict = {}
        saved = read_json(path, lambda v: isinstance(v, dict) and isinstance(v.get("answers"), dict))
        if saved is not None and saved.get("key") == key:
            self.known = saved["answers"]

    def get(self, question: str, answer):
        """The kept answer to ``question``, or ``answer(question)`` kept from now on."""
        done = self.find(question)
        if done is None:
            done = answer(question)
            self.keep(question, done)
        return done

    def find(self, question: str):
        """The kept answer to ``question`` (None: none kept)."""
        done = self.used.get(question)
        if done is None:
            done = self.known.get(question)
            if done is not None:
                self.used[question] = done
        return done

    def keep(self, question: str, answer) -> None:
        self.used[question] = answer

    def save(self, keep_unused: bool) -> None:
        """Write what this build used (and, for a build of a few pages, what it did not)."""
        if keep_unused and all(self.known.get(q, _NONE) == a for q, a in self.used.items()):
            return  # nothing new (a build of one page: no pass over every kept answer)
        answers = {**self.known, **self.used} if keep_unused else self.used
        if answers == self.known:
            return
        # a read-only tree builds, only slower
        write_json(self.path, {"key": self.key, "answers": answers}, ensure_ascii=False, sort_keys=True)
        self.known, self.used = answers, {}


# ------------------------------------------------------------------------------ the stores
# Each store names the inputs its keys are made of. "record" and "row" are immutable objects
# compared by identity; "digest" is a content digest; "fit digest" covers everything the fitted
# constants read (generator.facts.estimates).

# Parsed files by (shown path, digest of the exact bytes): a long-running process parses again only
# the files whose content changed; far above any catalogue's file count, so that a reload never
# evicts its own files. And a file's status (size, times, inode) when last read, with its entry
# there: a file whose status is the same is not read again.
PARSED = Lru("parsed files", ("shown path", "digest of the file's bytes"), limit=1 << 18)
SEEN = Lru("files' status when last read", ("path", "size, times and inode"), limit=1 << 18)
LOADS = Scopes("loads", ("data folder", "project root", "today"), limit=8)
FACTS = PerObject("a dataset's facts", ("dataset",))
CHANGES = PerObject("what a reload changed", ("dataset",))
RECORD_VIEWS = Memo("plain views of records", ("record", "view", "id"), limit=1 << 18)
GRID = Memo("grid cells", ("model's fields", "card's engine fields", "fit digest"), limit=1 << 20)
MEMORY_ROWS = Memo("a model's memory table", ("model's fields", "reference card's engine fields", "fit digest"),
                   limit=1 << 14)
PREDICTED = Memo("measured rows' estimates", ("row", "model's fields", "card's engine fields", "fit digest"), limit=1 << 19)
TRAINING = Memo("training rows' estimates", ("fit digest",), limit=1)
OF_ROWS = Memo("answers of the measured rows", ("every measured row", "query"), limit=64)
OF_REVISIONS = Memo("answers of the revisions", ("every revision record", "query"), limit=64)
DIGEST_PARTS = Memo("serialized parts of the fit digest", ("record", "part"), limit=500_000)
# The leave-one-source-out errors of the estimates (generator.facts.estimates.held_out_of): a
# reuse.Kept file, build/cache/held-out-errors.json, one answer per (fit digest, left-out source).
# MkDocs' builds (generator.site): what Jinja lists of the theme's files (kept by a preview, and by
# a full build before its languages fork), MkDocs' list of a docs folder's files (the preview's
# steps), the answers kept in files between builds (reuse.Kept: the one in use of each kind, and
# the folder they are kept in), and what their replaced internals work out once.
THEME_FILES = Lru("the theme's files, as Jinja lists them", ("theme's template folders",), limit=8)
LISTED_FILES = Lru("MkDocs' list of a docs folder's files", ("docs folder", "site folder", "directory URLs",
                                                             "excluded docs"), limit=8)
KEPT_FILES = Lru("answers kept in files: their folder, the file in use of each kind",
                 ("kind", "file", "key of its answers"), limit=4)
MEDIA_PARSED = Lru("scripts and style sheets as the privacy plugin parsed them", ("path", "size", "modification time"),
                   limit=4096)
SITE_SIGNATURES = Memo("what a page's render reads of its site", ("MkDocs' files", "MkDocs' configuration"), limit=4)
CODE_DIGESTS = Memo("digests of modules' code", ("module file",), limit=16)
PACKAGE_VERSIONS = Memo("installed versions of packages", ("package",), limit=16)
# The calculators' modules as the site ships them, minified (generator.publish.assets): by the digest
# of a module's bytes as served and the minifier's version and settings; between builds the same
# answers are kept in a reuse.Kept file, build/cache/minified-js.json.
MINIFIED = Lru("minified JavaScript modules", ("digest of the module's bytes", "minifier and its settings"),
               limit=256)

MEMORY: tuple[Memo | Lru | PerObject | Scopes, ...] = (
    PARSED, SEEN, LOADS, FACTS, CHANGES, RECORD_VIEWS, GRID, MEMORY_ROWS, PREDICTED, TRAINING, OF_ROWS, OF_REVISIONS,
    DIGEST_PARTS, THEME_FILES, LISTED_FILES, KEPT_FILES, MEDIA_PARSED, SITE_SIGNATURES, CODE_DIGESTS, PACKAGE_VERSIONS,
    MINIFIED)


def clear() -> None:
    """Empty every in-memory store."""
    for store in MEMORY:
        store.clear()
