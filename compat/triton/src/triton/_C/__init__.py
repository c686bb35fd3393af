"""``triton._C``: the part of Triton's C++ extension that code outside Triton reaches into, rebuilt on tritium
(see :mod:`.libtriton`)."""
from . import libtriton  # noqa: F401
