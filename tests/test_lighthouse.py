"""Lighthouse (mobile) on the home, catalogue, GPU, revision and calculator pages: accessibility
100. Performance scores are timing-based, so they are measured and printed by `make bench`
(benchmarks/lighthouse_bench.py) instead of asserted here."""
from __future__ import annotations

import pytest

from benchmarks.lighthouse_server import LIGHTHOUSE, lighthouse, serve

PAGES = ["", "gpus/", "gpus/rtx-2070/", "revisions/2019-04-03/", "calculators/", "calculators/picker/", "ko/gpus/", "zh/",
         "fr/revisions/2019-04-03/"]


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
