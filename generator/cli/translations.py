"""Translation coverage: per language and per kind of text, what is missing or stale."""
from __future__ import annotations

from generator.data.dataset import Dataset, digest
from generator.data.kinds import all_records
from generator.data.kinds import kind_of as registry_kind_of
from generator.data.schema import TRANSLATED_LANGS
from generator.publish.text import yaml_str


def kind_of(relpath: str) -> str:
    """The name coverage rows use for a file's kind: its Dataset attribute (gpus, personas, ...)."""
    return registry_kind_of(relpath).attr


def coverage(ds: Dataset) -> dict:
    rows = []
    for lang in TRANSLATED_LANGS:
        table = ds.translations.get(lang, {})
        per_kind: dict[str, dict] = {}
        for rec in all_records(ds):
            row = per_kind.setdefault(kind_of(rec.relpath), {"lang": lang, "kind": kind_of(rec.relpath),
                                                              "total": 0, "ok": 0, "stale": [], "missing": []})
            entries = table.get(rec.relpath, {})
            for key, english in rec.texts.items():
                row["total"] += 1
                tr = entries.get(key)
                if tr is None:
                    row["missing"].append((rec.relpath, key))
                elif tr.source != digest(english):
                    row["stale"].append((rec.relpath, key))
                else:
                    row["ok"] += 1
        rows += [per_kind[k] for k in sorted(per_kind)]
    return {"rows": rows}


def report_text(cov: dict, verbose: bool = False) -> str:
    lines = [f"{'lang':<5} {'kind':<10} {'done':>6} {'stale':>6} {'missing':>8} {'total':>6}  coverage"]
    for r in cov["rows"]:
        pct = 100.0 * r["ok"] / r["total"] if r["total"] else 100.0
        lines.append(f"{r['lang']:<5} {r['kind']:<10} {r['ok']:>6} {len(r['stale']):>6} {len(r['missing']):>8} {r['total']:>6}  {pct:5.1f}%")  # noqa: E501
        if verbose:
            for rel, key in r["stale"]:
                lines.append(f"      stale    data/translations/{r['lang']}/{rel}: {key}")
            for rel, key in r["missing"]:
                lines.append(f"      missing  data/translations/{r['lang']}/{rel}: {key}")
    return "\n".join(lines) + "\n"


def todo_yaml(ds: Dataset, lang: str) -> str:
    """A skeleton of every missing or stale entry for ``lang``, grouped by file, with digests."""
    table = ds.translations.get(lang, {})
    out = []
    for rec in all_records(ds):
        entries = table.get(rec.relpath, {})
        todo = [(k, e) for k, e in rec.texts.items()
                if k not in entries or entries[k].source != digest(e)]
        if not todo:
            continue
        out.append(f"# ==> data/translations/{lang}/{rec.relpath}")
        for key, english in todo:
            out.append(f"# en: {' '.join(english.split())}")
            out.append(f"{yaml_str(key)}:")
            current = yaml_str(entries[key].text) if key in entries else '""'
            out.append(f"  text: {current}")
            out.append(f"  source: \"{digest(english)}\"")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
