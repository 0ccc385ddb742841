"""`python -m generator serve`: serves all languages and rebuilds when the data changes."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from helpers import EPOCH, FIXTURE_SOFTWARE, ROOT

# `generator serve` builds the fixture site in every language before it answers
pytestmark = pytest.mark.build


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode("utf-8")
    except OSError:
        return 0, ""


def wait_for(predicate, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    return None


@pytest.fixture
def served(tree):
    shutil.copyfile(ROOT / "data" / "ui.yaml", tree.data / "ui.yaml")
    tree.write("software.yaml", FIXTURE_SOFTWARE)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--data", str(tree.data), "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH})
    base = f"http://127.0.0.1:{port}"
    try:
        ok = wait_for(lambda: fetch(base + "/")[0] == 200)
        if not ok:
            proc.kill()
            pytest.fail("server did not start:\n" + (proc.stdout.read() if proc.stdout else ""))
        yield tree, base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_serves_every_language_with_live_reload(served):
    _, base = served
    for prefix in ("", "ko/", "zh/", "fr/"):
        status, body = fetch(f"{base}/{prefix}gpus/")
        assert status == 200 and "GeForce RTX 2070" in body, prefix
    assert "livereload" in fetch(base + "/")[1]


def test_rebuilds_on_data_change_and_keeps_last_good_build(served):
    tree, base = served
    fetch(base + "/gpus/rtx-2070/")  # the open page: rebuilt first
    tree.set("gpus/nvidia/rtx-2070.yaml", "name", "GeForce RTX 2070 Rebuilt")
    assert wait_for(lambda: "GeForce RTX 2070 Rebuilt" in fetch(base + "/gpus/rtx-2070/")[1]), "no rebuild after a data change"
    # the other pages and languages follow; a request for one not rebuilt yet waits for it
    assert "GeForce RTX 2070 Rebuilt" in fetch(base + "/ko/gpus/")[1]
    tree.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "eight")
    shown = wait_for(lambda: "wg-preview-problems" in (body := fetch(base + "/ko/gpus/")[1]) and body)
    assert shown, "the data error is not shown on the page"
    assert "rtx-2070.yaml:" in shown and "memory_gb" in shown
    assert "GeForce RTX 2070 Rebuilt" in shown  # the last good build stays
    tree.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "8")
    assert wait_for(lambda: "wg-preview-problems" not in fetch(base + "/ko/gpus/")[1]), "the error stays after the fix"
    # a new file (not an edit in place): every folder is listed again, and its page appears
    tree.write("gpus/nvidia/rtx-2070-copy.yaml", tree.read("gpus/nvidia/rtx-2070.yaml").replace(
        "id: rtx-2070", "id: rtx-2070-copy").replace("GeForce RTX 2070 Rebuilt", "GeForce RTX 2070 Copy"))
    assert wait_for(lambda: "GeForce RTX 2070 Copy" in fetch(base + "/gpus/")[1]), "a created record never appeared"


def _serve_folders(temp):
    return sorted(temp.glob("whichgpu-serve-*"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_preview_removes_its_temporary_folder_when_it_is_stopped(tree, tmp_path, sig):
    """SIGTERM (a service manager, ``kill``) or Ctrl-C: the site folder in the temporary directory
    goes with the preview, and a folder that a killed preview left is removed by the next one."""
    shutil.copyfile(ROOT / "data" / "ui.yaml", tree.data / "ui.yaml")
    tree.write("software.yaml", FIXTURE_SOFTWARE)
    temp = tmp_path / "temp"
    left = temp / "whichgpu-serve-999999999-x"  # of a process that no longer runs
    (left / "site").mkdir(parents=True)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--data", str(tree.data), "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "TMPDIR": str(temp)})
    try:
        if not wait_for(lambda: fetch(f"http://127.0.0.1:{port}/")[0] == 200):
            proc.kill()
            pytest.fail("server did not start:\n" + (proc.stdout.read() if proc.stdout else ""))
        [folder] = _serve_folders(temp)  # (the Chinese word splitter keeps a file of its own there)
        assert folder.name.startswith(f"whichgpu-serve-{proc.pid}-") and (folder / "site" / "index.html").is_file()
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _serve_folders(temp) == []
    assert "Traceback" not in proc.stdout.read()
