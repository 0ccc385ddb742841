"""The software a card needs, as dated facts: ``data/software.yaml``.

Which builds of today's software run a card is a fact about the software, not the card: a release
lists the compute capabilities (NVIDIA) or the GPUs (AMD, Intel, Apple, Google) its builds carry.
So the file lists the stacks and their builds once, with sources, and each card's status follows
from it by one rule (``generator/facts/support.py``): ``current`` when a current build runs it,
``legacy`` when only a build marked legacy or an older release does (the last one is named),
``unsupported`` otherwise. The features that decide speed in practice are facts of an
architecture and are listed per architecture name, as the GPU records spell it.
"""
from __future__ import annotations

import re

from generator.data.schema import (
    FLASH_ATTENTION,
    ID_RE,
    VENDORS,
    Bool,
    Date,
    Enum,
    F,
    List,
    Map,
    Number,
    Record,
    Ref,
    Str,
    Url,
)

CC = Str(max_len=6, pattern=re.compile(r"^\d+\.\d+$"), hint='a quoted version such as "7.5"')


def rule_build_targets(build, ctx, kp):
    targets = [k for k in ("compute_capabilities", "gpus", "all_of_vendor") if build.get(k)]
    if len(targets) != 1:
        ctx.err(kp, "a build names what it runs on in one way: compute_capabilities (NVIDIA), gpus (a list of "
                "GPU ids) or all_of_vendor: true")
    if build.get("compute_capabilities") and build.get("vendor") != "nvidia":
        ctx.err(kp + ("compute_capabilities",), "compute capabilities are an NVIDIA notion; list gpus instead")


BUILD = Record({
    "name": F(Str(max_len=80), doc="e.g. 'CUDA 13.0 wheels' or 'ROCm 7.1 wheels'"),
    "vendor": F(Enum(VENDORS)),
    "release": F(Str(max_len=40), doc="the release of the stack these builds belong to, e.g. '2.11'"),
    "date": F(Date(), doc="when that release came out"),
    "compute_capabilities": F(List(CC, min_items=1, unique=True), required=False,
                              doc="NVIDIA: the compute capabilities the build carries kernels for"),
    "gpus": F(List(Ref("gpu"), min_items=1, unique=True), required=False, doc="the GPUs on the build's support list"),
    "all_of_vendor": F(Bool(), required=False, doc="every GPU of the vendor (Apple's Metal builds)"),
    "legacy": F(Bool(), required=False,
                doc="kept for older cards and announced for removal, or an older release that still runs them"),
    "source": F(Url()),
    "note": F(Str(max_len=600), required=False, doc="how the build or feature was read, in English (not translated)"),
}, rules=(rule_build_targets,))

STACK = Record({
    "name": F(Str(max_len=80), doc="e.g. PyTorch, llama.cpp, MLX"),
    "decides_status": F(Bool(), doc="true for the training frameworks whose builds decide a card's status"),
    "builds": F(List(BUILD, min_items=1)),
})

ARCHITECTURE = Record({
    "bf16": F(Bool()),
    "fp8": F(Bool(), doc="hardware FP8 matrix math"),
    "fp4": F(Bool(), doc="hardware FP4 matrix math (NVFP4, MXFP4)"),
    "flash_attention": F(List(Enum(FLASH_ATTENTION), unique=True),
                         doc="the FlashAttention major versions whose kernels run on it (empty: none)"),
    "source": F(Url()),
    "note": F(Str(max_len=600), required=False, doc="how the build or feature was read, in English (not translated)"),
})

SOFTWARE = Record({
    "as_of": F(Date(), doc="the day the builds below were checked"),
    "stacks": F(Map(Str(max_len=40, pattern=ID_RE, hint="a stack id such as pytorch"), STACK, min_items=1)),
    "architectures": F(Map(Str(max_len=40), ARCHITECTURE, min_items=1),
                       doc="architecture name as GPU records spell it -> the features that decide speed"),
})


# ---------------------------------------------------------------- snapshots of today's picks

SNAPSHOT_PICK = Record({
    "gpu": F(Ref("gpu")),
    "count": F(Number(integer=True, maximum=64), doc="cards in the build"),
    "price_usd": F(Number(maximum=10000000), doc="the build's price, or the price per GPU-hour when rented"),
    "price_kind": F(Enum(("new", "used", "cloud-hourly"))),
    "price_date": F(Date()),
    "alternatives": F(List(Ref("gpu"), unique=True), required=False),
})

SNAPSHOT = Record({
    "as_of": F(Date(), doc="the newest price the picks rest on; equals the file name"),
    "picks": F(Map(Str(max_len=60, pattern=ID_RE, hint="a persona id"), SNAPSHOT_PICK),
               doc="persona id -> the site's pick for today as it stood on as_of"),
})
