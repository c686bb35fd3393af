"""Extra math libraries: ``tl.extra.libdevice`` (the CUDA libdevice function set, for every backend)."""
from . import libdevice  # noqa: F401
