"""Lighthouse scores (mobile) of the key pages, served gzip-compressed like real hosting.
Prints a table; performance is timing-based and varies with the machine's load."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from generator.site import Paths, build_site  # noqa: E402
from lighthouse_server import serve  # noqa: E402
from test_lighthouse import PAGES, lighthouse  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="whichgpu-lh-") as tmp:
        paths = Paths(build=Path(tmp) / "build", site=Path(tmp) / "site")
        build_site(paths)
        httpd, base = serve(paths.site)
        print(f"{'page':<28} {'perf':>5} {'a11y':>5} {'FCP':>7} {'LCP':>7} {'TBT':>8} {'CLS':>6} {'bytes':>9}")
        for path in PAGES:
            if not (paths.site / path / "index.html").is_file():
                continue
            r = lighthouse(f"{base}/{path}", "performance,accessibility")
            a = r["audits"]
            print(f"{'/' + path:<28} {r['categories']['performance']['score'] * 100:>5.0f} "
                  f"{r['categories']['accessibility']['score'] * 100:>5.0f} "
                  f"{a['first-contentful-paint']['numericValue'] / 1000:>6.2f}s {a['largest-contentful-paint']['numericValue'] / 1000:>6.2f}s "
                  f"{a['total-blocking-time']['numericValue']:>6.0f}ms {a['cumulative-layout-shift']['numericValue']:>6.3f} "
                  f"{a['total-byte-weight']['numericValue']:>9,.0f}")
        httpd.shutdown()


if __name__ == "__main__":
    main()
