"""Answers kept in a file between builds (the search index's parses and segmentation, MkDocs'
renders of Markdown): a build computes only what it was not asked before."""
from __future__ import annotations

import json
import os
from pathlib import Path

_NONE = object()


class KeptAnswers:
    """Answers kept in ``path`` between builds, by question: valid while ``key`` (what the answers
    depend on besides the question: versions, settings) stays the same."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = path, key
        self.known: dict = {}
        self.used: dict = {}
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("key") == key and isinstance(saved.get("answers"), dict):
                self.known = saved["answers"]
        except (OSError, ValueError):
            pass

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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".tmp-{os.getpid()}")
            tmp.write_text(json.dumps({"key": self.key, "answers": answers}, ensure_ascii=False, sort_keys=True),
                           encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # a read-only tree builds, only slower
        self.known, self.used = answers, {}
