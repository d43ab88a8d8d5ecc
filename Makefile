# `make test` and `make run` set everything up themselves (a .venv in the checkout).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test run venv lint bench clean

venv: $(STAMP)

# Reinstall only when the project metadata or the pins change. pip is quiet: each step says what
# it does first (the install takes minutes the first time).
$(STAMP): pyproject.toml constraints.txt
	@echo "make: setting up $(VENV), the environment fpinspect runs in (the first time takes a few minutes)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "make: updating pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "make: installing fpinspect with numpy, numba, textual, torch, matplotlib, dask, transformers (model configs only), Google's Model Explorer and the test tools (pinned in constraints.txt)"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,experiments,cluster,zoo,explorer]'
	@echo "make: compiling the statistics kernels once (fpinspect warm)"
	$(BIN)/fpinspect warm
	touch $(STAMP)

# The tests that fork compare's workers need a process no other test has left threads in: they run
# first, on their own; the rest on two worker processes, each test file whole on one of them. At the
# end, how many tests of both runs skipped and why (a skip hides a check).
REPORTS := build/test-reports
test: $(STAMP)
	@mkdir -p $(REPORTS)
	$(BIN)/python -m pytest -q -m sole_thread --junitxml=$(REPORTS)/sole_thread.xml
	$(BIN)/python -m pytest -q -m 'not sole_thread' -n 2 --dist loadfile --junitxml=$(REPORTS)/rest.xml
	@$(BIN)/python .ci/skipped.py $(REPORTS)/sole_thread.xml $(REPORTS)/rest.xml

run: $(STAMP)
	@echo "make: opening the inspector on the bundled sample dumps"
	$(BIN)/fpinspect open

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_numerics.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

# The bundled fpinspect/sample_dumps/ (package data; sample_dumps/ links to it; see its README.md): a Transformer block with
# a SIMULATED bf16 regression in region 2, a clean conv block, and a cancellation chain where
# the fused kernel is the more accurate side. Fixed seeds.
.PHONY: sample-dumps
sample-dumps: $(STAMP)
	$(BIN)/fpinspect capture transformer --out fpinspect/sample_dumps/regression --dtype float16 --seed 0 --inject 2=bf16
	$(BIN)/fpinspect capture conv --out fpinspect/sample_dumps/clean --dtype float16 --seed 0
	$(BIN)/fpinspect capture cancellation --out fpinspect/sample_dumps/more_accurate --dtype float16 --seed 0
	$(BIN)/fpinspect capture conv --out fpinspect/sample_dumps/device --dtype float16 --seed 0 --storage-layouts ascend --raw
