# Quick start: `make run` (main job, offline, embedded defaults) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
RUN_DIR ?= runs/baselines

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,agents]"
	touch $(STAMP)

## Baseline agents over all 480 scenarios under both feedback realizations.
run: $(STAMP)
	$(VENV)/bin/hear-gym eval --out $(RUN_DIR) --split all --markdown $(RUN_DIR)/tables.md

## The declared ruff config: lint and one formatting style (part of make test).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: lint
	$(VENV)/bin/pytest

## Speed ratios and the baseline grid for benchmarks/RESULTS.md.
bench: $(STAMP)
	$(PY) benchmarks/speed_hear2act.py
	$(PY) benchmarks/hear2act_baselines.py
	$(PY) benchmarks/hear2act_shortcuts.py
	$(PY) benchmarks/speech_validation.py
	$(PY) benchmarks/speed_speech.py
	$(PY) benchmarks/hear2act_audio_grid.py
	$(PY) -m benchmarks.speed_grid
	$(PY) benchmarks/hear2act_llm_rows.py
	$(PY) benchmarks/voicegate_baselines.py
	$(PY) benchmarks/voicegate_shortcuts.py

clean:
	rm -rf $(VENV) runs
