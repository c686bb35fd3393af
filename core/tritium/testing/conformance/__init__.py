"""The tritium language conformance suite: every feature of the Triton language, checked against numpy.

Run it against any installed backend::

    python -m pytest --pyargs tritium.testing.conformance --backend=NAME [-n 2]

Tests ask the backend's declared capabilities (``BackendSpec.capabilities``: "fp64", "fp8",
"float-atomics", "int64-atomics", "device-print", "device-assert"...) and skip what it does not
declare; they never look at its name.
"""
