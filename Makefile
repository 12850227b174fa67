# Quick start: `make run` (main job, offline, embedded defaults) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
RUN_DIR ?= runs/main
# The main job's setting (docs/ppo.md, "The main job"): Hear2Act under prosody-mediated feedback,
# the paper's success reward (1st%) with a turn cost, and the per_option policy, started from a
# behaviour clone of planner@T (its play on the training scenarios), then PPO; the checkpoint with
# the best return on the dev scenarios (the clone included) is kept and evaluated on test.
ENV_OPTIONS := --option reward=success --option turn_cost=0.05
# Training envs only: twin users, so the policy cannot learn the training scenarios' golds by heart.
TRAIN_OPTIONS := --train-option hidden_users=resample
PPO_STEPS ?= 100000
IMITATION_OPTIONS := --imitate planner --imitate-episodes 300 --imitate-epochs 60
PPO_OPTIONS := --policy per_option --n-envs 8 --batch-size 256 --seed 1 $(IMITATION_OPTIONS)

.PHONY: run test test-browser test-slow test-neural test-learning test-rllib test-all lint bench bench-list docs-check clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip uninstall --quiet --yes openenv-core  # OpenEnv's old distribution of the `openenv` package
	$(PY) -m pip install --quiet -e ".[dev,agents,train,serve,neural,verifiers]"
	$(PY) -m hear_gym.speech.jit_warmup
	touch $(STAMP)

## Train a small PPO policy on the transcript features, then evaluate its checkpoint beside the
## baselines on the held-out test scenarios: paired CIs (every cell minus the PPO policy),
## Markdown tables, W&B (offline) curves and a PNG of the learning curve.
run: $(STAMP)
	$(VENV)/bin/hear-gym train ppo --out $(RUN_DIR)/ppo --access T --option feedback=prosody $(ENV_OPTIONS) $(TRAIN_OPTIONS) \
		$(PPO_OPTIONS) --steps $(PPO_STEPS) --eval-every 10000 --eval-split dev --keep-best --no-progress
	$(VENV)/bin/hear-gym eval --out $(RUN_DIR)/eval --split test --feedback prosody $(ENV_OPTIONS) \
		--cell ppo:$(RUN_DIR)/ppo/checkpoints/best@T --cell random@T --cell transcript_only@T \
		--cell ask_before_confirm@T --cell ask_until_disclosed@T --cell state_aware@T+S --cell planner@T --cell planner@T+S \
		--wandb-project hear-gym --markdown $(RUN_DIR)/tables.md
	$(PY) -m training.ppo.curve_plot $(RUN_DIR)/ppo --eval $(RUN_DIR)/eval --out $(RUN_DIR)/curve.png
	@echo "tables: $(RUN_DIR)/tables.md  curve: $(RUN_DIR)/curve.png  W&B (offline): $(RUN_DIR)/ppo/wandb $(RUN_DIR)/eval/wandb"

## The declared ruff config: lint and one formatting style (part of make test).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Test workers (pytest-xdist): one per CPU by default, each torch process on one intra-op thread
# (two workers with two threads each oversubscribe 2 cores). The slow tier stays in one process:
# its render and eval pools already use every core. The learning tier's tests each train on one
# thread, so its longest test runs beside the others.
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS)
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

## The default tier: every behaviour at smoke size.
test: lint
	$(ONE_THREAD) $(VENV)/bin/pytest $(XDIST)

## The episode viewer in a real headless browser: installs Debian's Chromium and its driver when
## missing (needs root; `make test` skips these tests without them), then runs the `browser` tests.
test-browser: $(STAMP)
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)
	$(ONE_THREAD) $(VENV)/bin/pytest -m browser tests/eval/test_viewer_browser.py

## The `slow` tier alone (full-size statistical bounds, second seeded runs); run it before changing
## an env's construction, its renderer or a shortcut bound (not in CI: it takes longer than CI's budget).
test-slow: $(STAMP)
	$(VENV)/bin/pytest -m "slow and not neural"

## The slow tier's bounds on the neural voice (`hear-gym[neural]`): over an hour on 2 cores, not in CI.
test-neural: $(STAMP)
	$(VENV)/bin/pytest -m neural

## The `learning` tier alone: each test fails if a trainer stops learning (CI runs it after `make test`).
test-learning: $(STAMP)
	$(ONE_THREAD) $(VENV)/bin/pytest -m learning $(XDIST) --dist loadfile

# RLlib's tests in a second venv: ray[rllib] pins gymnasium exactly (2.60: gymnasium==1.2.2), so
# the main venv keeps the newest gymnasium our range allows and this one the version RLlib pins.
RLLIB_VENV ?= .venv-rllib
RLLIB_STAMP := $(RLLIB_VENV)/.installed-rllib
RLLIB_TESTS := tests/training/test_rllib_ppo.py tests/eval/test_runner_backends.py

$(RLLIB_STAMP): pyproject.toml
	test -x $(RLLIB_VENV)/bin/python || python3 -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(RLLIB_VENV)/bin/python -m pip install --quiet -e ".[rllib,dev]"
	touch $(RLLIB_STAMP)

## The tests that need Ray RLlib (they skip in `make test`), in .venv-rllib; fails if RLlib does not import.
test-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python -c "import ray.rllib, gymnasium; print('ray', ray.__version__, 'gymnasium', gymnasium.__version__)"
	$(RLLIB_VENV)/bin/pytest $(RLLIB_TESTS) -m "" -p no:cacheprovider

## Every tier: the default one, the `slow` tier and the `learning` tier.
test-all: lint
	$(VENV)/bin/pytest -m ""

## README's Python examples run; every link, env id, `hear-gym` and `python -m benchmarks` line in
## the docs and benchmark pages is real; every study has its page and index line.
docs-check: $(STAMP)
	$(VENV)/bin/pytest tests/test_docs.py tests/benchmark_scripts/test_study_pages.py

## Every study under benchmarks/ (benchmarks/README.md), each in its own process with its default
## arguments; `make bench ONLY=onset` runs one area's, `ONLY="speed hear2act/baselines"` a choice.
## The whole set takes hours on 2 cores: each study's page gives its command and cost.
ONLY ?=
bench: $(STAMP)
	$(PY) -m benchmarks run $(ONLY)

## One line per study: area/name and the question its page answers.
bench-list: $(STAMP)
	$(PY) -m benchmarks list $(ONLY)

clean:
	rm -rf $(VENV) $(RLLIB_VENV) runs
