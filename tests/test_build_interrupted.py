"""A build that is stopped (SIGKILL, SIGTERM) or replaced while the site is read: the workers end
with the build, what it leaves is removed by the next build, and ``site/`` is there at every
moment of the swap."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import EPOCH, FIXTURE_SOFTWARE, ROOT

from generator.site import scratch
from generator.site.pipeline import Paths, build_site, swap_in

LINUX = Path("/proc/self/stat").is_file()
FORKS = hasattr(os, "fork") and (os.cpu_count() or 1) >= 2

# A build whose languages, once built, wait a minute: what a longer build is doing when it is stopped.
_BUILD = r"""
import sys, time
from pathlib import Path
import generator.site.pipeline as site
from generator.site.pipeline import Paths, build_site
built = site.build_languages
site.build_languages = lambda *a, **k: (built(*a, **k), time.sleep(60))
paths = Paths(root=Path(sys.argv[1]), data=Path(sys.argv[2]), build=Path(sys.argv[3]), site=Path(sys.argv[4]))
build_site(paths, ("en", "ko"))
"""


def _children(pid: int) -> set[int]:
    """The ids of the processes whose parent is ``pid`` (Linux' /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for whoever adopted it to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _wait(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _kill(pids) -> None:
    """Kill the processes left running (a failed test leaves no worker behind)."""
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _fixture_paths(tree, tmp_path) -> Paths:
    shutil.copyfile(ROOT / "data" / "ui.yaml", tree.data / "ui.yaml")
    tree.write("software.yaml", FIXTURE_SOFTWARE)
    for stale in (tree.data / "translations").rglob("ui.yaml"):
        stale.unlink()
    return Paths(root=ROOT, data=tree.data, build=tmp_path / "build", site=tmp_path / "site")


def _start_and_stop(paths: Paths, sig: int) -> tuple[int, set[int], int | None]:
    """A build in another process, stopped by ``sig`` while its workers are busy:
    (its id, its workers' ids, its exit status)."""
    proc = subprocess.Popen([sys.executable, "-c", _BUILD, str(paths.root), str(paths.data), str(paths.build),
                             str(paths.site)], cwd=ROOT, env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        started = _wait(lambda: all((paths.site.parent / f"site.tmp-{proc.pid}-{lang}" / "index.html").is_file()
                                    for lang in ("en", "ko")), 120)
        assert started, "the build's workers did not start"
        workers = _children(proc.pid)
        proc.send_signal(sig)
        status = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.pid, workers, status


@pytest.mark.build
@pytest.mark.skipif(not (LINUX and FORKS), reason="forks a build on two cores and reads /proc")
def test_a_killed_build_takes_its_workers_along_and_the_next_build_removes_what_it_left(tree, tmp_path):
    paths = _fixture_paths(tree, tmp_path)
    pid, workers, status = _start_and_stop(paths, signal.SIGKILL)
    try:
        assert status == -signal.SIGKILL and len(workers) == 2
        assert _wait(lambda: not any(map(_alive, workers)), 5), "a worker outlived the build that started it"
    finally:
        _kill(workers)
    left = list(tmp_path.glob(f"site.*-{pid}*"))
    assert left  # what a killed process cannot clean up itself...
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    build_site(paths, ("en",))
    assert (paths.site / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "data", "site"]  # ...the next build removes


@pytest.mark.build
@pytest.mark.skipif(not (LINUX and FORKS), reason="forks a build on two cores and reads /proc")
def test_a_terminated_build_stops_its_workers_and_removes_its_folders(tree, tmp_path):
    paths = _fixture_paths(tree, tmp_path)
    paths.site.mkdir()
    (paths.site / "index.html").write_text("the last build", encoding="utf-8")
    _, workers, status = _start_and_stop(paths, signal.SIGTERM)
    try:
        assert status == 128 + signal.SIGTERM and len(workers) == 2
        assert _wait(lambda: not any(map(_alive, workers)), 5), "a worker outlived the build that started it"
    finally:
        _kill(workers)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "data", "site"]
    assert (paths.site / "index.html").read_text(encoding="utf-8") == "the last build"


def test_leftovers_of_processes_that_run_stay(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    for name in (f"site.tmp-{dead.pid}", f"site.tmp-{dead.pid}-ko", f"site.old-{dead.pid}",  # gone
                 f"site.tmp-{os.getpid()}-en", f"site.tmp-{os.getppid()}",  # running
                 f"other.tmp-{dead.pid}", "site.tmp-x", "site"):  # not a build's of this site
        (tmp_path / name).mkdir()
    scratch.remove_leftovers(tmp_path, scratch.site_leftovers(tmp_path / "site"))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([
        f"site.tmp-{os.getpid()}-en", f"site.tmp-{os.getppid()}", f"other.tmp-{dead.pid}", "site.tmp-x", "site"])


@pytest.mark.skipif(not scratch.exchange_available(), reason="this system cannot exchange two folders in one step")
def test_the_site_folder_is_there_at_every_moment_of_the_swap(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("0", encoding="utf-8")
    missing, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            if not os.path.isdir(site):
                missing.append(time.monotonic())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for i in range(1, 301):
            new = tmp_path / f"site.tmp-{os.getpid()}"
            new.mkdir()
            (new / "index.html").write_text(str(i), encoding="utf-8")
            swap_in(new, site)
    finally:
        stop.set()
        watcher.join()
    assert missing == []
    assert (site / "index.html").read_text(encoding="utf-8") == "300"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert site.is_dir() and not site.is_symlink()  # a plain folder, to copy or serve as it is


def test_a_swap_without_an_exchange_still_replaces_the_site(tmp_path, monkeypatch):
    monkeypatch.setattr(scratch, "exchange", lambda a, b: False)
    site, new = tmp_path / "site", tmp_path / "site.tmp-1"
    for folder, text in ((site, "old"), (new, "new")):
        folder.mkdir()
        (folder / "index.html").write_text(text, encoding="utf-8")
    swap_in(new, site)
    assert (site / "index.html").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
