# tritium developer commands (the same ones Triton's README names).
#   make dev-install   install core, every in-repo backend and plugin (editable) and the test tools
#   make test          run every test; GPU tests skip with a reason when no GPU is present; the CPU backend's
#                      tests again for each lower x86-64 level the host can execute (test-isa-lower)
#   make test-nogpu    run the tests that need no GPU
PYTHON ?= python3
# Where PYTHONDONTWRITEBYTECODE is set (it is on the development hosts), every process of a test run compiles
# tritium's modules from source and pytest rewrites every test module again: both xdist workers of each run, the
# processes many tests start, worker pools. Let the first one write the bytecode (__pycache__ is ignored by git):
# collecting tests/ and plugins/ then takes 10.2 CPU-s per worker instead of 13.4 (tests/NOTES-ci-time.md).
unexport PYTHONDONTWRITEBYTECODE
PIP := $(PYTHON) -m pip
PARTS := core $(patsubst %/pyproject.toml,%,$(wildcard backends/*/pyproject.toml) $(wildcard plugins/*/pyproject.toml))
PYTEST := $(PYTHON) -m pytest -q -n 2 --dist loadgroup --durations=15
CONFORMANCE := $(PYTHON) -m pytest -q -n 2 --pyargs tritium.testing.conformance
# backends whose device is present here (the CPU always; a GPU backend when its GPU is there)
ACTIVE_BACKENDS = $(shell $(PYTHON) -c "from tritium.backends import backends; \
	print(' '.join(n for n, b in backends().items() if b.driver.is_active()))" 2>/dev/null || echo cpu)

.PHONY: dev-install test test-isa-lower test-nogpu test-ir test-conformance

dev-install:
	$(PIP) install --upgrade pip setuptools wheel
	$(PIP) install -r requirements-test.txt
	# redis-server for tests/cpu/test_remote_cache.py (they skip with a reason without it); never fails the install
	-@command -v redis-server >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1 || \
	    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1; }; }; } || \
	  echo "note: no redis-server; the remote cache tests will skip"
	$(PIP) install $(foreach p,$(PARTS),-e ./$(p))
	$(PIP) install -e ./compat/triton  # opt-in "import triton" for development; never installed for users

# The CPU backend's ISA matrix (tritium_cpu/isa.py): the host's own level runs everything; each lower x86-64
# level it can execute (AVX2, SSE2 baseline) runs the CPU tests, the differential test and the conformance
# suite again, compiled for that level through TRITIUM_CPU_TARGET / TRITIUM_CPU_FEATURES: one pytest run per
# level (one start-up of the workers, no idle worker between the two parts). There the conformance tests run
# under tests/conftest.py's registry (core and the CPU backend; installed plugins not loaded) once a worker has
# run a test of tests/: the plugins only act at the level-independent tile-IR stage, which the native run
# covers with every installed plugin.
ISA := $(PYTHON) -m tritium_cpu.isa
ISA_TESTS := tests/cpu tests/interpreter/test_differential.py
# ISA-independent and slow (cache file safety): run at the native level only
ISA_SKIP := --ignore=tests/cpu/test_cache_safety.py
# files that compile for every level themselves (tritium_cpu.isa.levels_to_check): the native run already ran each
# of their tests at every lower level, with the same TRITIUM_CPU_TARGET/FEATURES values set as knobs
ISA_SKIP += $(foreach f,isa minmax_nan trig_full_range masked_reductions aot_shared_library dot_blocking \
	libdevice_accuracy_edges libdevice_accuracy_f64 libdevice_accuracy_range libdevice_accuracy_sweep \
	libdevice_accuracy_tails,--ignore=tests/cpu/test_$(f).py)
# the launcher, caches, autotuner, fork/thread safety and frontend errors: no code of theirs depends on the ISA level
ISA_SKIP += $(foreach f,remote_cache fork_safety autotune_parallel autotune aggregate_cache dispatch thread_safety \
	safe_grid safe_args lang_errors frontend_refusals,--ignore=tests/cpu/test_$(f).py)
# the same for the frontend (constexpr handling, naming, recursion, source and line keys, IR text), the launch path
# (arguments, DLPack, the native call, preload and specialization data), the stage pipeline and its MLIR knobs, and
# compile sharing and stored autotuning: each launches a small kernel only to see what the frontend, launcher or
# cache made of it, and nothing it checks depends on the level the kernel was compiled for (139 tests, ~11 CPU-s
# per lower level)
ISA_SKIP += $(foreach f,debug_knobs_mlir preload specialization_data compile_sharing compile_pipeline \
	compile_time_autotune compile_work jit_runtime native_launch numpy_scalars dlpack structured_args \
	constexpr_compare constexpr_function_key constexpr_global_mutation warmup_constexpr_dtype ttir_argument_names \
	function_argument_source callee_names cache_key_lines builtin_error_frames kernel_repr_name autotune_stored \
	specialized_recursion,--ignore=tests/cpu/test_$(f).py)
# a compile-time hang guard (a 3000-statement kernel, ~15 s at each level); the native run keeps it, and the
# ops of its kernel are covered at every level by the rest of tests/cpu
ISA_SKIP += --deselect tests/cpu/test_safety.py::test_3000_statement_kernel_compiles_without_hanging

test:
	@echo "== cpu ISA level $$($(ISA) --native) (native: the host's CPU and all its features) =="
	$(PYTEST) tests plugins
	for b in $(ACTIVE_BACKENDS); do $(CONFORMANCE) --backend=$$b || exit 1; done
	@$(MAKE) --no-print-directory test-isa-lower

test-isa-lower:
	@levels="$$($(ISA) --lower)" || exit 1; \
	if [ -z "$$levels" ]; then echo "== cpu ISA: no lower level to run on this host =="; exit 0; fi; \
	echo "$$levels" | while read -r name settings; do \
		echo "== cpu ISA level $$name ($$settings) =="; \
		env $$settings $(PYTEST) $(ISA_SKIP) $(ISA_TESTS) --pyargs tritium.testing.conformance --backend=cpu || exit 1; \
	done

test-nogpu:
	$(PYTEST) -m "not gpu" tests plugins
	$(CONFORMANCE) --backend=cpu

test-ir:
	$(PYTEST) -m ir tests

test-conformance:
	for b in $(ACTIVE_BACKENDS); do $(CONFORMANCE) --backend=$$b || exit 1; done
