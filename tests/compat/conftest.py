import pytest


@pytest.fixture(autouse=True)
def private_triton_cache_dir(tmp_path, monkeypatch):
    """torch inductor sets ``os.environ["TRITON_CACHE_DIR"]`` itself when it is unset, and never removes it: set it
    here so that it is undone after the test and no later test inherits inductor's directory."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))
