"""A differential kernel fuzzer: random, well-formed Triton-language kernels run on the interpreter (the oracle)
and on every active backend and its variants, compared under the tolerances of :mod:`.tolerance`; a mismatch
is shrunk to a small kernel and written as a standalone reproducer.

    python -m tritium.testing.fuzz --seed 1 --budget 600 --out fuzz-out [--backend cpu] [--jobs 2]

Modules: ``types`` (element types, promotion), ``program`` (a kernel as data, rendered to source), ``gen``
(the generator), ``inputs`` (random inputs with special values), ``tolerance`` (the one table of
tolerances), ``runner``/``worker``/``targets`` (running kernels in worker processes per target),
``check`` (comparison), ``shrink``, ``repro`` (reproducer files), ``driver`` (the loop) and ``__main__``.
"""
from __future__ import annotations

__all__ = ["fuzz", "generate"]


def fuzz(*args, **kwargs):
    from .driver import fuzz as _fuzz
    return _fuzz(*args, **kwargs)


def generate(seed: int, **kwargs):
    from .gen import generate as _generate
    return _generate(seed, **kwargs)
