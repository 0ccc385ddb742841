"""Names in a benchmark's output (device names, model files, Hugging Face repositories) matched to
the ids of data/gpus and data/models."""
from __future__ import annotations

import difflib
import re

GPU_NOISE = {"nvidia", "amd", "intel", "r", "tm", "geforce", "radeon", "apple", "corporation", "graphics"}


def words_of(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", str(text).lower()) if w]


def _gpu_key(text: str) -> tuple[str, ...]:
    return tuple(w for w in words_of(text) if w not in GPU_NOISE)


def match_gpu(name: str, gpus: dict) -> tuple[str | None, list[str]]:
    """The catalogue id of a device name (by id, name and aliases), else None and the near ids."""
    wanted = _gpu_key(name)
    if not wanted:
        return None, []
    exact, wider = set(), set()
    for ident, rec in gpus.items():
        keys = [_gpu_key(ident), _gpu_key(rec.data.get("name", ""))]
        keys += [_gpu_key(a) for a in rec.data.get("aliases") or ()]
        if wanted in keys:
            exact.add(ident)
        elif any(set(wanted) <= set(k) for k in keys):
            wider.add(ident)
    if len(exact) == 1:
        return exact.pop(), []
    if not exact and len(wider) == 1:
        return wider.pop(), []
    if exact or wider:
        return None, sorted(exact or wider)
    # nothing holds every word: the ids whose names read closest
    names: dict[str, str] = {}
    for ident, rec in gpus.items():
        for text in (ident, rec.data.get("name", ""), *(rec.data.get("aliases") or ())):
            names.setdefault(" ".join(_gpu_key(text)), ident)
    model_words = {w for w in wanted if re.fullmatch(r"[a-z]+\d+[a-z0-9]*", w) and not w.endswith("gb")}
    same = [n for n in sorted(names) if model_words & set(n.split())]
    near = same or difflib.get_close_matches(" ".join(wanted), sorted(names), n=8, cutoff=0.6)
    return None, list(dict.fromkeys(names[n] for n in near))[:5]


def _contains(seq: list[str], part: list[str]) -> bool:
    n = len(part)
    return any(seq[i:i + n] == part for i in range(len(seq) - n + 1))


def match_model(text: str, models: dict) -> tuple[str | None, list[str]]:
    """The catalogue model whose id, name or Hugging Face repository is named in ``text``: the longest
    such name wins; a tie between models is no answer (None and the tied ids)."""
    if not text:
        return None, []
    lowered = text.strip().lower()
    for ident, rec in models.items():
        if lowered in (ident, str(rec.data.get("hf_repo") or "").lower()):
            return ident, []
    stem = re.sub(r"(-\d{5}-of-\d{5})?\.gguf$", "", lowered.replace("\\", "/").rsplit("/", 1)[-1])
    seq = words_of(stem)
    best, found = 1, set()
    for ident, rec in models.items():
        repo = str(rec.data.get("hf_repo") or "").rsplit("/", 1)[-1]
        for key in {tuple(words_of(ident)), tuple(words_of(rec.data.get("name", ""))), tuple(words_of(repo))}:
            if len(key) < best or not key or not _contains(seq, list(key)):
                continue
            if len(key) > best:
                best, found = len(key), set()
            found.add(ident)
    if len(found) == 1:
        return found.pop(), []
    return None, sorted(found)
