import pytest

# The test files that run torch inductor. Each process that runs one pays inductor's warm-up once: its imports,
# the first compile's setup and, for the default C++ backend, its probe of the host's vector ISAs (about ten g++
# builds, ~9 s). With `--dist loadgroup` they share one xdist worker, so the warm-up is paid once, not once per
# worker (tests/compat with -n 2: 102 -> 89 CPU seconds).
INDUCTOR_FILES = frozenset({"test_torch_compile.py", "test_inductor_mutation.py", "test_inductor_bundler.py"})


def pytest_configure(config):
    # xdist declares the marker; without xdist (-p no:xdist) --strict-markers would refuse it
    config.addinivalue_line("markers", "xdist_group(name): run the marked tests on one xdist worker")


@pytest.hookimpl(tryfirst=True)   # before xdist's own hook reads the marker into the node id
def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in INDUCTOR_FILES and item.path.parent.name == "compat":
            item.add_marker(pytest.mark.xdist_group("inductor"))


@pytest.fixture(autouse=True)
def private_triton_cache_dir(tmp_path, monkeypatch):
    """torch inductor sets ``os.environ["TRITON_CACHE_DIR"]`` itself when it is unset, and never removes it: set it
    here so that it is undone after the test and no later test inherits inductor's directory."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
