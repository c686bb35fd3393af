# tritium developer commands (the same ones Triton's README names).
#   make dev-install   install core, every in-repo backend and plugin (editable) and the test tools
#   make test          run every test; GPU tests skip with a reason when no GPU is present
#   make test-nogpu    run the tests that need no GPU
PYTHON ?= python3
PIP := $(PYTHON) -m pip
PARTS := core $(patsubst %/pyproject.toml,%,$(wildcard backends/*/pyproject.toml) $(wildcard plugins/*/pyproject.toml))
PYTEST := $(PYTHON) -m pytest -q -n 2 --dist loadgroup

.PHONY: dev-install test test-nogpu test-ir test-conformance

dev-install:
	$(PIP) install --upgrade pip setuptools wheel
	$(PIP) install -r requirements-test.txt
	$(PIP) install $(foreach p,$(PARTS),-e ./$(p))

test:
	$(PYTEST) tests plugins

test-nogpu:
	$(PYTEST) -m "not gpu" tests plugins

test-ir:
	$(PYTEST) -m ir tests

test-conformance:
	$(PYTHON) -m pytest -q -n 2 --pyargs tritium.testing.conformance --backend=cpu
