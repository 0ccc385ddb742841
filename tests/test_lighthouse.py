"""Lighthouse (mobile) on the home, catalogue, GPU, revision and calculator pages: accessibility
100. Performance scores are timing-based, so they are measured and printed by `make bench`
(benchmarks/lighthouse_bench.py) instead of asserted here."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import ROOT
from lighthouse_server import serve
from test_browser import CHROMIUM

LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
PAGES = ["", "gpus/", "gpus/rtx-2070/", "revisions/2019-04-03/", "calculators/", "calculators/picker/", "ko/gpus/", "zh/",
         "fr/revisions/2019-04-03/"]


def lighthouse(url: str, categories: str) -> dict:
    out = subprocess.run([str(LIGHTHOUSE), url, "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
                          f"--only-categories={categories}", "--form-factor=mobile", "--output=json", "--quiet"],
                         capture_output=True, text=True, env={**os.environ, "CHROME_PATH": CHROMIUM}, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def gzip_server(built_site):
    site, _ = built_site
    httpd, base = serve(site)
    yield base, site
    httpd.shutdown()


def test_accessibility_is_100(gzip_server):
    if not LIGHTHOUSE.exists():
        pytest.fail("Lighthouse is missing: run `make test` (npm ci installs it)")
    base, site = gzip_server
    failures = []
    for path in PAGES:
        if not (site / path / "index.html").is_file():
            continue
        report = lighthouse(f"{base}/{path}", "accessibility")
        score = report["categories"]["accessibility"]["score"]
        if score != 1:
            failed = [a["id"] for a in report["categories"]["accessibility"]["auditRefs"]
                      if report["audits"][a["id"]]["score"] not in (None, 1)]
            failures.append(f"/{path}: {score} ({', '.join(failed)})")
    assert failures == []
