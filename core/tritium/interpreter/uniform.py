"""A scalar's Python value when a batch of programs runs as one Python execution, and the two ways that can fail:
the programs disagree (:class:`Divergence`, the launcher splits the batch), or the value is not scalar per
program (:class:`ElementwiseOnly`, a combine function runs one element at a time).

Below the values, the semantic and the runtime helpers, which all ask for such values.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..language.core import CompileTimeError, tensor
from .floats import fp8_to_f32


class ElementwiseOnly(Exception):
    """A combine function needed a Python truth value: it must run one element at a time."""


class Divergence(BaseException):
    """Programs of one batch disagree on a value that steers Python control flow. ``key`` holds, per program
    of the batch, what they disagree on (shape (B,) or (B, k)). A BaseException: kernel code must not be able
    to catch it."""

    def __init__(self, key: np.ndarray) -> None:
        super().__init__("divergence")
        self.key = key


def uniform_scalar(t: tensor, what: str) -> Any:
    """The Python value of a scalar tensor that is the same in every program of the batch."""
    a = t.handle.a
    if t.type.is_block() and t.type.numel == 1:
        # a one-element block stands for its element, as in Triton (test_core.py::test_unsplat): drop its axes
        a = a.reshape(a.shape[:a.ndim - len(t.type.shape)])
    elif t.type.is_block():
        raise CompileTimeError(f"{what} must be a scalar, got a block of type {t.type}; "
                               "use tl.where for elementwise choices")
    if a.ndim > 1:
        raise ElementwiseOnly()
    if a.shape[0] > 1 and not (a == a[0]).all():
        raise Divergence(a)
    v = a[0]
    elt = t.dtype
    if elt.is_fp8():
        return float(fp8_to_f32(a[:1], elt.name)[0])
    return v.item()
