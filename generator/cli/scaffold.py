"""`python -m generator new gpu VENDOR/ID | price GPU | revision DATE | translation LANG`.

Each scaffold is a commented record whose blanks make `validate` point at exactly what is
left to fill in; once they are filled, the record validates.
"""
from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path

from generator.data.dataset import digest, today_utc
from generator.data.kinds import all_records
from generator.data.loader import load_dataset
from generator.data.schema import ID_RE, TRANSLATED_LANGS, VENDORS
from generator.facts.derive import derive
from generator.facts.today import snapshot_of
from generator.publish.text import yaml_str

GPU_TEMPLATE = """\
# yaml-language-server: $schema=../../schema/gpu.schema.json
# {vendor}/{ident}: fill in every empty value, then run `python -m generator validate`.
# Every number needs a source below; tensor figures are DENSE with FP32 accumulate (see data/README.md).
name:                          # marketing name, e.g. GeForce RTX 4070
vendor: {vendor}
architecture:                  # e.g. Ada Lovelace
release_date:                  # YYYY-MM-DD, unquoted
memory_gb:
memory_type:                   # e.g. GDDR6X
memory_bandwidth_gbs:          # GB/s
fp32_tflops:                   # null if the vendor publishes none
fp16_tensor_tflops:            # dense, FP32 accumulate; null when the chip has no tensor/matrix units
tensor_cores:                  # true or false
tdp_w:                         # null if unknown
launch_price_usd:              # null if there was no list price
{cc}segment:                       # consumer, workstation, datacenter or cloud
notes: >-
  In your own words: what a buyer should know, and which value this record follows where
  sources disagree.
sources:
  - url:                       # https://... the page that holds the numbers below
    fields: [release_date, architecture, memory_gb, memory_type, memory_bandwidth_gbs, fp32_tflops, tdp_w]
  - url:
    fields: [fp16_tensor_tflops, launch_price_usd{cc_field}]
"""

REVISION_TEMPLATE = """\
# yaml-language-server: $schema=../schema/revision.schema.json
# The advice as it stood on {date}. Fill in the blanks, delete what the revision does not
# say, then run `python -m generator validate`. Write every sentence yourself.
date: {date}
url:                           # https://... the canonical address of this revision
kind: full                     # full: the source gives the whole advice; update: only an update-log entry
sources:
  -                            # https://... where the facts below were read
summary: >-
  What changed since the previous revision, in your own words.
recommendations:               # persona id -> GPU ids, best first; remove personas the revision does not address
{personas}avoid: []                      # GPU ids the revision warns against
changes: []                    # for kind update: {{type: recommendation-added, persona: ..., gpu: ...}}, ...
"""

PRICE_HEADER = """\
# yaml-language-server: $schema=../schema/price.schema.json
# {name}
observations:
"""

PRICE_TEMPLATE = """\
  - kind:                      # street (new), used, launch or cloud-hourly
    usd:                       # US dollars as the page gives them; cloud-hourly: the whole instance per hour
    date: {date}           # the date the page gives for the price (a month only: its first day, said in note)
    source:                    # https://... a public, dated page that states this price
    # cloud-hourly only: gpus (GPUs in the instance), provider, instance, pricing (on-demand, spot or reserved)
    note:                      # in your own words: how the price was read (a range, a median, a month only)
"""


def new_gpu(data_dir: Path, spec: str) -> tuple[int, str]:
    if "/" not in spec:
        return 2, "new gpu: give VENDOR/ID, e.g. nvidia/rtx-4070"
    vendor, ident = spec.split("/", 1)
    if vendor not in VENDORS:
        return 2, f"new gpu: vendor must be one of {', '.join(VENDORS)}"
    if not ID_RE.match(ident):
        return 2, f"new gpu: {ident!r} is not an id: lowercase letters, digits and single dashes"
    existing = list((data_dir / "gpus").glob(f"*/{ident}.yaml"))
    if existing:
        return 1, f"new gpu: {existing[0].as_posix()} already exists"
    path = data_dir / "gpus" / vendor / f"{ident}.yaml"
    nvidia = vendor == "nvidia"
    text = GPU_TEMPLATE.format(vendor=vendor, ident=ident,
                               cc='compute_capability: ""         # quoted, e.g. "8.9"\n' if nvidia else "",
                               cc_field=", compute_capability" if nvidia else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return 0, f"created {path.as_posix()}: fill in the blanks, then run python -m generator validate"


def new_price(data_dir: Path, gid: str, today: _dt.date) -> tuple[int, str]:
    """Append a blank observation to ``prices/<gid>.yaml``, creating the file when missing."""

    found = sorted((data_dir / "gpus").glob(f"*/{gid}.yaml")) if ID_RE.match(gid) else []
    if not found:
        return 2, (f"new price: no GPU {gid!r} (no {(data_dir / 'gpus').as_posix()}/*/{gid}.yaml); "
                   "give the id of a GPU record, e.g. rtx-4070")
    path = data_dir / "prices" / f"{gid}.yaml"
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            text += "\n"
    else:
        name = next((line.split(":", 1)[1].strip() for line in found[0].read_text(encoding="utf-8").splitlines()
                     if line.startswith("name:")), gid)
        text = PRICE_HEADER.format(name=name.strip("\"'") or gid)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + PRICE_TEMPLATE.format(date=today.isoformat()), encoding="utf-8")
    return 0, f"added a blank observation to {path.as_posix()}: fill it in, then run python -m generator validate"


def new_revision(data_dir: Path, date: str, personas: list[str]) -> tuple[int, str]:
    try:
        _dt.date.fromisoformat(date)
    except ValueError:
        return 2, f"new revision: {date!r} is not a date as YYYY-MM-DD"
    path = data_dir / "revisions" / f"{date}.yaml"
    if path.exists():
        return 1, f"new revision: {path.as_posix()} already exists"
    lines = "".join(f"  {pid}:\n    gpus: []\n" for pid in personas)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(REVISION_TEMPLATE.format(date=date, personas=lines), encoding="utf-8")
    return 0, f"created {path.as_posix()}: fill in the blanks, then run python -m generator validate"


def new_translation(data_dir: Path, lang: str) -> tuple[int, str]:
    """Append every missing entry of ``lang`` to its files, with the digest to keep."""

    if lang not in TRANSLATED_LANGS:
        return 2, f"new translation: language must be one of {', '.join(TRANSLATED_LANGS)}"
    ds, problems = load_dataset(data_dir, Path.cwd())
    if ds is None:
        return 1, "\n".join(str(p) for p in problems) + "\nnew translation: fix the data first"
    table = ds.translations.get(lang, {})
    files = entries = 0
    for rec in all_records(ds):
        have = table.get(rec.relpath, {})
        todo = [(k, e) for k, e in rec.texts.items() if k not in have]
        if not todo:
            continue
        path = data_dir / "translations" / lang / rec.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8") if path.exists() else \
            f"# yaml-language-server: $schema={'../' * (rec.relpath.count('/') + 2)}schema/translation.schema.json\n"
        if text and not text.endswith("\n"):
            text += "\n"
        for key, english in todo:
            text += f"# en: {' '.join(english.split())}\n{yaml_str(key)}:\n  text: \"\"\n  source: \"{digest(english)}\"\n"
        path.write_text(text, encoding="utf-8")
        files += 1
        entries += len(todo)
    if not entries:
        return 0, f"nothing to add: every text has a {lang} translation (see `translations -v` for stale ones)"
    return 0, (f"added {entries} empty {lang} entries to {files} file(s) under {(data_dir / 'translations' / lang).as_posix()}: "
               "write each text, then run python -m generator validate")


def new_snapshot(data_dir: Path) -> tuple[int, str]:
    """Keep today's picks as data/snapshots/<as_of>.yaml, so the next picks are diffed against them."""
    ds, problems = load_dataset(data_dir, Path.cwd())
    if ds is None:
        return 1, "\n".join(str(p) for p in problems) + "\nnew snapshot: fix the data first"
    if not ds.prices:
        return 2, "new snapshot: no dated prices in data/prices, so there are no picks for today to keep"
    snap = snapshot_of(ds, derive(ds).today_picks)
    path = data_dir / "snapshots" / f"{snap['as_of'].isoformat()}.yaml"
    if path.exists():
        return 2, (f"new snapshot: {path.as_posix()} already exists (the picks rest on prices up to "
                   f"{snap['as_of'].isoformat()}; add newer prices first)")
    lines = ["# yaml-language-server: $schema=../schema/snapshot.schema.json",
             f"# The site's picks for today as they stood on {snap['as_of'].isoformat()} (python -m generator new snapshot).",
             f"as_of: {snap['as_of'].isoformat()}", "picks:"]
    for pid, pick in snap["picks"].items():
        alts = ", ".join(pick["alternatives"])
        lines += [f"  {pid}:", f"    gpu: {pick['gpu']}", f"    count: {pick['count']}",
                  f"    price_usd: {pick['price_usd']:g}", f"    price_kind: {pick['price_kind']}",
                  f"    price_date: {pick['price_date'].isoformat()}", f"    alternatives: [{alts}]"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    day = snap["as_of"].isoformat()
    return 0, (f"created {path.as_posix()}: {len(snap['picks'])} picks kept; "
               f"`python -m generator diff snapshot:{day} today` compares later picks with them")


def run(args) -> int:
    data_dir = Path(args.data)
    if (args.kind == "snapshot") != (args.name is None):
        print(f"new {args.kind}: " + ("takes no name: the picks are dated by their newest price" if args.kind == "snapshot"
                                      else "needs a name (see python -m generator new --help)"), file=sys.stderr)
        return 2
    if args.kind == "gpu":
        code, message = new_gpu(data_dir, args.name)
    elif args.kind == "price":
        code, message = new_price(data_dir, args.name, today_utc())
    elif args.kind == "snapshot":
        code, message = new_snapshot(data_dir)
    elif args.kind == "revision":

        ds, _ = load_dataset(data_dir, Path.cwd())
        personas = ds.persona_ids() if ds else ["best-overall"]
        code, message = new_revision(data_dir, args.name, personas)
    else:
        code, message = new_translation(data_dir, args.name)
    print(message, file=sys.stderr if code else sys.stdout)
    return code
