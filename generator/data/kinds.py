"""The registry of record kinds: where each kind lives in ``data/``, its schema, how its files
are named, and under which name it is published. The loader, the translation coverage, the
formatter, the JSON Schema files and the API read this table; adding a kind is one entry here
plus its declaration (see "Where things live" in CONTRIBUTING.md).
"""
from __future__ import annotations

from dataclasses import dataclass

from generator.data import records, records_llm, records_support
from generator.data.schema import Type


@dataclass(frozen=True)
class Kind:
    name: str  # singular, as references name it: Ref("gpu")
    folder: str  # below data/; for a single file, its name ("personas.yaml")
    schema: Type
    attr: str  # Dataset attribute
    depth: int = 1  # 1: folder/<id>.yaml; 2: folder/<group>/<id>.yaml; 0: a single file
    ident: str = "id"  # how file names read: "id" (a-z0-9 and dashes) or "date" (YYYY-MM-DD)
    api: str | None = None  # api/v1/<api>.json, and one file per record below api/v1/<api>/
    collection: str = "map"  # "map": id -> record; "list": in id order; "single": the one record
    schema_file: str | None = None  # data/schema/<schema_file>.schema.json
    id_of: str = ""  # the kind whose ids name these files (prices: one file per GPU id), else their own
    order_field: str | None = None  # list collections: sort by this field, then by id
    label: str = ""  # how messages name one record ("GPU"); the name when empty
    title: str = ""  # one line for the JSON Schema file and the documentation
    optional: bool = False  # a single file that may be absent


KINDS: tuple[Kind, ...] = (
    Kind("gpu", "gpus", records.GPU, "gpus", depth=2, label="GPU", api="gpus", schema_file="gpu",
         title="A GPU or accelerator: data/gpus/<vendor>/<id>.yaml"),
    Kind("revision", "revisions", records.REVISION, "revisions", ident="date", api="revisions", collection="list",
         schema_file="revision",
         title="A dated revision of the advice: data/revisions/<YYYY-MM-DD>.yaml"),
    Kind("topic", "topics", records.TOPIC, "topics", api="topics", collection="list", schema_file="topic",
         order_field="order",
         title="A background topic: data/topics/<id>.yaml"),
    Kind("model", "models", records_llm.MODEL, "models", api="models", schema_file="model",
         title="An LLM architecture: data/models/<id>.yaml"),
    Kind("measurement", "measurements", records_llm.MEASUREMENTS, "measurements", api="measurements",
         collection="list", schema_file="measurement",
         title="Public measured results of one source: data/measurements/<id>.yaml"),
    Kind("price", "prices", records_llm.PRICES, "prices", api="prices", schema_file="price", id_of="gpu",
         title="Dated price observations of one GPU: data/prices/<gpu-id>.yaml"),
    Kind("persona", "personas.yaml", records.PERSONAS, "personas", depth=0, collection="single",
         schema_file="personas", api="personas",
         title="The reader profiles: data/personas.yaml"),
    Kind("software", "software.yaml", records_support.SOFTWARE, "software", depth=0, collection="single",
         schema_file="software", api="software", optional=True,
         title="Which builds of today's software run which cards, and each architecture's features: "
               "data/software.yaml"),
    Kind("snapshot", "snapshots", records_support.SNAPSHOT, "snapshots", ident="date", api="snapshots",
         collection="list", schema_file="snapshot",
         title="The site's picks for today as they stood on a date, kept to diff the next ones against: "
               "data/snapshots/<YYYY-MM-DD>.yaml"),
    Kind("ui", "ui.yaml", records.UI, "ui", depth=0, collection="single", schema_file="ui",
         title="Interface text in English: data/ui.yaml"),
    Kind("search", "search.yaml", records.SEARCH_TERMS, "search_terms", depth=0, collection="single",
         schema_file="search", optional=True,
         title="Words readers type that the pages spell otherwise, per language: data/search.yaml"),
)

BY_NAME = {k.name: k for k in KINDS}
BY_FOLDER = {k.folder: k for k in KINDS}


def kind_of(relpath: str) -> Kind | None:
    """The kind of a file, from its path below data/ (``gpus/nvidia/a10.yaml`` -> gpu)."""
    return BY_FOLDER.get(relpath.split("/", 1)[0])


def all_records(ds):
    """Every record of every kind, in the order of the kinds registry."""
    for kind in KINDS:
        value = getattr(ds, kind.attr)
        if value is None:
            continue
        if kind.collection == "single":
            yield value
        else:
            yield from (value.values() if isinstance(value, dict) else value)
