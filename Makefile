# tritium developer commands (the same ones Triton's README names).
#   make dev-install   install core, every in-repo backend and plugin (editable) and the test tools
#   make test          run every test; GPU tests skip with a reason when no GPU is present
#   make test-nogpu    run the tests that need no GPU
PYTHON ?= python3
PIP := $(PYTHON) -m pip
PARTS := core $(patsubst %/pyproject.toml,%,$(wildcard backends/*/pyproject.toml) $(wildcard plugins/*/pyproject.toml))
PYTEST := $(PYTHON) -m pytest -q -n 2 --dist loadgroup
CONFORMANCE := $(PYTHON) -m pytest -q -n 2 --pyargs tritium.testing.conformance
# backends whose device is present here (the CPU always; a GPU backend when its GPU is there)
ACTIVE_BACKENDS = $(shell $(PYTHON) -c "from tritium.backends import backends; \
	print(' '.join(n for n, b in backends().items() if b.driver.is_active()))" 2>/dev/null || echo cpu)

.PHONY: dev-install test test-nogpu test-ir test-conformance

dev-install:
	$(PIP) install --upgrade pip setuptools wheel
	$(PIP) install -r requirements-test.txt
	$(PIP) install $(foreach p,$(PARTS),-e ./$(p))

test:
	$(PYTEST) tests plugins
	for b in $(ACTIVE_BACKENDS); do $(CONFORMANCE) --backend=$$b || exit 1; done

test-nogpu:
	$(PYTEST) -m "not gpu" tests plugins
	$(CONFORMANCE) --backend=cpu

test-ir:
	$(PYTEST) -m ir tests

test-conformance:
	for b in $(ACTIVE_BACKENDS); do $(CONFORMANCE) --backend=$$b || exit 1; done
