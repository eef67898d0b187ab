# Every target creates .venv and installs the project on first use, so a fresh
# machine with Python 3.11, pip and make needs nothing else.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_DB := .demo/obsctl.db
PYTEST_WORKERS ?= 4

.PHONY: install demo test lint serve bench completions docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,grpc]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@mkdir -p .demo
	@rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	$(BIN)/python examples/generate_demo.py --now > .demo/events.jsonl
	$(BIN)/obsctl --db $(DEMO_DB) ingest .demo/events.jsonl
	$(BIN)/obsctl --db $(DEMO_DB) sessions list
	$(BIN)/obsctl --db $(DEMO_DB) explain support-004
	$(BIN)/obsctl --db $(DEMO_DB) compare support-001 support-004
	$(BIN)/obsctl --db $(DEMO_DB) export support-004 --format csv -o .demo/support-004.csv
	$(BIN)/obsctl --db $(DEMO_DB) analytics
	$(BIN)/obsctl --db $(DEMO_DB) triage batch
	$(BIN)/obsctl --db $(DEMO_DB) postmortem research-002 -o .demo/postmortem-research-002.md
	$(BIN)/obsctl --db $(DEMO_DB) alerts rules add --name "error rate above 10%" --metric error_rate --operator ">" --threshold 10 --window-minutes 1440
	$(BIN)/obsctl --db $(DEMO_DB) alerts evaluate
	$(BIN)/obsctl --db $(DEMO_DB) sla set research-agent error_rate "<=" 5 --window-hours 48
	$(BIN)/obsctl --db $(DEMO_DB) sla check
	$(BIN)/obsctl --db $(DEMO_DB) scorecards
	$(BIN)/printq livePercent greater 50
	@echo
	@echo "Dashboard: run 'make serve' and open http://127.0.0.1:3000/ (it serves $(DEMO_DB))"

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check obsctl printq tests bench
	$(BIN)/mypy

# After `make demo` this serves the demo database (the examples in docs/ use its sessions);
# before, the default database. The server's first line names the file it serves.
serve: $(STAMP)
	$(BIN)/obsctl $(if $(wildcard $(DEMO_DB)),--db $(DEMO_DB)) serve

# One run of every benchmark writes $(BENCH_PAGE): a header (when, on what machine, which
# commit), then each benchmark's figures and verdicts. A missed target does not stop the run;
# the target exits non-zero at the end if any benchmark missed one or failed.
# `make bench BENCH_SMALL=1 BENCH_PAGE=/tmp/perf.md` checks the mechanism on small sizes.
BENCH_PAGE ?= docs/performance.md
bench: $(STAMP)
	@mkdir -p $(dir $(BENCH_PAGE))
	@$(BIN)/python bench/_report.py header > $(BENCH_PAGE).partial
	@failed=""; for b in bench/[a-z]*.py; do echo "== $$b"; \
	  BENCH_REPORT=$(BENCH_PAGE).partial $(BIN)/python $$b || failed="$$failed $$b"; done; \
	$(BIN)/python bench/_report.py footer $$failed >> $(BENCH_PAGE).partial; \
	mv $(BENCH_PAGE).partial $(BENCH_PAGE); echo "wrote $(BENCH_PAGE)"; \
	if [ -n "$$failed" ]; then echo "missed a target or failed:$$failed"; exit 1; fi

completions: $(STAMP)
	$(BIN)/python completions/generate.py completions

# docs/cli.md and docs/http.md from the code, and the shown output of every example in the docs
# (tests/obsctl/test_docs.py fails until this is run after a change to a command or an output).
docs: $(STAMP)
	$(BIN)/python docs/generate.py

clean:
	rm -rf $(VENV) .demo build dist *.egg-info .pytest_cache .ruff_cache .hypothesis bench/.cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
