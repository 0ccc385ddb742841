"""The checks that need more than one file: references between records, ids against file
names, prices against launch prices, and what could not be checked.
"""
from __future__ import annotations

import itertools
import operator
from pathlib import Path

from generator.data.file_rules import _near
from generator.data.kinds import BY_NAME, KINDS
from generator.data.problems import Problem
from generator.data.yamlload import dotted

NEW_FOR_YEARS = 4  # a consumer card without a discontinued date is taken as sold new this long


def stray_new_after(gpu):
    """The last day a new price of the card is credible, and why; (None, "") when always."""
    if gpu.get("discontinued"):
        end = gpu["discontinued"]
        return end, f"discontinued on {end.isoformat()}"
    released = gpu.get("release_date")
    if gpu.get("segment") == "consumer" and hasattr(released, "year"):
        try:
            end = released.replace(year=released.year + NEW_FOR_YEARS)
        except ValueError:  # 29 February
            end = released.replace(year=released.year + NEW_FOR_YEARS, day=28)
        return end, f"released on {released.isoformat()}, over {NEW_FOR_YEARS} years before, with no discontinued date"
    return None, ""


class _CrossFileChecks:
    """The checks across files (a part of the loader, :class:`generator.data.loader._Loader`)."""

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

    def check_new_prices(self) -> None:
        """A new ("street") price is a price of a card still sold new: after the card's
        ``discontinued`` date, or, without one, more than NEW_FOR_YEARS after a consumer card's
        release, a new listing is a stray (new old stock, a reseller), not what a buyer pays."""
        for gid, rec in self.ds.prices.items():
            gpu = self.ds.gpus.get(gid)
            if gpu is None:
                continue
            end, why = stray_new_after(gpu)
            if end is None:
                continue
            for i, obs in enumerate(rec.get("observations") or ()):
                date = obs.get("date")
                if obs.get("kind") == "street" and hasattr(date, "year") and date > end:
                    line = self.lines.get(rec.relpath, {}).get(("observations", i, "kind"), 1)
                    self.problems.append(Problem(
                        self.shown(self.data_dir / rec.relpath), line, dotted(("observations", i, "kind")),
                        f"a street (new) price dated {date.isoformat()} for a card {why}: a new listing then is "
                        "a stray; record a used price instead (see 'Prices' in data/README.md)"))

    def check_support(self) -> None:
        """Every GPU's architecture has its features in data/software.yaml, and a card with FP8
        (FP4) tensor figures has an architecture that lists FP8 (FP4)."""
        software = self.ds.software
        if software is None:
            return
        archs = software.get("architectures") or {}
        for gpu in self.ds.gpus.values():
            arch = gpu.get("architecture")
            line = self.lines.get(gpu.relpath, {}).get(("architecture",), 1)
            if arch not in archs:
                self.problems.append(Problem(self.shown(self.data_dir / gpu.relpath), line, "architecture",
                                             f"architecture {arch!r} has no features in data/software.yaml "
                                             "(architectures); add it there"))
                continue
            for bits in ("fp8", "fp4"):
                if gpu.get(f"{bits}_tensor_tflops") and not archs[arch].get(bits):
                    self.problems.append(Problem(self.shown(self.data_dir / gpu.relpath), line, "architecture",
                                                 f"{bits}_tensor_tflops is given but data/software.yaml says "
                                                 f"{arch} has no {bits}; one of the two is wrong"))

    def report_unchecked(self) -> None:
        for path, count in sorted(self.unchecked.items()):
            self.problem_note(path, f"{count} reference(s) or translation(s) of this file were not checked "
                                    "because it could not be read")

    def problem_note(self, path: Path, message: str) -> None:
        self.problems.append(Problem(self.shown(path), 1, "", message, "note"))


class _FileRefs:
    """The references of a kind's files, from what each file gave (see ``_Loader._kind_file``):
    gone through only when every reference is checked again."""

    __slots__ = ("given",)

    def __init__(self, given: dict) -> None:
        self.given = given

    def __iter__(self):
        return itertools.chain.from_iterable(map(operator.itemgetter(3), self.given.values()))
