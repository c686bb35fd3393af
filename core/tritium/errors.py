"""``tritium.TritonError``: the base of the errors tritium raises about kernels (compilation, resources), so
that code written for Triton's ``except triton.TritonError`` catches them."""


class TritonError(Exception):
    """Base class of tritium's kernel errors (Triton's name, kept for code that catches it)."""


class ArgumentDeviceError(TypeError, ValueError):
    """A kernel argument lives in memory the active driver's kernels cannot reach (a pageable CPU tensor passed to
    a GPU kernel). A ValueError, as Triton raises for it, and a TypeError, as tritium raised before."""
