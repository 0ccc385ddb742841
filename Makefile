# whichgpu: the two commands a new machine needs are `make serve` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

export NO_MKDOCS_2_WARNING := 1
export DISABLE_MKDOCS_2_WARNING := true
# Reproducible output: the time of the last commit unless the caller sets one.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
export SOURCE_DATE_EPOCH

BASE   ?= origin/main
OUT    ?= /dev/stdout

.PHONY: help venv dev-venv site serve validate check lint pr-diff audit test test-fast browser java bench clean

help:
	@echo "make serve   build the site and serve it at http://$(HOST):$(PORT) with live reload"
	@echo "make site    build the static site into site/ (en at the root, ko/ zh/ fr/ beside it)"
	@echo "make test    install what the tests need (Chromium included) and run the whole suite"
	@echo "make audit   known vulnerabilities of the pinned Python and npm packages (needs the network)"
	@echo "make test-fast  the tests that need no browser and no site build (a minute or two)"
	@echo "make bench   build time and size at 1x/10x/100x data, calculator budgets, the estimates' error against its goals, Lighthouse scores"
	@echo "make check   the checks a data pull request must pass (lint, validate, format --check, check-specs)"
	@echo "make pr-diff BASE=ref  what data/ changes against a git ref, as Markdown"

$(BIN)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(BIN)/.dev: requirements-dev.txt requirements.txt $(BIN)/.runtime
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

venv: $(BIN)/.runtime
dev-venv: $(BIN)/.dev

validate: venv
	$(BIN)/python -m generator validate

# The data checks of a pull request: one command, the same in CI and on a contributor's machine.
check: dev-venv lint
	$(BIN)/python -m generator validate
	$(BIN)/python -m generator format --check
	$(BIN)/python -m generator check-specs
	$(BIN)/python -m generator translations

pr-diff: venv
	$(BIN)/python -m generator diff --data-ref $(BASE) --format markdown > $(OUT)

# Known vulnerabilities of the pinned packages: needs the advisory services (the CI workflow runs it).
audit: dev-venv node_modules/.installed
	$(BIN)/python -m pip install --quiet pip-audit
	$(BIN)/pip-audit -r requirements.txt -r requirements-dev.txt
	npm audit --audit-level=moderate

site: venv
	$(BIN)/python -m generator build

serve: venv
	$(BIN)/python -m generator serve --host $(HOST) --port $(PORT)

# Debian's Chromium drives the browser tests (Playwright cannot download its own here), with a
# Korean and a Chinese font: without them Korean and Chinese pages are drawn as empty boxes, and
# their line breaks and timings are not the ones a reader's phone gives.
BROWSER_PACKAGES = chromium fonts-nanum fonts-wqy-microhei
browser:
	@if command -v chromium >/dev/null 2>&1 && [ -n "$$(fc-list :lang=ko 2>/dev/null)" ] && [ -n "$$(fc-list :lang=zh 2>/dev/null)" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's $(BROWSER_PACKAGES) for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES) >/dev/null; \
	elif command -v sudo >/dev/null 2>&1; then \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES) >/dev/null; \
	elif command -v chromium >/dev/null 2>&1; then \
		echo "warning: no Korean or Chinese font; Korean and Chinese pages will show boxes (apt-get install fonts-nanum fonts-wqy-microhei)" >&2; \
	else \
		echo "Chromium is missing: install Debian's packages ($(BROWSER_PACKAGES)) or set CHROMIUM=/path/to/chromium" >&2; exit 1; \
	fi

# The Nu Html Checker runs on a JDK; Debian's headless one when none is installed.
java:
	@if command -v java >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's default-jre-headless for the HTML checker"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null; \
	elif command -v sudo >/dev/null 2>&1; then \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null; \
	else \
		echo "Java is missing: install Debian's 'default-jre-headless' package" >&2; exit 1; \
	fi

# npm tools for the quality tests (HTML checker, Lighthouse), pinned by package-lock.json.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The lint gate (pyproject.toml): pyflakes, pycodestyle, isort, bugbear, pyupgrade, complexity.
lint: dev-venv
	$(BIN)/ruff check .
	$(BIN)/lint-imports

test: dev-venv lint browser java node_modules/.installed
	$(BIN)/python -m pytest -n 2 -q

# The tests marked neither browser nor build (tests/conftest.py marks each test from what it uses).
test-fast: dev-venv lint
	$(BIN)/python -m pytest -n 2 -q -m "not browser and not build"

bench: dev-venv node_modules/.installed browser
	mkdir -p build/bench
	$(BIN)/python -m benchmarks.build_bench
	$(BIN)/python -m benchmarks.calc_bench
	$(BIN)/python -m benchmarks.estimate_bench
	$(BIN)/python -m benchmarks.holdout
	$(BIN)/python -m benchmarks.preview_bench --scales 1,10,100 --json build/bench/preview.json
	$(BIN)/python -m benchmarks.page_bytes --json build/bench/page_bytes.json
	$(BIN)/python -m benchmarks.lighthouse_bench --json build/bench/lighthouse.json
	$(BIN)/python -m benchmarks.budgets

clean:
	rm -rf build site site.tmp-* site.old-* .pytest_cache
