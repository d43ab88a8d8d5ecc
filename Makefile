# `make test` and `make run` set everything up themselves (a .venv in the checkout).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test run venv lint bench clean

venv: $(STAMP)

# Reinstall only when the project metadata or the pins change.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,experiments,cluster,explorer]'
	$(BIN)/fpinspect warm
	touch $(STAMP)

# The tests that fork compare's workers need a process no other test has left threads in: they run
# first, on their own; the rest on two worker processes, each test file whole on one of them.
test: $(STAMP)
	$(BIN)/python -m pytest -q -m sole_thread
	$(BIN)/python -m pytest -q -m 'not sole_thread' -n 2 --dist loadfile

run: $(STAMP)
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
