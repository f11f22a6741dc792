# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo lint test test-boundscheck test-min fuzz bench docs clean-cache clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/multigrove demo

# pyflakes, pycodestyle, import order and bugbear over the code, tests, benchmarks and docs (pyproject's [tool.ruff])
lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks docs

# the lint; the kernels compiled into Numba's cache as a user's CI step would (`multigrove compile`, processes
# side by side); the suite; the kernel tests again interpreted (NUMBA_DISABLE_JIT: Python's integer and
# float rules and IndexError on every out-of-range access); then the documentation, whose examples run.
# The suite's two workers share two cores, each with up to two threads: OMP_WAIT_POLICY=passive puts an idle
# OpenMP thread (Numba's and the peers') to sleep rather than spin on the core the other worker needs (the suite
# took 324 s against 403 s spinning, warm caches, this 2-core host); the interpreted leg in two workers too (33 s
# against 55 s in one).  About 13 to 15 minutes from a fresh clone on a 2-core machine, install included (CI's
# limit is 20)
test: lint
	$(VENV)/bin/multigrove compile
	OMP_WAIT_POLICY=passive NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q -p no:cacheprovider -n 2
	OMP_WAIT_POLICY=passive NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -p no:cacheprovider -n 2 tests/kernels
	$(MAKE) docs

# the kernel tests compiled with Numba's bounds checks, in a cache of their own so that the checked code never
# mixes with the fast one (5 minutes of compilation: outside `make test`, whose interpreted leg raises on the
# same out-of-range accesses, prange bodies included, as prange runs as range there)
test-boundscheck: $(STAMP)
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(CURDIR)/.numba-boundscheck $(PY) -m pytest -q -p no:cacheprovider tests/kernels

# the declared floors of the dependencies (ci/min-constraints.txt) in a virtual environment of their own
test-min:
	$(PYTHON) -m venv .venv-min
	.venv-min/bin/python -m pip install --quiet --upgrade pip
	.venv-min/bin/python -m pip install --quiet -c ci/min-constraints.txt -e ".[test]"
	NUMBA_CACHE_DIR=$(CURDIR)/.numba-min .venv-min/bin/python -m pytest -q -p no:cacheprovider

# the nightly-size fuzzing budget (CI runs 20 examples per fuzz test)
fuzz: $(STAMP)
	MULTIGROVE_FUZZ_EXAMPLES=2000 $(PY) -m pytest -q -p no:cacheprovider tests/api/test_fuzz.py

# the documentation (Sphinx; warnings are errors): the user guide, the API reference from the docstrings, and
# the gallery, whose examples run as the pages are built
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	bash benchmarks/run_all.sh

# Numba's on-disk cache is checked against a kernel's own file only: after editing a kernel that others in
# other files call, `make clean-cache` (or their cached code keeps the old callee)
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete
	rm -rf .numba-boundscheck .numba-min

clean: clean-cache
	rm -rf $(VENV) .venv-min build *.egg-info src/*.egg-info docs/_build docs/generated docs/auto_examples
