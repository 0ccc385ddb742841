"""A static file server that compresses like real hosting (gzip), for Lighthouse runs."""
from __future__ import annotations

import functools
import gzip
import http.server
import threading
from pathlib import Path

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
        from io import BytesIO

        return BytesIO(body)


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(GzipHandler, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
