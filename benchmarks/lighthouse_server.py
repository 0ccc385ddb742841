"""Chromium for `make bench` and the browser tests: where it is, the flags it runs with, a static
file server that compresses like real hosting (gzip), and a Lighthouse run against it."""
from __future__ import annotations

import functools
import gzip
import http.server
import json
import os
import shutil
import subprocess
import threading
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
COMPRESSIBLE = (".html", ".css", ".js", ".json", ".svg", ".xml", ".atom")


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if not (path.is_file() and path.suffix in COMPRESSIBLE and "gzip" in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        if self.path.split("?")[0].endswith("/") is False and path.name == "index.html" and not self.path.split("?")[0].endswith("index.html"):  # noqa: E501
            return super().send_head()  # let the base class redirect /dir to /dir/
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600")
        self.end_headers()
        return BytesIO(body)


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(GzipHandler, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def lighthouse(url: str, categories: str) -> dict:
    """One mobile Lighthouse run of ``url`` in CHROMIUM, its JSON report."""
    out = subprocess.run([str(LIGHTHOUSE), url, "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
                          f"--only-categories={categories}", "--form-factor=mobile", "--output=json", "--quiet"],
                         capture_output=True, text=True, env={**os.environ, "CHROME_PATH": CHROMIUM}, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)
