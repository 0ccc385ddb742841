"""A contributor's wait: the preview's latency, and a full build's four languages against one.

1. **Preview latency** (shipped data): ``python -m generator serve`` on a copy of data/, the
   page ``/gpus/rtx-4090/`` open; each round saves a change to ``gpus/nvidia/rtx-4090.yaml``
   and polls the page until it shows the change. Five rounds, each after the previous change
   reached every language; median and worst.
2. **The open page's step at 1x, 10x and 100x** (in-process, English, told of each write as the
   watcher tells it under ``serve``): how the first step's time grows with the catalogue, split
   into loading the data again, rendering the page and MkDocs' build of it; for rtx-4090 (whose
   page, in the synthetic data, grows with the history) and rtx-4070 (whose page does not).
3. **Four languages against one**: a full build of the four languages and one of English alone,
   in three interleaved pairs (the median of their ratios), and whether English came out
   byte-identical both ways; measured twice: as a contributor runs it (a new process per build,
   timed from outside: what the budget reads) and inside one process, the data already loaded
   (the languages' own work alone: four equal builds on two cores, so about 2.0x at best).

Prints a table; asserts nothing.
"""
from __future__ import annotations

import argparse
import filecmp
import io
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks import synth
from generator.site.pipeline import Paths

ROOT = Path(__file__).resolve().parent.parent
GPU = "gpus/nvidia/rtx-4090.yaml"
# a card no revision names and no result measures: its page is the same at every scale
STEADY = "gpus/nvidia/rtx-4070.yaml"
ROUNDS = 5


def _fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode("utf-8")
    except OSError:
        return ""


def _tdp(path: Path, value: int) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"^tdp_w: .*$", f"tdp_w: {value}", text, count=1, flags=re.M), encoding="utf-8")


def serve_latency(tmp: Path) -> list[float]:
    data = tmp / "serve-data"
    shutil.copytree(ROOT / "data", data)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp / "serve.log"
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--data", str(data), "--port", str(port)],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/gpus/rtx-4090/"
    times = []
    try:
        end = time.monotonic() + 600
        while "rtx-4090" not in _fetch(url) and time.monotonic() < end:
            time.sleep(0.5)
        for i in range(ROUNDS):
            done = log.read_text(encoding="utf-8").count("every language is up to date")
            value = 601 + i  # a TDP no card has: it appears on the page only after the rebuild
            t0 = time.perf_counter()
            _tdp(data / GPU, value)
            while f">{value}" not in _fetch(url) and f" {value} " not in _fetch(url):
                if time.perf_counter() - t0 > 120:
                    raise RuntimeError("the page never showed the change; see " + str(log))
                time.sleep(0.01)
            times.append(time.perf_counter() - t0)
            while log.read_text(encoding="utf-8").count("every language is up to date") <= done:
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return times


def first_step(factor: int, tmp: Path, parts: dict | None = None, steady: dict | None = None) -> list[float]:
    """The open page's step of each edit to rtx-4090's file, its page open; ``parts`` gets, per
    edit, the seconds of its three parts: loading the data again, rendering the page, and
    MkDocs' build of it. In the synthetic data that card's page grows with the history (every
    copy of a revision names it, up to the rows its table carries), so ``steady`` gets the same
    for rtx-4070, whose page is the same at every scale: what the catalogue's size alone does."""
    from generator.site import preview as pv_module

    data = synth.make(ROOT / "data", tmp / f"pv-data-{factor}", factor)
    pv = pv_module.Preview(Paths(root=ROOT, data=data, build=tmp / f"pv-build-{factor}", site=tmp / f"pv-site-{factor}"),
                           out=io.StringIO(), langs=["en"])
    pv.start()
    pv.watched()  # as under `serve`, where the watcher reports each file written
    found = _edits(pv, pv_module, data, GPU)
    if parts is not None:
        parts[str(factor)] = {k: v for k, v in found.items() if k != "times"}
    if steady is not None:
        steady[str(factor)] = _edits(pv, pv_module, data, STEADY)
    return found["times"]


def _edits(pv, pv_module, data: Path, card: str) -> dict:
    """ROUNDS edits of ``card``'s file with its page open, each after the last reached every
    page: the step's seconds, its parts, when the reload is sent (the step, then the garbage
    collector let run again and the background step started) and the page's Markdown size."""
    gid = Path(card).stem
    pv.seen(f"/gpus/{gid}/")
    times, returned, split = [], [], {"load": [], "render": [], "mkdocs": []}
    timed = {"load": pv_module.load_or_fail, "render": pv_module.generate_language, "mkdocs": pv._mkdocs}
    laps: dict[str, list[float]] = {}

    def lap(name, fn):
        def run(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                laps.setdefault(name, []).append(time.perf_counter() - t0)
        return run

    pv_module.load_or_fail, pv_module.generate_language = lap("load", timed["load"]), lap("render", timed["render"])
    pv._mkdocs = lap("mkdocs", timed["mkdocs"])
    try:
        for i in range(ROUNDS):
            laps.clear()
            _tdp(data / card, 601 + i)
            pv.saw("modified", str(data / card))
            t0 = time.perf_counter()
            pv.update()
            returned.append(time.perf_counter() - t0)
            times.append(pv.changes[-1].steps[0].seconds)
            for name in split:  # the first call of each is the open page's step; the rest, the background's
                split[name].append(laps[name][0])
            while not pv.changes[-1].done:
                time.sleep(0.1)
    finally:
        pv_module.load_or_fail, pv_module.generate_language, pv._mkdocs = timed["load"], timed["render"], timed["mkdocs"]
    return {"times": times, **split, "returned": returned,
            "page_bytes": (pv.paths.build / "docs" / "en" / "gpus" / f"{gid}.md").stat().st_size}


# Each build runs in a fresh interpreter, as `make site` does, not in this process, which has
# loaded the 10x data for the preview's step (and whose size every forked worker then inherits).
_TIMED_BUILD = """
import sys, time
from pathlib import Path
from generator.site.pipeline import Paths, Timings, build_site
paths = Paths(root=Path(sys.argv[1]), build=Path(sys.argv[2]), site=Path(sys.argv[3]))
langs = tuple(sys.argv[4].split(","))
build_site(paths, langs, Timings())  # a first build fills the caches; the second is timed
t0 = time.perf_counter()
build_site(paths, langs, Timings())
print(time.perf_counter() - t0)
"""


PAIRS = 3  # interleaved pairs: on a shared machine one pair alone swings by a fifth either way
LANG_SETS = {"four": ("en", "ko", "zh", "fr"), "one": ("en",)}


def _interleaved(timed, pairs: int) -> dict:
    """``pairs`` rounds, each ``timed("four")`` then ``timed("one")`` (seconds): the medians, each
    round's ratio, and their median (the figure the budget reads)."""
    times = {name: [] for name in LANG_SETS}
    for _ in range(pairs):
        for name in LANG_SETS:
            times[name].append(timed(name))
    ratios = [f / o for f, o in zip(times["four"], times["one"], strict=True)]
    return {"four": statistics.median(times["four"]), "one": statistics.median(times["one"]), "runs": times,
            "ratios": ratios, "ratio": statistics.median(ratios), "cores": os.cpu_count()}


def four_against_one(tmp: Path, pairs: int = PAIRS) -> dict:
    """Builds of the four languages and of English alone, each in a fresh interpreter that times
    its second build (the languages' own work, with the data loaded and derived); and whether
    English came out byte-identical both ways."""
    def timed(name: str) -> float:
        r = subprocess.run([sys.executable, "-c", _TIMED_BUILD, str(ROOT), str(tmp / f"b-{name}"), str(tmp / f"s-{name}"),
                            ",".join(LANG_SETS[name])], cwd=ROOT, capture_output=True, text=True, check=True)
        return float(r.stdout.strip().splitlines()[-1])

    result = _interleaved(timed, pairs)
    result["identical"] = _same(filecmp.dircmp(tmp / "s-one", tmp / "s-four", ignore=["ko", "zh", "fr"]))
    return result


# A full build as a contributor runs it (``make site``, ``python -m generator build``): a fresh
# interpreter that imports, loads and checks the data, derives, generates and runs MkDocs, timed
# from outside, with the caches of ``build/.cache`` warm from an earlier build of the same folders.
_COMMAND_BUILD = """
import sys
from pathlib import Path
from generator.site.pipeline import Paths, build_site
build_site(Paths(root=Path(sys.argv[1]), build=Path(sys.argv[2]), site=Path(sys.argv[3])), tuple(sys.argv[4].split(",")))
"""


def four_against_one_commands(tmp: Path, pairs: int = PAIRS) -> dict:
    """The same comparison for whole commands: each build is a new process, timed from its start
    to its exit (interpreter, imports, loading the data included), as ``make site`` is. Its work
    in one language is a larger share of the whole, so the ratio is lower than the in-process
    one's; the budget reads this one, the in-process one is printed beside it."""
    args = {name: [sys.executable, "-c", _COMMAND_BUILD, str(ROOT), str(tmp / f"c-{name}"), str(tmp / f"cs-{name}"),
                   ",".join(langs)] for name, langs in LANG_SETS.items()}
    for cmd in args.values():  # fill the caches
        subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)

    def timed(name: str) -> float:
        t0 = time.perf_counter()
        subprocess.run(args[name], cwd=ROOT, capture_output=True, check=True)
        return time.perf_counter() - t0

    return _interleaved(timed, pairs)


def _same(cmp: filecmp.dircmp) -> bool:
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_same(sub) for sub in cmp.subdirs.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--scales", default="1,10", help="scales of the in-process first step")
    args = parser.parse_args()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")
    with tempfile.TemporaryDirectory(prefix="whichgpu-preview-") as tmp:
        tmp = Path(tmp)
        result = {"serve": serve_latency(tmp)}
        result["first_step_parts"], result["first_step_steady"] = {}, {}
        result["first_step"] = {f: first_step(int(f), tmp, result["first_step_parts"], result["first_step_steady"])
                                for f in args.scales.split(",")}
        result["builds"] = four_against_one(tmp)
        result["commands"] = four_against_one_commands(tmp)
    s, b, c = result["serve"], result["builds"], result["commands"]
    print(f"preview, save to page shown (serve, 1x): median {statistics.median(s):.2f}s, worst {max(s):.2f}s "
          f"over {len(s)} edits (budget 1.5s)")
    for factor, times in result["first_step"].items():
        split = result["first_step_parts"][factor]
        print(f"preview, the open page's step ({factor}x, in-process): median {statistics.median(times):.3f}s "
              f"(load {statistics.median(split['load']):.3f}s, render {statistics.median(split['render']):.3f}s, "
              f"MkDocs {statistics.median(split['mkdocs']):.3f}s); "
              f"reload sent after {statistics.median(split['returned']):.3f}s; "
              f"the page's Markdown {split['page_bytes']:,} bytes")
    for factor, found in result["first_step_steady"].items():
        print(f"preview, the open page's step ({factor}x, in-process, {Path(STEADY).stem}: the same page at every scale): "
              f"median {statistics.median(found['times']):.3f}s (load {statistics.median(found['load']):.3f}s, "
              f"render {statistics.median(found['render']):.3f}s, MkDocs {statistics.median(found['mkdocs']):.3f}s); "
              f"reload sent after {statistics.median(found['returned']):.3f}s; the page's Markdown {found['page_bytes']:,} bytes")
    print(f"full build: four languages {b['four']:.1f}s, English alone {b['one']:.1f}s (medians), ratio {b['ratio']:.2f}x, "
          f"median of {len(b['ratios'])} interleaved pairs ({', '.join(f'{r:.2f}' for r in b['ratios'])}) "
          f"on {b['cores']} cores; English byte-identical both ways: {b['identical']}")
    print(f"full build as a command (a new process each): four languages {c['four']:.1f}s, English alone {c['one']:.1f}s "
          f"(medians), ratio {c['ratio']:.2f}x, median of {len(c['ratios'])} interleaved pairs "
          f"({', '.join(f'{r:.2f}' for r in c['ratios'])}) on {c['cores']} cores (budget 2.0x)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
