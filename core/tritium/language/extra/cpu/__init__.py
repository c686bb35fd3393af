"""``tl.extra.cpu``: the extra math library of Triton's CPU backend (triton-cpu), ``triton.language.extra.cpu``."""
from . import libdevice  # noqa: F401
