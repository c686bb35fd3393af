"""``tritium.TritonError``: the base of the errors tritium raises about kernels (compilation, resources), so
that code written for Triton's ``except triton.TritonError`` catches them."""


class TritonError(Exception):
    """Base class of tritium's kernel errors (Triton's name, kept for code that catches it)."""
