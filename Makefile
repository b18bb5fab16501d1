# ctxlab: GNU make entry points. `make help` lists the targets.
#
#   make lab     install the lab extra into .venv and start JupyterLab on notebooks/
#   make test    lint + format check + mypy --strict + pytest (tests/, nbval on the instructor
#                editions, every student edition executed by tests/test_student_run.py)
#
# Everything is installed into $(VENV) from pyproject.toml, pinned by
# constraints.txt. An install is recorded by a stamp file inside $(VENV) whose
# name carries a hash of pyproject.toml + constraints.txt and the extras, so a
# second run installs nothing until one of those two files changes.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

# ---------------------------------------------------------------- knobs
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CONSTRAINTS := constraints.txt
NOTEBOOK_DIR ?= notebooks
# Every edition: notebooks/<language>/<student|instructor>/<lab>.ipynb, all built from one
# source per lab (notebooks/_src/*.md) by notebooks/_build/nbsource.py.
NOTEBOOKS = $(sort $(wildcard $(NOTEBOOK_DIR)/*/*/*.ipynb))
# The language of the edition `make lab`, `make lecture` and `make slides` open: zh when
# LANG says Chinese (LANG=zh_CN.UTF-8, or `make lab LANG=zh`), otherwise en.
LAB_LANG ?= $(if $(filter zh%,$(LANG)),zh,en)
STUDENT_DIR = $(NOTEBOOK_DIR)/$(LAB_LANG)/student
INSTRUCTOR_DIR = $(NOTEBOOK_DIR)/$(LAB_LANG)/instructor
NBSOURCE = $(BIN)/python notebooks/_build/nbsource.py
# The Chinese edition also gets JupyterLab's interface in Chinese (the zh_CN language pack
# of the lab extra), as a default a student's own Language setting still overrides: the
# overrides.json in notebooks/_settings/zh sets the translation plugin's locale to zh_CN.
LAB_LOCALE_ARGS = $(if $(filter zh,$(LAB_LANG)),--LabApp.app_settings_dir=$(CURDIR)/notebooks/_settings/zh)
# Stop early, naming the fix, when an edition's folder has no notebooks yet.
need_notebooks = @if [ -z "$$(ls $(1)/*.ipynb 2>/dev/null)" ]; then \
	  echo "error: no notebooks in $(1)/: build them with \`make notebooks\`" >&2; exit 1; fi
# Kernel spec the notebooks declare; inside $(VENV) ipykernel provides it
# ($(VENV)/share/jupyter/kernels/python3), so it runs $(BIN)/python.
KERNEL ?= python3
NOTEBOOK_TIMEOUT ?= 600
LINT_PATHS ?= ctxlab tests $(wildcard benchmarks) notebooks/_build
TYPECHECK_PACKAGE ?= ctxlab
PYTEST_ARGS ?=
JUPYTER_ARGS ?=

# Jupyter looks up kernels (the python3 spec) in $(VENV) before ~/.local/share/jupyter.
export JUPYTER_PREFER_ENV_PATH := 1
# MPLBACKEND is deliberately NOT exported: nbval's kernels inherit pytest's
# environment, and ipykernel picks the inline backend only when MPLBACKEND is
# unset. With MPLBACKEND=Agg every plt.show() in a notebook prints nothing, so
# the stored figure outputs written by `make notebooks` (or by a student in
# JupyterLab) would no longer match under nbval. Headless Linux falls back to
# Agg by itself; a test that plots in-process can call matplotlib.use("Agg").
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# The seed of the lab checks' random rows (spec §10): fixed for nbval, CI, `make mutants`
# and the instructor editions' stored outputs (`CTXLAB_SEED= make ...` draws a fresh one).
export CTXLAB_SEED ?= 2026

# ---------------------------------------------------------------- install stamps
# $(call stamp,EXTRAS) is the stamp file for `pip install -e ".[EXTRAS]"`, with
# the extras joined by '-' (e.g. lab-test-dev). Depend on it to get that install.
# Hook points for later targets (test-browser, lecture, slides, fuzz, bench):
# define e.g. BROWSER_STAMP := $(call stamp,lab-test-dev-browser) and make the
# target depend on it; the pattern rule below does the rest.
comma := ,
DEPS_HASH := $(shell cat pyproject.toml $(CONSTRAINTS) 2>/dev/null | $(PYTHON) -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])' 2>/dev/null || echo nohash)
stamp = $(VENV)/.ctxlab-install-$(1)-$(DEPS_HASH)
LAB_STAMP := $(call stamp,lab)
TEST_STAMP := $(call stamp,lab-test-dev)

# When PYTHON is given explicitly, refuse to reuse a venv made by another Python.
ifneq ($(filter command line environment,$(origin PYTHON)),)
ifneq ($(filter-out help clean distclean,$(MAKECMDGOALS)),)
ifneq ($(wildcard $(BIN)/python),)
pyver = $(shell $(1) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
WANT_PY := $(call pyver,$(PYTHON))
HAVE_PY := $(call pyver,$(BIN)/python)
ifneq ($(WANT_PY),$(HAVE_PY))
$(error $(VENV) runs Python $(HAVE_PY) but PYTHON=$(PYTHON) is Python $(WANT_PY): remove it with `make distclean` or use another one, e.g. VENV=.venv-$(WANT_PY))
endif
endif
endif
endif

$(BIN)/python:
	@echo ">> creating $(VENV) with $$($(PYTHON) --version) ($(PYTHON))"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.ctxlab-install-%-$(DEPS_HASH): | $(BIN)/python
	@echo ">> installing ctxlab[$(subst -,$(comma),$*)] into $(VENV) (pins: $(CONSTRAINTS))"
	rm -f $(VENV)/.ctxlab-install-$*-*
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e ".[$(subst -,$(comma),$*)]"
	echo "$(DEPS_HASH) ctxlab[$(subst -,$(comma),$*)]" > $@

# ---------------------------------------------------------------- targets
.PHONY: help install lab test lint format typecheck pytest notebooks clean distclean

help: ## show this help
	@echo "ctxlab: make targets (PYTHON=$(PYTHON), VENV=$(VENV))"
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

install: $(TEST_STAMP) ## install ctxlab[lab,test,dev] into the venv (skipped when up to date)

lab: $(LAB_STAMP) ## JupyterLab on the student edition (LANG=zh: Chinese); no browser without a display
	$(call need_notebooks,$(STUDENT_DIR))
	@echo ">> student edition: $(STUDENT_DIR)/ (answers: $(INSTRUCTOR_DIR)/)"
	@args="$(JUPYTER_ARGS)"; \
	if [ "$$(id -u)" = 0 ]; then args="$$args --allow-root"; fi; \
	if [ "$$(uname -s)" = Linux ] && [ -z "$${DISPLAY:-}" ] && [ -z "$${WAYLAND_DISPLAY:-}" ]; then \
	  echo ">> no display: starting JupyterLab without a browser; open the http://localhost URL it prints below."; \
	  args="$$args --no-browser"; \
	fi; \
	exec $(BIN)/jupyter lab $(LAB_LOCALE_ARGS) $$args $(STUDENT_DIR)/

test: lint typecheck pytest ## ruff check + ruff format --check + mypy --strict + pytest (tests and notebooks)

lint: $(TEST_STAMP) ## ruff check and ruff format --check
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

format: $(TEST_STAMP) ## apply ruff's fixes and formatting
	$(BIN)/ruff check --fix $(LINT_PATHS)
	$(BIN)/ruff format $(LINT_PATHS)

typecheck: $(TEST_STAMP) ## mypy --strict on the ctxlab package
	$(BIN)/mypy --strict $(TYPECHECK_PACKAGE)

pytest: $(TEST_STAMP) ## pytest only: tests/, the instructor editions' stored outputs (nbval), each student edition run top to bottom
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The student editions are committed as `nbsource.py build` writes them: no outputs, no
# execution counts (issue 27: no answer stands on the page before the student runs the cell,
# as nbgrader's release and otter's assign ship them). Only the instructor editions are
# executed; each is then settled (notebooks/_build/settle.py): consecutive stream outputs
# joined, widget model ids renamed from a fixed walk, so the stored bytes do not depend on
# timing or on ipywidgets' random ids.
notebooks: $(TEST_STAMP) ## build every edition from notebooks/_src (students': no outputs), then execute the instructor editions in place
	$(NBSOURCE) build
	@for nb in $$(ls $(NOTEBOOK_DIR)/*/instructor/*.ipynb | sort); do \
	  echo ">> executing $$nb (kernel $(KERNEL))"; \
	  $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.kernel_name=$(KERNEL) \
	    --ExecutePreprocessor.record_timing=False \
	    --ExecutePreprocessor.timeout=$(NOTEBOOK_TIMEOUT) "$$nb"; \
	  $(BIN)/python notebooks/_build/settle.py "$$nb"; \
	done

clean: ## remove caches and build output (keeps the venv)
	rm -rf build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis artifacts $(SLIDES_DIR) $(HANDOUTS_DIR) lite/_build lite/_output
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -print0 | xargs -0 rm -rf

distclean: clean ## clean, and remove the venv too
	rm -rf $(VENV) $(LITE_VENV) lite/node_modules

# ---------------------------------------------------------------- benchmarks (issue 7)
# Not tests: build_context vs LangChain's trim_messages, ContextWindow per new turn, the
# JSONL store's read and append, and `import ctxlab`. Installs ctxlab[lab,bench] (bench:
# langchain-core; lab: matplotlib for the plot) pinned by $(CONSTRAINTS), then writes
# benchmarks/RESULTS.md and benchmarks/time_vs_history.png. BENCH_ARGS=--quick: no 100k.
BENCH_STAMP := $(call stamp,lab-bench)
BENCH_ARGS ?=

.PHONY: bench
bench: $(BENCH_STAMP) ## benchmarks, not tests (a few minutes): writes benchmarks/RESULTS.md + plot
	$(BIN)/python -m benchmarks.run $(BENCH_ARGS)
	$(BIN)/python -m benchmarks.grade_class

# `ctxlab grade` on a generated class of CTXLAB_BENCH_STUDENTS (default 200) × 5 labs, at
# --jobs 1 and --jobs <cores> (issue 26): its section of benchmarks/RESULTS.md only.
.PHONY: bench-grade
bench-grade: $(BENCH_STAMP) ## ctxlab grade on a generated class (CTXLAB_BENCH_STUDENTS=200)
	$(BIN)/python -m benchmarks.grade_class

# ---------------------------------------------------------------- fuzzing (issue 6)
# `make test` runs about 5,000 fuzz examples and 50 SIGKILL trials; this runs far more.
FUZZ_EXAMPLES ?= 100000
KILL_TRIALS ?= 500

.PHONY: fuzz
fuzz: $(TEST_STAMP) ## long fuzz run: FUZZ_EXAMPLES (100000) parser/reader examples (and 1/17 as many hand-built entries), KILL_TRIALS (500) SIGKILLs
	CTXLAB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) CTXLAB_KILL_TRIALS=$(KILL_TRIALS) \
	  $(BIN)/python -m pytest -s -q tests/test_fuzz.py tests/test_hand_built.py \
	  tests/test_store_crash.py $(PYTEST_ARGS)

# ---------------------------------------------------------------- mutation audit (issue 17)
# Mutates each lab's instructor solution (the build-it cell of notebooks/_src/11.N-*.md) and
# judges every mutant with check_implementation, each in its own process (tests/mutation_audit.py).
# Prints mutants/killed/equivalent/survived/score per lab, writes artifacts/mutants/survivors.md,
# fails on a survivor or a stale tests/mutants_equivalent.json. The whole run takes ~20 s on
# 2 cores. MUTANTS_ARGS: --lab 11.3, --sample N --seed S, --workers N, --list.
MUTANTS_ARGS ?=

.PHONY: mutants
mutants: $(TEST_STAMP) ## mutation audit of the lab checks (~20 s): per lab mutants, killed, equivalent, survived, score
	$(BIN)/python tests/mutation_audit.py $(MUTANTS_ARGS)

# ---------------------------------------------------------------- browser tests and lecture mode (issue 5)
# `make test` skips tests/browser (they are marked `browser`; see tests/browser/conftest.py).
# `make test-browser` runs them: JupyterLab in headless Chromium via playwright, using an
# installed Chromium (Debian: apt-get install chromium; elsewhere CTXLAB_CHROMIUM=/path).
# Nothing downloads a browser. CTXLAB_REQUIRE_BROWSER=1 turns "no Chromium" into a failure.
# Screenshots land in artifacts/browser/.
BROWSER_STAMP := $(call stamp,lab-test-browser)
BROWSER_PYTEST_ARGS ?=
LECTURE_SETTINGS := lecture/settings
# custom.css of lecture mode (a wider prompt column for the 22px code font); the browser
# test's lecture server passes the same two options (tests/browser/browser_support.py).
LECTURE_CSS := lecture/custom
SLIDES_DIR ?= slides
# A slide too tall to be legible at 1280×720 is split into sub-slides by the template's
# preprocessor slides_split.SplitLongSlides (notebooks/_build/slides_split.py; the template's
# conf.json names it, and the recipe below puts its folder on PYTHONPATH).
SLIDES_ASSETS := $(SLIDES_DIR)/_assets
# Each language's decks in their own folder, so that the two never overwrite each other:
# slides/ (en) and slides/zh/ (zh). Both use the one copy of the assets in slides/_assets
# (ASSETS_URL is that folder relative to the decks).
SLIDES_OUT = $(SLIDES_DIR)$(if $(filter en,$(LAB_LANG)),,/$(LAB_LANG))
ASSETS_URL = $(if $(filter en,$(LAB_LANG)),,../)_assets
# Offline slides: these npm packages (exact versions) are unpacked into $(SLIDES_ASSETS).
SLIDES_NPM := reveal.js@4.6.1 requirejs@2.3.7 jquery@3.7.1 mathjax@2.7.9 @jupyter-widgets/html-manager@1.0.14
SLIDES_ASSETS_STAMP := $(SLIDES_ASSETS)/.installed-$(shell echo '$(SLIDES_NPM)' | $(PYTHON) -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:12])' 2>/dev/null || echo nohash)

.PHONY: test-browser lecture slides

test-browser: $(BROWSER_STAMP) ## JupyterLab in headless Chromium: every notebook, widgets, lecture mode, slides (en and zh)
	$(MAKE) slides LAB_LANG=en
	$(MAKE) slides LAB_LANG=zh
	CTXLAB_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -m browser tests/browser $(BROWSER_PYTEST_ARGS)

lecture: $(LAB_STAMP) ## JupyterLab for the projector on the instructor edition (LANG=zh: Chinese), RISE slides
	$(call need_notebooks,$(INSTRUCTOR_DIR))
	@echo ">> instructor edition: $(INSTRUCTOR_DIR)/"
	@args="$(JUPYTER_ARGS)"; \
	if [ "$$(id -u)" = 0 ]; then args="$$args --allow-root"; fi; \
	if [ "$$(uname -s)" = Linux ] && [ -z "$${DISPLAY:-}" ] && [ -z "$${WAYLAND_DISPLAY:-}" ]; then \
	  echo ">> no display: starting JupyterLab without a browser; open the http://localhost URL it prints below."; \
	  args="$$args --no-browser"; \
	fi; \
	echo ">> lecture mode: JUPYTERLAB_SETTINGS_DIR=$(CURDIR)/$(LECTURE_SETTINGS) (settings changed in JupyterLab are saved there)"; \
	JUPYTERLAB_SETTINGS_DIR="$(CURDIR)/$(LECTURE_SETTINGS)" \
	  exec $(BIN)/jupyter lab --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	    --LabApp.custom_css=True "--ServerApp.tornado_settings=static_custom_path=$(CURDIR)/$(LECTURE_CSS)" \
	    $(LAB_LOCALE_ARGS) $$args $(INSTRUCTOR_DIR)/

$(SLIDES_ASSETS_STAMP):
	@command -v npm >/dev/null || { echo "error: make slides needs npm (Node.js) to fetch reveal.js once" >&2; exit 1; }
	rm -rf $(SLIDES_ASSETS) && mkdir -p $(SLIDES_ASSETS)/.tgz
	cd $(SLIDES_ASSETS)/.tgz && npm pack --silent $(SLIDES_NPM) >/dev/null
	@for tgz in $(SLIDES_ASSETS)/.tgz/*.tgz; do \
	  name=$$(basename "$$tgz" .tgz | sed -E 's/-[0-9]+\.[0-9]+\.[0-9]+$$//; s/^jupyter-widgets-//'); \
	  mkdir -p "$(SLIDES_ASSETS)/$$name"; \
	  tar -xzf "$$tgz" -C "$(SLIDES_ASSETS)/$$name" --strip-components=1; \
	  echo ">> $(SLIDES_ASSETS)/$$name"; \
	done
	rm -rf $(SLIDES_ASSETS)/.tgz
	touch $@

slides: $(LAB_STAMP) $(SLIDES_ASSETS_STAMP) ## offline reveal.js slides of the instructor edition: slides/ (en), slides/zh/ (LANG=zh)
	$(call need_notebooks,$(INSTRUCTOR_DIR))
	@for nb in $(wildcard $(INSTRUCTOR_DIR)/*.ipynb); do \
	  PYTHONPATH="$(CURDIR)/notebooks/_build$${PYTHONPATH:+:$$PYTHONPATH}" \
	  $(BIN)/jupyter nbconvert --to slides "$$nb" --output-dir $(SLIDES_OUT) \
	    --TemplateExporter.extra_template_basedirs=lecture/nbconvert --template ctxlab-reveal \
	    --SlidesExporter.reveal_url_prefix=$(ASSETS_URL)/reveal.js --SlidesExporter.reveal_theme=white \
	    --SlidesExporter.require_js_url=$(ASSETS_URL)/requirejs/require.js \
	    --SlidesExporter.jquery_url=$(ASSETS_URL)/jquery/dist/jquery.min.js \
	    --SlidesExporter.mathjax_url='$(ASSETS_URL)/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe' \
	    --SlidesExporter.widget_renderer_url=$(ASSETS_URL)/html-manager/dist/embed-amd.js; \
	done
	@if grep -lE '<(script|link)[^>]+(src|href)="(https?:)?//' $(SLIDES_OUT)/*.slides.html; then \
	  echo "error: the slides above still load something from the network" >&2; exit 1; \
	fi
	@echo ">> slides in $(SLIDES_OUT)/ (open $(SLIDES_OUT)/<notebook>.slides.html; no network needed)"

# ---------------------------------------------------------------- handouts (issue 27)
# One-page summary sheet per lab (11.1-11.5), zh and en: the chapter's rules quoted verbatim,
# the worked example's numbers computed with ctxlab, the lab's figure. Printable HTML in
# $(HANDOUTS_DIR)/<zh|en>/11.N.html, and PDF beside each where Chromium is installed (headless
# `chromium --print-to-pdf`; Debian: apt-get install chromium fonts-noto-cjk). The browser test
# tests/browser/test_browser_handouts.py checks that each prints on one A4 page.
HANDOUTS_DIR ?= handouts
HANDOUTS_ARGS ?=

.PHONY: handouts
handouts: $(LAB_STAMP) ## one-page summary sheet per lab, zh and en: printable HTML in handouts/ (+ PDF with Chromium)
	$(BIN)/python -m ctxlab.lab.handouts --out $(HANDOUTS_DIR) $(HANDOUTS_ARGS)

# ---------------------------------------------------------------- current releases (issue 19)
# pandas 3.0.x, the newest numpy and matplotlib 3.10.x (what Pyodide 314 ships), and the
# newest of everything else, pinned by constraints-current.txt in its own venv (.venv-current;
# python3.13 when it runs, else python3; PYTHON=... picks another: 3.12 or 3.13, see the note).
# Runs pytest on tests/ (no nbval: stored outputs are made with constraints.txt) and then
# executes every notebook edition, failing on an error or anything printed to stderr (a
# warning). How the outputs differ from the pinned set's: notebooks/CURRENT_RELEASES.md.
CURRENT_VENV ?= .venv-current
CURRENT_CONSTRAINTS ?= constraints-current.txt
CURRENT_PYTHON := $(if $(filter command line environment,$(origin PYTHON)),$(PYTHON),$(shell python3.13 -c pass >/dev/null 2>&1 && echo python3.13 || echo python3))
EXECUTE_ARGS ?=

.PHONY: test-current current-run
test-current: ## tests + every notebook executed with pandas 3 and current numpy/matplotlib (constraints-current.txt, .venv-current)
	$(MAKE) current-run VENV=$(CURRENT_VENV) CONSTRAINTS=$(CURRENT_CONSTRAINTS) PYTHON=$(CURRENT_PYTHON)

current-run: $(TEST_STAMP)
	@echo ">> $$($(BIN)/python --version), $$($(BIN)/python -c 'import pandas, numpy, matplotlib; print("pandas", pandas.__version__, "numpy", numpy.__version__, "matplotlib", matplotlib.__version__)')"
	CTXLAB_CONSTRAINTS=$(CONSTRAINTS) $(BIN)/python -m pytest -p no:nbval \
	  -o addopts="-ra --strict-markers --strict-config -p no:cacheprovider" tests $(PYTEST_ARGS)
	$(BIN)/python tests/execute_notebooks.py --timeout $(NOTEBOOK_TIMEOUT) $(EXECUTE_ARGS)

# ---------------------------------------------------------------- JupyterLite (issue 19)
# `make lite` builds a static site of the labs under $(LITE_OUTPUT): JupyterLab and a Python
# kernel (Pyodide, Python 3.14 in WebAssembly) that run in the student's browser; put the
# folder on any static web host. ctxlab is served as a wheel built from this checkout (a
# checkout with uncommitted changes to ctxlab/, notebooks/ or pyproject.toml is refused:
# LITE_ALLOW_DIRTY=1 to try a change locally), with the pinned wheels of
# lite/kernel-wheels.txt; the kernel never falls back to the package index.
#   PYODIDE=cdn   (default) the kernel loads Pyodide from its CDN (the students need internet)
#   PYODIDE=PATH  a full Pyodide 314.0.6 distribution, its release archive (.tar.bz2) or the
#                 unpacked folder, is copied into the site: nothing from the internet at all
#   PYODIDE=core  the npm `pyodide` core package + the kernel's own pure-Python packages:
#                 the build-it cells and their checks work, pandas/matplotlib do not (tests)
#   LITE_INSTRUCTOR=1  also the instructor editions, under files/instructor/
# The build tools live in their own venv, $(LITE_VENV) (pinned by lite/constraints.txt).
LITE_VENV ?= lite/.venv
LITE_OUTPUT ?= lite/_output
PYODIDE ?= cdn
LITE_INSTRUCTOR ?=
LITE_ALLOW_DIRTY ?=
LITE_HASH := $(shell cat lite/requirements.txt lite/constraints.txt 2>/dev/null | $(PYTHON) -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])' 2>/dev/null || echo nohash)
LITE_STAMP := $(LITE_VENV)/.ctxlab-lite-$(LITE_HASH)
LITE_NPM_STAMP := lite/node_modules/.ctxlab-npm-$(shell cat lite/package-lock.json 2>/dev/null | $(PYTHON) -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:12])' 2>/dev/null || echo nohash)

$(LITE_STAMP):
	@echo ">> installing the JupyterLite build tools into $(LITE_VENV) (pins: lite/constraints.txt)"
	rm -rf $(LITE_VENV)
	$(PYTHON) -m venv $(LITE_VENV)
	$(LITE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LITE_VENV)/bin/python -m pip install --quiet -r lite/requirements.txt -c lite/constraints.txt
	touch $@

$(LITE_NPM_STAMP):
	@command -v npm >/dev/null || { echo "error: the npm pyodide package needs npm (Node.js)" >&2; exit 1; }
	rm -rf lite/node_modules
	cd lite && npm ci --no-audit --no-fund --silent
	touch $@

.PHONY: lite test-lite
lite: $(LITE_STAMP) $(if $(filter core,$(PYODIDE)),$(LITE_NPM_STAMP)) ## JupyterLite site in lite/_output (PYODIDE=cdn|core|PATH, LITE_INSTRUCTOR=1)
	$(LITE_VENV)/bin/python lite/build.py --output $(LITE_OUTPUT) --pyodide $(PYODIDE) \
	  $(if $(LITE_INSTRUCTOR),--instructor) $(if $(LITE_ALLOW_DIRTY),--allow-dirty)

# ctxlab under Pyodide in Node (tests/test_pyodide.py) and the site in headless Chromium
# (tests/test_lite_browser.py, with the local Pyodide core; artifacts/lite/). Builds the site
# first (`make lite`), so it needs a clean checkout too (LITE_ALLOW_DIRTY=1 otherwise).
test-lite: $(BROWSER_STAMP) $(LITE_NPM_STAMP) lite ## ctxlab under Pyodide (Node) + the JupyterLite site in headless Chromium
	CTXLAB_LITE_TESTS=1 $(BIN)/python -m pytest -m lite tests/test_pyodide.py tests/test_lite_browser.py $(PYTEST_ARGS)
