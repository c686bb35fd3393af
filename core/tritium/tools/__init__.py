"""Command-line tools: ``tritium`` (:mod:`tritium.tools.cli`) and ``tritium-opt`` (:mod:`tritium.tools.opt`).

Both are also callable in process (``main(argv)`` returns the exit status), which is how the tests run
them against an explicit plugin registry."""
import importlib


def __getattr__(name: str) -> object:
    # ``triton.tools.tensor_descriptor`` without importing it first, as user code written for Triton does
    if name == "tensor_descriptor":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
