"""The record types of ``data/`` and their cross-field rules.

Each rule is a function ``rule(record, ctx, keypath)`` that reports through ``ctx.err``;
``tests/test_rules.py`` gives each one a passing and a failing fixture.
"""
from __future__ import annotations

import re

from generator.data.dataset import tree_leaves
from generator.data.locales import LANGS
from generator.data.schema import (
    AVOID_CLASSES,
    CHANGE_TYPES,
    COOLING,
    DIGEST_RE,
    FEATURES,
    ID_RE,
    KNOWN,
    NETWORKS,
    PICKER_WORKLOADS,
    PRICE_KINDS,
    RELATIVE_WORKLOADS,
    SEGMENTS,
    SOURCED_FIELDS,
    UI_KEY_RE,
    VENDOR_TOPICS,
    VENDORS,
    VERDICTS,
    WORKLOADS,
    Bool,
    Date,
    Enum,
    F,
    Lazy,
    List,
    Map,
    Number,
    OneOf,
    Record,
    Ref,
    Str,
    Text,
    Url,
)

# ---------------------------------------------------------------- GPU rules


def rule_dense_not_above_sparse(gpu, ctx, kp):
    dense, sparse = gpu.get("fp16_tensor_tflops"), gpu.get("fp16_tensor_tflops_sparse")
    if dense is not None and sparse is not None and dense > sparse:
        ctx.err(kp + ("fp16_tensor_tflops",),
                f"dense {dense:g} is above sparse {sparse:g}; dense figures go in fp16_tensor_tflops and "
                "the (usually doubled) sparse figure in fp16_tensor_tflops_sparse")
    if sparse is not None and dense is None:
        ctx.err(kp + ("fp16_tensor_tflops_sparse",), "a sparse figure needs the dense figure beside it")


def rule_low_precision_dense_not_above_sparse(gpu, ctx, kp):
    for bits in ("fp8", "fp4"):
        dense, sparse = gpu.get(f"{bits}_tensor_tflops"), gpu.get(f"{bits}_tensor_tflops_sparse")
        if dense is not None and sparse is not None and dense > sparse:
            ctx.err(kp + (f"{bits}_tensor_tflops",),
                    f"dense {dense:g} is above sparse {sparse:g}; the sparse figure goes in {bits}_tensor_tflops_sparse")
        if sparse is not None and dense is None:
            ctx.err(kp + (f"{bits}_tensor_tflops_sparse",), "a sparse figure needs the dense figure beside it")


def rule_unified_memory_share(gpu, ctx, kp):
    unified, share = gpu.get("unified_memory"), gpu.get("gpu_memory_share")
    if unified and share is None:
        ctx.err(kp, "unified_memory is true: give gpu_memory_share, the share of memory_gb the GPU may use (e.g. 0.75)")
    if share is not None and not unified:
        ctx.err(kp + ("gpu_memory_share",), "gpu_memory_share applies to unified memory only; set unified_memory: true or remove it")  # noqa: E501


def rule_tensor_cores_consistent(gpu, ctx, kp):
    has, dense = gpu.get("tensor_cores"), gpu.get("fp16_tensor_tflops")
    if has is False and dense is not None:
        ctx.err(kp + ("fp16_tensor_tflops",), "tensor_cores is false, so fp16_tensor_tflops must be null")
    if has is True and dense is None:
        ctx.err(kp + ("fp16_tensor_tflops",), "tensor_cores is true; give the dense tensor TFLOPS")


def rule_compute_capability_nvidia_only(gpu, ctx, kp):
    vendor, cc = gpu.get("vendor"), gpu.get("compute_capability")
    if vendor == "nvidia" and cc is None:
        ctx.err(kp, "missing required field 'compute_capability' (NVIDIA GPUs have one, e.g. \"8.6\")")
    if vendor != "nvidia" and "compute_capability" in gpu:
        ctx.err(kp + ("compute_capability",), f"compute_capability is an NVIDIA notion; remove it for vendor {vendor}")


def rule_every_number_sourced(gpu, ctx, kp):
    covered: set[str] = set()
    for src in gpu.get("sources") or []:
        if isinstance(src, str):
            covered.update(SOURCED_FIELDS)  # a bare URL vouches for the whole record
        elif isinstance(src, dict):
            covered.update(src.get("fields") or [])
    for name in SOURCED_FIELDS:
        if gpu.get(name) is not None and name not in covered:
            ctx.err(kp + (name,), f"no source covers {name}; add it to the fields of a source in sources")


SOURCE = OneOf(
    first=Url(),
    second=Record({
        "url": F(Url()),
        "fields": F(List(Enum(SOURCED_FIELDS), min_items=1, unique=True), required=False,
                    doc="the fields this source vouches for; without it, all of them"),
        "note": F(Text(max_len=500), required=False, doc="what the source says, when it differs from others"),
    }),
)

GPU = Record({
    "name": F(Str(max_len=80), doc="marketing name, e.g. GeForce RTX 2070"),
    "vendor": F(Enum(VENDORS), doc="equals the folder name"),
    "architecture": F(Str(max_len=40)),
    "release_date": F(Date(), doc="ISO date of the launch"),
    "memory_gb": F(Number(maximum=4096)),
    "memory_type": F(Str(max_len=20)),
    "memory_bandwidth_gbs": F(Number(maximum=50000), doc="GB/s"),
    "l2_cache_mb": F(Number(maximum=1024), required=False,
                     doc="the chip's L2 cache in MB (AMD's Infinity Cache and Apple's system cache not counted)"),
    "fp32_tflops": F(Number(maximum=2000), nullable=True, doc="non-tensor FP32 peak"),
    "fp16_tensor_tflops": F(Number(maximum=20000), nullable=True,
                            doc="DENSE FP16 on tensor/matrix units, FP32 accumulate; null without such units"),
    "fp16_tensor_tflops_sparse": F(Number(maximum=40000), required=False, nullable=True,
                                   doc="with 2:4 structured sparsity; never mixed with the dense figure"),
    "tensor_cores": F(Bool()),
    "tdp_w": F(Number(maximum=3000), nullable=True),
    "launch_price_usd": F(Number(maximum=500000), nullable=True, doc="launch MSRP in USD"),
    "fp8_tensor_tflops": F(Number(maximum=40000), required=False, nullable=True,
                           doc="DENSE FP8 tensor throughput; null or absent without FP8 units"),
    "fp8_tensor_tflops_sparse": F(Number(maximum=80000), required=False, nullable=True, doc="FP8 with 2:4 sparsity"),
    "fp4_tensor_tflops": F(Number(maximum=80000), required=False, nullable=True, doc="DENSE FP4 tensor throughput"),
    "fp4_tensor_tflops_sparse": F(Number(maximum=160000), required=False, nullable=True, doc="FP4 with 2:4 sparsity"),
    "unified_memory": F(Bool(), required=False, doc="memory shared with the CPU (Apple M-series, GB10)"),
    "gpu_memory_share": F(Number(maximum=1), required=False,
                          doc="with unified_memory: the share of memory_gb the GPU may use by default"),
    "interconnect": F(Record({
        "name": F(Str(max_len=60), doc="e.g. NVLink 5, Infinity Fabric, ICI"),
        "bandwidth_gbs": F(Number(maximum=100000), required=False, doc="GPU-to-GPU GB/s per GPU, both directions"),
    }), required=False, doc="the GPU-to-GPU link"),
    "cooling": F(Enum(COOLING), required=False,
                 doc="active (its own fans), passive (needs server airflow), liquid, or system (an SoC)"),
    "slot_width": F(Number(maximum=8), required=False, doc="PCIe slots the reference board takes, e.g. 2 or 3.5"),
    "power_connectors": F(Str(max_len=80), required=False,
                          doc="the reference board's power inputs, e.g. '1x 16-pin (12V-2x6)' or '2x 8-pin PCIe'"),
    "discontinued": F(Date(), required=False,
                      doc="when the vendor stopped selling it new; new (street) prices after it are refused"),
    "compute_capability": F(Str(max_len=6, pattern=__import__("re").compile(r"^\d+\.\d+$"),
                                hint='a quoted version such as "7.5"'), required=False),
    "segment": F(Enum(SEGMENTS)),
    "aliases": F(List(Str(max_len=80), unique=True), required=False, doc="other names used for this card"),
    "notes": F(Text(max_len=1500), required=False),
    "discrepancies": F(Map(Enum(SOURCED_FIELDS), Text(max_len=600)), required=False,
                       doc="field -> why this record differs from the reference dataset that check-specs compares with"),
    "sources": F(List(SOURCE, min_items=1), doc="public URLs; every number is covered by one"),
}, rules=(rule_dense_not_above_sparse, rule_low_precision_dense_not_above_sparse, rule_unified_memory_share,
          rule_tensor_cores_consistent,
          rule_compute_capability_nvidia_only, rule_every_number_sourced))

# ---------------------------------------------------------------- revision rules


def rule_full_revision_has_personas(rev, ctx, kp):
    if rev.get("kind") == "full" and not rev.get("recommendations") and not rev.get("decision_tree"):
        ctx.err(kp, "a revision of kind full lists its recommendations (persona: gpus) or a decision_tree")
    if rev.get("kind") == "update" and not rev.get("changes") and not rev.get("recommendations"):
        ctx.err(kp, "a revision of kind update records its changes (or a full recommendations list)")


def rule_reference_is_one(rev, ctx, kp):
    for i, table in enumerate(rev.get("relative_performance") or []):
        ref, values = table.get("reference"), table.get("values") or {}
        if ref in values and values[ref] != 1:
            ctx.err(kp + ("relative_performance", i, "values", ref),
                    f"the reference GPU {ref} is 1 by definition, got {values[ref]!r}")


def rule_priorities_distinct(rev, ctx, kp):
    for i, row in enumerate(rev.get("priorities") or []):
        order = row.get("order") or []
        if len(set(order)) != len(order):
            ctx.err(kp + ("priorities", i, "order"), "a feature appears twice in one priority order")


def rule_gpu_not_both_recommended_and_avoided(rev, ctx, kp):
    avoid = set(rev.get("avoid") or [])
    for persona, rec in (rev.get("recommendations") or {}).items():
        for j, gpu in enumerate(rec.get("gpus") or []):
            if gpu in avoid:
                ctx.err(kp + ("recommendations", persona, "gpus", j),
                        f"{gpu} is recommended here and also listed in avoid")


RECOMMENDATION = Record({
    "gpus": F(List(Ref("gpu"), unique=True), doc="GPU ids, best first; empty when the advice is not a GPU"),
    "alternatives": F(List(Ref("gpu"), unique=True), required=False, doc="fallbacks the advice names"),
    "note": F(Text(max_len=600), required=False, doc="the advice in your own words"),
    "known": F(Enum(KNOWN), required=False, doc="source (default) or derived from the update log"),
})

CHANGE = Record({
    "type": F(Enum(CHANGE_TYPES)),
    "persona": F(Ref("persona"), required=False),
    "gpu": F(Ref("gpu"), required=False),
    "note": F(Text(max_len=600), required=False),
})

TREE_LEAF = Record({
    "gpus": F(List(Ref("gpu"), unique=True), doc="what to get at this leaf, best first; [] when the answer is not a card"),
    "share": F(List(Number(maximum=100), min_items=1), required=False,
               doc="for a mix of cards: the percentage of each entry of gpus, in order"),
    "used": F(Bool(), required=False, doc="the advice is to buy these used"),
    "workloads": F(List(Enum(PICKER_WORKLOADS), min_items=1, unique=True), required=False,
                   doc="the picker's workloads this leaf answers for an individual buyer (cnn, rnn, transformer, "
                       "llm-inference); the picker ranks the cards of the tagged leaves first, in the tree's order"),
    "personas": F(List(Ref("persona"), min_items=1, unique=True), required=False,
                  doc="reader profiles of the earlier persona lists that this leaf answers; the history matrix shows "
                      "its cards for them, marked as read from the flowchart"),
    "note": F(Text(max_len=600), required=False),
})


def _tree_node():
    return TREE_NODE


def rule_share_matches_gpus(leaf, ctx, kp):
    share = leaf.get("share")
    if share is not None and len(share) != len(leaf.get("gpus") or []):
        ctx.err(kp + ("share",), f"{len(share)} shares for {len(leaf.get('gpus') or [])} GPUs; give one percentage per GPU")


def rule_workloads_need_gpus(leaf, ctx, kp):
    if leaf.get("workloads") and not leaf.get("gpus"):
        ctx.err(kp + ("workloads",), "workloads on a leaf that names no GPU: the picker would have no card to rank; "
                "drop workloads or list the cards")
    if leaf.get("personas") and not leaf.get("gpus"):
        ctx.err(kp + ("personas",), "personas on a leaf that names no GPU: the history matrix would have no card "
                "to show for them; drop personas or list the cards")


TREE_LEAF.rules = (rule_share_matches_gpus, rule_workloads_need_gpus)


def rule_tree_persona_once(rev, ctx, kp):
    seen: dict[str, tuple] = {}
    for leaf_kp, leaf in tree_leaves(rev.get("decision_tree")):
        personas = leaf.get("personas")
        for j, pid in enumerate(personas if isinstance(personas, list) else []):
            if pid in seen:
                where = ".".join(seen[pid])
                ctx.err(kp + ("decision_tree",) + leaf_kp + ("personas", j),
                        f"persona {pid} is already answered by the leaf at decision_tree.{where}; a persona names one leaf")
            else:
                seen[pid] = leaf_kp


TREE_QUESTION = Record({
    "question": F(Text(max_len=300)),
    "if_yes": F(Lazy("tree_node", _tree_node)),
    "if_no": F(Lazy("tree_node", _tree_node)),
})

TREE_NODE = OneOf(first=TREE_LEAF, second=TREE_QUESTION, pick_second=lambda v: isinstance(v, dict) and "question" in v)

CLOUD_BREAK_EVEN = Record({
    "desktop_usd": F(Number(maximum=1_000_000), doc="price of the desktop"),
    "gpu_w": F(Number(maximum=10_000)),
    "system_w": F(Number(maximum=10_000), doc="the rest of the machine"),
    "kwh_usd": F(Number(maximum=10)),
    "utilization": F(Number(maximum=1), doc="share of the time the machine trains, 0 to 1"),
    "cloud_usd_per_hour": F(Number(maximum=10_000)),
    "spot_usd_per_hour": F(Number(maximum=10_000), required=False),
    "break_even_days": F(Number(maximum=100_000), required=False, doc="as the revision states it"),
    "note": F(Text(max_len=600), required=False),
})

REVISION = Record({
    "date": F(Date(), doc="equals the file name"),
    "url": F(Url(), doc="the canonical address of this revision of the article"),
    "kind": F(Enum(("full", "update")), doc="full: the sources give the whole advice; update: an update-log entry"),
    "sources": F(List(Url(), min_items=1, unique=True), doc="where the facts of this record were read"),
    "summary": F(Text(max_len=1200), doc="what changed, in your own words"),
    "recommendations": F(Map(Ref("persona"), RECOMMENDATION), required=False),
    "avoid": F(List(Ref("gpu"), unique=True), required=False),
    "avoid_classes": F(List(Enum(AVOID_CLASSES), unique=True), required=False),
    "decision_tree": F(TREE_NODE, required=False, doc="advice given as a yes/no flowchart"),
    "relative_performance": F(List(Record({
        "workload": F(Enum(RELATIVE_WORKLOADS)),
        "reference": F(Ref("gpu")),
        "values": F(Map(Ref("gpu"), Number(maximum=100), min_items=1)),
        "note": F(Text(max_len=600), required=False),
    })), required=False),
    "prices": F(List(Record({
        "gpu": F(Ref("gpu")),
        "usd": F(Number(maximum=500000)),
        "kind": F(Enum(PRICE_KINDS)),
        "note": F(Text(max_len=300), required=False),
    })), required=False),
    "priorities": F(List(Record({
        "network": F(Enum(NETWORKS)),
        "order": F(List(Enum(FEATURES), min_items=2)),
    })), required=False),
    "memory_guidance": F(List(Record({
        "text": F(Text(max_len=600)),
        "min_gb": F(Number(maximum=4096), required=False),
    })), required=False),
    "multi_gpu": F(List(Record({
        "network": F(Enum(NETWORKS)),
        "gpus": F(Number(integer=True, minimum=2, maximum=1_000_000, exclusive_min=False)),
        "speedup": F(Number(maximum=1_000_000)),
        "speedup_max": F(Number(maximum=1_000_000), required=False),
        "note": F(Text(max_len=300), required=False),
    })), required=False),
    "vendors": F(Map(Enum(VENDOR_TOPICS), Record({
        "verdict": F(Enum(VERDICTS)),
        "note": F(Text(max_len=800)),
    })), required=False),
    "cloud_break_even": F(CLOUD_BREAK_EVEN, required=False, doc="a worked desktop-versus-cloud example"),
    "changes": F(List(CHANGE), required=False, doc="the update-log entry as structured changes"),
}, rules=(rule_full_revision_has_personas, rule_reference_is_one, rule_priorities_distinct,
          rule_gpu_not_both_recommended_and_avoided, rule_tree_persona_once))

TODAY_PROFILE = Record({
    "workload": F(Enum(WORKLOADS), doc="what the reader mostly runs (the one vocabulary of workloads)"),
    "budget_usd": F(Number(maximum=10000000), required=False, doc="the most the reader spends; none: no limit"),
    "memory_gb": F(Number(maximum=10000), required=False, doc="the least memory the reader needs"),
    "rank": F(Enum(("value", "speed")), required=False,
              doc="value (default): the most per dollar, electricity included; speed: the fastest within budget"),
    "rent": F(Bool(), required=False, doc="the reader rents cards by the hour instead of buying"),
    "datacenter": F(Bool(), required=False, doc="with rent: datacenter cards only (a cluster)"),
    "needs_cuda": F(Bool(), required=False,
                    doc="the reader wants the software stack with the fewest surprises: cards PyTorch runs through CUDA"),
})

PERSONAS = Map(Str(max_len=60, pattern=ID_RE, hint="a persona id (lowercase words joined by -)"), Record({
    "name": F(Text(max_len=120)),
    "description": F(Text(max_len=600), required=False),
    "today": F(TODAY_PROFILE, required=False,
               doc="how /today/ reads this reader: the constraints its pick for today is computed under"),
}), min_items=1)

UI = Map(Str(max_len=80, pattern=UI_KEY_RE, hint="a dotted key such as nav.home"), Text(max_len=1000), min_items=1)

SEARCH_WORD = Str(max_len=60, pattern=re.compile(r"^[^\s\"*+~^:-][^\s\"*+~^:]*$"),
                  hint="one word, without spaces or the search syntax characters \" * + ~ ^ :")
SEARCH_TERMS = Map(Enum(LANGS), Map(SEARCH_WORD, List(SEARCH_WORD, min_items=1, unique=True), min_items=1), min_items=1)


TRANSLATION = Map(Str(max_len=200), Record({
    "text": F(Str(max_len=4000)),
    "source": F(Str(max_len=12, pattern=DIGEST_RE, hint="the 12-hex digest of the English text")),
}))

CELL = OneOf(first=Number(minimum=-1e15, maximum=1e18, exclusive_min=False), second=Text(max_len=300),
             pick_second=lambda v: isinstance(v, str))


def rule_rows_match_columns(topic, ctx, kp):
    for i, section in enumerate(topic.get("sections") or []):
        table = section.get("table")
        if not table:
            continue
        width = len(table.get("columns") or [])
        for j, row in enumerate(table.get("rows") or []):
            if len(row) != width:
                ctx.err(kp + ("sections", i, "table", "rows", j), f"row has {len(row)} cells; the table has {width} columns")


TOPIC = Record({
    "title": F(Text(max_len=120)),
    "summary": F(Text(max_len=600)),
    "order": F(Number(integer=True, maximum=1000), doc="position in the list of topics"),
    "sections": F(List(Record({
        "heading": F(Text(max_len=160)),
        "paragraphs": F(List(Text(max_len=2000)), required=False),
        "table": F(Record({
            "caption": F(Text(max_len=300)),
            "columns": F(List(Text(max_len=120), min_items=1)),
            "rows": F(List(List(CELL, min_items=1), min_items=1)),
        }), required=False),
    }), min_items=1)),
    "sources": F(List(Url(), min_items=1, unique=True)),
}, rules=(rule_rows_match_columns,))
